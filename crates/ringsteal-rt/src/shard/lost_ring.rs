//! A shard whose ring the kernel refuses for good (`io_uring_enter` fails with `EPERM` under
//! a seccomp filter installed after the build, say: `driver/lost.rs`) cannot serve its tasks:
//! none of its requests will ever be submitted. As for a shard whose loop keeps failing
//! (ADR-0019), the whole runtime shuts down: tasks are cancelled, their `JoinHandle`s
//! resolve, later spawns fail with `SpawnError::ShuttingDown`, and `block_on` runs its own
//! future on, its requests failing with the ring's error. The reason is written to stderr
//! once, since no caller is waiting for it.
//!
//! All of it happens where the shard parks, or where its submission failed, so the run
//! loop pays nothing for it while the ring works.
//!
//! Owns: that reaction. May not: decide which errors lose a ring (the driver does).

use super::Shard;

impl Shard {
    /// On a lost ring (after a park, or a failed submission): fails the requests the kernel
    /// never took (their wakers go with the reaped ones, woken by the next tick) and, the
    /// first time, stops the runtime.
    #[cold]
    #[inline(never)]
    pub(super) fn handle_lost_ring(&self) {
        let lost = {
            let mut reaped = self.reaped.borrow_mut();
            self.driver.borrow_mut().reap(&mut reaped, self.counters());
            reaped.lost_ring.take()
        };
        if let Some(errno) = lost {
            self.ring_lost(errno);
        }
    }

    /// A submission failed: if the ring is lost, a shard busy enough never to park still
    /// fails what the ring will never take, and stops the runtime. (Anything else, `EBUSY`
    /// say, the next tick retries.)
    #[cold]
    #[inline(never)]
    pub(super) fn submit_failed(&self) {
        if self.driver.borrow().is_lost() {
            self.handle_lost_ring();
        }
    }

    fn ring_lost(&self, errno: i32) {
        let err = std::io::Error::from_raw_os_error(errno);
        eprintln!(
            "ringsteal: shard {}: io_uring_enter fails for good ({err}): a seccomp filter or \
             security module installed after the runtime was built refuses it, or the ring's \
             descriptor was closed. The runtime shuts down; requests not yet submitted fail \
             with this error.",
            self.index
        );
        self.shared.begin_shutdown(self.shared.shutdown_timeout());
    }
}
