//! Storage of community summaries: snapshots keyed by the graph version
//! they were built from, so a query's global answer can be reproduced; the
//! latest few are kept. A snapshot's extractive summaries never change once
//! stored; the optional LLM's summaries are added to it later
//! ([`TenantWriter::store_llm_summaries`]).

use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

use super::tenant::{TenantReader, TenantWriter, VISIBLE};
use super::Store;
use crate::error::Result;
use crate::ids::{GraphIds, MAX_TENANT_GRAPH_NUMBER};
use crate::knowledge::community::{GraphInput, LlmSummary, Summary};
use crate::knowledge::confidence;

/// Snapshots kept per tenant (older ones are deleted when a new one is
/// stored).
pub const KEPT_SNAPSHOTS: i64 = 3;
/// Relations read per statement when a rebuild walks the relations table
/// ([`RelationScan::IdRanges`]): at most 28 ms each at 100k documents.
pub const RELATIONS_PER_READ: usize = 16_384;
/// Relations sampled to estimate a tenant's share of the table.
const SHARE_PROBES: i64 = 64;
/// A tenant holding less than one relation in this many is read through
/// its index ([`RelationScan::TenantIndex`]): a random look-up per relation
/// there costs about six times a row skipped in the table's order.
const FEW_RELATIONS_SHARE: i64 = 8;

/// How a rebuild reads a tenant's relations.
///
/// A read holds a snapshot for as long as its statement runs, and while any
/// reader holds one the write-ahead log can be neither folded back to its
/// end nor restarted: one statement over the 1.5M relations of 100k
/// documents held it for 12 s, the log grew by gigabytes under ingestion
/// and the writer paid for every page (BENCHMARKS.md, ninth session).
/// A relation superseded between two ranges may be read with its
/// successor; summaries are a heuristic view, and the next rebuild sees the
/// settled graph.
#[derive(Debug, Clone, Copy)]
enum RelationScan {
    /// The table in id order, this many relations per statement, other
    /// tenants' rows skipped on the way (about a microsecond each). Through
    /// the tenant's index each row was a random look-up, then a sort: six
    /// times the time at 100k documents.
    IdRanges(usize),
    /// One statement through the tenant's index: for a tenant with few
    /// relations among many, whose read is short anyway.
    TenantIndex,
}

/// Mentioning chunks read per entity when building summaries.
const MENTIONS_PER_ENTITY: i64 = 32;

/// A stored snapshot.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub graph_version: i64,
    pub built_at: i64,
    pub summaries: Vec<Summary>,
}

