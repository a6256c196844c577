//! `alayasiki-mcp import FILE` on what is not a well-formed file, through
//! the real binary: a pipe or a device is refused at once instead of read
//! forever, a line over `MAX_IMPORT_LINE_BYTES` is named as too long (also
//! when it is the only line).

mod common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use alayasiki_mcp::limits::MAX_IMPORT_LINE_BYTES;

/// `import FILE` on `mem`, killed if it has not exited within `limit`;
/// exit code (`None`: it had to be killed), stdout, stderr.
fn import_within(mem: &Path, file: &Path, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = Command::new(BIN)
        .arg("import")
        .arg(file)
        .arg("--data-dir")
        .arg(mem)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let exit = wait_timeout(&mut child, limit);
    if exit.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        exit.and_then(|e| e.code()),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn import_refuses_a_device_or_a_pipe_at_once() {
    let dir = TempDir::new("import-device");
    let fifo = dir.path().join("memory.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mem = dir.path().join("m");
    for file in [Path::new("/dev/zero"), &fifo, dir.path()] {
        let (exit, _, stderr) = import_within(&mem, file, Duration::from_secs(10));
        assert_eq!(exit, Some(1), "{file:?} was read: {stderr}");
        assert!(stderr.contains("not a regular file"), "{file:?}: {stderr}");
        assert!(!mem.exists(), "{file:?}: no data directory is made");
    }
}

#[test]
fn a_line_over_the_limit_is_named_as_too_long_not_as_an_empty_file() {
    let dir = TempDir::new("import-long");
    let mem = dir.path().join("m");
    let file = dir.path().join("long.jsonl");
    // One line a byte over the limit, then one exactly at it: both are
    // skipped as too long / not JSON, and the file is not "empty".
    let entity = |len: usize| {
        let head = r#"{"type":"entity","name":"Ada","entityType":"person","observations":[""#;
        let tail = r#""]}"#;
        format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
    };
    let mut f = std::fs::File::create(&file).unwrap();
    f.write_all(entity(MAX_IMPORT_LINE_BYTES + 1).as_bytes())
        .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let (exit, stdout, stderr) = import_within(&mem, &file, Duration::from_secs(60));
    assert_eq!(exit, Some(1), "{stdout}{stderr}");
    assert!(!stderr.contains("empty"), "{stderr}");
    assert!(
        stderr.contains("line 1 is too long") && stderr.contains("MAX_IMPORT_LINE_BYTES"),
        "{stderr}"
    );

    // After a line that tells the format, a line over the limit is skipped
    // and listed; one exactly at the limit is read (and imported: the
    // observation is stored, over the content limit or not, as ingestion
    // decides, never as "too long").
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(
        f,
        r#"{{"type":"entity","name":"Lisbon","entityType":"city","observations":["A port"]}}"#
    )
    .unwrap();
    f.write_all(entity(MAX_IMPORT_LINE_BYTES + 1).as_bytes())
        .unwrap();
    f.write_all(b"\n").unwrap();
    f.write_all(entity(MAX_IMPORT_LINE_BYTES).as_bytes())
        .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let (exit, stdout, stderr) = import_within(&mem, &file, Duration::from_secs(60));
    assert_eq!(exit, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("line 2: too long"), "{stdout}");
    assert!(!stdout.contains("line 3: too long"), "{stdout}");
}
