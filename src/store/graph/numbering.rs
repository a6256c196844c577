//! Keys of entities and relations, numbered within their tenant.
//!
//! A key is the tenant's id shifted left by `ids::TENANT_GRAPH_KEY_BITS`
//! plus the entity's (or relation's) number in the tenant, which is what
//! the tenant sees (`ent_<number>`, [`GraphIds`]). The writer gives out the
//! next number after the highest in the tenant's range: one read of the
//! table's rowid index, whatever other tenants hold, so neither the ids nor
//! the time to make them depend on another tenant.
//!
//! Before numbers were per tenant, keys came from one sequence over the
//! whole table; those keys stay as they are (their ids still name them),
//! and a tenant's first number is past its own highest such key, so that
//! an old id and a new one never coincide. The key is bound into the
//! insert as before, so a replica that runs the statement again makes the
//! same row: no schema change, nothing for a cluster to migrate.

use rusqlite::{params, OptionalExtension};

use crate::error::{Error, Result};
use crate::ids::{GraphIds, MAX_TENANT_GRAPH_NUMBER};
use crate::store::tenant::{TenantReader, TenantWriter};

/// A table whose rows are numbered within their tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Numbered {
    Entities,
    Relations,
}

impl Numbered {
    fn table(self) -> &'static str {
        match self {
            Numbered::Entities => "entities",
            Numbered::Relations => "relations",
        }
    }
}

impl TenantWriter<'_> {
    /// The key of a new row of `table` for this tenant, to bind into its
    /// insert: the tenant's next number. Sought once per operation, then
    /// counted on (nothing but this writer adds rows meanwhile, as with
    /// `new_id`). Refused once the tenant has numbered
    /// [`MAX_TENANT_GRAPH_NUMBER`] of them.
    pub(in crate::store) fn new_graph_key(&self, table: Numbered) -> Result<i64> {
        let ids = GraphIds::of_tenant(Some(self.tenant_id));
        let Some((first, last)) = ids.key_range() else {
            return Err(Error::LimitExceeded(
                "this store holds too many tenants to number another tenant's graph".into(),
            ));
        };
        let mut cached = self.ids.borrow_mut();
        let key = match cached.iter_mut().find(|(t, _)| *t == table.table()) {
            Some((_, next)) => *next,
            None => {
                let highest: Option<i64> = self
                    .conn
                    .query_row(
                        &format!(
                            "SELECT id FROM {} WHERE id BETWEEN ?1 AND ?2
                              ORDER BY id DESC LIMIT 1",
                            table.table()
                        ),
                        params![first, last],
                        |r| r.get(0),
                    )
                    .optional()?;
                match highest {
                    Some(key) => key + 1,
                    None => {
                        let number = GraphIds::first_number_after(self.highest_earlier_key(table)?);
                        ids.key_of(number).unwrap_or(last + 1)
                    }
                }
            }
        };
        if key > last {
            return Err(Error::LimitExceeded(format!(
                "this tenant has numbered {MAX_TENANT_GRAPH_NUMBER} {}, the most one tenant can",
                table.table()
            )));
        }
        match cached.iter_mut().find(|(t, _)| *t == table.table()) {
            Some((_, next)) => *next = key + 1,
            None => cached.push((table.table(), key + 1)),
        }
        Ok(key)
    }

    /// This tenant's highest key in `table` from the one sequence keys
    /// came from before they were numbered per tenant (keys up to
    /// [`MAX_TENANT_GRAPH_NUMBER`]). Read only while the tenant's range is
    /// empty: once it holds a row, numbers go on from there.
    fn highest_earlier_key(&self, table: Numbered) -> Result<Option<i64>> {
        Ok(self.conn.query_row(
            &format!(
                "SELECT MAX(id) FROM {} WHERE tenant_id = ?1 AND id <= ?2",
                table.table()
            ),
            params![self.tenant_id, MAX_TENANT_GRAPH_NUMBER],
            |r| r.get(0),
        )?)
    }
}

