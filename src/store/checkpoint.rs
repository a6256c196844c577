//! The checkpointer: folds the write-ahead log back into the database on
//! its own thread, so the writer thread never spends its time copying
//! pages, and keeps the log small.
//!
//! SQLite's automatic checkpoint runs inside the commit that crossed the
//! threshold, on the committing connection: with one writer thread, every
//! checkpoint stalled every write behind it (about 7% of the writer's time
//! during ingestion). Here the writer's commit hook only nudges this thread
//! once the log holds [`WAL_CHECKPOINT_PAGES`]; a passive checkpoint on a
//! second connection copies the pages while the writer goes on committing.
//! Once the log reaches [`WAL_MAX_PAGES`] the writer checkpoints in line,
//! which copies what is left, syncs the database and lets the log start
//! over; the file is cut back to [`WAL_LIMIT_BYTES`] when it does, so it
//! stays bounded whatever happens. Readers pin the log while they hold a
//! snapshot, so long reads are split into short statements (the community
//! rebuild's graph read, `RELATIONS_PER_READ`).
//!
//! A log that starts over keeps its file, so without more the log of a
//! small memory (one LoCoMo conversation: 680 turns, 48 MB of log beside a
//! 1 MB database) kept its size while the server idled for hours. Once no
//! write came for [`IDLE_CHECKPOINT_MS`], the writer checkpoints with
//! TRUNCATE ([`idle`]): everything is copied and synced and the file is
//! emptied.

use crossbeam_channel::{Receiver, Sender};
use rusqlite::wal::CheckpointMode;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::db;
use crate::config::Durability;
use crate::error::Result;

/// WAL pages (4 KiB each) after which a commit asks for a checkpoint.
/// SQLite's default (1000 pages) copied the same hot index pages again at
/// every checkpoint; a 16 MiB log copies each of them once per 16 MiB
/// written, and readers pay nothing measurable for the longer log.
pub const WAL_CHECKPOINT_PAGES: i32 = 4096;

/// The most the log file may hold on disk during sustained ingestion
/// (64 MiB). It is the journal size limit of the writer connection, so
/// SQLite cuts the file back to it when the log starts over, and the point
/// at which the writer checkpoints in line ([`WAL_MAX_PAGES`]) leaves room
/// below it for the commit that crosses that point. It is exceeded only
/// while a reader pins the log, or by a single transaction writing more
/// than [`WAL_CHECKPOINT_PAGES`] pages on its own; the next restart cuts
/// the file back.
pub const WAL_LIMIT_BYTES: i64 = 64 * 1024 * 1024;

/// WAL pages at which the writer stops waiting for the checkpointer and
/// checkpoints in line: [`WAL_LIMIT_BYTES`] less one nudge's worth of
/// pages (12288 pages, 48 MiB of log). A passive checkpoint running
/// beside a busy writer copies up to the frame it started from, and syncs
/// the database file only if no frame was added meanwhile, which with the
/// writer busy never happens; only a log copied to its end, and the
/// database synced, can start over. So the in-line checkpoint, with the
/// writer stopped, copies what the checkpointer left and syncs every page
/// copied since the last restart: 110–250 ms each at 100k entity-rich
/// documents (BENCHMARKS.md, ninth session). A 256 MiB log did that a
/// quarter as often, but kept up to 256 MiB on disk; the bound on disk
/// comes first (issue 20).
pub const WAL_MAX_PAGES: i32 = (WAL_LIMIT_BYTES / WAL_PAGE_BYTES) as i32 - WAL_CHECKPOINT_PAGES;

/// Bytes of one page in the log (the database's page size, SQLite's
/// default; the frame header's 24 bytes are not counted).
const WAL_PAGE_BYTES: i64 = 4096;

/// Time without writes after which the writer checkpoints with TRUNCATE,
/// emptying the log file (see [`idle`]).
pub const IDLE_CHECKPOINT_MS: u64 = 2000;

/// After an idle checkpoint that could not finish (a reader held an old
/// snapshot, or the checkpointer thread was copying), the writer tries
/// again after this long without writes.
pub const IDLE_CHECKPOINT_RETRY_MS: u64 = 250;

/// How long the idle checkpoint waits for readers to leave the log before
/// giving up until the next attempt. Short: a write that arrives meanwhile
/// waits for it.
const IDLE_CHECKPOINT_BUSY: Duration = Duration::from_millis(100);

/// Past [`WAL_MAX_PAGES`], frames written between two in-line attempts.
pub const WAL_RETRY_PAGES: i32 = WAL_CHECKPOINT_PAGES / 4;

