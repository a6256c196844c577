//! Facts that change, in the evidence: when the question's entities hold
//! a single-valued fact ("where Dana lives", "who leads the platform
//! team") that documents state with different values, the statement that
//! holds ranks first and the older ones are marked as superseded (or
//! ended, for "no longer ..."), each with its dates and the item that
//! superseded it. Which statement holds is decided by the documents' own
//! time (see `knowledge::facts`), as of now or as of the time the query
//! asks about (`as_of`).
//!
//! Only facts that are already part of the candidates are reordered: a
//! fact none of whose statements the lanes found is not what the question
//! is about. When the question asks about the fact (its words name it:
//! "where", "lives", "leads", "version", ...), the fact's statements go
//! first, and the one that holds and the latest one it superseded are
//! brought in if the lanes missed them, so that both are cited. Otherwise
//! the fact's statements only trade places among themselves.
//!
//! Must never: drop a candidate, or move one that states no such fact
//! past one that does not, unless the question asks about the fact.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::fuse::Fused;
use crate::clock::rfc3339;
use crate::error::Result;
use crate::knowledge::facts::{timeline, Validity};
use crate::store::{EntityRow, FactStatement, Scope, TenantReader};

/// Most statements of one fact brought into the candidates when the lanes
/// missed them: the one that holds and the latest one it superseded.
pub const MAX_FACT_CHUNKS_ADDED: usize = 2;

/// How one statement of a changing fact stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    /// It holds (now, or at the query's `as_of`).
    Current,
    /// A later statement of another value replaced it.
    Superseded,
    /// A later statement denied it ("no longer ..."), naming no new value.
    Ended,
}

/// The statement that replaced a superseded one.
#[derive(Debug, Clone, Serialize)]
pub struct Successor {
    pub value: String,
    pub document_id: String,
    pub chunk_id: String,
    /// When its document says it was so (RFC 3339).
    pub stated_at: String,
}

/// One statement of a single-valued fact whose value changed, as shown
/// with the evidence item that states it.
#[derive(Debug, Clone, Serialize)]
pub struct FactUse {
    /// Who or what holds the fact ("Dana Scully", "Platform Team").
    pub holder: String,
    /// The fact: the single-valued family ("place", "employer", "leader",
    /// "role", "time", "deadline", "version", "owner", ...).
    pub relation: &'static str,
    /// The predicate as the document put it ("lives in", "led by").
    pub predicate: String,
    pub value: String,
    pub status: Standing,
    /// When this item's document says it was so (RFC 3339).
    pub stated_at: String,
    /// When the value was first stated (RFC 3339).
    pub valid_from: String,
    /// When it stopped holding (RFC 3339); absent while it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<Successor>,
}

/// The marks of the changing facts each candidate states, by chunk key.
pub type FactMarks = HashMap<i64, Vec<FactUse>>;

/// Words of a question that ask about a family's fact (Porter stems):
/// a changing fact the question asks about goes first, not only before
/// its own older statements.
const CUES: &[(&str, &[&str])] = &[
    (
        "place",
        &[
            "where",
            "live",
            "base",
            "locat",
            "citi",
            "resid",
            "headquart",
            "offic",
            "move",
        ],
    ),
    (
        "employer",
        &["work", "employ", "compani", "employer", "job"],
    ),
    (
        "leader",
        &["lead", "head", "manag", "run", "report", "boss", "leader"],
    ),
    ("owner", &["own", "owner", "maintain", "maintain"]),
    ("ceo", &["ceo"]),
    ("cto", &["cto"]),
    ("role", &["role", "titl", "posit", "job"]),
    (
        "time",
        &["when", "time", "schedul", "dai", "date", "run", "hour"],
    ),
    ("deadline", &["deadlin", "due", "when"]),
    ("version", &["version", "releas"]),
];

/// Whether the question asks about `family`'s fact.
fn asks_about(question: &[String], family: &str) -> bool {
    CUES.iter()
        .find(|(f, _)| *f == family)
        .is_some_and(|(_, cues)| question.iter().any(|w| cues.contains(&w.as_str())))
}

