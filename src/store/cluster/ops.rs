//! The operation ledger: `cluster_ops`, one row per operation a log
//! entry holds, under a unique key, written in the entry's own rqlite
//! transaction (`replica`), so that an operation sent again, in whatever
//! entry, is refused whole.

use crate::store::write_log::{Recorded, RELEASE_MARK, SAVEPOINT_MARK};

/// The operations each entry holds: one row per operation, `op` naming it
/// (the node's prefix and a count) and `seq` its entry. A plain insert, no
/// upsert: an operation the cluster holds already fails the whole rqlite
/// transaction that sends it again. Pruned with the log.
pub const OPS_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_ops (
    op  TEXT    PRIMARY KEY,
    seq INTEGER NOT NULL
) WITHOUT ROWID";

/// Records entry `?1`'s operations, `?2` a JSON array of their ids: one
/// statement however many the entry holds.
pub(super) const RECORD_OPS: &str =
    "INSERT INTO cluster_ops(op, seq) SELECT value, ?1 FROM json_each(?2)";

/// How many operations `statements` hold: each savepoint that kept a
/// statement is one, and statements outside any savepoint (a write in a
/// transaction of its own, a tenant registered first) are one more.
pub(super) fn operations(statements: &[Recorded]) -> usize {
    let (mut ops, mut inside, mut kept, mut outside) = (0, false, false, false);
    for r in statements {
        match r.sql.as_str() {
            SAVEPOINT_MARK => (inside, kept) = (true, false),
            RELEASE_MARK => {
                ops += usize::from(kept);
                inside = false;
            }
            _ if inside => kept = true,
            _ => outside = true,
        }
    }
    ops + usize::from(outside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_savepoint_that_kept_a_statement_is_one_operation() {
        let r = |sql: &str| Recorded {
            sql: sql.into(),
            params: vec![],
        };
        let write = || r("UPDATE t SET a = 1");
        let (open, close) = (|| r(SAVEPOINT_MARK), || r(RELEASE_MARK));
        assert_eq!(operations(&[]), 0);
        // Two writes, and one rolled back (its statements rewound).
        let batch = [
            open(),
            write(),
            write(),
            close(),
            open(),
            close(),
            open(),
            write(),
            close(),
        ];
        assert_eq!(operations(&batch), 2);
        // A write in a transaction of its own, with no savepoint.
        assert_eq!(operations(&[write(), write()]), 1);
        // A tenant registered before the batch's first write.
        assert_eq!(operations(&[write(), open(), write(), close()]), 2);
    }
}
