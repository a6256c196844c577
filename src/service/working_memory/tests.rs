//! The registry at every budget edge, over time, under contention, and
//! across identities (both on the registry and through `Memory`).

use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::budget::Charge;
use super::note::{self, WriteDraft};
use super::session_graph::GraphWrite;
use super::*;
use crate::limits::*;
use crate::service::{Content, MemoryService, MemoryWrite, Role};
use crate::store::Tenant;

const TTL: Duration = Duration::from_secs(60);
const TTL_MS: u64 = 60_000;

/// A registry on a clock the test moves.
fn registry() -> (WorkingMemory, Arc<AtomicU64>) {
    let now = Arc::new(AtomicU64::new(0));
    let clock_now = now.clone();
    let clock: Clock = Arc::new(move || clock_now.load(Ordering::SeqCst));
    (
        WorkingMemory::with_clock(TTL, clock, 1_700_000_000_000),
        now,
    )
}

fn owner(tenant: &str, subject: &str) -> Owner {
    Owner {
        tenant: tenant.into(),
        subject: subject.into(),
    }
}

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).unwrap()
}

/// A write charged exactly `bytes` (no note: the registry's accounting is
/// what is under test; real notes are charged by `note::prepare`).
fn charged(bytes: usize) -> WriteDraft {
    WriteDraft {
        note: None,
        graph: GraphWrite {
            nodes: vec![],
            edges: vec![],
        },
        charge: Charge {
            content: bytes,
            ..Charge::default()
        },
    }
}

fn text_note(text: &str) -> WriteDraft {
    note::prepare(
        Some(Content::Text {
            text: text.into(),
            media_type: None,
        }),
        Map::new(),
        vec![],
        vec![],
    )
    .unwrap()
}

fn limit_named(e: crate::error::Error, name: &str) {
    assert_eq!(e.code(), "limit_exceeded", "{e}");
    assert!(e.client_message().contains(name), "{e}");
}

/// One tenant fills its share of a budget ([`budget::tenant_share`]) to
/// the edge; another fills the rest of the shared budget to its edge.
#[test]
fn graphs_128_pass_and_129_fail_and_one_tenant_holds_at_most_96() {
    let (wm, _) = registry();
    let (me, other) = (owner("t", "a"), owner("u", "a"));
    let share = budget::tenant_share(MAX_WM_SESSIONS);
    assert_eq!(share, 96);
    for i in 0..share {
        wm.admit(&me, &sid(&format!("s{i}")), charged(1)).unwrap();
    }
    limit_named(
        wm.admit(&me, &sid("past-share"), charged(1)).err().unwrap(),
        "WM_TENANT_SHARE_QUARTERS",
    );
    // Another subject of the same tenant shares the tenant's share.
    limit_named(
        wm.admit(&owner("t", "b"), &sid("x"), charged(1))
            .err()
            .unwrap(),
        "WM_TENANT_SHARE_QUARTERS",
    );
    for i in share..MAX_WM_SESSIONS {
        wm.admit(&other, &sid(&format!("s{i}")), charged(1))
            .unwrap();
    }
    let err = wm
        .admit(&other, &sid("one-too-many"), charged(1))
        .err()
        .unwrap();
    limit_named(err, "MAX_WM_SESSIONS");
    // Refused means not stored: the ids are still unknown.
    for (who, id) in [(&other, "one-too-many"), (&me, "past-share")] {
        assert_eq!(wm.snapshot(who, &sid(id)).unwrap_err().code(), "not_found");
    }
    // Existing sessions still take writes.
    wm.admit(&me, &sid("s0"), charged(1)).unwrap();
    wm.admit(&other, &sid("s100"), charged(1)).unwrap();
    assert_eq!(wm.usage().graphs, MAX_WM_SESSIONS);
    wm.assert_consistent();
}

#[test]
fn writes_4096_pass_and_4097_fail_and_one_tenant_holds_at_most_3072() {
    let (wm, _) = registry();
    let (me, other) = (owner("t", "a"), owner("u", "a"));
    let share = budget::tenant_share(MAX_WM_WRITES);
    assert_eq!(share, 3072);
    for i in 0..share {
        wm.admit(&me, &sid(&format!("s{}", i % 7)), charged(0))
            .unwrap();
    }
    limit_named(
        wm.admit(&me, &sid("s1"), charged(0)).err().unwrap(),
        "WM_TENANT_SHARE_QUARTERS",
    );
    for i in share..MAX_WM_WRITES {
        wm.admit(&other, &sid(&format!("s{}", i % 7)), charged(0))
            .unwrap();
    }
    limit_named(
        wm.admit(&other, &sid("s1"), charged(0)).err().unwrap(),
        "MAX_WM_WRITES",
    );
    assert_eq!(wm.usage().writes, MAX_WM_WRITES);
    wm.assert_consistent();
}