impl TenantReader<'_> {
    /// The graph as the community builder needs it, from current data:
    /// the relations a reader could see and the entities they connect.
    /// Entities without such a relation are left out (with their
    /// mentions): they can never share a community, and on concept-heavy
    /// text they are most of the tenant's entities, which made reading them
    /// most of a rebuild's time.
    pub fn graph_input(&self) -> Result<GraphInput> {
        let scan = match self.tenant_id {
            Some(id) if self.holds_few_relations(id)? => RelationScan::TenantIndex,
            _ => RelationScan::IdRanges(RELATIONS_PER_READ),
        };
        self.graph_input_by(scan)
    }

    /// Whether the tenant's relations are so few among all tenants' that
    /// finding them through the tenant's index beats walking the table.
    /// Not from a count, which at 100k documents took longer than the read
    /// it was choosing for, but from where keys lie: each tenant's
    /// relations since keys were numbered per tenant fill its own key range
    /// from the start (`ids::GraphIds`), about as many as its highest
    /// number (a B-tree seek per tenant); the keys of the one sequence
    /// before are shared, and the tenant's share of them is estimated from
    /// [`SHARE_PROBES`] relations at evenly spaced keys (a seek each).
    fn holds_few_relations(&self, tenant_id: i64) -> Result<bool> {
        let mut highest = self.conn.prepare_cached(
            "SELECT id FROM relations WHERE id BETWEEN ?1 AND ?2 ORDER BY id DESC LIMIT 1",
        )?;
        let mut highest_in = |first: i64, last: i64| -> Result<Option<i64>> {
            Ok(highest.query_row([first, last], |r| r.get(0)).optional()?)
        };
        // The shared keys: about as many relations as the highest of them.
        let shared = highest_in(1, MAX_TENANT_GRAPH_NUMBER)?.unwrap_or(0);
        let mut ours = 0;
        let mut all = shared;
        if shared > 0 {
            let mut stmt = self.conn.prepare_cached(
                "SELECT tenant_id FROM relations WHERE id >= ?1 ORDER BY id LIMIT 1",
            )?;
            let mut hits = 0;
            for probe in 0..SHARE_PROBES {
                let id = 1 + (shared - 1) * probe / (SHARE_PROBES - 1);
                let owner: Option<i64> = stmt.query_row([id], |r| r.get(0)).optional()?;
                hits += i64::from(owner == Some(tenant_id));
            }
            ours = shared * hits / SHARE_PROBES;
        }
        let tenants: Vec<i64> = self
            .conn
            .prepare_cached("SELECT id FROM tenants")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for tenant in tenants {
            let Some((first, last)) = GraphIds::of_tenant(Some(tenant)).key_range() else {
                continue;
            };
            let numbered = highest_in(first, last)?.map_or(0, |top| top - first + 1);
            all += numbered;
            if tenant == tenant_id {
                ours += numbered;
            }
        }
        Ok(all > 0 && ours * FEW_RELATIONS_SHARE < all)
    }

    /// [`Self::graph_input`], reading the relations as `scan` says.
    fn graph_input_by(&self, scan: RelationScan) -> Result<GraphInput> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(GraphInput {
                entities: vec![],
                relations: vec![],
                mentions: HashMap::new(),
            });
        };
        // Only what a reader could see: relations with evidence in a
        // visible document (retention). See `RelationScan` for why the
        // table is read in ranges of ids, a statement each.
        let (tenant_filter, per_read) = match scan {
            // `+` keeps SQLite off the (tenant, subject, ...) index, which
            // it otherwise picks.
            RelationScan::IdRanges(per_read) => ("+r.tenant_id", per_read),
            RelationScan::TenantIndex => ("r.tenant_id", i64::MAX as usize),
        };
        let v = self.visible;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT r.id, r.subject_id, r.object_id, r.label, r.alpha, r.beta, r.kind = 'pattern'
               FROM relations r
              WHERE {tenant_filter} = ?1 AND r.valid_to IS NULL AND r.id > ?10
                AND EXISTS (SELECT 1 FROM relation_evidence ev JOIN documents d ON d.id = ev.document_id
                             WHERE ev.relation_id = r.id AND {VISIBLE})
              ORDER BY r.id LIMIT {per_read}"
        ))?;
        let mut relations: Vec<(i64, i64, String, f64, bool)> = Vec::new();
        let mut after = 0i64;
        loop {
            let before = relations.len();
            let mut rows =
                stmt.query(params![tenant_id, 0, 0, 0, 0, 0, 0, v.now, v.since, after])?;
            while let Some(r) = rows.next()? {
                after = r.get(0)?;
                let (alpha, beta): (f64, f64) = (r.get(4)?, r.get(5)?);
                relations.push((
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    confidence::mean(alpha, beta),
                    r.get(6)?,
                ));
            }
            if relations.len() - before < per_read {
                break;
            }
        }
        // The related entities by id (in id order, so the look-ups walk the
        // table's B-tree forwards): a scan of the tenant's entities through
        // its (tenant, key) index, then sorted, cost ten times as much with
        // three quarters of them unrelated.
        let mut related: Vec<i64> = relations.iter().flat_map(|r| [r.0, r.1]).collect();
        related.sort_unstable();
        related.dedup();
        let mut stmt = self.conn.prepare_cached(
            "SELECT name, mention_count FROM entities WHERE id = ?1 AND tenant_id = ?2",
        )?;
        let mut entities = Vec::with_capacity(related.len());
        for id in related {
            let row = stmt
                .query_row(params![id, tenant_id], |r| Ok((id, r.get(0)?, r.get(1)?)))
                .optional()?;
            entities.extend(row);
        }
        // Newest mentioning chunks first, from the primary key (entity,
        // chunk, offset); the limit is written into the SQL (a bound one is
        // re-planned whenever it changes).
        let mut stmt = self.conn.prepare(&format!(
            "SELECT chunk_id FROM mentions WHERE entity_id = ?1
              ORDER BY chunk_id DESC LIMIT {MENTIONS_PER_ENTITY}"
        ))?;
        let mut mentions: HashMap<i64, Vec<i64>> = HashMap::with_capacity(entities.len());
        for (entity, _, _) in &entities {
            let chunks = stmt
                .query_map([entity], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?;
            if !chunks.is_empty() {
                mentions.insert(*entity, chunks);
            }
        }
        Ok(GraphInput {
            entities,
            relations,
            mentions,
        })
    }

    /// `(graph version, version the latest summaries were built from)`;
    /// the second is -1 before any build.
    pub fn community_versions(&self) -> Result<(i64, i64)> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok((0, -1));
        };
        Ok(self
            .conn
            .prepare_cached("SELECT graph_version, communities_version FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    /// What identifies the snapshot [`Self::latest_communities`] would
    /// return (its graph version and build time), read without the
    /// snapshot itself; `None` when it would return none. For caches of
    /// what is derived from a snapshot.
    pub fn latest_communities_stamp(&self) -> Result<Option<(i64, i64)>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        let (_, version) = self.community_versions()?;
        if version < 0 {
            return Ok(None);
        }
        let built_at: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT built_at FROM communities WHERE tenant_id = ?1 AND graph_version = ?2
                  LIMIT 1",
            )?
            .query_row(params![tenant_id, version], |r| r.get(0))
            .optional()?;
        match built_at {
            Some(at) if !self.expired_since(at)? => Ok(Some((version, at))),
            _ => Ok(None),
        }
    }

    /// The latest snapshot, if any.
    pub fn latest_communities(&self) -> Result<Option<Snapshot>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        let (_, version) = self.community_versions()?;
        if version < 0 {
            return Ok(None);
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT summary, built_at FROM communities WHERE tenant_id = ?1 AND graph_version = ?2
              ORDER BY level, size DESC, community",
        )?;
        let mut built_at = 0;
        let mut summaries = Vec::new();
        for row in stmt.query_map(params![tenant_id, version], |r| {
            Ok((r.get::<_, String>(0)?, r.get(1)?))
        })? {
            let (json, at) = row?;
            built_at = at;
            if let Ok(s) = serde_json::from_str::<Summary>(&json) {
                summaries.push(s);
            }
        }
        // A handle that sees part of the memory gets only the communities
        // built wholly from what it sees: a summary quotes its members'
        // mentions and relations, so one touching an unseen document is
        // dropped (never recomputed: the stored text is what it is).
        if self.is_limited() {
            let mut seen = Vec::with_capacity(summaries.len());
            for s in summaries {
                let cited: Vec<i64> = s.citations.iter().map(|c| c.chunk_key).collect();
                let llm_cited = s.llm_summary.as_ref().map(|l| l.citations.clone());
                if !s.member_ids.is_empty()
                    && self.sees_all_about(&s.member_ids)?
                    && self.sees_chunks(&cited)?
                    && self.sees_chunks(&llm_cited.unwrap_or_default())?
                {
                    seen.push(s);
                }
            }
            summaries = seen;
        }
        if self.expired_since(built_at)? {
            // The snapshot may name what retention now hides; it is withheld
            // until the sweep forgets those documents and it is rebuilt.
            return Ok(None);
        }
        Ok(Some(Snapshot {
            graph_version: version,
            built_at,
            summaries,
        }))
    }
}

