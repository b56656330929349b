//! Running the C compiler: preprocess a snippet, or build and run a small C program.
//!
//! Owns: the `cc` command line and the scratch directory. The compiler is `$CC`, or `cc`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ringsteal-uring-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the scratch directory for the C probe");
    dir
}

/// `cc -E -dD` of `source`: preprocessed code with line markers and every `#define` kept.
pub(crate) fn preprocess(source: &str) -> Result<String, String> {
    let mut child = Command::new(compiler())
        .args(["-E", "-dD", "-x", "c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the C compiler `{}`: {e}", compiler()))?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(source.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Compiles `source` as `name.c`, runs it, and returns what it printed. Panics with the
/// compiler's diagnostics (and where the source was kept) if it does not build or run.
pub(crate) fn run(name: &str, source: &str) -> String {
    let dir = scratch_dir();
    let src = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&src, source).expect("write the C probe");
    let out = Command::new(compiler())
        .args(["-std=gnu11", "-Wall", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the C compiler `{}`: {e}. Install one (`apt-get install gcc`).",
                compiler()
            )
        });
    assert!(
        out.status.success(),
        "the C probe {} does not compile against this linux/io_uring.h. That means the \
         header lacks (or differs in) a name the Rust side expects at this header version.\n\
         compiler says:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the C probe");
    assert!(run.status.success(), "the C probe {} failed", exe.display());
    String::from_utf8(run.stdout).expect("the C probe prints ASCII")
}