#[test]
fn sixteen_mib_pass_and_one_byte_more_fails_through_real_notes() {
    let (wm, _) = registry();
    let (me, other) = (owner("t", "a"), owner("u", "a"));
    // 256 notes of exactly MAX_WM_CONTENT_BYTES fill MAX_WM_BYTES exactly,
    // 192 of them one tenant's share; the last is a byte short so a 1-byte
    // note lands on the edge.
    let full = "x".repeat(MAX_WM_CONTENT_BYTES);
    let notes = MAX_WM_BYTES / MAX_WM_CONTENT_BYTES;
    let share = budget::tenant_share(MAX_WM_BYTES) / MAX_WM_CONTENT_BYTES;
    assert_eq!((notes, share), (256, 192));
    for i in 0..share - 1 {
        wm.admit(&me, &sid(&format!("s{}", i % 3)), text_note(&full))
            .unwrap();
    }
    wm.admit(&me, &sid("s0"), text_note(&full[1..])).unwrap();
    wm.admit(&me, &sid("s1"), text_note("y")).unwrap();
    limit_named(
        wm.admit(&me, &sid("s2"), text_note("z")).err().unwrap(),
        "WM_TENANT_SHARE_QUARTERS",
    );
    for i in share..notes - 1 {
        wm.admit(&other, &sid(&format!("s{}", i % 3)), text_note(&full))
            .unwrap();
    }
    wm.admit(&other, &sid("s0"), text_note(&full[1..])).unwrap();
    assert_eq!(wm.usage().bytes, MAX_WM_BYTES - 1);
    wm.admit(&other, &sid("s1"), text_note("y")).unwrap();
    assert_eq!(wm.usage().bytes, MAX_WM_BYTES);
    let before = wm.snapshot(&other, &sid("s2")).unwrap().notes.len();
    limit_named(
        wm.admit(&other, &sid("s2"), text_note("z")).err().unwrap(),
        "MAX_WM_BYTES",
    );
    assert_eq!(wm.snapshot(&other, &sid("s2")).unwrap().notes.len(), before);
    assert_eq!(wm.usage().bytes, MAX_WM_BYTES);
    wm.assert_consistent();
}

#[test]
fn per_write_content_and_metadata_limits_are_exact() {
    let content = |n: usize| {
        note::prepare(
            Some(Content::Text {
                text: "a".repeat(n),
                media_type: None,
            }),
            Map::new(),
            vec![],
            vec![],
        )
    };
    assert!(content(MAX_WM_CONTENT_BYTES).is_ok());
    limit_named(
        content(MAX_WM_CONTENT_BYTES + 1).err().unwrap(),
        "MAX_WM_CONTENT_BYTES",
    );
    // {"k":"aaa..."} is 8 bytes of JSON around the value.
    let metadata = |n: usize| {
        let m: Map<String, Value> = json!({"k": "a".repeat(n - 8)}).as_object().unwrap().clone();
        assert_eq!(Value::Object(m.clone()).to_string().len(), n);
        note::prepare(
            Some(Content::Text {
                text: "note".into(),
                media_type: None,
            }),
            m,
            vec![],
            vec![],
        )
    };
    assert!(metadata(MAX_WM_METADATA_BYTES).is_ok());
    limit_named(
        metadata(MAX_WM_METADATA_BYTES + 1).err().unwrap(),
        "MAX_WM_METADATA_BYTES",
    );
}