/// Installs the commit hook on the writer connection and starts the
/// checkpointer thread. The thread ends once the writer connection (which
/// owns the hook, and with it the only sender) is dropped. The hook calls
/// `after_commit` first after every commit (SQLite allows one such hook
/// per connection): the admission catalogs' feed publishes there.
pub(super) fn start(
    writer: &mut Connection,
    dir: &Path,
    durability: Durability,
    mut after_commit: impl FnMut() + Send + 'static,
) -> Result<JoinHandle<()>> {
    let conn = db::open_checkpointer(dir, durability)?;
    let (nudge, nudged): (Sender<()>, Receiver<()>) = crossbeam_channel::bounded(1);
    writer.execute_batch(&format!(
        "PRAGMA wal_autocheckpoint=0; PRAGMA journal_size_limit={WAL_LIMIT_BYTES};"
    ))?;
    // Frames in the log at the last nudge: a checkpoint is asked for once
    // another WAL_CHECKPOINT_PAGES were written since, so each one copies a
    // full log's worth and a hot page once, not once per commit. Likewise
    // for the in-line fallback: a long read (a community rebuild reading
    // the graph) pins the log, and a checkpoint after every commit would
    // only rediscover that.
    let (mut nudged_at, mut inline_at) = (0, 0);
    // Held by whoever checkpoints. SQLite refuses a second checkpoint while
    // one runs (without waiting, busy handler or not), so without this the
    // in-line checkpoint failed whenever the checkpointer thread was still
    // copying, and the log grew on past its limit.
    let turn = Arc::new(Mutex::new(()));
    let checkpointer_turn = turn.clone();
    writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
        after_commit();
        if pages < nudged_at.max(inline_at) {
            (nudged_at, inline_at) = (0, 0); // the log was restarted
        }
        if pages >= WAL_MAX_PAGES {
            if pages - inline_at >= WAL_RETRY_PAGES {
                inline_at = pages;
                // Waits for the checkpointer's pass, if one runs: what it
                // copies is not copied again here.
                let _turn = turn.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(e) = wal.checkpoint_v2(CheckpointMode::PASSIVE) {
                    log::debug!("in-line checkpoint deferred: {e}");
                }
            }
        } else if pages - nudged_at >= WAL_CHECKPOINT_PAGES {
            nudged_at = pages;
            // Full means a nudge is already pending.
            let _ = nudge.try_send(());
        }
        // Never an error: the commit that called this has happened, and an
        // error here would make SQLite report it as failed.
        Ok(())
    }))?;
    Ok(std::thread::Builder::new()
        .name("store-checkpoint".into())
        .spawn(move || {
            while nudged.recv().is_ok() {
                // Passive: never waits for the writer or readers; what it
                // cannot copy now is copied at the next nudge.
                let _turn = checkpointer_turn.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                    log::warn!("checkpoint failed: {e}");
                }
            }
        })?)
}

