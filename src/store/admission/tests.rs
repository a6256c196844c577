//! The admission catalogs held to the SQL they stand in for: every
//! filter admits exactly the chunks and slots the scope's SQL condition
//! does, before and after each kind of write; and their budget holds at
//! its edge.

use super::*;
use crate::store::lanes::Key;
use crate::store::scope::{RecallFilter, Scope, SourceMatch, TagMatch};
use crate::store::test_support::{plain_document, prepare, remember, temp_store};
use crate::store::{NewDocument, Replaces, Store, Tenant};

/// Stores and indexes `doc` (plain text); returns its external id.
fn store_doc(store: &Store, tenant: &Tenant, doc: NewDocument) -> String {
    let prepared = prepare(std::str::from_utf8(&doc.original).unwrap());
    let p = crate::knowledge::confidence::Provenance::parse(None);
    store
        .write(tenant, move |w| {
            let a = w.admit(doc, 1_000)?;
            w.complete_job(a.job_id, a.document_key, prepared.indexed(), p, 1_000)?;
            Ok(a.doc_id)
        })
        .unwrap()
}

fn note(source: Option<&str>, media: &str, metadata: serde_json::Value, text: &str) -> NewDocument {
    NewDocument {
        source: source.map(str::to_string),
        media_type: media.into(),
        metadata: metadata.to_string(),
        ..plain_document(text.as_bytes().to_vec())
    }
}

/// Every filter kind alone and combined, at its edges.
fn filters() -> Vec<RecallFilter> {
    let tags = |t: &[&str], all| {
        Some(TagMatch {
            tags: t.iter().map(|s| s.to_string()).collect(),
            all,
        })
    };
    let day = |d: u32| {
        crate::knowledge::calendar::first_date(&format!("2025-06-0{d}"))
            .map(|days| days * 86_400_000)
    };
    let base = RecallFilter::default();
    let mut out = vec![
        RecallFilter {
            source: Some(SourceMatch::Exact("runbook/a.md".into())),
            ..base.clone()
        },
        RecallFilter {
            source: Some(SourceMatch::Prefix("runbook/".into())),
            ..base.clone()
        },
        RecallFilter {
            source: Some(SourceMatch::Prefix(String::new())),
            ..base.clone()
        },
        RecallFilter {
            source: Some(SourceMatch::Prefix("nothing/".into())),
            ..base.clone()
        },
        RecallFilter {
            media_type: Some("text/markdown".into()),
            ..base.clone()
        },
        RecallFilter {
            media_type: Some("image/png".into()),
            ..base.clone()
        },
        RecallFilter {
            fields: vec![("team".into(), "ops".into())],
            ..base.clone()
        },
        RecallFilter {
            fields: vec![("n".into(), "2".into()), ("team".into(), "ops".into())],
            ..base.clone()
        },
        RecallFilter {
            fields: vec![("team".into(), "nobody".into())],
            ..base.clone()
        },
        RecallFilter {
            tags: tags(&["a", "b"], false),
            ..base.clone()
        },
        RecallFilter {
            tags: tags(&["a", "b"], true),
            ..base.clone()
        },
        RecallFilter {
            tags: tags(&["a", "unknown"], true),
            ..base.clone()
        },
        RecallFilter {
            tags: tags(&["unknown", "c"], false),
            ..base.clone()
        },
        RecallFilter {
            since: day(3),
            ..base.clone()
        },
        RecallFilter {
            until: day(3),
            ..base.clone()
        },
        RecallFilter {
            since: day(2),
            until: day(4),
            ..base.clone()
        },
        RecallFilter {
            source: Some(SourceMatch::Prefix("notes/".into())),
            media_type: Some("text/plain".into()),
            tags: tags(&["a", "c"], false),
            since: day(1),
            ..base.clone()
        },
    ];
    let with_history: Vec<RecallFilter> = out
        .iter()
        .map(|f| RecallFilter {
            include_history: true,
            ..f.clone()
        })
        .collect();
    out.extend(with_history);
    out
}

