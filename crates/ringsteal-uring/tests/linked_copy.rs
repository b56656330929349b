//! A linked READ + WRITE pair (`IOSQE_IO_LINK`): the write starts only after the read
//! succeeded, so one submission copies a file; a failed read cancels the write.

mod common;

use std::fs::File;
use std::os::fd::AsRawFd;

use ringsteal_uring::abi::IOSQE_IO_LINK;
use ringsteal_uring::{opcode, Ring};

#[test]
fn a_linked_read_then_write_copies_a_file_in_one_submission() {
    let data = common::pattern(64 * 1024);
    let src_path = common::scratch_path("copy-src");
    let dst_path = common::scratch_path("copy-dst");
    std::fs::write(&src_path, &data).unwrap();
    let src = File::open(&src_path).unwrap();
    let dst = File::create(&dst_path).unwrap();
    let mut buf = vec![0u8; data.len()];
    let len = buf.len() as u32;

    let mut ring = Ring::new(4).expect("io_uring is available");
    let chain = [
        opcode::read(src.as_raw_fd(), buf.as_mut_ptr(), len, 0)
            .with_flags(IOSQE_IO_LINK)
            .with_user_data(1),
        opcode::write(dst.as_raw_fd(), buf.as_ptr(), len, 0).with_user_data(2),
    ];
    // SAFETY: `buf`, `src` and `dst` outlive both requests: we wait for both CQEs below.
    assert!(unsafe { ring.push_all(&chain) }, "both SQEs fit");
    let mut cqes = common::wait_cqes(&mut ring, 2);
    cqes.sort_by_key(|c| c.user_data);
    assert_eq!((cqes[0].user_data, cqes[0].res), (1, len as i32), "read");
    assert_eq!((cqes[1].user_data, cqes[1].res), (2, len as i32), "write");
    drop(dst);
    assert_eq!(std::fs::read(&dst_path).unwrap(), data);
    let _ = std::fs::remove_file(src_path);
    let _ = std::fs::remove_file(dst_path);
}

#[test]
fn a_failed_read_cancels_the_linked_write() {
    // Reading a directory fails with EISDIR.
    let dir = File::open(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dst_path = common::scratch_path("copy-cancelled");
    let dst = File::create(&dst_path).unwrap();
    let mut buf = vec![0u8; 4096];
    let mut ring = Ring::new(4).expect("io_uring is available");
    let chain = [
        opcode::read(dir.as_raw_fd(), buf.as_mut_ptr(), 4096, 0)
            .with_flags(IOSQE_IO_LINK)
            .with_user_data(1),
        opcode::write(dst.as_raw_fd(), buf.as_ptr(), 4096, 0).with_user_data(2),
    ];
    // SAFETY: as above; both CQEs are awaited.
    assert!(unsafe { ring.push_all(&chain) });
    let mut cqes = common::wait_cqes(&mut ring, 2);
    cqes.sort_by_key(|c| c.user_data);
    assert_eq!(cqes[0].res, -libc::EISDIR, "the read fails");
    assert_eq!(cqes[1].res, -libc::ECANCELED, "the linked write never runs");
    assert_eq!(std::fs::metadata(&dst_path).unwrap().len(), 0);
    let _ = std::fs::remove_file(dst_path);
}