impl TenantReader<'_> {
    /// How this tenant's entities and relations are named to it.
    pub fn graph_ids(&self) -> GraphIds {
        GraphIds::of_tenant(self.tenant_id)
    }

    /// The key of this tenant's entity named `id`, if it has one.
    pub fn entity_key(&self, id: &str) -> Result<Option<i64>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM entities WHERE id = ?1 AND tenant_id = ?2")?;
        for key in self.graph_ids().entity_keys(id) {
            if stmt.exists(params![key, tenant_id])? {
                return Ok(Some(key));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{remember, temp_store, tenant_rows};
    use crate::store::Tenant;

    /// Adds an entity row with key `key` to the tenant, as some earlier
    /// writer would have.
    fn entity_at(store: &crate::store::Store, tenant: &Tenant, key: i64) {
        store
            .write(tenant, move |w| {
                w.conn.raw().execute(
                    "INSERT INTO entities(id, tenant_id, key, name, kind, first_seen, last_seen)
                     VALUES (?1, ?2, ?3, ?3, 'thing', 0, 0)",
                    params![key, w.tenant_id, format!("e{key}")],
                )?;
                Ok(())
            })
            .unwrap();
    }

    fn next_entity_key(store: &crate::store::Store, tenant: &Tenant) -> Result<i64> {
        store.write(tenant, |w| w.new_graph_key(Numbered::Entities))
    }

    fn entity_keys(store: &crate::store::Store, tenant: &Tenant) -> Vec<i64> {
        tenant_rows(
            store,
            tenant,
            "SELECT id FROM entities WHERE tenant_id = ?1 ORDER BY id",
            |r| r.get(0),
        )
    }

    #[test]
    fn each_tenant_numbers_its_own_entities_from_one() {
        let (dir, store) = temp_store("alayasiki-numbering");
        let (a, b) = (Tenant::new("a").unwrap(), Tenant::new("b").unwrap());
        remember(
            &store,
            &b,
            "Person0 Example works at Company0 Holdings.",
            "user",
        );
        remember(
            &store,
            &a,
            "Acme Corp. acquired Widgets Inc. in 2023.",
            "user",
        );
        for tenant in [&a, &b] {
            let reader = store.reader(tenant).unwrap();
            let ids = reader.graph_ids();
            let named: Vec<String> = entity_keys(&store, tenant)
                .into_iter()
                .map(|k| ids.entity_id(k))
                .collect();
            assert!(named.len() >= 2, "{named:?}");
            assert_eq!(named[..2], ["ent_1", "ent_2"], "{named:?}");
            assert!(reader.entity_key("ent_1").unwrap().is_some());
            assert_eq!(reader.entity_key("ent_4000").unwrap(), None);
        }
        drop(store);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn numbers_go_on_after_the_tenants_own_earlier_keys_and_stop_at_the_limit() {
        let (dir, store) = temp_store("alayasiki-numbering");
        let (a, b) = (Tenant::new("a").unwrap(), Tenant::new("b").unwrap());
        // Keys from the one sequence all tenants shared: a has 5 and 9,
        // b the highest, 12.
        for (tenant, key) in [(&a, 5), (&b, 7), (&a, 9), (&b, 12)] {
            entity_at(&store, tenant, key);
        }
        let (first_a, last_a) = GraphIds::of_tenant(Some(1)).key_range().unwrap();
        let (first_b, _) = GraphIds::of_tenant(Some(2)).key_range().unwrap();
        assert_eq!(next_entity_key(&store, &a).unwrap(), first_a + 9);
        assert_eq!(next_entity_key(&store, &b).unwrap(), first_b + 12);
        let reader = store.reader(&a).unwrap();
        assert_eq!(reader.entity_key("ent_9").unwrap(), Some(9));
        assert_eq!(reader.graph_ids().entity_id(9), "ent_9");
        // Another tenant's earlier key is not this tenant's.
        assert_eq!(reader.entity_key("ent_12").unwrap(), None);
        drop(reader);

        // Once the range holds a row, numbers go on from its highest.
        entity_at(&store, &a, first_a + 40);
        assert_eq!(next_entity_key(&store, &a).unwrap(), first_a + 41);

        // The last number is given out, and then none.
        entity_at(&store, &a, last_a - 1);
        let both = store.write(&a, |w| {
            let last = w.new_graph_key(Numbered::Entities)?;
            Ok((last, w.new_graph_key(Numbered::Entities)))
        });
        let (last, past) = both.unwrap();
        assert_eq!(last, last_a);
        assert_eq!(
            store.reader(&a).unwrap().graph_ids().entity_id(last),
            format!("ent_{MAX_TENANT_GRAPH_NUMBER}")
        );
        match past {
            Err(Error::LimitExceeded(m)) => assert!(m.contains("4294967295 entities"), "{m}"),
            other => panic!("{other:?}"),
        }
        entity_at(&store, &a, last_a);
        match next_entity_key(&store, &a) {
            Err(Error::LimitExceeded(_)) => {}
            other => panic!("{other:?}"),
        }
        // Relations are numbered apart, and b is untouched.
        assert_eq!(
            store
                .write(&a, |w| w.new_graph_key(Numbered::Relations))
                .unwrap(),
            first_a
        );
        assert_eq!(next_entity_key(&store, &b).unwrap(), first_b + 12);
        drop(store);
        let _ = std::fs::remove_dir_all(dir);
    }
}
