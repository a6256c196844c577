//! Facts that change, in the store: the statements of one holder's
//! single-valued family (see `knowledge::facts`) read with the time of
//! their documents, and the relations' `valid_from` / `valid_to` /
//! `superseded_by` settled from them.
//!
//! "Newer" is the document's own time, `coalesce(observed_at,
//! created_at)`: a note dated last year and stored today does not
//! supersede what a note dated last month says; it becomes history with
//! its own interval. Settling reads the whole family again (bounded by
//! [`MAX_FACT_STATEMENTS`]), so the outcome does not depend on the order
//! documents were stored or forgotten in, and a replica settles the same.

use rusqlite::params;
use std::sync::OnceLock;

use crate::error::Result;
use crate::knowledge::facts::{self, Holder, SingleValued, Statement};
use crate::knowledge::fragment::EntityKind;
use crate::store::tenant::{TenantReader, TenantWriter};

/// Most statements (pieces of evidence) read for one holder when
/// settling or showing a fact's history, newest first; older ones beyond
/// it are left as they were settled before.
pub const MAX_FACT_STATEMENTS: usize = 256;

/// One piece of evidence of a single-valued relation, as the query and
/// the settling read it.
#[derive(Debug, Clone)]
pub struct FactStatement {
    pub relation: i64,
    pub family: &'static str,
    /// The holder's entity and name.
    pub holder: i64,
    pub holder_name: String,
    /// The value's entity and name.
    pub value: i64,
    pub value_name: String,
    /// The predicate as first written ("lives in").
    pub label: String,
    pub supports: bool,
    /// The document's time (Unix ms): when it says this was so.
    pub at: i64,
    pub document_key: i64,
    pub chunk_key: i64,
    pub byte_start: i64,
    pub byte_end: i64,
}

impl FactStatement {
    pub fn statement(&self) -> Statement {
        Statement {
            relation: self.relation,
            value: self.value,
            supports: self.supports,
            at: self.at,
            order: (self.document_key, self.byte_start),
        }
    }
}

/// The read of [`statements_of`], made once: its predicate lists are the
/// family table's constants, not input.
fn statements_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        // A wording matches exactly, or (two words or more) at the end of a
        // longer predicate: "report moved to" (see `facts::single_valued`).
        let filter = |side: Holder| {
            let keys = facts::predicate_keys(side);
            let quote = |k: &str| k.replace('\'', "''");
            let exact: Vec<String> = keys.iter().map(|k| format!("'{}'", quote(k))).collect();
            let mut sql = format!("(predicate IN ({})", exact.join(","));
            for k in keys.iter().filter(|k| k.contains(' ')) {
                sql.push_str(&format!(" OR predicate LIKE '% {}'", quote(k)));
            }
            sql.push(')');
            sql
        };
        format!(
            "SELECT r.id, r.subject_id, s.name, s.kind, r.object_id, o.name, o.kind, r.label,
                    ev.supports, coalesce(d.observed_at, d.created_at), ev.document_id, ev.chunk_id,
                    ev.byte_start, ev.byte_end
               FROM relations r
               JOIN relation_evidence ev ON ev.relation_id = r.id
               JOIN documents d ON d.id = ev.document_id
               JOIN entities s ON s.id = r.subject_id
               JOIN entities o ON o.id = r.object_id
              WHERE r.id IN (SELECT id FROM relations WHERE tenant_id = ?1 AND subject_id = ?2
                                AND {} AND kind = 'pattern'
                             UNION ALL
                             SELECT id FROM relations WHERE object_id = ?2
                                AND {} AND kind = 'pattern')
                AND +r.tenant_id = ?1
              ORDER BY 10 DESC, ev.document_id DESC, ev.byte_start DESC
              LIMIT {MAX_FACT_STATEMENTS}",
            filter(Holder::Subject),
            filter(Holder::Object),
        )
    })
}