#[test]
fn expired_graphs_are_reclaimed_before_their_budget_is_reused() {
    let (wm, now) = registry();
    let (me, other) = (owner("t", "a"), owner("u", "a"));
    // Two tenants fill the shared budget (neither reaches its share).
    for i in 0..MAX_WM_SESSIONS {
        let who = if i % 2 == 0 { &me } else { &other };
        wm.admit(who, &sid(&format!("s{i}")), charged(10)).unwrap();
    }
    // A write keeps its session alive for a full TTL from that write.
    now.store(TTL_MS - 1, Ordering::SeqCst);
    wm.admit(&me, &sid("s0"), charged(5)).unwrap();
    limit_named(
        wm.admit(&me, &sid("new"), charged(1)).err().unwrap(),
        "MAX_WM_SESSIONS",
    );
    // At exactly the TTL every other session is gone, and their budget
    // with them, before the new session is admitted.
    now.store(TTL_MS, Ordering::SeqCst);
    wm.admit(&me, &sid("new"), charged(1)).unwrap();
    assert_eq!(
        wm.usage(),
        Usage {
            graphs: 2,
            writes: 3,
            bytes: 16
        }
    );
    assert_eq!(
        wm.snapshot(&me, &sid("s1")).unwrap_err().code(),
        "not_found"
    );
    let s0 = wm.snapshot(&me, &sid("s0")).unwrap();
    assert_eq!(s0.writes, 2);
    assert_eq!(s0.expires_at_ms - s0.created_at_ms, (2 * TTL_MS - 1) as i64);
    // A session that expired may be written again: it starts afresh.
    wm.admit(&me, &sid("s1"), charged(1)).unwrap();
    assert_eq!(wm.snapshot(&me, &sid("s1")).unwrap().writes, 1);
    now.store(10 * TTL_MS, Ordering::SeqCst);
    assert_eq!(wm.usage(), Usage::default());
    wm.assert_consistent();
}

#[test]
fn a_charge_stays_until_expiry_even_if_work_after_admission_fails() {
    let (wm, now) = registry();
    let me = owner("t", "a");
    let admission = wm.admit(&me, &sid("s"), text_note("hello")).unwrap();
    // Embedding never happens (as if it failed): the note has no vectors,
    // is still stored, and its bytes are still charged.
    let (note, _) = admission.note.unwrap();
    assert!(note.vectors.get().is_none());
    assert_eq!(wm.usage().bytes, 5);
    now.store(TTL_MS, Ordering::SeqCst);
    assert_eq!(wm.usage().bytes, 0);
}

/// 16 threads, two tenants, 160 sessions wanted (more than
/// MAX_WM_SESSIONS) and more bytes than MAX_WM_BYTES: every total stays
/// within its limit at every observation, and ends exactly equal to what
/// the writers were told was admitted.
#[test]
fn concurrent_writers_never_exceed_any_budget() {
    let (wm, _) = registry();
    const THREADS: usize = 16;
    const WRITES_PER_THREAD: usize = 300;
    const BYTES_PER_WRITE: usize = 5 * 1024; // 4800 × 5 KiB > MAX_WM_BYTES
    let admitted = AtomicUsize::new(0);
    let admitted_bytes = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (wm, admitted, admitted_bytes) = (&wm, &admitted, &admitted_bytes);
            scope.spawn(move || {
                let me = owner(if t % 2 == 0 { "even" } else { "odd" }, "a");
                for i in 0..WRITES_PER_THREAD {
                    let session = sid(&format!("s{}", t * 10 + i % 10));
                    let bytes = BYTES_PER_WRITE - (i % 3);
                    if wm.admit(&me, &session, charged(bytes)).is_ok() {
                        admitted.fetch_add(1, Ordering::SeqCst);
                        admitted_bytes.fetch_add(bytes, Ordering::SeqCst);
                    }
                    let u = wm.usage();
                    assert!(u.graphs <= MAX_WM_SESSIONS, "{u:?}");
                    assert!(u.writes <= MAX_WM_WRITES, "{u:?}");
                    assert!(u.bytes <= MAX_WM_BYTES, "{u:?}");
                }
            });
        }
    });
    let u = wm.usage();
    assert_eq!(u.writes, admitted.load(Ordering::SeqCst));
    assert_eq!(u.bytes, admitted_bytes.load(Ordering::SeqCst));
    // Demand exceeded the byte budget whichever sessions won (even 128
    // sessions × 30 writes alone exceed it): it was used to within one
    // write of the edge, and never beyond.
    assert!(u.bytes > MAX_WM_BYTES - BYTES_PER_WRITE, "{u:?}");
    wm.assert_consistent();
}

