//! [`CachePadded`]: keeps a value on its own cache line(s) so that per-shard state written
//! by one thread does not slow down its neighbours (false sharing).

use std::ops::Deref;

/// Aligns `T` to 128 bytes (two 64-byte lines: adjacent-line prefetchers pull pairs).
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