/// The catalog admits exactly what the SQL condition does, for every
/// filter, chunk key and vector slot (of this tenant or not).
fn assert_catalog_agrees(store: &Store, tenant: &Tenant, keys: &[i64], slots: &[i64]) {
    let r = store.reader(tenant).unwrap();
    let tenant_id = r.tenant_id.unwrap();
    let generation: i64 = r
        .conn
        .query_row(
            "SELECT vector_generation FROM tenants WHERE id = ?1",
            [tenant_id],
            |x| x.get(0),
        )
        .unwrap();
    for f in filters() {
        let sql = Scope::checked(&r, &f, false);
        let cat = Scope::checked(&r, &f, true);
        let by_sql = r.admitted_keys(tenant_id, Key::Chunk, keys, &sql).unwrap();
        let by_cat = cat.catalog_admits(None, keys).unwrap();
        assert_eq!(by_cat, by_sql, "chunks under {f:?}");
        let by_sql = r
            .admitted_keys(tenant_id, Key::Slot(generation), slots, &sql)
            .unwrap();
        let by_cat = cat.catalog_admits(Some(generation), slots).unwrap();
        assert_eq!(by_cat, by_sql, "slots under {f:?}");
        assert!(cat.catalog_admits(Some(generation + 1), slots).is_none());
    }
}

fn all_keys(store: &Store) -> (Vec<i64>, Vec<i64>) {
    let other = Tenant::new("other").unwrap();
    let rows = crate::store::test_support::tenant_rows(
        store,
        &other,
        "SELECT id, coalesce(vector_slot, -1) FROM chunks WHERE ?1 IS NOT NULL",
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
    );
    let mut keys: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let mut slots: Vec<i64> = rows.iter().map(|r| r.1).filter(|s| *s >= 0).collect();
    keys.extend([-1, 0, i64::MAX]);
    slots.extend([-1, 10_000]);
    slots.sort_unstable();
    slots.dedup();
    (keys, slots)
}

#[test]
fn the_admission_catalog_admits_what_sql_admits_and_follows_every_write() {
    let (dir, store) = temp_store("catalog");
    let t = Tenant::new("t").unwrap();
    let other = Tenant::new("other").unwrap();
    let text = "The backups of the cluster run nightly and the restore works.";
    let meta = |team: &str, tags: &[&str], day: u32| serde_json::json!({"team": team, "tags": tags, "n": 2, "date": format!("2025-06-0{day}")});
    let first = store_doc(
        &store,
        &t,
        note(
            Some("runbook/a.md"),
            "text/markdown",
            meta("ops", &["a", "b"], 1),
            text,
        ),
    );
    store_doc(
        &store,
        &t,
        note(
            Some("runbook/b.md"),
            "text/markdown",
            meta("dev", &["b"], 2),
            text,
        ),
    );
    store_doc(
        &store,
        &t,
        note(
            Some("notes/c.txt"),
            "text/plain",
            meta("ops", &["c"], 3),
            text,
        ),
    );
    store_doc(
        &store,
        &t,
        note(None, "text/plain", serde_json::json!({"tags": ["a"]}), text),
    );
    store_doc(
        &store,
        &other,
        note(
            Some("runbook/a.md"),
            "text/markdown",
            meta("ops", &["a", "b"], 1),
            text,
        ),
    );
    let expired = NewDocument {
        expires_at: Some(1),
        ..note(
            Some("notes/old.txt"),
            "text/plain",
            meta("ops", &["a"], 4),
            text,
        )
    };
    store_doc(&store, &t, expired);
    let (keys, slots) = all_keys(&store);
    assert_catalog_agrees(&store, &t, &keys, &slots);

    // Writes after the catalog was read: a new version superseding
    // the first, a new document, a forget.
    let newer = NewDocument {
        replaces: Replaces {
            documents: vec![first.clone()],
            ..Default::default()
        },
        ..note(
            Some("runbook/a.md"),
            "text/markdown",
            meta("dev", &["c"], 5),
            text,
        )
    };
    store_doc(&store, &t, newer);
    store_doc(
        &store,
        &t,
        note(
            Some("notes/d.txt"),
            "text/plain",
            meta("ops", &["a", "c"], 4),
            text,
        ),
    );
    store_doc(
        &store,
        &other,
        note(
            Some("notes/d.txt"),
            "text/plain",
            meta("ops", &["a", "c"], 4),
            text,
        ),
    );
    let (keys, slots) = all_keys(&store);
    assert_catalog_agrees(&store, &t, &keys, &slots);
    store
        .write(&t, |w| {
            let key: i64 = w.conn.raw().query_row(
                "SELECT id FROM documents WHERE source = 'runbook/b.md'",
                [],
                |r| r.get(0),
            )?;
            w.forget_document(key, "test", "document_id", 1000, 2_000)?;
            Ok(())
        })
        .unwrap();
    assert_catalog_agrees(&store, &t, &keys, &slots);
    assert_catalog_agrees(&store, &other, &keys, &slots);
    // A compaction renumbers the slots in a new generation of files.
    store.compact_tenant(&t).unwrap();
    let (keys, slots) = all_keys(&store);
    assert_catalog_agrees(&store, &t, &keys, &slots);
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}