/// The session budget under contention: 16 threads each open 10 new
/// sessions, as four tenants (none reaching its share); exactly
/// MAX_WM_SESSIONS exist afterwards.
#[test]
fn concurrent_writers_get_exactly_the_session_budget() {
    let (wm, _) = registry();
    let admitted = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for t in 0..16 {
            let (wm, admitted) = (&wm, &admitted);
            scope.spawn(move || {
                let me = owner(&format!("t{}", t % 4), "a");
                for i in 0..10 {
                    let session = sid(&format!("s{t}-{i}"));
                    if wm.admit(&me, &session, charged(1)).is_ok() {
                        admitted.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(admitted.load(Ordering::SeqCst), MAX_WM_SESSIONS);
    assert_eq!(wm.usage().graphs, MAX_WM_SESSIONS);
    wm.assert_consistent();
}

/// The write budget under contention: 16 threads ask for 4800 writes into
/// shared sessions, as four tenants (none reaching its share); exactly
/// MAX_WM_WRITES succeed.
#[test]
fn concurrent_writers_get_exactly_the_write_budget() {
    let (wm, _) = registry();
    let admitted = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for t in 0..16 {
            let (wm, admitted) = (&wm, &admitted);
            scope.spawn(move || {
                let me = owner(&format!("t{}", t % 4), "a");
                for i in 0..300 {
                    let session = sid(&format!("s{}", (t + i) % 8));
                    if wm.admit(&me, &session, charged(1)).is_ok() {
                        admitted.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(admitted.load(Ordering::SeqCst), MAX_WM_WRITES);
    assert_eq!(wm.usage().writes, MAX_WM_WRITES);
    wm.assert_consistent();
}

#[test]
fn another_identity_sees_exactly_what_an_unknown_id_shows() {
    let (wm, _) = registry();
    let alice = owner("t", "alice");
    let bob = owner("t", "bob");
    let other_tenant_alice = owner("u", "alice");
    wm.admit(&alice, &sid("plan"), text_note("secret plan"))
        .unwrap();
    let unknown = wm.snapshot(&alice, &sid("never")).unwrap_err();
    for stranger in [&bob, &other_tenant_alice] {
        let seen = wm.snapshot(stranger, &sid("plan")).unwrap_err();
        assert_eq!(seen.code(), unknown.code());
        assert_eq!(
            seen.client_message(),
            unknown.client_message().replace("never", "plan")
        );
        assert!(wm.sessions(stranger).is_empty());
    }
    // Bob's write to the same id makes his own session; Alice's is intact.
    wm.admit(&bob, &sid("plan"), text_note("bob's plan"))
        .unwrap();
    assert_eq!(
        wm.snapshot(&alice, &sid("plan")).unwrap().notes[0].text,
        "secret plan"
    );
    assert_eq!(
        wm.snapshot(&bob, &sid("plan")).unwrap().notes[0].text,
        "bob's plan"
    );
    assert_eq!(wm.sessions(&alice).len(), 1);
    assert_eq!(wm.usage().graphs, 2);
}

#[test]
fn notes_get_sequential_ids_and_graph_writes_are_validated_first() {
    let (wm, _) = registry();
    let me = owner("t", "a");
    let first = wm.admit(&me, &sid("s"), text_note("one")).unwrap();
    assert_eq!(first.seq, 1);
    assert_eq!(first.note.unwrap().0.id, "s/1");
    let dangling = WriteDraft {
        note: None,
        graph: GraphWrite {
            nodes: vec![],
            edges: EdgeInput::parse_list(&json!([{"from": "a", "to": "b", "relation": "r"}]))
                .unwrap(),
        },
        charge: Charge {
            graph: 40,
            ..Charge::default()
        },
    };
    assert_eq!(
        wm.admit(&me, &sid("s"), dangling).err().unwrap().code(),
        "invalid_input"
    );
    // The refused write was not charged and took no seq.
    assert_eq!(wm.usage().writes, 1);
    assert_eq!(wm.admit(&me, &sid("s"), text_note("two")).unwrap().seq, 2);
}

// ---- Through `Memory`: two identities in one process -------------------

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn service() -> (MemoryService, TempDir) {
    let dir = std::env::temp_dir().join(crate::ids::new_id("alayasiki-wm"));
    std::fs::create_dir_all(&dir).unwrap();
    let service = MemoryService::open(
        &dir,
        crate::config::Durability::Normal,
        Arc::new(crate::embed::BuiltinEmbedder),
    )
    .unwrap();
    (service, TempDir(dir))
}

fn principal(subject: &str) -> Principal {
    Principal {
        tenant: Tenant::new("team").unwrap(),
        subject: subject.into(),
        roles: vec![Role::Admin],
        scopes: vec![],
        memory: crate::service::MemoryAccess::Unrestricted,
        anonymous: false,
    }
}

fn write(session: &str, text: &str) -> MemoryWrite {
    MemoryWrite {
        session_id: session.into(),
        content: Some(Content::Text {
            text: text.into(),
            media_type: None,
        }),
        metadata: Map::new(),
        nodes: vec![],
        edges: vec![],
    }
}

#[test]
fn two_identities_in_one_process_cannot_see_each_others_sessions() {
    let (service, _dir) = service();
    let (alice_p, bob_p) = (principal("alice"), principal("bob"));
    let alice = service.for_caller(&alice_p);
    let bob = service.for_caller(&bob_p);
    let receipt = alice
        .memory_write(write("task", "The migration password rotates on Fridays."))
        .unwrap();
    assert_eq!(receipt.search_lanes, ["keyword", "vector"]);
    let unknown = bob.memory_session("nothing-here").unwrap_err();
    let expect = unknown.client_message().replace("nothing-here", "task");
    let spec = |session: &str| crate::query::QuerySpec {
        text: "migration password".into(),
        search_mode: crate::query::SearchMode::Auto,
        mode: crate::query::ResultMode::Evidence,
        top_k: 5,
        budget_chars: 1000,
        lanes: crate::query::LaneSet::ALL,
        session_id: Some(session.into()),
        filter: Default::default(),
        as_of: None,
    };
    let attempts = [
        bob.memory_session("task").map(|_| ()),
        bob.memory_search("task", "password", 5).map(|_| ()),
        bob.memory_promote("task", true).map(|_| ()),
        bob.query(&spec("task")).map(|_| ()),
    ];
    for attempt in attempts {
        let err = attempt.unwrap_err();
        assert_eq!(err.code(), "not_found");
        assert_eq!(err.client_message(), expect);
    }
    assert!(bob.status().unwrap().working_memory.sessions.is_empty());
    // Alice finds her note, merged with (empty) persistent memory.
    let merged = alice.query(&spec("task")).unwrap();
    assert_eq!(merged.evidence[0].document_id, "task/1");
    assert_eq!(
        merged.evidence[0].origin,
        Some(crate::query::Origin::Session)
    );
    assert_eq!(alice.status().unwrap().working_memory.sessions.len(), 1);
}

#[test]
fn promotion_is_idempotent_and_found_by_persistent_queries() {
    let (service, _dir) = service();
    let p = principal("alice");
    let alice = service.for_caller(&p);
    alice
        .memory_write(write(
            "task",
            "Finding: the flaky test depends on the locale.",
        ))
        .unwrap();
    let mut json_note = write("task", r#"{"owner": "dana", "ticket": 42}"#);
    json_note.content = Some(Content::Text {
        text: r#"{"owner": "dana", "ticket": 42}"#.into(),
        media_type: Some("application/json".into()),
    });
    alice.memory_write(json_note).unwrap();
    let first = alice.memory_promote("task", true).unwrap();
    assert_eq!((first.notes, first.stored, first.replayed), (2, 2, 0));
    assert!(first.documents.iter().all(|d| d.state == "ready"));
    let again = alice.memory_promote("task", true).unwrap();
    assert_eq!((again.stored, again.replayed), (0, 2));
    let ids = |r: &PromoteReceipt| -> Vec<String> {
        r.documents.iter().map(|d| d.document_id.clone()).collect()
    };
    assert_eq!(ids(&first), ids(&again));
    assert_eq!(alice.status().unwrap().documents, 2);
    let found = alice
        .query(&crate::query::QuerySpec {
            text: "flaky locale".into(),
            search_mode: crate::query::SearchMode::Auto,
            mode: crate::query::ResultMode::Evidence,
            top_k: 5,
            budget_chars: 1000,
            lanes: crate::query::LaneSet::ALL,
            session_id: None,
            filter: Default::default(),
            as_of: None,
        })
        .unwrap();
    assert_eq!(
        found.evidence[0].document_id,
        first.documents[0].document_id
    );
    assert_eq!(
        found.evidence[0].source.as_deref(),
        Some("working-memory:task")
    );
    assert_eq!(found.evidence[0].origin, None);
}