/// The candidates with each changing fact's current statement first among
/// its statements (first of all when the question asks about that fact),
/// and the marks to show on each item (by chunk key).
pub fn settle(
    reader: &TenantReader<'_>,
    question: &str,
    entities: &[EntityRow],
    mut fused: Vec<Fused>,
    top_k: usize,
    as_of: Option<i64>,
    scope: &Scope,
) -> Result<(Vec<Fused>, FactMarks)> {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| super::stem::stem(&w.to_lowercase()))
        .collect();
    let mut marks = FactMarks::new();
    let mut done: HashSet<(i64, &'static str)> = HashSet::new();
    for entity in entities {
        let statements = reader.fact_statements(entity.id)?;
        let mut families: Vec<&'static str> = statements.iter().map(|s| s.family).collect();
        families.sort_unstable();
        families.dedup();
        for family in families {
            if !done.insert((entity.id, family)) {
                continue;
            }
            let all: Vec<&FactStatement> =
                statements.iter().filter(|s| s.family == family).collect();
            let fact = Fact::of(&all, as_of);
            if !fact.changed() {
                continue;
            }
            fused = fact.rank(reader, fused, top_k, asks_about(&words, family), scope)?;
            for (chunk, mark) in fact.marks(reader, &fused)? {
                marks.entry(chunk).or_default().push(mark);
            }
        }
    }
    Ok((fused, marks))
}

/// One holder's statements of one family, with their validity.
struct Fact<'a> {
    /// Every statement, also those made after `as_of`.
    all: Vec<&'a FactStatement>,
    /// Those made up to `as_of`.
    said: Vec<&'a FactStatement>,
    validity: Vec<Validity>,
    as_of: Option<i64>,
}

