//! Faults of the disk under a running server.
//!
//! - Full: writes are refused as `unavailable` naming the disk (never
//!   `internal`), an acknowledged document whose indexing the disk refuses
//!   is answered at once as stored-but-pending (not after a 60 s wait),
//!   reads keep working, and once space returns the server resumes by
//!   itself: every acknowledged document searchable, exactly once, nothing
//!   half-written. The disk is a small tmpfs.
//! - Failing (every read and write answers EIO) and read-only (the file
//!   system remounted read-only after an error, as ext4 does): each refused
//!   write names the fault promptly, reads answer or name the fault,
//!   the server exits cleanly, and once the file system is mounted again
//!   every acknowledged document is there, exactly once, and the database
//!   passes its integrity check. A server started on a read-only file
//!   system refuses to start, saying so. The disk is an ext4 file system
//!   on a loop device; the failure is ext4's own shutdown (the
//!   `EXT4_IOC_SHUTDOWN` ioctl that file-system test suites use) and its
//!   error trigger in sysfs.
//!
//! Mounting needs root (as CI runs); elsewhere the tests say they cannot
//! run. A machine without loop devices or ext4 skips the loop-device tests
//! with a message.

mod common;

use common::{Server, TempDir};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn run(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"))
}

/// A tmpfs of `size` bytes, unmounted on drop.
struct SmallDisk {
    at: TempDir,
}

impl SmallDisk {
    fn mount(size: usize) -> Option<SmallDisk> {
        let at = TempDir::new("small-disk");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}")])
            .arg("tmpfs")
            .arg(at.path())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(SmallDisk { at });
        }
        assert!(
            !is_root(),
            "running as root, yet a tmpfs could not be mounted"
        );
        eprintln!("storage_faults: not root, cannot mount a tmpfs: not run");
        None
    }

    fn path(&self) -> &Path {
        self.at.path()
    }

    /// Fills the disk but for `slack` bytes; returns the filler file.
    fn fill(&self, slack: u64) -> PathBuf {
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![1u8; 4096];
        while f.write_all(&block).and_then(|_| f.flush()).is_ok() {}
        drop(f);
        let len = std::fs::metadata(&filler).unwrap().len();
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .and_then(|f| f.set_len(len.saturating_sub(slack)));
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.at.path())
            .status();
    }
}

