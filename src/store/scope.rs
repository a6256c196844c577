//! Which documents a recall draws from: a query's filters (source, media
//! type, metadata fields, tags, the time a document is about) and whether
//! superseded versions count. Every lane reads through a [`Scope`], so a
//! filter holds inside each lane before it ranks, never by cutting a
//! ranked list short.
//!
//! A scope is resolved once per query, in one of two ways:
//! - **listed**: when an indexed condition (source, time, a field or tag)
//!   admits few documents, the admitted chunks are listed up front (at
//!   most [`MAX_LISTED_CHUNKS`]; with a catalog, only a share below one in
//!   `FILTERED_VECTOR_DEPTH`, since checking then costs little); the
//!   vector lane then scores only their vectors, and the other lanes test
//!   membership in the list;
//! - **checked**: otherwise each lane walks its own ranking in order and
//!   keeps the candidates whose document satisfies the condition, going
//!   deeper until it has what it asked for or the ranking is exhausted.
//!   The tenant's admission catalog (`admission`) answers for each
//!   candidate from memory; without one (a limited sight, a catalog over
//!   its budget) each costs indexed lookups in SQLite.
//!
//! Without filters the scope is the current versions of every document,
//! one column test per candidate.

use std::collections::HashSet;
use std::sync::Arc;

use rusqlite::types::Value;
use rusqlite::OptionalExtension;

use super::admission::SharedCatalog;
use super::fields::TAGS_KEY;
use super::lanes::FILTERED_VECTOR_DEPTH;
use super::tenant::{TenantReader, Visibility, VISIBLE};
use crate::error::Result;

/// A filter admitting at most this many chunks is listed up front (see the
/// module docs); above it, lanes check their candidates instead. Listing
/// costs about a microsecond per chunk; checking about three per candidate
/// looked at, and a filter admitting a small share of the memory makes a
/// lane look at many.
pub const MAX_LISTED_CHUNKS: usize = 4096;

/// The first positional parameter a scope's SQL condition uses: the lane
/// statements bind their own below it.
const FIRST_PARAM: usize = 20;

/// How a `source` filter matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceMatch {
    Exact(String),
    Prefix(String),
}

/// A `tags` filter: documents whose metadata `tags` list holds any (or
/// all) of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagMatch {
    pub tags: Vec<String>,
    pub all: bool,
}

/// What a recall may draw from. Every condition that is set must hold.
/// Times are Unix milliseconds compared with when a document is about
/// (`observed_at`, else `created_at`): `since` inclusive, `until`
/// exclusive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallFilter {
    pub source: Option<SourceMatch>,
    pub media_type: Option<String>,
    /// Metadata `key = value` pairs (see `store::fields` for what a value
    /// is).
    pub fields: Vec<(String, String)>,
    pub tags: Option<TagMatch>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Superseded versions count too (by default only current ones do).
    pub include_history: bool,
}

impl RecallFilter {
    /// Whether anything but versions is filtered.
    pub fn is_filtering(&self) -> bool {
        self.source.is_some()
            || self.media_type.is_some()
            || !self.fields.is_empty()
            || self.tags.as_ref().is_some_and(|t| !t.tags.is_empty())
            || self.since.is_some()
            || self.until.is_some()
    }
}

/// A resolved filter, as the lanes apply it.
#[derive(Debug, Clone)]
pub struct Scope {
    /// SQL condition on a document aliased `d` (parameters from
    /// [`FIRST_PARAM`]).
    condition: String,
    params: Vec<Value>,
    /// The admitted chunks, when listed.
    listed: Option<Listed>,
    filtering: bool,
    /// The catalog that admits checked candidates, when there is one.
    catalog: Option<CatalogTest>,
}

/// A checked scope's filter, as its tenant's catalog tests it.
#[derive(Clone)]
struct CatalogTest {
    catalog: SharedCatalog,
    filter: Arc<RecallFilter>,
    visible: Visibility,
}

impl std::fmt::Debug for CatalogTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogTest")
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone)]
struct Listed {
    chunks: HashSet<i64>,
    /// Their vector slots, in the files of `generation`.
    slots: Vec<u64>,
    generation: i64,
}

impl Scope {
    /// Current versions of every document: what a query without filters
    /// searches.
    pub fn current() -> Scope {
        Scope::unresolved(&RecallFilter::default())
    }

