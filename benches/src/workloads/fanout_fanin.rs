//! `fanout_fanin_balanced` and `fanout_fanin_skewed`.
//!
//! One criterion iteration = [`Shape::requests`] request tasks, all in flight at
//! once; each request fans out into [`Shape::fanout`] CPU-bound branch tasks
//! ([`crate::util::synthetic_work`]) and joins them (fan-in). The iteration ends
//! when every request has joined. Work-stealing runtimes spawn the requests
//! from one driver task the default way; a share-nothing runtime (compio) gets
//! request `r` on thread `r % threads` and fans out locally.
//!
//! - balanced: every branch does the same small amount of work.
//! - skewed: a few branches are heavy ([`Shape::heavy_every`]: branch 0 of every
//!   8th request, about 100 times the balanced branch); all the others are
//!   light. With requests dealt out round-robin over 2 threads, every heavy
//!   request lands on the same thread: a static hot spot that only a scheduler
//!   that moves work between threads can even out.

use crate::util::synthetic_work;
use std::sync::OnceLock;

/// Shape of a fan-out/fan-in run.
#[derive(Debug)]
pub struct Shape {
    /// Name used in messages.
    pub name: &'static str,
    /// Concurrent requests.
    pub requests: usize,
    /// Branch tasks per request.
    pub fanout: usize,
    /// Work steps of a light branch.
    pub light_iters: u32,
    /// Work steps of a heavy branch.
    pub heavy_iters: u32,
    /// Branch 0 of every `heavy_every`-th request is heavy (0: none).
    pub heavy_every: usize,
    expected: OnceLock<u64>,
}

/// Equal CPU-light branches: 64 x 32 branches of ~3 us each (~6 ms serial).
pub static BALANCED: Shape = Shape {
    name: "fanout_fanin_balanced",
    requests: 64,
    fanout: 32,
    light_iters: 2_000,
    heavy_iters: 2_000,
    heavy_every: 0,
    expected: OnceLock::new(),
};

/// A few heavy branches (8 of ~0.4 ms) among 2040 light ones (~0.7 us).
pub static SKEWED: Shape = Shape {
    name: "fanout_fanin_skewed",
    requests: 64,
    fanout: 32,
    light_iters: 500,
    heavy_iters: 300_000,
    heavy_every: 8,
    expected: OnceLock::new(),
};

impl Shape {
    /// Work steps of branch `branch` of request `req`.
    #[allow(clippy::manual_is_multiple_of)] // `is_multiple_of` needs Rust 1.87
    pub fn iters(&self, req: usize, branch: usize) -> u32 {
        if self.heavy_every != 0 && req % self.heavy_every == 0 && branch == 0 {
            self.heavy_iters
        } else {
            self.light_iters
        }
    }

    /// Seed of branch `branch` of request `req`.
    pub fn seed(req: usize, branch: usize) -> u64 {
        ((req as u64) << 32) ^ branch as u64
    }

    /// The body of one branch task.
    #[inline]
    pub fn branch(&self, req: usize, branch: usize) -> u64 {
        synthetic_work(Self::seed(req, branch), self.iters(req, branch))
    }

    /// Total branch tasks per iteration.
    pub fn tasks(&self) -> usize {
        self.requests * self.fanout
    }

    /// Wrapping sum of every branch result (computed serially once).
    pub fn expected(&self) -> u64 {
        *self.expected.get_or_init(|| {
            let mut sum = 0u64;
            for r in 0..self.requests {
                for b in 0..self.fanout {
                    sum = sum.wrapping_add(self.branch(r, b));
                }
            }
            sum
        })
    }

    /// Panics unless `checksum` (wrapping sum of all branch results) is right.
    pub fn check(&self, checksum: u64) {
        assert_eq!(checksum, self.expected(), "{}: wrong checksum", self.name);
    }
}