#[test]
fn a_full_disk_refuses_writes_clearly_keeps_reads_and_resumes_by_itself() {
    let Some(disk) = SmallDisk::mount(6 << 20) else {
        return;
    };
    let data = disk.path().join("memory");
    let mut s = Server::ready(&data);
    let mut acknowledged = Vec::new();
    for i in 0..5 {
        acknowledged.push(s.ingest(&format!("seed note {i} about the north pumps")));
    }
    // Room for an admission (the journal row) but not for its indexing.
    let filler = disk.fill(256 * 1024);
    let big = "the pump log line repeats here. ".repeat(600);
    let mut deferred = 0;
    let mut refused = 0;
    for i in 0..6 {
        let started = Instant::now();
        let (is_error, r) = s.call(
            "alayasiki_ingest",
            json!({"content": format!("full-disk note {i}: {big}")}),
        );
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(10),
            "an ingest on a full disk took {took:?}"
        );
        let text = r.to_string();
        assert!(!text.contains("internal"), "{text}");
        assert!(
            !text.contains(data.to_str().unwrap()),
            "a path leaked: {text}"
        );
        if is_error {
            assert!(text.starts_with("\"unavailable: storage full"), "{text}");
            refused += 1;
        } else {
            acknowledged.push(r["document_id"].as_str().unwrap().to_string());
            if r["state"] == "pending" {
                assert!(r["error"].as_str().unwrap().contains("storage full"), "{r}");
                deferred += 1;
            }
        }
    }
    assert!(refused > 0, "the disk never refused a write");
    // Reads keep working, and quickly (no read-your-writes wait on a disk
    // that cannot finish the indexing).
    let started = Instant::now();
    let found = s.query("north pumps");
    assert!(!found["evidence"].as_array().unwrap().is_empty());
    assert!(started.elapsed() < Duration::from_secs(10));

    // Space returns: no restart, the server resumes.
    std::fs::remove_file(filler).unwrap();
    acknowledged.push(s.ingest("after the disk was freed"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let status = s.ok("alayasiki_status", json!({}));
        if status["jobs"]["pending"] == 0 || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(status["jobs"]["pending"], 0, "{status}");
    assert_eq!(status["jobs"]["failed"], 0, "{status}");
    assert_eq!(
        status["documents"],
        acknowledged.len(),
        "{status} (deferred {deferred})"
    );
    for id in &acknowledged {
        let r = s.request(
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{id}")}),
        );
        assert!(r["result"]["contents"][0]["text"].is_string(), "{id}: {r}");
    }
    let (exit, _) = s.close();
    assert!(exit.success());
}

/// An ext4 file system on a loop device whose backing file lives on a
/// tmpfs (so the test never writes to the machine's own disk); mounted
/// with `errors=remount-ro`, as most distributions mount ext4.
struct LoopDisk {
    backing: SmallDisk,
    device: String,
    at: TempDir,
}

/// `EXT4_IOC_SHUTDOWN`: `_IOR('X', 125, __u32)`.
const EXT4_IOC_SHUTDOWN: u64 = 0x8004_587d;
/// Shut down without flushing the journal: what a disk dying does.
const EXT4_GOING_FLAGS_NOLOGFLUSH: u32 = 2;

extern "C" {
    fn ioctl(fd: i32, request: u64, ...) -> i32;
}

impl LoopDisk {
    fn mount(size: usize) -> Option<LoopDisk> {
        let backing = SmallDisk::mount(size + (4 << 20))?;
        let file = backing.path().join("disk.img");
        std::fs::File::create(&file)
            .and_then(|f| f.set_len(size as u64))
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&file)
            .output();
        let device = match out {
            Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap().trim().to_string(),
            _ => {
                eprintln!("storage_faults: no loop device available: loop-device tests not run");
                return None;
            }
        };
        let at = TempDir::new("loop-disk");
        let disk = LoopDisk {
            backing,
            device,
            at,
        };
        if !run("mkfs.ext4", &["-q", "-F", &disk.device]) || !disk.mount_with("errors=remount-ro") {
            eprintln!("storage_faults: cannot make or mount ext4: loop-device tests not run");
            return None;
        }
        Some(disk)
    }

    fn path(&self) -> &Path {
        self.at.path()
    }

    fn mount_with(&self, options: &str) -> bool {
        run(
            "mount",
            &[
                "-o",
                options,
                &self.device,
                self.at.path().to_str().unwrap(),
            ],
        )
    }

    fn unmount(&self) {
        assert!(
            run("umount", &[self.at.path().to_str().unwrap()]),
            "the file system is still in use"
        );
    }

    /// Unmounts and mounts again (ext4 replays its journal).
    fn remount(&self, options: &str) {
        self.unmount();
        assert!(self.mount_with(options), "cannot mount {options}");
    }

    /// From now on every read and write of the file system fails with EIO.
    fn fail(&self) {
        let dir = std::fs::File::open(self.path()).unwrap();
        let flags = EXT4_GOING_FLAGS_NOLOGFLUSH;
        let rc = unsafe {
            ioctl(
                std::os::fd::AsRawFd::as_raw_fd(&dir),
                EXT4_IOC_SHUTDOWN,
                &flags as *const u32,
            )
        };
        assert_eq!(rc, 0, "EXT4_IOC_SHUTDOWN failed");
    }

    /// An error as ext4 reports one: under `errors=remount-ro` the file
    /// system turns read-only at once, with files still open for writing
    /// (which `mount -o remount,ro` would refuse).
    fn turn_read_only(&self) {
        let name = Path::new(&self.device).file_name().unwrap();
        let trigger = Path::new("/sys/fs/ext4")
            .join(name)
            .join("trigger_fs_error");
        std::fs::write(trigger, "storage_faults test\n").unwrap();
    }
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        let _ = run("umount", &["-l", self.at.path().to_str().unwrap()]);
        let _ = run("losetup", &["-d", &self.device]);
        let _ = &self.backing;
    }
}

