//! One retrieval round: every enabled lane run for the question and fused
//! into one ranked list. [`candidates`](super::candidates) runs one, and drift
//! a second, wider one; what the lanes are and how they weigh: [`fuse`].

use std::collections::BTreeMap;

use super::{fuse, graph, period, retrieve, reuse, when, Fusion, QuerySpec, Settings};
use crate::embed::Embedder;
use crate::error::Result;
use crate::store::{ChunkHit, Scope, TenantReader};

/// The periods the question names, its relative phrases ("last year")
/// counted from the query's `as_of`, else from the newest day in memory
/// (never later than today): what "last year" means to a memory of the
/// past is the year before its latest. Also the words of the phrases that
/// named them.
fn period_of(
    reader: &TenantReader<'_>,
    spec: &QuerySpec,
) -> Result<(Vec<period::Period>, Vec<String>)> {
    let reading = period::read(&spec.text);
    let words = reading.words().to_vec();
    let reference = if !reading.needs_reference() {
        None
    } else if let Some(t) = spec.as_of {
        Some(t.div_euclid(DAY_MS))
    } else {
        let today = crate::clock::now_ms().div_euclid(DAY_MS);
        let newest = reader.newest_document_time()?.map(|t| t.div_euclid(DAY_MS));
        Some(newest.map_or(today, |n| n.min(today)))
    };
    Ok((reading.resolve(reference), words))
}

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// What every round of one query searches with: the question's terms and
/// entities, and the scope its lanes read through.
#[derive(Clone, Copy)]
pub(super) struct Question<'q> {
    pub(super) terms: &'q [String],
    pub(super) entities: &'q [crate::store::EntityRow],
    pub(super) scope: &'q Scope,
}

/// One retrieval round: every enabled lane, fused.
pub(super) struct Round {
    lanes: Vec<fuse::Lane>,
    pub(super) fused: Vec<fuse::Fused>,
    pub(super) relations: std::collections::HashMap<i64, Vec<graph::RelationUse>>,
    pub(super) ignored_terms: Vec<String>,
    pub(super) lane_errors: BTreeMap<&'static str, String>,
}

impl Round {
    /// Adds a lane and fuses again.
    pub(super) fn extra_lane(&mut self, lane: fuse::Lane, fusion: Fusion) {
        self.lanes.push(lane);
        self.fused = fuse::fuse(self.lanes.clone(), fusion);
    }

