//! The guarantee of the ecosystem features (ADR-0014): nothing in `futures-io`, `tokio-io`
//! or `hyper` starts a tokio runtime, a reactor or a helper thread.
//!
//! This file checks the dependency graph: `cargo tree -e features` for the facade with those
//! features turns on none of tokio's runtime features. `no_tokio_threads.rs` checks the
//! threads of a process that used them.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// tokio features that bring a runtime, a reactor, a timer driver or helper threads.
const RUNTIME_FEATURES: [&str; 8] = [
    "rt",
    "rt-multi-thread",
    "net",
    "time",
    "process",
    "signal",
    "fs",
    "io-std",
];

#[test]
fn the_ecosystem_features_enable_no_tokio_runtime_feature() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO"))
        .current_dir(&workspace)
        .args([
            "tree",
            "--offline",
            "-p",
            "ringsteal",
            "--features",
            "hyper,tokio-io,futures-io",
            "-e",
            "normal,features",
            "--prefix",
            "none",
        ])
        .output()
        .expect("running cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(
        tree.lines().any(|l| l.starts_with("tokio v1")),
        "tokio (its traits) should be in the graph; is the tokio-io feature wired?\n{tree}"
    );
    assert!(tree.lines().any(|l| l.starts_with("hyper v1")), "{tree}");
    let enabled: BTreeSet<&str> = tree
        .lines()
        .filter_map(|l| l.strip_prefix("tokio feature \""))
        .filter_map(|l| l.split('"').next())
        .collect();
    let bad: Vec<_> = RUNTIME_FEATURES
        .iter()
        .filter(|f| enabled.contains(*f))
        .collect();
    assert!(
        bad.is_empty(),
        "ringsteal --features hyper,tokio-io,futures-io turns on tokio's {bad:?} (all tokio \
         features enabled: {enabled:?}); find who asks with `cargo tree -e features -i tokio`"
    );
}