fn integrity_ok(data: &Path) {
    let conn = rusqlite::Connection::open(data.join("memory.db")).unwrap();
    let verdict: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(verdict, "ok", "integrity check");
}

/// A disk that stays full while the worker keeps retrying the indexing it
/// refuses, with writes refused around it all along (the take-back of a
/// refused attempt shares their fate): no acknowledged document is failed
/// for it (a refusal of the disk is never an attempt), and once space
/// returns it is indexed by itself, without a restart or `retry-failed`.
#[test]
fn a_disk_full_through_many_retries_fails_no_document_and_indexes_it_once_space_returns() {
    let Some(disk) = SmallDisk::mount(8 << 20) else {
        return;
    };
    let data = disk.path().join("memory");
    let mut s = Server::ready(&data);
    seed(&mut s, "before", 3);
    let filler = disk.fill(450 * 1024);
    // Its admission fits, its indexing (chunks, vectors, graph) does not.
    let words: String = (0..12_000).map(|w| format!("held{w}word ")).collect();
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": format!("heldmarkerq {words}"), "wait": false}),
    );
    assert_eq!(r["state"], "pending", "{r}");
    let held = r["document_id"].as_str().unwrap().to_string();
    // Writes the disk refuses, 8 at a time, for many of the worker's
    // retries (one each IDLE_POLL, 2 s; MAX_JOB_ATTEMPTS is 3).
    let big = "x".repeat(512 * 1024);
    let until = Instant::now() + Duration::from_secs(20);
    let mut round = 0;
    while Instant::now() < until {
        for j in 0..8 {
            s.send(&json!({"jsonrpc": "2.0", "id": format!("big-{round}-{j}"),
                "method": "tools/call", "params": {"name": "alayasiki_ingest",
                "arguments": {"content": format!("{round} {j} {big}"), "wait": false}}}));
        }
        for _ in 0..8 {
            let reply = s.recv();
            let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
            assert!(text.contains("storage full"), "{reply}");
        }
        round += 1;
    }
    std::fs::remove_file(filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let status = s.ok("alayasiki_status", json!({}));
        if status["jobs"]["pending"] == 0 || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(status["jobs"]["pending"], 0, "{status}");
    assert_eq!(status["jobs"]["failed"], 0, "{status}");
    let found = s.query("heldmarkerq held7word");
    assert_eq!(
        found["evidence"][0]["document_id"],
        held.as_str(),
        "{found}"
    );
    let (exit, _) = s.close();
    assert!(exit.success());
}

/// A reply during a disk fault: prompt, never `internal`, no path; an
/// error names `fault`. Returns whether it was an error.
fn names_the_fault(data: &Path, fault: &str, r: &Value, took: Duration) -> bool {
    assert!(took < Duration::from_secs(10), "a reply took {took:?}: {r}");
    let text = r.to_string();
    assert!(!text.contains("internal"), "{text}");
    assert!(
        !text.contains(data.to_str().unwrap()),
        "a path leaked: {text}"
    );
    let is_error = r["isError"] == true || r.get("error").is_some();
    if is_error {
        assert!(
            text.contains(&format!("unavailable: storage {fault}")),
            "{text}"
        );
    }
    is_error
}

