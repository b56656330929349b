//! Operations: every io_uring request as a future (`Op`), submitted lazily on the ring of the
//! shard that first polls it, with its kernel-referenced memory kept alive until its last
//! completion.

pub(crate) mod raw;
