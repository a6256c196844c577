//! Helpers for tests of the data directory's memory owner: clients that
//! reach it (rather than serving in-process, as the harness does by
//! default), and the owner process as the system sees it.

use super::Server;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The environment of a client that reaches the owner (the harness serves
/// in-process otherwise); the owner it starts inherits it and stops one
/// second after its last client leaves.
pub const SHARED: &[(&str, &str)] = &[
    ("ALAYASIKI_IN_PROCESS", ""),
    ("ALAYASIKI_OWNER_IDLE_SECS", "1"),
];

pub fn client(dir: &Path) -> Server {
    client_with(dir, SHARED)
}

pub fn client_with(dir: &Path, env: &[(&str, &str)]) -> Server {
    let mut s = Server::start_with(dir, env);
    s.initialize();
    s
}

/// The pid the directory's owner record names.
pub fn owner_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("alayasiki.owner")).expect("an owner record");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["program"], "alayasiki-mcp owner", "{v}");
    v["pid"].as_u64().unwrap() as u32
}

pub fn alive(pid: u32) -> bool {
    // A zombie (exited, not yet reaped by the client that started it)
    // counts as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.split(") ")
                .nth(1)
                .is_some_and(|rest| rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Processes running `alayasiki-mcp owner` on `dir`.
pub fn owners_of(dir: &Path) -> usize {
    let want = format!("owner\0--data-dir\0{}\0", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&want))
        })
        .count()
}

pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Stops the owner of `dir` (SIGTERM) if one still runs.
pub fn stop_owner(dir: &Path) {
    if let Ok(text) = std::fs::read_to_string(dir.join("alayasiki.owner")) {
        if let Some(pid) = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["pid"].as_u64())
        {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
        }
    }
}