    pub(super) fn run(
        reader: &TenantReader<'_>,
        spec: &QuerySpec,
        question: Question<'_>,
        embedder: &dyn Embedder,
        settings: Settings,
        depth: usize,
        reuse: &mut reuse::Reuse,
    ) -> Result<Round> {
        let Question {
            terms,
            entities,
            scope,
        } = question;
        let mut lanes = Vec::new();
        let mut lane_errors = BTreeMap::new();
        let mut ignored_terms = Vec::new();
        let mut relations = Default::default();
        // A question naming a period has a time lane: for a period with a
        // year, the keyword and vector lanes search again within its days
        // (the window lanes); for one without, the keyword pool is ranked
        // wider and, of it and the vector lane's, the chunks dated in the
        // period count.
        let (periods, period_words) = period_of(reader, spec)?;
        let time_weight = fuse::TIME_LANE_WEIGHT;
        let timed = !periods.is_empty() && time_weight > 0.0;
        let yearless = timed
            && periods
                .iter()
                .any(|p| matches!(p, period::Period::Yearless { .. }));
        let pool = spec.top_k * retrieve::CANDIDATES_PER_RESULT;
        let time_pool = spec.top_k * when::CANDIDATES_PER_RESULT;
        let wide = if yearless { time_pool } else { pool };
        let mut wide_lanes = Vec::new();
        let plan = match spec.lanes.keyword {
            true => Some(reuse.plan(|| retrieve::plan(reader, terms))?),
            false => None,
        };
        let query = spec
            .lanes
            .vector
            .then(|| reuse.embedding(&spec.text, embedder));
        let ranked = Ranked {
            plan: plan.as_ref(),
            query: query.as_ref().and_then(|q| q.as_deref().ok()),
            wide,
            pool,
        };
        let (keyword_hits, vector_hits) = ranked.rank(reader, reuse, scope)?;
        if let (Some(p), Some(mut hits)) = (&plan, keyword_hits) {
            if wide > pool {
                wide_lanes.push(fuse::Lane {
                    name: "keyword",
                    weight: fuse::KEYWORD_LANE_WEIGHT,
                    hits: hits.clone(),
                });
                hits.truncate(pool);
            }
            lanes.push(fuse::Lane {
                name: "keyword",
                weight: fuse::KEYWORD_LANE_WEIGHT,
                hits,
            });
            ignored_terms = p.ignored.clone();
        }
        let mut embedding = None;
        match (query, vector_hits) {
            (Some(Ok(query)), Some(hits)) => {
                // Its usual pool joins the wider keyword pool: ranking more
                // vectors cost more than it found.
                if yearless {
                    wide_lanes.push(fuse::Lane {
                        name: "vector",
                        weight: fuse::VECTOR_LANE_WEIGHT,
                        hits: hits.clone(),
                    });
                }
                lanes.push(fuse::Lane {
                    name: "vector",
                    weight: fuse::VECTOR_LANE_WEIGHT,
                    hits,
                });
                embedding = Some(query);
            }
            (Some(Err(e)), _) => {
                lane_errors.insert("vector", e);
            }
            _ => {}
        }
        if timed {
            // Within the period, its own words ("last month", "May 2023")
            // no longer tell chunks apart: the window ranks by the others.
            let others: Vec<String> = terms
                .iter()
                .filter(|t| !period_words.contains(t))
                .cloned()
                .collect();
            let window_plan = match plan {
                Some(_) if others.len() < terms.len() && !others.is_empty() => {
                    Some(retrieve::plan(reader, &others)?)
                }
                Some(_) if others.is_empty() => None,
                p => p,
            };
            wide_lanes.extend(when::window_lanes(
                reader,
                window_plan.as_ref(),
                embedding.as_deref(),
                &periods,
                &spec.filter,
                time_pool,
            )?);
        }
        if let Some(lane) = when::lane(wide_lanes, &periods, time_weight, settings.fusion) {
            lanes.push(lane);
        }
        if spec.lanes.graph && !entities.is_empty() {
            let found = graph::lane(
                reader,
                entities,
                depth,
                settings.half_life_days,
                spec.top_k * retrieve::CANDIDATES_PER_RESULT,
                scope,
            )?;
            relations = found.relations;
            lanes.push(fuse::Lane {
                name: "graph",
                weight: fuse::GRAPH_LANE_WEIGHT,
                hits: found.hits,
            });
        }
        Ok(Round {
            fused: fuse::fuse(lanes.clone(), settings.fusion),
            lanes,
            relations,
            ignored_terms,
            lane_errors,
        })
    }
}

/// A lane's hits, if it ran.
type LaneHits = Option<Vec<ChunkHit>>;

/// What the keyword and vector lanes rank: the keyword plan if that lane
/// runs, the question's embedding if the vector lane runs (and the
/// embedder gave one), and how deep each goes.
struct Ranked<'a> {
    plan: Option<&'a retrieve::KeywordPlan>,
    query: Option<&'a [f32]>,
    wide: usize,
    pool: usize,
}

impl Ranked<'_> {
    /// The keyword lane's `wide` hits and the vector lane's `pool`, for
    /// the lanes that run. When both must be ranked, the keyword ranking
    /// runs beside the vector scan (`TenantReader::vector_search_beside`):
    /// at a million chunks each takes about ten milliseconds, and they
    /// overlap on two cores.
    fn rank(
        &self,
        reader: &TenantReader<'_>,
        reuse: &mut reuse::Reuse,
        scope: &Scope,
    ) -> Result<(LaneHits, LaneHits)> {
        let reuse::Reuse {
            keyword, vector, ..
        } = reuse;
        let (wide, pool) = (self.wide, self.pool);
        let rank_keyword = |plan, keyword: &mut reuse::Shared| {
            keyword.hits(wide, |d| retrieve::keyword(reader, plan, d, scope))
        };
        match (self.plan, self.query) {
            (Some(plan), Some(query)) => {
                let mut beside = None;
                let vector_hits = vector.hits(pool, |d| {
                    let (hits, keyword_hits) =
                        reader.vector_search_beside(query, d, scope, || {
                            rank_keyword(plan, keyword)
                        })?;
                    beside = Some(keyword_hits);
                    Ok(hits)
                })?;
                let keyword_hits = match beside {
                    Some(hits) => hits?,
                    None => rank_keyword(plan, keyword)?,
                };
                Ok((Some(keyword_hits), Some(vector_hits)))
            }
            (Some(plan), None) => Ok((Some(rank_keyword(plan, keyword)?), None)),
            (None, Some(query)) => Ok((
                None,
                Some(vector.hits(pool, |d| reader.vector_search(query, d, scope))?),
            )),
            (None, None) => Ok((None, None)),
        }
    }
}
