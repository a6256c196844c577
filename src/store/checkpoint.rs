//! The checkpointer: folds the write-ahead log back into the database on
//! its own thread, so the writer thread never spends its time copying
//! pages.
//!
//! SQLite's automatic checkpoint runs inside the commit that crossed the
//! threshold, on the committing connection: with one writer thread, every
//! checkpoint stalled every write behind it (about 7% of the writer's time
//! during ingestion). Here the writer's commit hook only nudges this thread
//! once the log holds [`WAL_CHECKPOINT_PAGES`]; a passive checkpoint on a
//! second connection copies the pages while the writer goes on committing.
//! Once the log reaches [`WAL_MAX_PAGES`] the writer checkpoints in line,
//! which copies what is left, syncs the database and lets the log start
//! over, so it stays bounded whatever happens. Readers pin the log while
//! they hold a snapshot, so long reads are split into short statements
//! (the community rebuild's graph read, `RELATIONS_PER_READ`).

use crossbeam_channel::{Receiver, Sender};
use rusqlite::wal::CheckpointMode;
use rusqlite::Connection;
use std::path::Path;
use std::thread::JoinHandle;

use super::db;
use crate::config::Durability;
use crate::error::Result;

/// WAL pages (4 KiB each) after which a commit asks for a checkpoint.
/// SQLite's default (1000 pages) copied the same hot index pages again at
/// every checkpoint; a 16 MiB log copies each of them once per 16 MiB
/// written, and readers pay nothing measurable for the longer log.
pub const WAL_CHECKPOINT_PAGES: i32 = 4096;

/// WAL pages at which the writer stops waiting for the checkpointer and
/// checkpoints in line (256 MiB of log). A passive checkpoint running
/// beside a busy writer copies up to the frame it started from, and syncs
/// the database file only if no frame was added meanwhile, which with the
/// writer busy never happens; only a log copied to its end, and the
/// database synced, can start over. So the in-line checkpoint, with the
/// writer stopped, copies what the checkpointer left and syncs every page
/// copied since the last restart: 110–250 ms each at 100k entity-rich
/// documents, 23% of an ingest's time with a 64 MiB log. Four times the log
/// did it a quarter as often: 395–407 → 457–486 docs/s from 100k to 115k
/// (BENCHMARKS.md, ninth session). The log file keeps its largest size
/// until the store is closed.
pub const WAL_MAX_PAGES: i32 = 16 * WAL_CHECKPOINT_PAGES;

/// Past [`WAL_MAX_PAGES`], frames written between two in-line attempts.
pub const WAL_RETRY_PAGES: i32 = WAL_CHECKPOINT_PAGES / 4;

/// Installs the commit hook on the writer connection and starts the
/// checkpointer thread. The thread ends once the writer connection (which
/// owns the hook, and with it the only sender) is dropped.
pub(super) fn start(
    writer: &mut Connection,
    dir: &Path,
    durability: Durability,
) -> Result<JoinHandle<()>> {
    let conn = db::open_checkpointer(dir, durability)?;
    let (nudge, nudged): (Sender<()>, Receiver<()>) = crossbeam_channel::bounded(1);
    writer.execute_batch("PRAGMA wal_autocheckpoint=0")?;
    // Frames in the log at the last nudge: a checkpoint is asked for once
    // another WAL_CHECKPOINT_PAGES were written since, so each one copies a
    // full log's worth and a hot page once, not once per commit. Likewise
    // for the in-line fallback: a long read (a community rebuild reading
    // the graph) pins the log, and a checkpoint after every commit would
    // only rediscover that.
    let (mut nudged_at, mut inline_at) = (0, 0);
    writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
        if pages < nudged_at.max(inline_at) {
            (nudged_at, inline_at) = (0, 0); // the log was restarted
        }
        if pages >= WAL_MAX_PAGES {
            if pages - inline_at >= WAL_RETRY_PAGES {
                inline_at = pages;
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
                if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                    log::warn!("checkpoint failed: {e}");
                }
            }
        })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{plain_document, temp_store};
    use crate::store::Tenant;
    use std::time::{Duration, Instant};

    /// Distinct originals of `bytes` each, admitted one per transaction.
    fn write_originals(store: &crate::store::Store, tenant: &Tenant, count: usize, bytes: usize) {
        for i in 0..count {
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
        write_originals(&store, &tenant, 24, log_bytes / 16);
        let deadline = Instant::now() + Duration::from_secs(20);
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
}