/// Starts a server on `data` after the fault was mended and checks that
/// every acknowledged document is there exactly once, indexed, and that
/// nothing else is.
fn all_there_after_restart(data: &Path, acknowledged: &[(String, String)]) {
    integrity_ok(data);
    let mut s = Server::ready(data);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let status = s.ok("alayasiki_status", json!({}));
        if status["jobs"]["pending"] == 0 || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status["jobs"]["pending"], 0, "{status}");
    assert_eq!(status["jobs"]["failed"], 0, "{status}");
    assert_eq!(status["documents"], acknowledged.len(), "{status}");
    for (marker, id) in acknowledged {
        let found = s.query(marker);
        let hits: Vec<&str> = found["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["text"]
                    .as_str()
                    .is_some_and(|t| t.contains(marker.as_str()))
            })
            .map(|e| e["document_id"].as_str().unwrap())
            .collect();
        assert_eq!(hits, vec![id.as_str()], "{marker}: {found}");
    }
    let (exit, _) = s.close();
    assert!(exit.success());
}

/// Ingests `n` notes, each with a marker of its own; returns them with
/// their document ids.
fn seed(s: &mut Server, tag: &str, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let marker = format!("{tag}marker{i}q");
            let id = s.ingest(&format!("{marker} is a note about the east valves"));
            (marker, id)
        })
        .collect()
}

#[test]
fn a_failing_disk_is_named_in_every_refusal_and_loses_nothing_acknowledged() {
    let Some(disk) = LoopDisk::mount(48 << 20) else {
        return;
    };
    let data = disk.path().join("memory");
    let mut s = Server::ready(&data);
    let mut acknowledged = seed(&mut s, "failing", 6);
    disk.fail();
    let mut refused = 0;
    for i in 0..4 {
        let marker = format!("failingafter{i}q");
        let started = Instant::now();
        let r = s.request(
            "tools/call",
            json!({"name": "alayasiki_ingest",
                   "arguments": {"content": format!("{marker} written as the disk failed")}}),
        );
        let r = &r["result"];
        if names_the_fault(&data, "failing", r, started.elapsed()) {
            refused += 1;
        } else {
            let reply: Value =
                serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
            acknowledged.push((marker, reply["document_id"].as_str().unwrap().to_string()));
        }
    }
    assert!(refused > 0, "the failing disk never refused a write");
    for (tool, args) in [
        ("alayasiki_query", json!({"query": "east valves"})),
        ("alayasiki_status", json!({})),
    ] {
        let started = Instant::now();
        let r = s.request("tools/call", json!({"name": tool, "arguments": args}));
        names_the_fault(&data, "failing", &r["result"], started.elapsed());
    }
    let (_, took) = s.close();
    assert!(took < Duration::from_secs(10), "exit took {took:?}");

    disk.remount("errors=remount-ro");
    all_there_after_restart(&data, &acknowledged);
}

#[test]
fn a_disk_turned_read_only_keeps_reads_and_a_start_on_it_is_refused_clearly() {
    let Some(disk) = LoopDisk::mount(48 << 20) else {
        return;
    };
    let data = disk.path().join("memory");
    let mut s = Server::ready(&data);
    let acknowledged = seed(&mut s, "readonly", 6);
    disk.turn_read_only();
    for i in 0..3 {
        let started = Instant::now();
        let r = s.request(
            "tools/call",
            json!({"name": "alayasiki_ingest",
                   "arguments": {"content": format!("readonlyafter{i}q on a read-only disk")}}),
        );
        assert!(
            names_the_fault(&data, "read-only", &r["result"], started.elapsed()),
            "a write on a read-only disk was acknowledged: {r}"
        );
    }
    // Reads keep working: the evidence is there, and quickly.
    let started = Instant::now();
    let found = s.query("readonlymarker3q");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        found["evidence"][0]["document_id"], acknowledged[3].1,
        "{found}"
    );
    let status = s.ok("alayasiki_status", json!({}));
    assert_eq!(status["documents"], acknowledged.len(), "{status}");
    let (_, took) = s.close();
    assert!(took < Duration::from_secs(10), "exit took {took:?}");

    // A start on a read-only file system is refused, saying why.
    disk.remount("ro");
    let out = Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
        .arg("--data-dir")
        .arg(&data)
        .env("ALAYASIKI_LOG", "warn")
        .env("ALAYASIKI_IN_PROCESS", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started on a read-only disk");
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    disk.remount("errors=remount-ro");
    all_there_after_restart(&data, &acknowledged);
}