    /// Every visible document, superseded versions included: for reads
    /// by key outside recall.
    pub fn everything() -> Scope {
        Scope::unresolved(&RecallFilter {
            include_history: true,
            ..Default::default()
        })
    }

    fn unresolved(filter: &RecallFilter) -> Scope {
        let (condition, params) = condition(filter);
        Scope {
            condition,
            params,
            listed: None,
            filtering: filter.is_filtering(),
            catalog: None,
        }
    }

    /// Whether the scope filters anything but versions (a lane then looks
    /// deeper from the start).
    pub(super) fn filters(&self) -> bool {
        self.filtering
    }

    /// The SQL condition on a document aliased `d`.
    pub(super) fn condition(&self) -> &str {
        &self.condition
    }

    /// The part of [`Scope::condition`] on versions alone (no
    /// parameters): what a candidate the catalog admitted is checked for
    /// again when its row is read.
    pub(super) fn version_condition(&self) -> &'static str {
        match self
            .catalog
            .as_ref()
            .is_some_and(|c| c.filter.include_history)
        {
            true => "1",
            false => "d.superseded_by IS NULL",
        }
    }

    /// `base` (the statement's own parameters, `?1` onwards) followed by
    /// the condition's, each at its number.
    pub(super) fn bind(&self, base: Vec<Value>) -> Vec<Value> {
        let mut all = base;
        if self.params.is_empty() {
            return all;
        }
        all.resize(FIRST_PARAM - 1, Value::Null);
        all.extend(self.params.iter().cloned());
        all
    }

    /// Whether `chunk_key` may be admitted: `Some(false)` when the scope is
    /// listed and does not hold it, `None` when only the document's
    /// condition can tell.
    pub(super) fn lists(&self, chunk_key: i64) -> Option<bool> {
        self.listed.as_ref().map(|l| l.chunks.contains(&chunk_key))
    }

    /// The admitted vector slots, when listed for the files of
    /// `generation`.
    pub(super) fn slots(&self, generation: i64) -> Option<&[u64]> {
        self.listed
            .as_ref()
            .filter(|l| l.generation == generation)
            .map(|l| l.slots.as_slice())
    }

    /// Of `keys` (chunk keys, or vector slots in the files of generation
    /// `slots_of`), those the scope admits, in the same order, as its
    /// catalog says; `None` when it has no catalog that can tell (the
    /// lane then asks SQLite).
    pub(super) fn catalog_admits(&self, slots_of: Option<i64>, keys: &[i64]) -> Option<Vec<i64>> {
        let test = self.catalog.as_ref()?;
        let held = test.catalog.read().unwrap_or_else(|p| p.into_inner());
        let catalog = held.as_ref()?;
        if slots_of.is_some_and(|g| g != catalog.generation) {
            return None;
        }
        let Some(compiled) = catalog.compile(&test.filter, test.visible) else {
            return Some(Vec::new());
        };
        Some(
            keys.iter()
                .copied()
                .filter(|&k| match slots_of {
                    Some(_) => catalog.admits_slot(k, &compiled),
                    None => catalog.admits_chunk(k, &compiled),
                })
                .collect(),
        )
    }

    /// Whether the scope was listed.
    pub fn is_listed(&self) -> bool {
        self.listed.is_some()
    }

    /// Whether the scope is listed and admits nothing: every lane is empty.
    pub fn is_empty(&self) -> bool {
        self.listed.as_ref().is_some_and(|l| l.chunks.is_empty())
    }
}

