//! Registered resources: a sparse fixed-file table filled and cleared with updates, and
//! registered buffers used by READ_FIXED.

mod common;

use std::fs::File;
use std::os::fd::AsRawFd;

use ringsteal_uring::abi::IOSQE_FIXED_FILE;
use ringsteal_uring::{opcode, Ring};

fn file_with(contents: &[u8]) -> File {
    let path = common::scratch_path("registered");
    std::fs::write(&path, contents).unwrap();
    let file = File::open(&path).unwrap();
    let _ = std::fs::remove_file(path);
    file
}

#[test]
fn a_sparse_file_table_slot_filled_by_update_is_read_through_its_index_until_cleared() {
    let contents = b"read through fixed slot 2";
    let file = file_with(contents);
    let mut ring = Ring::new(4).expect("io_uring is available");
    ring.register_files_sparse(4)
        .expect("register a sparse table");
    assert_eq!(ring.update_files(2, &[file.as_raw_fd()]).unwrap(), 1);

    let mut buf = [0u8; 64];
    let read = opcode::read(2, buf.as_mut_ptr(), 64, 0)
        .with_flags(IOSQE_FIXED_FILE)
        .with_user_data(1);
    // SAFETY: `buf` outlives the request (awaited below); slot 2 holds an open file.
    unsafe { ring.push(&read) }.unwrap();
    let cqe = common::wait_one(&mut ring);
    assert_eq!(cqe.res, contents.len() as i32);
    assert_eq!(&buf[..contents.len()], contents);

    // A slot cleared with -1 no longer names a file.
    assert_eq!(ring.update_files(2, &[-1]).unwrap(), 1);
    // SAFETY: as above.
    unsafe { ring.push(&read.with_user_data(2)) }.unwrap();
    let cqe = common::wait_one(&mut ring);
    assert_eq!((cqe.user_data, cqe.res), (2, -libc::EBADF));
    ring.unregister_files().unwrap();
}

#[test]
fn read_fixed_reads_into_a_registered_buffer() {
    let contents = common::pattern(3000);
    let file = file_with(&contents);
    let mut ring = Ring::new(4).expect("io_uring is available");
    let mut buf = vec![0u8; 4096];
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: `buf` stays allocated until after unregister_buffers below, and no request
    // using it is in flight then.
    unsafe { ring.register_buffers(&[iov]) }.expect("register one buffer");

    // Read into the second half of registered buffer 0: addr and len lie inside it.
    let target = buf[1024..].as_mut_ptr();
    let sqe = opcode::read_fixed(file.as_raw_fd(), target, 3000, 0, 0).with_user_data(3);
    // SAFETY: the target range lies inside the registered buffer, which outlives the request.
    unsafe { ring.push(&sqe) }.unwrap();
    let cqe = common::wait_one(&mut ring);
    assert_eq!((cqe.user_data, cqe.res), (3, 3000));
    assert_eq!(&buf[1024..4024], &contents[..]);
    assert!(
        buf[..1024].iter().all(|b| *b == 0),
        "nothing written before the target"
    );
    ring.unregister_buffers().unwrap();
}
