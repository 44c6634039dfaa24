//! Helpers shared by the end-to-end tests of `cellguard replay` (guardrails and policies):
//! run the built binary from the repository root and read its output.

#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The repository root (fixture paths in the tests are relative to it).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cellguard replay ARGS` in the repository root.
pub fn replay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root())
        .arg("replay")
        .args(args)
        .output()
        .expect("run cellguard")
}

/// Runs `cellguard replay ARGS --output-format json`: (exit code, parsed stdout, stderr).
/// Panics with both streams when stdout is not JSON.
pub fn replay_json(args: &[&str]) -> (i32, Value, String) {
    let mut a = args.to_vec();
    a.extend(["--output-format", "json"]);
    let out = replay(&a);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `cellguard replay ARGS`: (exit code, stdout, stderr) as text.
pub fn replay_text(args: &[&str]) -> (i32, String, String) {
    let out = replay(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `text` to `dir/name` and returns the path as a string argument.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Runs `cellguard replay ARGS` in the repository root with `input` on standard input.
pub fn replay_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .current_dir(root())
        .arg("replay")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cellguard");
    let mut stdin = child.stdin.take().unwrap();
    let bytes = input.to_vec();
    // Written from another thread: a report larger than the pipe buffer would otherwise block
    // both processes.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
    });
    let out = child.wait_with_output().expect("wait for cellguard");
    writer.join().unwrap();
    out
}