/// The memory of `tenant`'s catalog, built alone without a budget.
fn catalog_of(store: &crate::store::Store, tenant: &Tenant, catalogs: &Catalogs) -> Option<usize> {
    let r = store.reader(tenant).unwrap();
    let shared = catalogs
        .for_query(&r.conn, r.tenant_id.unwrap(), catalogs.epoch())
        .unwrap()?;
    let held = shared.read().unwrap();
    Some(held.as_ref().unwrap().memory())
}

#[test]
fn catalogs_keep_to_their_budget_at_its_edge_and_drop_the_least_recently_used() {
    let (dir, store) = temp_store("catalog-budget");
    let (a, b) = (Tenant::new("a").unwrap(), Tenant::new("b").unwrap());
    for i in 0..20 {
        remember(
            &store,
            &a,
            &format!("Note {i} of tenant a about the backups."),
            "user",
        );
        remember(
            &store,
            &b,
            &format!("Note {i} of tenant b about the backups."),
            "user",
        );
    }
    let size = catalog_of(&store, &a, &Catalogs::new(usize::MAX)).unwrap();
    assert!(size > 0);
    // Exactly the budget: kept. One byte less: refused, and refused
    // again without being read while the tenant has not shrunk.
    assert_eq!(catalog_of(&store, &a, &Catalogs::new(size)), Some(size));
    let tight = Catalogs::new(size - 1);
    assert_eq!(catalog_of(&store, &a, &tight), None);
    assert_eq!(catalog_of(&store, &a, &tight), None);
    let entry = |c: &Catalogs, t: &Tenant| {
        let id = store.reader(t).unwrap().tenant_id.unwrap();
        let tenants = c.tenants.lock().unwrap();
        tenants
            .entries
            .get(&id)
            .map(|e| (e.bytes, e.refused_at.is_some()))
    };
    assert_eq!(entry(&tight, &a), Some((0, true)));
    // Room for one tenant's catalog at a time: the other is dropped.
    let one = Catalogs::new(size + size / 2);
    assert!(catalog_of(&store, &a, &one).is_some());
    assert!(catalog_of(&store, &b, &one).is_some());
    assert_eq!(
        entry(&one, &a),
        Some((0, false)),
        "the least recently used went"
    );
    assert!(entry(&one, &b).unwrap().0 > 0);
    // No budget: no catalog at all.
    assert_eq!(catalog_of(&store, &a, &Catalogs::new(0)), None);
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}