/// The condition of `filter` on a document aliased `d`, and its parameters
/// (numbered from [`FIRST_PARAM`]).
fn condition(filter: &RecallFilter) -> (String, Vec<Value>) {
    let mut parts: Vec<String> = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    let param = |v: Value, params: &mut Vec<Value>| {
        params.push(v);
        format!("?{}", FIRST_PARAM + params.len() - 1)
    };
    if !filter.include_history {
        parts.push("d.superseded_by IS NULL".into());
    }
    match &filter.source {
        Some(SourceMatch::Exact(s)) => {
            let p = param(Value::Text(s.clone()), &mut params);
            parts.push(format!("d.source = {p}"));
        }
        Some(SourceMatch::Prefix(s)) if !s.is_empty() => {
            let lo = param(Value::Text(s.clone()), &mut params);
            parts.push(format!("d.source >= {lo}"));
            if let Some(hi) = prefix_bound(s) {
                let hi = param(Value::Text(hi), &mut params);
                parts.push(format!("d.source < {hi}"));
            }
        }
        Some(SourceMatch::Prefix(_)) => parts.push("d.source IS NOT NULL".into()),
        None => {}
    }
    if let Some(m) = &filter.media_type {
        let p = param(Value::Text(m.clone()), &mut params);
        parts.push(format!("d.media_type = {p}"));
    }
    if let Some(since) = filter.since {
        let p = param(Value::Integer(since), &mut params);
        parts.push(format!("coalesce(d.observed_at, d.created_at) >= {p}"));
    }
    if let Some(until) = filter.until {
        let p = param(Value::Integer(until), &mut params);
        parts.push(format!("coalesce(d.observed_at, d.created_at) < {p}"));
    }
    let has = |key: &str, values: &[String], params: &mut Vec<Value>| {
        let k = param(Value::Text(key.to_string()), params);
        let vs: Vec<String> = values
            .iter()
            .map(|v| param(Value::Text(v.clone()), params))
            .collect();
        format!(
            "EXISTS (SELECT 1 FROM document_fields f WHERE f.tenant_id = d.tenant_id
                        AND f.key = {k} AND f.value IN ({}) AND f.document_id = d.id)",
            vs.join(", ")
        )
    };
    for (key, value) in &filter.fields {
        parts.push(has(key, std::slice::from_ref(value), &mut params));
    }
    if let Some(t) = filter.tags.as_ref().filter(|t| !t.tags.is_empty()) {
        if t.all {
            for tag in &t.tags {
                parts.push(has(TAGS_KEY, std::slice::from_ref(tag), &mut params));
            }
        } else {
            parts.push(has(TAGS_KEY, &t.tags, &mut params));
        }
    }
    if parts.is_empty() {
        parts.push("1".into());
    }
    (format!("({})", parts.join(" AND ")), params)
}