impl TenantReader<'_> {
    /// The LLM summaries in the tenant's stored snapshots, by the digest of
    /// the input they were written from (for reuse while it is unchanged).
    pub fn stored_llm_summaries(&self) -> Result<HashMap<String, LlmSummary>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(HashMap::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT summary FROM communities
              WHERE tenant_id = ?1 AND json_extract(summary, '$.llm_summary') IS NOT NULL",
        )?;
        let mut out = HashMap::new();
        for json in stmt.query_map([tenant_id], |r| r.get::<_, String>(0))? {
            if let Ok(Summary {
                llm_summary: Some(s),
                ..
            }) = serde_json::from_str::<Summary>(&json?)
            {
                out.insert(s.input_digest.clone(), s);
            }
        }
        Ok(out)
    }
}

impl TenantWriter<'_> {
    /// Adds LLM summaries to the communities `(level, community)` of the
    /// snapshot built from `graph_version`, if it is still stored (a forget
    /// since deletes every snapshot, and then nothing is written). Returns
    /// how many were added.
    pub fn store_llm_summaries(
        &mut self,
        graph_version: i64,
        summaries: &[(usize, u32, LlmSummary)],
    ) -> Result<usize> {
        let mut added = 0;
        for (level, community, llm) in summaries {
            let key = params![
                self.tenant_id,
                graph_version,
                *level as i64,
                i64::from(*community)
            ];
            let stored: Option<String> = self
                .conn
                .prepare_cached(
                    "SELECT summary FROM communities WHERE tenant_id = ?1 AND graph_version = ?2
                        AND level = ?3 AND community = ?4",
                )?
                .query_row(key, |r| r.get(0))
                .optional()?;
            let Some(mut summary) = stored.and_then(|j| serde_json::from_str::<Summary>(&j).ok())
            else {
                continue;
            };
            summary.llm_summary = Some(llm.clone());
            self.exec(
                "UPDATE communities SET summary = ?5 WHERE tenant_id = ?1 AND graph_version = ?2
                    AND level = ?3 AND community = ?4",
                params![
                    self.tenant_id,
                    graph_version,
                    *level as i64,
                    i64::from(*community),
                    serde_json::to_string(&summary)?
                ],
            )?;
            added += 1;
        }
        Ok(added)
    }

    /// Stores a snapshot built from `graph_version` and makes it current.
    pub fn store_communities(
        &mut self,
        graph_version: i64,
        summaries: &[Summary],
        now: i64,
    ) -> Result<()> {
        self.exec(
            "DELETE FROM communities WHERE tenant_id = ?1 AND graph_version = ?2",
            params![self.tenant_id, graph_version],
        )?;
        for s in summaries {
            self.conn.insert_new(
                "INSERT INTO communities(tenant_id, graph_version, level, community, parent, title,
                                         summary, size, built_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING",
                params![
                    self.tenant_id,
                    graph_version,
                    s.level as i64,
                    s.community as i64,
                    s.parent.map(i64::from),
                    s.title,
                    serde_json::to_string(s)?,
                    s.size as i64,
                    now
                ],
            )?;
        }
        self.exec(
            "UPDATE tenants SET communities_version = ?2 WHERE id = ?1",
            params![self.tenant_id, graph_version],
        )?;
        self.exec(
            "DELETE FROM communities WHERE tenant_id = ?1 AND graph_version NOT IN
                (SELECT DISTINCT graph_version FROM communities WHERE tenant_id = ?1
                  ORDER BY graph_version DESC LIMIT ?2)",
            params![self.tenant_id, KEPT_SNAPSHOTS],
        )?;
        Ok(())
    }
}

