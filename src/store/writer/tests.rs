//! The writer's tests: who syncs the log at each durability level, a failing
//! write undoing itself alone however it is batched, and the write tap
//! (whole batches for a tap that asks for them).

use super::*;
use crate::error::Result;
use crate::store::Tenant;

fn temp_dir(prefix: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(crate::ids::new_id(prefix));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn synchronous(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn full_durability_takes_over_the_log_sync() {
    let dir = temp_dir("walsync-full");
    let conn = super::super::db::open_writer(&dir, Durability::Full).unwrap();
    assert_eq!(synchronous(&conn), 2, "FULL until the writer takes over");
    let wal = WalSync::open(&conn, &dir, Durability::Full);
    assert!(wal.log.is_some());
    assert_eq!(synchronous(&conn), 1, "SQLite no longer syncs at commit");
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        .unwrap();
    wal.sync().unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn relaxed_durability_syncs_nothing() {
    let dir = temp_dir("walsync-normal");
    let conn = super::super::db::open_writer(&dir, Durability::Normal).unwrap();
    let wal = WalSync::open(&conn, &dir, Durability::Normal);
    assert!(wal.log.is_none());
    assert_eq!(synchronous(&conn), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn without_a_log_file_sqlite_keeps_syncing() {
    // A database not in WAL mode has no log to sync: the connection's
    // own FULL level must stay in force.
    let dir = temp_dir("walsync-nolog");
    let conn = Connection::open(dir.join(super::super::db::DB_FILE)).unwrap();
    conn.execute_batch("PRAGMA synchronous=FULL").unwrap();
    let wal = WalSync::open(&conn, &dir, Durability::Full);
    assert!(wal.log.is_none());
    assert_eq!(synchronous(&conn), 2);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Queues a write that holds the writer thread until the returned sender
/// sends (or is dropped): the writes queued meanwhile then run as one
/// batch.
fn hold_writer(
    store: &crate::store::Store,
    t: &crate::store::Tenant,
) -> crossbeam_channel::Sender<()> {
    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
    let (held_tx, held_rx) = crossbeam_channel::bounded::<()>(0);
    store
        .write_then(
            t,
            Commit::Durable,
            Batching::Shared,
            move |_| {
                held_tx.send(()).unwrap();
                let _ = release_rx.recv();
                Ok(())
            },
            |_: Result<()>| {},
        )
        .unwrap();
    held_rx.recv().unwrap();
    release_tx
}

/// Queues writes behind one that holds the writer, so that they all run
/// in one batch: shared ones, failing ones, and ones in transactions of
/// their own in between.
#[test]
fn a_failing_write_undoes_itself_alone_however_it_is_batched() {
    use crate::store::test_support::temp_store;
    use crate::store::{Store, Tenant};
    let (dir, store) = temp_store("writer-batching");
    let t = Tenant::new("t").unwrap();
    store
        .write(&t, |w| {
            w.exec("CREATE TABLE scratch(x TEXT NOT NULL)", [])?;
            Ok(())
        })
        .unwrap();
    let release_tx = hold_writer(&store, &t);
    let (outcome_tx, outcome_rx) = crossbeam_channel::unbounded();
    let queue = |store: &Store, name: &'static str, batching: Batching, fail: bool| {
        let outcomes = outcome_tx.clone();
        store
            .write_then(
                &t,
                Commit::Durable,
                batching,
                move |w| {
                    w.exec("INSERT INTO scratch(x) VALUES (?1)", [name])?;
                    if fail {
                        // After its own write: the failure must undo it.
                        w.exec("INSERT INTO scratch(x) VALUES (NULL)", [])?;
                    }
                    Ok(())
                },
                move |r: Result<()>| outcomes.send((name, r.is_ok())).unwrap(),
            )
            .unwrap();
    };
    queue(&store, "a", Batching::Shared, false);
    queue(&store, "b", Batching::Own, true);
    queue(&store, "c", Batching::Own, false);
    queue(&store, "d", Batching::Shared, false);
    queue(&store, "e", Batching::Shared, true);
    queue(&store, "f", Batching::Own, false);
    queue(&store, "g", Batching::Shared, false);
    release_tx.send(()).unwrap();
    let mut outcomes: Vec<(&str, bool)> = (0..7).map(|_| outcome_rx.recv().unwrap()).collect();
    outcomes.sort();
    let expected = [
        ("a", true),
        ("b", false),
        ("c", true),
        ("d", true),
        ("e", false),
        ("f", true),
        ("g", true),
    ];
    assert_eq!(outcomes, expected);
    let stored: Vec<String> = store
        .write(&t, |w| {
            let mut stmt = w.conn.raw().prepare("SELECT x FROM scratch ORDER BY x")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<String>>>()?)
        })
        .unwrap();
    assert_eq!(stored, ["a", "c", "d", "f", "g"]);
    store.close();
    std::fs::remove_dir_all(dir).unwrap();
}

/// The tap sees each committed transaction's writes with their values,
/// never a rolled-back operation's, and refusing a transaction rolls it
/// back.
#[test]
fn the_tap_sees_what_commits_and_can_refuse_it() {
    use crate::store::test_support::temp_store;
    use crate::store::{Recorded, Tenant};
    use rusqlite::types::Value;
    use std::sync::{Arc, Mutex};
    let (dir, store) = temp_store("writer-tap");
    let t = Tenant::new("t").unwrap();
    let seen: Arc<Mutex<Vec<Vec<Recorded>>>> = Arc::default();
    let refuse = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (log, no) = (seen.clone(), refuse.clone());
    store.set_write_tap(Some(Box::new(move |statements: &[Recorded]| {
        if no.load(std::sync::atomic::Ordering::SeqCst) {
            return Err("refused".into());
        }
        log.lock().unwrap().push(statements.to_vec());
        Ok(())
    })));
    let insert = |x: Option<&'static str>| {
        store.write(&t, move |w| {
            w.exec("INSERT INTO scratch(x) VALUES (?1)", [x])?;
            Ok(())
        })
    };
    store
        .write(&t, |w| {
            w.exec("CREATE TABLE scratch(x TEXT NOT NULL)", [])?;
            Ok(())
        })
        .unwrap();
    // In a transaction of its own, registering a new tenant, then
    // failing: the registration goes with it, and is never seen.
    let (failed_tx, failed_rx) = crossbeam_channel::bounded(1);
    store
        .write_then(
            &Tenant::new("u").unwrap(),
            Commit::Durable,
            Batching::Own,
            |w| {
                w.exec("INSERT INTO scratch(x) VALUES (NULL)", [])?;
                Ok(())
            },
            move |r: Result<()>| failed_tx.send(r.is_ok()).unwrap(),
        )
        .unwrap();
    assert!(!failed_rx.recv().unwrap());
    insert(Some("a")).unwrap();
    // Fails on its own NOT NULL: rolled back, so never seen.
    store
        .write(&t, |w| {
            w.exec("INSERT INTO scratch(x) VALUES (?1)", ["b"])?;
            w.exec("INSERT INTO scratch(x) VALUES (NULL)", [])?;
            Ok(())
        })
        .unwrap_err();
    refuse.store(true, std::sync::atomic::Ordering::SeqCst);
    insert(Some("c")).unwrap_err();
    refuse.store(false, std::sync::atomic::Ordering::SeqCst);

    let seen = seen.lock().unwrap().clone();
    // The first write registered the tenant: its row and its tables.
    assert!(seen[0]
        .iter()
        .any(|r| r.sql.contains("INSERT INTO tenants")));
    assert!(seen[0]
        .iter()
        .any(|r| r.sql.contains("CREATE VIRTUAL TABLE")));
    // Inside the savepoint the writer opened for it, marked so that a
    // follower opens one too.
    let last = seen.last().unwrap();
    let mark = |sql: &str| Recorded {
        sql: sql.into(),
        params: vec![],
    };
    assert_eq!(
        last,
        &[
            mark(SAVEPOINT_MARK),
            Recorded {
                sql: "INSERT INTO scratch(x) VALUES (?1)".into(),
                params: vec![Value::Text("a".into())],
            },
            mark(RELEASE_MARK),
        ]
    );
    assert_eq!(seen.len(), 2, "{seen:?}");
    let stored: Vec<String> = store
        .write(&t, |w| {
            let mut stmt = w.conn.raw().prepare("SELECT x FROM scratch ORDER BY x")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<String>>>()?)
        })
        .unwrap();
    assert_eq!(stored, ["a"]);
    store.close();
    std::fs::remove_dir_all(dir).unwrap();
}

/// A tap that asks for whole batches, and keeps what each commit held.
#[derive(Default, Clone)]
struct WholeBatches {
    commits: std::sync::Arc<std::sync::Mutex<Vec<Vec<crate::store::Recorded>>>>,
}

impl crate::store::write_log::Replicator for WholeBatches {
    fn commit(
        &self,
        _conn: &Connection,
        statements: &[crate::store::Recorded],
    ) -> std::result::Result<(), Refusal> {
        self.commits.lock().unwrap().push(statements.to_vec());
        Ok(())
    }

    fn whole_batches(&self) -> bool {
        true
    }
}

/// Under a tap that wants whole batches, writes of their own share the
/// batch's one transaction, each under a savepoint (so a failing one still
/// undoes itself alone), until the batch holds WHOLE_BATCH_STATEMENTS.
#[test]
fn a_tap_that_wants_whole_batches_gets_one_commit_per_batch() {
    use crate::store::test_support::temp_store;
    use crate::store::Tenant;
    let (dir, store) = temp_store("writer-whole");
    let t = Tenant::new("t").unwrap();
    store
        .write(&t, |w| {
            w.exec("CREATE TABLE scratch(x TEXT NOT NULL)", [])?;
            Ok(())
        })
        .unwrap();
    let tap = WholeBatches::default();
    store.set_write_tap(Some(Box::new(tap.clone())));
    let release_tx = hold_writer(&store, &t);
    let (outcome_tx, outcome_rx) = crossbeam_channel::unbounded();
    let queue = |name: &'static str, batching: Batching, rows: usize, fail: bool| {
        let outcomes = outcome_tx.clone();
        store
            .write_then(
                &t,
                Commit::Durable,
                batching,
                move |w| {
                    for _ in 0..rows {
                        w.exec("INSERT INTO scratch(x) VALUES (?1)", [name])?;
                    }
                    if fail {
                        w.exec("INSERT INTO scratch(x) VALUES (NULL)", [])?;
                    }
                    Ok(())
                },
                move |r: Result<()>| outcomes.send((name, r.is_ok())).unwrap(),
            )
            .unwrap();
    };
    queue("a", Batching::Shared, 1, false);
    queue("b", Batching::Own, 2, true);
    queue("c", Batching::Own, 2, false);
    // Fills the transaction: the next write starts another.
    queue("d", Batching::Shared, WHOLE_BATCH_STATEMENTS, false);
    queue("e", Batching::Own, 1, false);
    // Alone even in a whole batch: e's transaction ends before it, g's
    // begins after it.
    queue("f", Batching::Alone, 1, false);
    queue("g", Batching::Shared, 1, false);
    release_tx.send(()).unwrap();
    let mut outcomes: Vec<(&str, bool)> = (0..7).map(|_| outcome_rx.recv().unwrap()).collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        [
            ("a", true),
            ("b", false),
            ("c", true),
            ("d", true),
            ("e", true),
            ("f", true),
            ("g", true)
        ]
    );
    let commits = tap.commits.lock().unwrap().clone();
    let inserts = |c: &[crate::store::Recorded], name: &str| {
        c.iter()
            .filter(|r| r.params == [rusqlite::types::Value::Text(name.into())])
            .count()
    };
    // The held write, alone in its batch, recorded nothing and made no
    // commit; a, b (undone), c and d made one, e the next, then f and g.
    assert_eq!(commits.len(), 4, "{} commits", commits.len());
    let first = &commits[0];
    assert_eq!(inserts(first, "a"), 1);
    assert_eq!(inserts(first, "b"), 0, "a failed write left statements");
    assert_eq!(inserts(first, "c"), 2);
    assert_eq!(inserts(first, "d"), WHOLE_BATCH_STATEMENTS);
    let marks = |c: &[crate::store::Recorded], sql: &str| c.iter().filter(|r| r.sql == sql).count();
    // One savepoint each for a, b, c and d: b's opened and was released,
    // as on the writer.
    assert_eq!(marks(first, SAVEPOINT_MARK), 4);
    assert_eq!(marks(first, RELEASE_MARK), 4);
    assert_eq!(inserts(&commits[1], "e"), 1);
    assert_eq!(inserts(&commits[1], "f"), 0);
    assert_eq!(inserts(&commits[2], "f"), 1);
    assert_eq!(commits[2].len(), 1, "f alone, without a savepoint");
    assert_eq!(inserts(&commits[3], "g"), 1);
    let stored: i64 = store
        .write(&t, |w| {
            Ok(w.conn
                .raw()
                .query_row("SELECT count(*) FROM scratch WHERE x <> 'd'", [], |r| {
                    r.get(0)
                })?)
        })
        .unwrap();
    assert_eq!(stored, 6, "a, c twice, e, f and g");
    store.close();
    std::fs::remove_dir_all(dir).unwrap();
}

/// A tenant another node created is visible to readers as soon as its
/// commit is, before this node's writer registers it in the map (a replica
/// applies the entry, and a reader waiting for that position may come in
/// between).
#[test]
fn a_reader_finds_a_tenant_committed_without_this_writer() {
    let (dir, store) = crate::store::test_support::temp_store("tenant-elsewhere");
    let t = Tenant::new("elsewhere").unwrap();
    assert_eq!(store.reader(&t).unwrap().tenant_id, None);
    let other = Connection::open(dir.join(crate::store::DB_FILE)).unwrap();
    other
        .execute(
            "INSERT INTO tenants(id, name, created_at) VALUES (41, 'elsewhere', 0)",
            [],
        )
        .unwrap();
    drop(other);
    assert_eq!(store.reader(&t).unwrap().tenant_id, Some(41));
    // Cached from then on, as the writer's own tenants are.
    let cached = store.tenants.read().unwrap().get("elsewhere").copied();
    assert_eq!(cached, Some(41));
    store.close();
    std::fs::remove_dir_all(dir).unwrap();
}