/// The least string above every string starting with `prefix` (its last
/// character stepped up), so that `prefix <= s < bound` is "starts with";
/// `None` when no string is above them all.
fn prefix_bound(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// One indexed way to list a filter's documents: a subquery of document
/// ids (the tenant bound as `?1`) over a condition's own index.
struct Driver {
    sql: String,
    params: Vec<Value>,
    /// The metadata field it lists the documents of, if that is what it
    /// does (a catalog counts those without reading the index).
    field: Option<(String, String)>,
}

fn drivers(filter: &RecallFilter) -> Vec<Driver> {
    let mut out = Vec::new();
    let text = |s: &str| Value::Text(s.to_string());
    match &filter.source {
        Some(SourceMatch::Exact(s)) => out.push(Driver {
            sql: "SELECT id FROM documents WHERE tenant_id = ?1 AND source = ?2".into(),
            params: vec![text(s)],
            field: None,
        }),
        Some(SourceMatch::Prefix(s)) if !s.is_empty() => match prefix_bound(s) {
            Some(hi) => out.push(Driver {
                sql:
                    "SELECT id FROM documents WHERE tenant_id = ?1 AND source >= ?2 AND source < ?3"
                        .into(),
                params: vec![text(s), Value::Text(hi)],
                field: None,
            }),
            None => out.push(Driver {
                sql: "SELECT id FROM documents WHERE tenant_id = ?1 AND source >= ?2".into(),
                params: vec![text(s)],
                field: None,
            }),
        },
        _ => {}
    }
    if filter.since.is_some() || filter.until.is_some() {
        out.push(Driver {
            sql: "SELECT id FROM documents WHERE tenant_id = ?1
                AND coalesce(observed_at, created_at) >= ?2
                AND coalesce(observed_at, created_at) < ?3"
                .into(),
            params: vec![
                Value::Integer(filter.since.unwrap_or(i64::MIN)),
                Value::Integer(filter.until.unwrap_or(i64::MAX)),
            ],
            field: None,
        });
    }
    let field = |key: &str, value: &str| {
        Driver {
        sql: "SELECT document_id AS id FROM document_fields WHERE tenant_id = ?1 AND key = ?2 AND value = ?3"
            .to_string(),
        params: vec![text(key), text(value)],
        field: Some((key.to_string(), value.to_string())),
    }
    };
    for (k, v) in &filter.fields {
        out.push(field(k, v));
    }
    if let Some(t) = &filter.tags {
        // "Any" of several tags has no single index range; each tag of
        // "all" does.
        match t.tags.as_slice() {
            [one] => out.push(field(TAGS_KEY, one)),
            many if t.all => many.iter().for_each(|tag| out.push(field(TAGS_KEY, tag))),
            _ => {}
        }
    }
    out
}

impl TenantReader<'_> {
    /// The latest time (Unix ms) a stored document of this tenant is about
    /// (`observed_at`, else `created_at`); `None` for an empty memory. One
    /// step down the index that time filters use.
    pub fn newest_document_time(&self) -> Result<Option<i64>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(
                "SELECT coalesce(observed_at, created_at) AS t FROM documents
                  WHERE tenant_id = ?1 AND state = 'ready'
                  ORDER BY coalesce(observed_at, created_at) DESC LIMIT 1",
            )?
            .query_row([tenant_id], |r| r.get(0))
            .optional()?)
    }

    /// Resolves `filter` for this tenant's lanes (see the module docs).
    pub fn recall_scope(&self, filter: &RecallFilter) -> Result<Scope> {
        let mut scope = Scope::unresolved(filter);
        let Some(tenant_id) = self.tenant_id else {
            return Ok(scope);
        };
        if !filter.is_filtering() {
            return Ok(scope);
        }
        // Loaded before the snapshot begins, so that the snapshot holds
        // every commit the catalog is caught up to (see `admission`); a
        // snapshot already open may be older, and then goes without.
        let epoch = self.catalogs.epoch();
        let fresh = self.conn.is_autocommit();
        self.in_snapshot(|| {
            // The catalog first: it counts what a field lists without
            // reading the index, and admits candidates if nothing is
            // listed.
            let catalog = match fresh && !self.limited {
                true => self.catalogs.for_query(&self.conn, tenant_id, epoch)?,
                false => None,
            };
            // With a catalog, checking costs little, and a share a
            // vector scan finds enough of at once is checked rather than
            // listed.
            let guard = catalog
                .as_ref()
                .map(|c| c.read().unwrap_or_else(|p| p.into_inner()));
            let held = guard.as_ref().and_then(|c| c.as_ref());
            let bound = match held {
                Some(c) => MAX_LISTED_CHUNKS.min(c.documents() / FILTERED_VECTOR_DEPTH),
                None => MAX_LISTED_CHUNKS,
            };
            // The driver admitting fewest documents (each counted only up
            // to the listing bound).
            let mut best: Option<(usize, Driver)> = None;
            for driver in drivers(filter) {
                let counted = match (&driver.field, held) {
                    (Some((k, v)), Some(c)) => Some(c.field_documents(k, v)),
                    _ => None,
                };
                let n = match counted {
                    Some(n) => n,
                    None => self.count_listed(tenant_id, &driver)?,
                };
                if best.as_ref().is_none_or(|(b, _)| n < *b) {
                    best = Some((n, driver));
                }
            }
            drop(guard);
            if let Some((_, driver)) = best.filter(|b| b.0 <= bound) {
                scope.listed = self.list_chunks(tenant_id, &scope, &driver.sql, driver.params)?;
            }
            if scope.listed.is_none() {
                scope.catalog = catalog.map(|catalog| CatalogTest {
                    catalog,
                    filter: Arc::new(filter.clone()),
                    visible: self.visible,
                });
            }
            Ok(())
        })?;
        Ok(scope)
    }

    /// The documents `driver` lists, counted up to one past the listing
    /// bound.
    fn count_listed(&self, tenant_id: i64, driver: &Driver) -> Result<usize> {
        let count_sql = format!(
            "SELECT count(*) FROM ({} LIMIT {})",
            driver.sql,
            MAX_LISTED_CHUNKS + 1
        );
        let mut bound = vec![Value::Integer(tenant_id)];
        bound.extend(driver.params.iter().cloned());
        let n: i64 = self
            .conn
            .prepare_cached(&count_sql)?
            .query_row(rusqlite::params_from_iter(bound), |r| r.get(0))?;
        Ok(n as usize)
    }

    /// The chunks (and vector slots) `scope` admits among the documents
    /// `driver` lists; `None` when they are more than
    /// [`MAX_LISTED_CHUNKS`].
    fn list_chunks(
        &self,
        tenant_id: i64,
        scope: &Scope,
        driver: &str,
        driver_params: Vec<Value>,
    ) -> Result<Option<Listed>> {
        let generation: i64 = self
            .conn
            .prepare_cached("SELECT vector_generation FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        // The driver's parameters follow the lane-style base (`?1` tenant,
        // `?8`, `?9` visibility): renumber them into the gap below the
        // condition's.
        let mut driver = driver.to_string();
        for i in (2..=driver_params.len() + 1).rev() {
            driver = driver.replace(&format!("?{i}"), &format!("?{}", i + 8));
        }
        // CROSS JOIN keeps the driver outermost: left to choose, the
        // planner walks every document of the tenant by another index
        // (measured: 12 ms instead of 0.5 for 500 documents of 100k).
        let sql = format!(
            "SELECT c.id, c.vector_slot
               FROM ({driver}) AS x CROSS JOIN documents d ON d.id = x.id
                    CROSS JOIN chunks c ON c.document_id = d.id
              WHERE d.tenant_id = ?1 AND d.state = 'ready' AND {VISIBLE} AND {}
              LIMIT {}",
            scope.condition(),
            MAX_LISTED_CHUNKS + 1
        );
        let v = self.visible;
        let mut base = vec![Value::Integer(tenant_id)];
        base.resize(7, Value::Null);
        base.push(Value::Integer(v.now));
        base.push(Value::Integer(v.since));
        base.extend(driver_params);
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(scope.bind(base)), |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))
        })?;
        let mut chunks = HashSet::new();
        let mut slots = Vec::new();
        for row in rows {
            let (chunk, slot) = row?;
            if chunks.len() == MAX_LISTED_CHUNKS {
                return Ok(None);
            }
            chunks.insert(chunk);
            if let Some(s) = slot {
                slots.push(s as u64);
            }
        }
        slots.sort_unstable();
        Ok(Some(Listed {
            chunks,
            slots,
            generation,
        }))
    }
}

