//! The time lane: for a question naming a period (see [`super::period`]),
//! the chunks of documents dated in it, ranked by the question's other
//! words.
//!
//! A document's day is the first full date among the string values of its
//! metadata (a conversation turn stored with the date of its session, a note
//! with the day it was taken), else the day it was stored. What a document
//! says happened usually happened shortly before it was written ("last
//! week", "yesterday"), so a period matches documents from
//! [`DAYS_BEFORE`] days before it to [`DAYS_AFTER`] days after it.
//!
//! For a period with a year the keyword and vector lanes search again
//! within its days (the window lanes), so every chunk in the window
//! competes, not only those the unfiltered pools happened to hold. A period
//! without a year ("in May") is no one range of days: for it the keyword
//! pool is ranked wider and, of it and the vector pool, the chunks dated in
//! the period count.

use std::collections::HashMap;

use super::fuse::{fuse, Fusion, Lane, KEYWORD_LANE_WEIGHT, VECTOR_LANE_WEIGHT};
use super::period::{Period, OPEN_END, OPEN_START};
use super::retrieve::{self, KeywordPlan};
use crate::error::Result;
use crate::knowledge::calendar::document_day;
use crate::store::{ChunkHit, RecallFilter, TenantReader};

/// Milliseconds in a day: a period's days as a recall filter's times.
const DAY_MS: i64 = 86_400_000;

/// Documents dated up to this many days before a named period match it.
pub const DAYS_BEFORE: i64 = 3;
/// Documents dated up to this many days after a named period match it.
pub const DAYS_AFTER: i64 = 14;
/// Candidates per requested result ranked by each window lane, and by the
/// keyword lane for a period without a year.
pub const CANDIDATES_PER_RESULT: usize = 10;

/// `within` narrowed to the days `period` admits (widened by
/// [`DAYS_BEFORE`] and [`DAYS_AFTER`]), as a recall filter's times. `None`
/// for a period without a year (it is no one range of days) and when
/// `within` leaves none of them.
pub fn window(period: &Period, within: &RecallFilter) -> Option<RecallFilter> {
    let Period::Days { first, last } = *period else {
        return None;
    };
    // An open side keeps whatever bound `within` has there.
    let since = (first != OPEN_START).then(|| {
        let since = first.saturating_sub(DAYS_BEFORE).saturating_mul(DAY_MS);
        within.since.map_or(since, |s| s.max(since))
    });
    let until = (last != OPEN_END).then(|| {
        let until = last.saturating_add(DAYS_AFTER + 1).saturating_mul(DAY_MS);
        within.until.map_or(until, |u| u.min(until))
    });
    let since = since.or(within.since);
    let until = until.or(within.until);
    if let (Some(s), Some(u)) = (since, until) {
        if s >= u {
            return None;
        }
    }
    Some(RecallFilter {
        since,
        until,
        ..within.clone()
    })
}

/// The window lanes: for each period with a year, the keyword lane (by
/// `plan`) and the vector lane (by `query`, the question's embedding) run
/// again over only the documents dated in it, `limit` deep, so that every
/// chunk in the window competes on the question's other words, not only
/// those the unfiltered pools happened to hold.
pub fn window_lanes(
    reader: &TenantReader<'_>,
    plan: Option<&KeywordPlan>,
    query: Option<&[f32]>,
    periods: &[Period],
    within: &RecallFilter,
    limit: usize,
) -> Result<Vec<Lane>> {
    let mut lanes = Vec::new();
    for filter in periods.iter().filter_map(|p| window(p, within)) {
        let scope = reader.recall_scope(&filter)?;
        if scope.is_empty() {
            continue;
        }
        if let Some(plan) = plan {
            lanes.push(Lane {
                name: "keyword",
                weight: KEYWORD_LANE_WEIGHT,
                hits: retrieve::keyword(reader, plan, limit, &scope)?,
            });
        }
        if let Some(query) = query {
            lanes.push(Lane {
                name: "vector",
                weight: VECTOR_LANE_WEIGHT,
                hits: reader.vector_search(query, limit, &scope)?,
            });
        }
    }
    Ok(lanes)
}

/// Lanes of the same name as one (their hits by chunk, best score kept,
/// best first): the pools of several periods rank on one scale, since each
/// ran the same search.
fn merge_by_name(lanes: Vec<Lane>) -> Vec<Lane> {
    let mut merged: Vec<Lane> = Vec::new();
    for lane in lanes {
        match merged.iter_mut().find(|m| m.name == lane.name) {
            Some(m) => m.hits.extend(lane.hits),
            None => merged.push(lane),
        }
    }
    for m in &mut merged {
        let mut best: HashMap<i64, ChunkHit> = HashMap::new();
        for h in m.hits.drain(..) {
            match best.get(&h.chunk_key) {
                Some(b) if b.bm25 <= h.bm25 => {}
                _ => {
                    best.insert(h.chunk_key, h);
                }
            }
        }
        m.hits = best.into_values().collect();
        m.hits.sort_by(|a, b| {
            a.bm25
                .total_cmp(&b.bm25)
                .then(a.chunk_key.cmp(&b.chunk_key))
        });
    }
    merged
}

/// The time lane: of the candidates fused from the pools `wide` (the
/// window lanes, and the widened pools for a period without a year), those
/// dated in one of `periods`, scored by that fused relevance. `None` when
/// there is no pool or no candidate is dated in a period.
pub fn lane(wide: Vec<Lane>, periods: &[Period], weight: f64, fusion: Fusion) -> Option<Lane> {
    if wide.is_empty() {
        return None;
    }
    let hits: Vec<ChunkHit> = fuse(merge_by_name(wide), fusion)
        .into_iter()
        .filter(|f| {
            let day = document_day(&f.hit.metadata, f.hit.created_at);
            periods
                .iter()
                .any(|p| p.admits(day, DAYS_BEFORE, DAYS_AFTER))
        })
        .map(|f| ChunkHit {
            bm25: -f.score,
            ..f.hit
        })
        .collect();
    (!hits.is_empty()).then_some(Lane {
        name: "time",
        weight,
        hits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::days_from_civil as day;

    #[test]
    fn a_window_is_the_period_widened_and_kept_inside_the_filter() {
        let may = Period::Days {
            first: day(2023, 5, 1),
            last: day(2023, 5, 31),
        };
        let w = window(&may, &RecallFilter::default()).unwrap();
        assert_eq!(w.since, Some((day(2023, 5, 1) - DAYS_BEFORE) * DAY_MS));
        assert_eq!(w.until, Some((day(2023, 5, 31) + DAYS_AFTER + 1) * DAY_MS));
        // An open side takes the filter's bound there, or none.
        let by = Period::Days {
            first: OPEN_START,
            last: day(2023, 5, 31),
        };
        let within = RecallFilter {
            since: Some(day(2020, 1, 1) * DAY_MS),
            ..Default::default()
        };
        let w = window(&by, &within).unwrap();
        assert_eq!(w.since, Some(day(2020, 1, 1) * DAY_MS));
        assert_eq!(w.until, Some((day(2023, 5, 31) + DAYS_AFTER + 1) * DAY_MS));
        assert_eq!(window(&by, &RecallFilter::default()).unwrap().since, None);
        // A filter ending before the period leaves no window.
        let before = RecallFilter {
            until: Some(day(2023, 1, 1) * DAY_MS),
            ..Default::default()
        };
        assert!(window(&may, &before).is_none());
        assert!(window(
            &Period::Yearless {
                month: 5,
                day: None
            },
            &RecallFilter::default()
        )
        .is_none());
    }
}