/// The statements of `holder`'s single-valued families, newest first (at
/// most [`MAX_FACT_STATEMENTS`]).
pub(in crate::store) fn statements_of(
    conn: &rusqlite::Connection,
    tenant_id: i64,
    holder: i64,
) -> Result<Vec<FactStatement>> {
    let mut stmt = conn.prepare_cached(statements_sql())?;
    let rows = stmt.query_map(params![tenant_id, holder], |r| {
        let subject: i64 = r.get(1)?;
        let subject_kind: String = r.get(3)?;
        let object: i64 = r.get(4)?;
        let object_kind: String = r.get(6)?;
        let label: String = r.get(7)?;
        let kind = |k: &str| EntityKind::parse(k).unwrap_or(EntityKind::Unknown);
        let found = facts::single_valued(&label, kind(&subject_kind), kind(&object_kind));
        let Some(SingleValued {
            family,
            holder: side,
        }) = found
        else {
            return Ok(None);
        };
        let (holder_id, value, holder_name, value_name) = match side {
            Holder::Subject => (
                subject,
                object,
                r.get::<_, String>(2)?,
                r.get::<_, String>(5)?,
            ),
            Holder::Object => (object, subject, r.get(5)?, r.get(2)?),
        };
        if holder_id != holder {
            return Ok(None);
        }
        Ok(Some(FactStatement {
            relation: r.get(0)?,
            family,
            holder: holder_id,
            holder_name,
            value,
            value_name,
            label,
            supports: r.get(8)?,
            at: r.get(9)?,
            document_key: r.get(10)?,
            chunk_key: r.get(11)?,
            byte_start: r.get(12)?,
            byte_end: r.get(13)?,
        }))
    })?;
    let mut out = Vec::new();
    for row in rows {
        out.extend(row?);
    }
    Ok(out)
}

impl TenantReader<'_> {
    /// The statements of the single-valued facts `entity` holds ("where
    /// Dana lives", "who leads the platform team"), newest first.
    pub fn fact_statements(&self, entity: i64) -> Result<Vec<FactStatement>> {
        match self.tenant_id {
            Some(tenant_id) => statements_of(&self.conn, tenant_id, entity),
            None => Ok(Vec::new()),
        }
    }
}

impl TenantWriter<'_> {
    /// Settles the validity of every single-valued fact `holder` has in
    /// `family` from all its statements, by document time.
    pub(in crate::store) fn settle_fact(&mut self, holder: i64, family: &str) -> Result<()> {
        let statements: Vec<Statement> = statements_of(self.conn.raw(), self.tenant_id, holder)?
            .iter()
            .filter(|s| s.family == family)
            .map(FactStatement::statement)
            .collect();
        for v in facts::timeline(&statements, None) {
            self.exec(
                "UPDATE relations SET valid_from = ?2, valid_to = ?3, superseded_by = ?4
                  WHERE id = ?1 AND (valid_from IS NOT ?2 OR valid_to IS NOT ?3
                                     OR superseded_by IS NOT ?4)",
                params![v.relation, v.valid_from, v.valid_to, v.superseded_by],
            )?;
        }
        Ok(())
    }

    /// The (holder, family) a stored relation states, if single-valued.
    pub(in crate::store) fn fact_of(&self, relation: i64) -> Result<Option<(i64, &'static str)>> {
        use rusqlite::OptionalExtension;
        let row: Option<(i64, String, String, i64, String)> = self
            .conn
            .prepare_cached(
                "SELECT r.subject_id, s.kind, r.label, r.object_id, o.kind
                   FROM relations r JOIN entities s ON s.id = r.subject_id
                   JOIN entities o ON o.id = r.object_id
                  WHERE r.id = ?1 AND r.kind = 'pattern'",
            )?
            .query_row([relation], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()?;
        let Some((subject, subject_kind, label, object, object_kind)) = row else {
            return Ok(None);
        };
        let kind = |k: &str| EntityKind::parse(k).unwrap_or(EntityKind::Unknown);
        Ok(
            facts::single_valued(&label, kind(&subject_kind), kind(&object_kind)).map(|f| {
                let holder = match f.holder {
                    Holder::Subject => subject,
                    Holder::Object => object,
                };
                (holder, f.family)
            }),
        )
    }
}
