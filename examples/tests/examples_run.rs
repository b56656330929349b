//! Runs the examples' code as tests, so an example that breaks fails `cargo test`.

#[path = "../subprocess.rs"]
#[allow(dead_code)] // its `main` is the example binary's entry point
mod subprocess;

#[test]
fn the_subprocess_example_runs() {
    subprocess::run().expect("the subprocess example");
}