/// `alayasiki-mcp ingest PATH` on a disk that fills up stops at the first
/// file the disk refuses, with status 1, naming the full disk and the files
/// it did not read (it failed every remaining file one by one, then waited
/// for space forever, retrying every 2 s). Indexing held up by the disk
/// for `BULK_FAULT_GIVE_UP_MS` ends a run the same way.
#[test]
fn a_bulk_ingest_on_a_full_disk_stops_naming_it() {
    let Some(disk) = SmallDisk::mount(6 << 20) else {
        return;
    };
    let files = TempDir::new("full-disk-files");
    for i in 0..400 {
        let text = format!("Pump log {i}: the north pump ran dry at dawn. ").repeat(40);
        std::fs::write(files.path().join(format!("log-{i:03}.txt")), text).unwrap();
    }
    let data = disk.path().join("memory");
    Server::ready(&data).close();
    disk.fill(256 * 1024);
    let started = Instant::now();
    let out = common::cli(&data, &["ingest", files.path().to_str().unwrap()]);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert!(stderr.contains("storage full"), "{stderr}");
    assert!(
        stderr.contains("stopped: the disk refused writes"),
        "{stderr}"
    );
    assert!(!stderr.contains("internal"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("not yet stored:"), "{stdout}");
    let failed = stdout
        .lines()
        .filter(|l| l.contains("storage full"))
        .count();
    assert!(
        (1..=64).contains(&failed),
        "{failed} files failed one by one: {stdout}"
    );
}

/// `import` on a full disk stops at the first line the disk refuses,
/// saying how many lines before it are kept, though many lines are in
/// flight at once; once space returns the same command goes on from
/// there, and every line is stored exactly once.
#[test]
fn an_import_on_a_full_disk_stops_at_a_line_and_goes_on_from_it_once_space_returns() {
    // Room for the whole file (about 8 KiB a line, the log included),
    // once the filler is gone.
    let Some(disk) = SmallDisk::mount(24 << 20) else {
        return;
    };
    let files = TempDir::new("full-disk-import");
    let file = files.path().join("memory.jsonl");
    let lines = 1200;
    let text: String = (0..lines)
        .map(|i| {
            let observation = format!("pump {i} ran dry at dawn and was primed again. ").repeat(4);
            format!(
                "{}\n",
                json!({"type": "entity", "name": format!("Pump {i}"), "entityType": "artifact",
                       "observations": [observation]})
            )
        })
        .collect();
    std::fs::write(&file, text).unwrap();
    let data = disk.path().join("memory");
    Server::ready(&data).close();
    let filler = disk.fill(512 * 1024);
    let out = common::cli(&data, &["import", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("storage full"), "{stderr}");
    assert!(!stderr.contains("internal"), "{stderr}");
    // "line N: ...; stopped here: the K line(s) imported before it are
    // kept": lines before N may only have been imported, never skipped.
    let message = stderr
        .lines()
        .find(|l| l.contains("stopped here"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let number = |after: &str| -> usize {
        let at = message.find(after).unwrap() + after.len();
        message[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (line, kept) = (number("line "), number("stopped here: the "));
    assert!(line > 1 && line <= lines, "{message}");
    assert_eq!(kept, line - 1, "{message}");

    std::fs::remove_file(filler).unwrap();
    let out = common::cli_ok(&data, &["import", file.to_str().unwrap()]);
    let report = out.lines().next().unwrap();
    let count = |what: &str| -> usize {
        let at = report.find(what).unwrap();
        report[..at]
            .trim_end()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (imported, present) = (count(" document(s) imported"), count(" already present"));
    assert_eq!(imported + present, lines, "{report}");
    assert!(present >= kept, "{report}");
    assert!(report.ends_with("0 line(s) skipped"), "{report}");
    let mut s = Server::ready(&data);
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], lines);
    s.close();
}