#[cfg(test)]
impl Scope {
    /// `filter` checked candidate by candidate (never listed): through
    /// `reader`'s tenant catalog when `catalog`, else in SQL.
    pub(super) fn checked(
        reader: &TenantReader<'_>,
        filter: &RecallFilter,
        catalog: bool,
    ) -> Scope {
        let mut scope = Scope::unresolved(filter);
        if catalog {
            let epoch = reader.catalogs.epoch();
            let tenant_id = reader.tenant_id.expect("a tenant that wrote");
            scope.catalog = reader
                .catalogs
                .for_query(&reader.conn, tenant_id, epoch)
                .unwrap()
                .map(|catalog| CatalogTest {
                    catalog,
                    filter: Arc::new(filter.clone()),
                    visible: reader.visible,
                });
            assert!(scope.catalog.is_some(), "the catalog fits its budget");
        }
        scope
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_bound_is_above_every_string_with_the_prefix_and_nothing_else() {
        assert_eq!(prefix_bound("notes/").as_deref(), Some("notes0"));
        assert_eq!(prefix_bound("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_bound("\u{10FFFF}"), None);
        // The surrogate gap is stepped over.
        assert_eq!(prefix_bound("\u{D7FF}").as_deref(), Some("\u{E000}"));
        let hi = prefix_bound("runbook").unwrap();
        for s in ["runbook", "runbook/ops", "runbook\u{10FFFF}\u{10FFFF}"] {
            assert!(s >= "runbook" && s < hi.as_str(), "{s}");
        }
        for s in ["runboo", "runbooL", "runboom", "s"] {
            assert!(!(s >= "runbook" && s < hi.as_str()), "{s}");
        }
    }

    #[test]
    fn an_unfiltered_scope_is_current_versions_only_and_history_lifts_it() {
        assert_eq!(Scope::current().condition(), "(d.superseded_by IS NULL)");
        let all = RecallFilter {
            include_history: true,
            ..Default::default()
        };
        assert_eq!(Scope::unresolved(&all).condition(), "(1)");
        assert!(!all.is_filtering());
    }

    #[test]
    fn conditions_number_their_parameters_after_the_lanes() {
        let f = RecallFilter {
            source: Some(SourceMatch::Exact("runbook".into())),
            tags: Some(TagMatch {
                tags: vec!["a".into(), "b".into()],
                all: false,
            }),
            ..Default::default()
        };
        let s = Scope::unresolved(&f);
        assert!(s.condition().contains("d.source = ?20"));
        assert!(s.condition().contains("f.value IN (?22, ?23)"));
        let bound = s.bind(vec![Value::Integer(1)]);
        assert_eq!(bound.len(), 19 + 4);
        assert_eq!(bound[19], Value::Text("runbook".into()));
    }
}
