//! The ops whose opcode a supported kernel may lack (`ftruncate` 6.9, `waitid` 6.7,
//! `socket` 5.19; each has a fallback in the layers above) fail with
//! `ErrorKind::Unsupported` naming the opcode where the runtime may not use it, rather than
//! the kernel's bare `EINVAL`. Taken away with `Builder::without_feature`, which is what an
//! older kernel looks like to them (before, they went on submitting the opcode).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use ringsteal_rt::op::{self, Op, SharedFd, Socket};
use ringsteal_rt::{Feature, Runtime};

fn without(feature: Feature) -> Runtime {
    Runtime::builder()
        .shards(1)
        .without_feature(feature)
        .build()
        .unwrap()
}

fn assert_unsupported<T: std::fmt::Debug>(res: io::Result<T>, name: &str) {
    let err = res.expect_err("the op ran with its opcode taken away");
    assert_eq!(err.kind(), io::ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains(name), "{err}");
}

fn temp_file() -> SharedFd {
    let file = tempfile_in_tmp();
    SharedFd::new(file.into())
}

fn tempfile_in_tmp() -> std::fs::File {
    let path = std::env::temp_dir().join(format!("ringsteal-unsupported-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    f
}

#[test]
fn ftruncate_without_its_opcode_is_unsupported() {
    let rt = without(Feature::Ftruncate);
    let file = temp_file();
    rt.block_on(async {
        assert_unsupported(op::ftruncate(&file, 0).await, "IORING_OP_FTRUNCATE");
    });
}

#[test]
fn socket_without_its_opcode_is_unsupported_and_op_socket_falls_back() {
    let rt = without(Feature::Socket);
    rt.block_on(async {
        let direct = Op::new(Socket::new(libc::AF_UNIX, libc::SOCK_STREAM, 0)).await;
        assert_unsupported(direct, "IORING_OP_SOCKET");
        // The function picks `socket(2)` instead.
        op::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0)
            .await
            .expect("the fallback");
    });
}

#[test]
fn waitid_without_its_opcode_is_unsupported() {
    let rt = without(Feature::Waitid);
    let mut child = std::process::Command::new("true").spawn().unwrap();
    // SAFETY: pidfd_open returns a new descriptor or -1; the child is not reaped yet, so its
    // pid still names it.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
    assert!(fd >= 0, "{}", io::Error::last_os_error());
    // SAFETY: the descriptor is new and ours.
    let pidfd = SharedFd::new(unsafe { OwnedFd::from_raw_fd(fd as i32) });
    rt.block_on(async {
        assert_unsupported(op::waitid_pidfd(&pidfd).await, "IORING_OP_WAITID");
        assert_unsupported(op::wait_exit_pidfd(&pidfd).await, "IORING_OP_WAITID");
    });
    child.wait().unwrap();
}

#[test]
fn taking_away_an_opcode_without_a_fallback_is_refused_at_build() {
    let built = Runtime::builder()
        .shards(1)
        .without_feature(Feature::Opcode(ringsteal_uring::abi::IORING_OP_ACCEPT))
        .build();
    let Err(err) = built else {
        panic!("built, with nothing to test without ACCEPT");
    };
    assert!(matches!(err, ringsteal_rt::BuildError::Config(_)), "{err}");
    assert!(err.to_string().contains("IORING_OP_ACCEPT"), "{err}");
    // A named feature's opcode, by number, is its feature: allowed.
    let rt = Runtime::builder()
        .shards(1)
        .without_feature(Feature::Opcode(ringsteal_uring::abi::IORING_OP_FTRUNCATE))
        .build()
        .unwrap();
    assert!(!rt.features().supports(Feature::Ftruncate));
}
