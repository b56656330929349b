//! How the runtime makes its threads (shards 1 and up, blocking threads): named, with the
//! builder's stack size if one was set.

/// A `std::thread::Builder` named `name`, with a stack of `stack_size` bytes if given.
pub(crate) fn thread_builder(name: String, stack_size: Option<usize>) -> std::thread::Builder {
    let b = std::thread::Builder::new().name(name);
    match stack_size {
        Some(bytes) => b.stack_size(bytes),
        None => b,
    }
}
