//! The rows the writer changed, published once their transaction has
//! committed: what keeps the admission catalogs current without a column,
//! table or trigger in the database (a replica applies the same statements
//! through the same writer connection, so it publishes the same way).
//!
//! SQLite's update hook names every `documents` and `chunks` row the writer
//! inserts, updates or deletes (a cascade too) while its transaction runs;
//! they wait in `pending`. Its WAL hook runs after each commit, once the
//! commit is visible to new readers and before any caller hears of it:
//! [`ChangeFeed::publish`] then stamps the pending rows with the next
//! epoch. A reader that loads the epoch before its snapshot begins knows
//! the snapshot holds every commit up to that epoch, so the rows published
//! by then can be read back in it (see `Catalogs::for_query`).
//!
//! Rows of a transaction that rolled back are published with the next
//! commit: re-reading a row that did not change costs a lookup, nothing
//! else. `document_fields` has no rowid and is not hooked: it is written
//! only with its document's row, and deleted with it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Changed rows kept for catalogs to catch up with (about 16 bytes
/// each). A catalog that fell further behind, or a transaction that
/// changed more rows than this (a compaction renumbering every slot, a
/// large forget), is rebuilt instead of caught up.
pub const MAX_PUBLISHED_CHANGES: usize = 65_536;

/// A row the writer changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Changed {
    /// `documents.id`.
    Document(i64),
    /// `chunks.id`.
    Chunk(i64),
}

/// What catalogs catch up from (see the module docs).
#[derive(Default)]
pub struct ChangeFeed {
    /// Rows changed since the last commit, and whether more were changed
    /// than [`MAX_PUBLISHED_CHANGES`] (then they are not listed).
    pending: Mutex<(Vec<Changed>, bool)>,
    published: Mutex<Published>,
    /// The epoch of the last publication.
    epoch: AtomicU64,
}

#[derive(Default)]
struct Published {
    /// Rows with the epoch that published them, oldest first.
    rows: VecDeque<(u64, Changed)>,
    /// Rows of this epoch and before may have been dropped.
    lost_through: u64,
}

/// What a catalog at some epoch must read again to reach a later one.
#[derive(Debug, PartialEq, Eq)]
pub enum CatchUp {
    /// These rows (some maybe more than once).
    Rows(Vec<Changed>),
    /// Rows it needed were dropped: rebuild.
    Rebuild,
}

impl ChangeFeed {
    /// From the writer's update hook: `table`'s row `rowid` changed.
    pub fn note(&self, table: &str, rowid: i64) {
        let row = match table {
            "documents" => Changed::Document(rowid),
            "chunks" => Changed::Chunk(rowid),
            _ => return,
        };
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let (rows, overflowed) = &mut *pending;
        if *overflowed || rows.last() == Some(&row) {
            return;
        }
        if rows.len() == MAX_PUBLISHED_CHANGES {
            rows.clear();
            *overflowed = true;
            return;
        }
        rows.push(row);
    }

    /// From the writer's WAL hook, after a commit: publishes what changed.
    pub fn publish(&self) {
        let (rows, overflowed) = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            (
                std::mem::take(&mut pending.0),
                std::mem::take(&mut pending.1),
            )
        };
        if rows.is_empty() && !overflowed {
            return;
        }
        let mut published = self.published.lock().unwrap_or_else(|p| p.into_inner());
        let epoch = self.epoch.load(Ordering::Acquire) + 1;
        if overflowed {
            published.rows.clear();
            published.lost_through = epoch;
        }
        for row in rows {
            if published.rows.len() == MAX_PUBLISHED_CHANGES {
                if let Some((dropped, _)) = published.rows.pop_front() {
                    published.lost_through = published.lost_through.max(dropped);
                }
            }
            published.rows.push_back((epoch, row));
        }
        // Stored last, under the lock: a reader that sees this epoch finds
        // its rows.
        self.epoch.store(epoch, Ordering::Release);
    }

    /// The epoch of the last publication (load it before the snapshot
    /// that reads the rows back begins).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The rows published after epoch `from` up to `to`.
    pub fn since(&self, from: u64, to: u64) -> CatchUp {
        let published = self.published.lock().unwrap_or_else(|p| p.into_inner());
        if published.lost_through > from {
            return CatchUp::Rebuild;
        }
        // Epochs grow along the queue: skip to the first after `from`.
        let start = published.rows.partition_point(|(e, _)| *e <= from);
        CatchUp::Rows(
            published
                .rows
                .range(start..)
                .take_while(|(e, _)| *e <= to)
                .map(|(_, r)| *r)
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_published_by_commit_and_read_back_between_epochs() {
        let feed = ChangeFeed::default();
        feed.note("documents", 1);
        feed.note("documents", 1);
        feed.note("chunks", 7);
        feed.note("entities", 3);
        assert_eq!(feed.epoch(), 0);
        assert_eq!(feed.since(0, 0), CatchUp::Rows(vec![]));
        feed.publish();
        feed.publish(); // nothing pending: no new epoch
        feed.note("documents", 2);
        feed.publish();
        assert_eq!(feed.epoch(), 2);
        let one = vec![Changed::Document(1), Changed::Chunk(7)];
        assert_eq!(feed.since(0, 1), CatchUp::Rows(one));
        assert_eq!(feed.since(1, 2), CatchUp::Rows(vec![Changed::Document(2)]));
        assert_eq!(feed.since(2, 2), CatchUp::Rows(vec![]));
    }

    #[test]
    fn a_catalog_behind_what_was_dropped_is_told_to_rebuild() {
        let feed = ChangeFeed::default();
        for i in 0..MAX_PUBLISHED_CHANGES as i64 {
            feed.note("chunks", i);
            feed.publish();
        }
        assert!(
            matches!(feed.since(0, feed.epoch()), CatchUp::Rows(r) if r.len() == MAX_PUBLISHED_CHANGES)
        );
        feed.note("chunks", -1);
        feed.publish();
        assert_eq!(feed.since(0, feed.epoch()), CatchUp::Rebuild);
        assert!(matches!(feed.since(1, feed.epoch()), CatchUp::Rows(_)));
        // One transaction changing more than can be kept: everyone rebuilds.
        for i in 0..=MAX_PUBLISHED_CHANGES as i64 {
            feed.note("documents", i);
        }
        feed.publish();
        let last = feed.epoch();
        assert_eq!(feed.since(last - 1, last), CatchUp::Rebuild);
        assert_eq!(feed.since(last, last), CatchUp::Rows(vec![]));
    }
}