/// The idle checkpoint, on the writer connection with no write running:
/// copies the whole log into the database, syncs it and empties the log
/// file. Returns whether it finished; it gives up (and the writer tries
/// again later) while a reader still reads from the log or another
/// checkpoint is running. Durability is unchanged: SQLite syncs the log
/// before copying from it, and the database before it empties the log.
pub(super) fn idle(conn: &Connection) -> bool {
    if let Err(e) = conn.busy_timeout(IDLE_CHECKPOINT_BUSY) {
        log::warn!("idle checkpoint skipped: {e}");
        return false;
    }
    // (busy, frames in the log, frames copied): busy is 1 if it could not
    // finish.
    let outcome = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        r.get::<_, i64>(0)
    });
    if let Err(e) = conn.busy_timeout(db::BUSY_TIMEOUT) {
        log::warn!("cannot restore the writer's busy timeout: {e}");
    }
    match outcome {
        Ok(busy) => busy == 0,
        Err(e) => {
            log::debug!("idle checkpoint deferred: {e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{plain_document, temp_store};
    use crate::store::Tenant;
    use std::time::{Duration, Instant};

    /// Distinct originals of `bytes` each, numbered from `first`, admitted
    /// one per transaction.
    fn write_originals(
        store: &crate::store::Store,
        tenant: &Tenant,
        first: usize,
        count: usize,
        bytes: usize,
    ) {
        for i in first..first + count {
            let mut original = format!("document {i} ").into_bytes();
            original.resize(bytes, b'a' + (i % 26) as u8);
            let doc = plain_document(original);
            store.write(tenant, move |w| w.admit(doc, 1)).unwrap();
        }
    }

    #[test]
    fn the_log_is_folded_back_without_the_writer_doing_it() {
        let (dir, store) = temp_store("ckpt");
        let tenant = Tenant::new("t").unwrap();
        let db_file = dir.join(db::DB_FILE);
        let before = std::fs::metadata(&db_file).unwrap().len();
        // Past the nudge threshold, well short of the in-line limit: only
        // the checkpointer can have copied pages into the database file.
        let log_bytes = WAL_CHECKPOINT_PAGES as usize * 4096;
        write_originals(&store, &tenant, 0, 24, log_bytes / 16);
        // Before the idle checkpoint could have done it.
        let deadline = Instant::now() + Duration::from_millis(IDLE_CHECKPOINT_MS - 200);
        let copied = loop {
            let now = std::fs::metadata(&db_file).unwrap().len();
            if now > before + (log_bytes / 2) as u64 || Instant::now() > deadline {
                break now;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            copied > before + (log_bytes / 2) as u64,
            "database file {before} -> {copied} bytes: no checkpoint ran"
        );
        store.close();
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn wal_len(dir: &std::path::Path) -> u64 {
        std::fs::metadata(dir.join(format!("{}-wal", db::DB_FILE)))
            .map(|m| m.len())
            .unwrap_or(0)
    }

    #[test]
    fn the_log_file_stays_within_its_limit_and_is_cut_back_after_a_reader_held_it() {
        let (dir, store) = temp_store("ckpt-limit");
        let tenant = Tenant::new("t").unwrap();
        // 1 MiB originals: each commit adds ~260 frames, well under the room
        // WAL_MAX_PAGES leaves below the limit.
        let per_write = 1 << 20;
        let written = std::cell::Cell::new(0);
        let writes = |n: usize| {
            let mut largest = 0;
            for _ in 0..n {
                write_originals(&store, &tenant, written.get(), 1, per_write);
                written.set(written.get() + 1);
                largest = largest.max(wal_len(&dir));
            }
            largest
        };
        // Twice the limit's worth of log, no reader: it started over in
        // place at WAL_MAX_PAGES, never past the limit.
        let frames = WAL_MAX_PAGES as u64 * (WAL_PAGE_BYTES as u64 + 24);
        let largest = writes(2 * (WAL_LIMIT_BYTES as usize / per_write));
        assert!(
            largest > frames && largest <= WAL_LIMIT_BYTES as u64,
            "log file at most {largest} bytes (in-line point {frames}, limit {WAL_LIMIT_BYTES})"
        );
        // A reader holding a snapshot keeps the log from starting over, so
        // it grows past the limit...
        let pin = Connection::open(dir.join(db::DB_FILE)).unwrap();
        pin.execute_batch("BEGIN").unwrap();
        let _: i64 = pin
            .query_row("SELECT count(*) FROM originals", [], |r| r.get(0))
            .unwrap();
        let pinned = writes(WAL_LIMIT_BYTES as usize / per_write + 8);
        assert!(pinned > WAL_LIMIT_BYTES as u64, "log at {pinned} bytes");
        // ...and once the reader is gone, the restart cuts the file back.
        pin.execute_batch("COMMIT").unwrap();
        drop(pin);
        writes(WAL_LIMIT_BYTES as usize / per_write / 2 + 4);
        let after = wal_len(&dir);
        assert!(
            after <= WAL_LIMIT_BYTES as u64,
            "log file {after} bytes after the reader left"
        );
        store.close();
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_idle_store_empties_its_log_into_the_database() {
        let (dir, store) = temp_store("ckpt-idle");
        let tenant = Tenant::new("t").unwrap();
        write_originals(&store, &tenant, 0, 50, 4096);
        let written = Instant::now();
        assert!(wal_len(&dir) > 0, "the writes are in the log");
        let deadline = written + Duration::from_millis(IDLE_CHECKPOINT_MS + 3000);
        while wal_len(&dir) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(wal_len(&dir), 0, "the log was not emptied");
        assert!(written.elapsed() >= Duration::from_millis(IDLE_CHECKPOINT_MS));
        // Everything is in the database file itself: a copy of it alone,
        // without the log, holds every write.
        let copy = dir.join("copy.db");
        std::fs::copy(dir.join(db::DB_FILE), &copy).unwrap();
        let conn = Connection::open(&copy).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM originals", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 50);
        drop(conn);
        // The next write starts a new log, and the store goes on working.
        write_originals(&store, &tenant, 50, 1, 4096);
        assert!(wal_len(&dir) > 0);
        store.close();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