impl Store {
    /// Tenants with a community snapshot.
    pub fn tenants_with_communities(&self) -> Result<Vec<super::Tenant>> {
        let conn = super::tenant::PooledConn::new(self.readers.get()?, &self.readers);
        let mut stmt =
            conn.prepare_cached("SELECT name FROM tenants WHERE communities_version >= 0")?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(names
            .iter()
            .filter_map(|n| super::Tenant::new(n).ok())
            .collect())
    }

    /// Tenants whose summaries are older than their graph.
    pub fn tenants_with_stale_communities(&self) -> Result<Vec<super::Tenant>> {
        let conn = super::tenant::PooledConn::new(self.readers.get()?, &self.readers);
        let mut stmt = conn.prepare_cached(
            "SELECT name FROM tenants WHERE graph_version != communities_version",
        )?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(names
            .iter()
            .filter_map(|n| super::Tenant::new(n).ok())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{remember, temp_store};
    use crate::store::Tenant;

    /// Relation ends and labels, in the order read.
    fn relations(input: &GraphInput) -> Vec<(i64, i64, String)> {
        input
            .relations
            .iter()
            .map(|r| (r.0, r.1, r.2.clone()))
            .collect()
    }

    #[test]
    fn the_graph_read_in_ranges_is_the_graph_read_at_once_and_only_the_tenant_s() {
        let (dir, store) = temp_store("alayasiki-graph-ranges");
        let (ours, theirs) = (Tenant::new("ours").unwrap(), Tenant::new("theirs").unwrap());
        for (i, text) in [
            "Dana Reyes founded Acme Robotics in Lisbon. Acme Robotics acquired Widget Works.",
            "Omar Haddad joined Acme Robotics. Widget Works hired Lena Park in Porto.",
            "Lena Park met Dana Reyes in Madrid. Omar Haddad visited Porto with Lena Park.",
            "Priya Nair leads Bolt Labs in Berlin. Bolt Labs supplies Acme Robotics.",
            "Tomas Weber joined Bolt Labs. Priya Nair met Omar Haddad in Vienna.",
            "Widget Works opened an office in Vienna. Tomas Weber visited Lisbon.",
        ]
        .iter()
        .enumerate()
        {
            remember(&store, &ours, text, "user");
            if i == 2 {
                // The other tenant's rows sit among ours in id order.
                let other = "Kai Berg founded Northwind Labs in Oslo.";
                remember(&store, &theirs, other, "user");
            }
        }
        let reader = store.reader(&ours).unwrap();
        let whole = reader.graph_input_by(RelationScan::TenantIndex).unwrap();
        assert!(whole.relations.len() > 4, "{:?}", relations(&whole));
        for per_read in [1, 2, 3] {
            let ranged = reader
                .graph_input_by(RelationScan::IdRanges(per_read))
                .unwrap();
            assert_eq!(relations(&ranged), relations(&whole), "per_read {per_read}");
            assert_eq!(ranged.entities, whole.entities);
            assert_eq!(ranged.mentions, whole.mentions);
        }
        // Most relations are ours: the table is walked. Theirs are few.
        assert!(!reader
            .holds_few_relations(reader.tenant_id.unwrap())
            .unwrap());
        let other = store.reader(&theirs).unwrap();
        assert!(other.holds_few_relations(other.tenant_id.unwrap()).unwrap());
        let theirs_read = other.graph_input().unwrap();
        assert_eq!(
            relations(&theirs_read),
            relations(&other.graph_input_by(RelationScan::IdRanges(1)).unwrap())
        );
        assert!(!theirs_read.relations.is_empty());
        drop(other);
        let names: Vec<&str> = whole.entities.iter().map(|e| e.1.as_str()).collect();
        assert!(names.contains(&"Acme Robotics"), "{names:?}");
        assert!(
            !names
                .iter()
                .any(|n| n.contains("Northwind") || n.contains("Oslo")),
            "{names:?}"
        );
        drop(reader);
        store.close();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