impl<'a> Fact<'a> {
    fn of(all: &[&'a FactStatement], as_of: Option<i64>) -> Fact<'a> {
        let said: Vec<&FactStatement> = all
            .iter()
            .copied()
            .filter(|s| as_of.is_none_or(|t| s.at <= t))
            .collect();
        let statements: Vec<_> = said.iter().map(|s| s.statement()).collect();
        Fact {
            all: all.to_vec(),
            said,
            validity: timeline(&statements, as_of),
            as_of,
        }
    }

    fn validity(&self, relation: i64) -> Option<&Validity> {
        self.validity.iter().find(|v| v.relation == relation)
    }

    /// More than one value was stated, or the one stated was denied
    /// since (counting statements after `as_of`).
    fn changed(&self) -> bool {
        let statements: Vec<_> = self.all.iter().map(|s| s.statement()).collect();
        let all = timeline(&statements, None);
        let mut values: Vec<i64> = all.iter().map(|v| v.value).collect();
        values.sort_unstable();
        values.dedup();
        values.len() > 1 || all.iter().any(|v| v.valid_to.is_some())
    }

    /// Where a statement goes among the fact's statements: 0 says what
    /// holds (the current value, or the denial that ended the last one),
    /// 1 what held before, 2 what was said after `as_of`.
    fn class(&self, s: &FactStatement) -> u8 {
        if self.as_of.is_some_and(|t| s.at > t) {
            return 2;
        }
        if !s.supports {
            let ended = self.validity.iter().any(|v| {
                v.value == s.value && v.valid_to == Some(s.at) && v.superseded_by.is_none()
            });
            let current = self.validity.iter().any(|v| v.valid_to.is_none());
            return if ended && !current { 0 } else { 3 };
        }
        match self.validity(s.relation) {
            Some(v) if v.valid_to.is_none() => 0,
            Some(_) => 1,
            None => 3,
        }
    }

    /// The statements worth showing, the ones that say what holds first,
    /// then newest first.
    fn ordered(&self) -> Vec<&'a FactStatement> {
        let mut out: Vec<&FactStatement> = self
            .all
            .iter()
            .copied()
            .filter(|s| self.class(s) < 3)
            .collect();
        out.sort_by_key(|s| (self.class(s), std::cmp::Reverse(s.statement().order_key())));
        out
    }

    /// Puts the statement that holds first among this fact's statements.
    /// When the question asks about the fact, its statements go first of
    /// all, and the one that holds and the latest superseded one are
    /// brought in if the lanes missed them; otherwise those among the
    /// first `top_k` only trade places among themselves, and nothing else
    /// moves.
    fn rank(
        &self,
        reader: &TenantReader<'_>,
        fused: Vec<Fused>,
        top_k: usize,
        asked: bool,
        scope: &Scope,
    ) -> Result<Vec<Fused>> {
        let ordered = self.ordered();
        let mut block: Vec<i64> = Vec::new();
        for s in &ordered {
            if !block.contains(&s.chunk_key) {
                block.push(s.chunk_key);
            }
        }
        let place = |f: &Fused| block.iter().position(|c| *c == f.hit.chunk_key);
        if !fused.iter().any(|f| place(f).is_some()) {
            return Ok(fused);
        }
        if !asked {
            // Among the results returned: one from further down would
            // take a place the lanes gave something else.
            let slots: Vec<usize> = (0..fused.len().min(top_k))
                .filter(|&i| place(&fused[i]).is_some())
                .collect();
            let mut cells: Vec<Option<Fused>> = fused.into_iter().map(Some).collect();
            let mut mine: Vec<Fused> = slots.iter().filter_map(|&i| cells[i].take()).collect();
            mine.sort_by_key(|f| place(f));
            for (&i, f) in slots.iter().zip(mine) {
                cells[i] = Some(f);
            }
            let mut out: Vec<Fused> = cells.into_iter().flatten().collect();
            // Each place keeps its score, so the list stays in order.
            let mut scores: Vec<f64> = slots.iter().map(|&i| out[i].score).collect();
            scores.sort_by(|a, b| b.total_cmp(a));
            for (&i, score) in slots.iter().zip(scores) {
                out[i].score = score;
            }
            return Ok(out);
        }
        let score = fused[0].score;
        // The first holding statement and the first superseded one are
        // cited even if the lanes missed them.
        let found: HashSet<i64> = fused.iter().map(|f| f.hit.chunk_key).collect();
        let mut wanted: Vec<i64> = Vec::new();
        if let Some(s) = ordered.first() {
            wanted.push(s.chunk_key);
        }
        if let Some(s) = ordered.iter().find(|s| self.class(s) == 1) {
            wanted.push(s.chunk_key);
        }
        wanted.truncate(MAX_FACT_CHUNKS_ADDED);
        let missing: Vec<(i64, f64)> = wanted
            .iter()
            .filter(|c| !found.contains(c))
            .map(|&c| (c, score))
            .collect();
        let mut pool: HashMap<i64, Fused> = HashMap::new();
        let mut rest: Vec<Fused> = Vec::with_capacity(fused.len() + missing.len());
        for f in fused {
            if place(&f).is_some() {
                pool.insert(f.hit.chunk_key, f);
            } else {
                rest.push(f);
            }
        }
        // Brought in only if the query's scope (its filter, current
        // versions) admits them, as any lane's candidate.
        for hit in reader.scoped_chunks_by_keys(&missing, usize::MAX, scope)? {
            // Found by no lane: brought in for the fact alone.
            let fused = Fused {
                hit,
                score,
                lanes: Default::default(),
                origin: None,
            };
            pool.insert(fused.hit.chunk_key, fused);
        }
        let moved: Vec<Fused> = block
            .iter()
            .filter_map(|c| pool.remove(c))
            .map(|f| Fused { score, ..f })
            .collect();
        rest.splice(0..0, moved);
        Ok(rest)
    }

    /// The marks of this fact's statements among the candidates.
    fn marks(&self, reader: &TenantReader<'_>, fused: &[Fused]) -> Result<Vec<(i64, FactUse)>> {
        let shown: HashMap<i64, &Fused> = fused.iter().map(|f| (f.hit.chunk_key, f)).collect();
        let mut out = Vec::new();
        for s in self.ordered() {
            if !shown.contains_key(&s.chunk_key) || !s.supports || self.class(s) == 2 {
                continue;
            }
            let Some(v) = self.validity(s.relation) else {
                continue;
            };
            let status = match (v.valid_to, v.superseded_by) {
                (None, _) => Standing::Current,
                (Some(_), Some(_)) => Standing::Superseded,
                (Some(_), None) => Standing::Ended,
            };
            let superseded_by = match v.superseded_by {
                Some(next) => self.successor(reader, next, &shown)?,
                None => None,
            };
            out.push((
                s.chunk_key,
                FactUse {
                    holder: s.holder_name.clone(),
                    relation: s.family,
                    predicate: s.label.clone(),
                    value: s.value_name.clone(),
                    status,
                    stated_at: rfc3339(s.at),
                    valid_from: rfc3339(v.valid_from),
                    valid_to: v.valid_to.map(rfc3339),
                    superseded_by,
                },
            ));
        }
        Ok(out)
    }

    /// Where the statement of `relation` that superseded another is cited.
    fn successor(
        &self,
        reader: &TenantReader<'_>,
        relation: i64,
        shown: &HashMap<i64, &Fused>,
    ) -> Result<Option<Successor>> {
        // Its earliest statement is the one that did the superseding.
        let Some(s) = self
            .said
            .iter()
            .filter(|s| s.relation == relation && s.supports)
            .min_by_key(|s| s.statement().order_key())
        else {
            return Ok(None);
        };
        let (doc_id, ordinal) = match shown.get(&s.chunk_key) {
            Some(f) => (f.hit.doc_id.clone(), f.hit.ordinal),
            None => match reader.chunks_by_keys(&[(s.chunk_key, 0.0)])?.pop() {
                Some(hit) => (hit.doc_id, hit.ordinal),
                None => return Ok(None),
            },
        };
        Ok(Some(Successor {
            value: s.value_name.clone(),
            chunk_id: format!("{doc_id}:{ordinal}"),
            document_id: doc_id,
            stated_at: rfc3339(s.at),
        }))
    }
}
