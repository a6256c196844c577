//! LLM triple tests: parsing, bounds, and which proposals become facts.

use super::quotes::find_name;
use super::*;
use crate::graph::fragment::{Extractor, Fragment};

fn reply(triples: Value) -> Vec<Proposal> {
    let mut t = Tally::default();
    parse(&json!({ "triples": triples }), &mut t).unwrap()
}

fn triple(s: &str, p: &str, o: &str, evidence: &str) -> Value {
    json!({"subject": s, "subject_kind": "organization", "predicate": p, "object": o,
           "object_kind": "other", "negated": false, "evidence": evidence})
}

fn build(text: &str, start: usize, proposals: &[Proposal]) -> (Fragment, Tally) {
    let passages = [Passage {
        chunk: 0,
        start,
        text,
    }];
    let mut b = FragmentBuilder::default();
    let mut t = Tally::default();
    b.add(&passages, proposals, &mut t);
    (b.finish(), t)
}

#[test]
fn a_quoted_triple_becomes_a_relation_with_the_quote_as_its_span() {
    let text = "Last spring, after long talks, Acme Corp. bought Widgets Inc. for cash.";
    let p = reply(json!([triple(
        "Acme Corporation",
        "Bought",
        "Widgets",
        "Acme Corp. bought Widgets Inc."
    )]));
    let (f, t) = build(text, 100, &p);
    assert_eq!(t.accepted, 1, "{t:?}");
    let r = &f.relations[0];
    assert_eq!(r.extractor, Extractor::Llm);
    assert_eq!(r.predicate, "bought");
    assert_eq!(
        &text[r.start - 100..r.end - 100],
        "Acme Corp. bought Widgets Inc."
    );
    let subject = &f.entities[r.subject];
    assert_eq!(
        subject.key, "acme",
        "resolved to the rule-based entity's key: {f:#?}"
    );
    assert!(f
        .mentions
        .iter()
        .all(|m| m.start >= 100 && m.end <= 100 + text.len()));
    assert!(f.mentions.iter().any(|m| m.entity == r.object));
}

#[test]
fn quotes_not_in_the_text_are_dropped() {
    let text = "Acme Corp. bought Widgets Inc.";
    let p = reply(json!([
        triple("Acme", "sold", "Widgets", "Acme Corp. sold Widgets Inc."),
        triple("Acme", "bought", "Widgets", "Acme bought Widgets"),
        triple("Acme", "bought", "Widgets", ""),
    ]));
    assert_eq!(p.len(), 2, "an empty quote is invalid");
    let (f, t) = build(text, 0, &p);
    assert!(f.relations.is_empty());
    assert_eq!(t.unquoted, 2);
}

#[test]
fn names_must_be_mentioned_in_the_passage() {
    let text = "Acme Corp. bought Widgets Inc. on 8 May 2023.";
    let p = reply(json!([
        triple(
            "Initech",
            "bought",
            "Widgets",
            "Acme Corp. bought Widgets Inc."
        ),
        triple("Acme", "bought", "Acme", "Acme Corp. bought Widgets Inc."),
        triple(
            "Acme",
            "bought on",
            "8 May 2023",
            "bought Widgets Inc. on 8 May 2023"
        ),
        triple("Acme", "bought", "Widgets", "on 8 May 2023"),
    ]));
    let (f, t) = build(text, 0, &p);
    assert!(f.relations.is_empty(), "{f:#?}");
    assert_eq!(t.unresolved, 4, "{t:?}");
}

#[test]
fn names_the_rules_missed_are_found_at_word_boundaries() {
    let text = "We met grandma at the quiet lake; grandma loves the lake.";
    let p = reply(
        json!([{"subject": "Grandma", "predicate": "loves", "object": "the lake",
                           "evidence": "grandma loves the lake"}]),
    );
    let (f, t) = build(text, 0, &p);
    assert_eq!(t.accepted, 1, "{t:?} {f:#?}");
    let r = &f.relations[0];
    let m = f
        .mentions
        .iter()
        .find(|m| m.entity == r.subject)
        .expect("mention");
    assert_eq!(&text[m.start..m.end], "grandma");
    assert!(m.start > 30, "the occurrence inside the quote is preferred");
    assert_eq!(find_name("Annual report by Ann", "ann"), Some((17, 20)));
    assert_eq!(find_name("Éclair and éCLAIR", "ÉCLAIR"), Some((0, 7)));
    assert_eq!(find_name("Annual", "ann"), None);
}

#[test]
fn quotes_may_differ_in_whitespace_only() {
    let text = "Acme Corp.\n  bought\tWidgets Inc. in May.";
    assert_eq!(
        find_quote(text, "Acme Corp. bought Widgets Inc."),
        Some((0, 32))
    );
    assert_eq!(find_quote(text, "acme corp. bought"), None, "case matters");
    assert_eq!(find_quote("héllo  wörld", "héllo wörld"), Some((0, 14)));
    assert_eq!(find_quote(text, "   "), None);
}

#[test]
fn malformed_and_excess_items_are_counted_not_fatal() {
    let mut t = Tally::default();
    assert!(parse(&json!({"facts": []}), &mut t).is_none());
    assert!(parse(&json!({"triples": "none"}), &mut t).is_none());
    let long = "x".repeat(MAX_LLM_NAME_BYTES + 1);
    let edge = "x".repeat(MAX_LLM_NAME_BYTES);
    let mut items = vec![
        json!(42),
        json!({"subject": 1, "predicate": "p", "object": "o", "evidence": "e"}),
        triple(&long, "p", "o", "e"),
        triple("s", "p", "o", &"e".repeat(MAX_LLM_EVIDENCE_BYTES + 1)),
        triple("s", &"p".repeat(MAX_LLM_PREDICATE_BYTES + 1), "o", "e"),
        triple("s", "<script>", "o", "e"),
        triple("s\u{7}", "p", "o", "e"),
        json!({"subject": "s", "predicate": "p", "object": "o", "evidence": "e",
               "negated": "yes"}),
        triple(&edge, "p", "o", "e"),
    ];
    let mut t = Tally::default();
    assert_eq!(
        parse(&json!({ "triples": items.clone() }), &mut t)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(t.invalid, 8);
    items.extend(std::iter::repeat_n(
        triple("s", "p", "o", "e"),
        MAX_LLM_TRIPLES,
    ));
    let mut t = Tally::default();
    let kept = parse(&json!({ "triples": items }), &mut t).unwrap();
    assert_eq!(kept.len(), MAX_LLM_TRIPLES - 8);
    assert_eq!(t.invalid, 8 + 9);
}

#[test]
fn predicates_are_normalized() {
    assert_eq!(
        normalize_predicate("Works   AT").as_deref(),
        Some("works at")
    );
    assert_eq!(
        normalize_predicate("co-founded").as_deref(),
        Some("co-founded")
    );
    assert_eq!(normalize_predicate("123"), None);
    assert_eq!(normalize_predicate("is: a"), None);
}

#[test]
fn batches_stay_within_the_byte_budget() {
    let texts = ["aaaa", "bbbb", "cc", "dddddddddd", "e"];
    let passages: Vec<Passage> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Passage {
            chunk: i,
            start: 0,
            text: t,
        })
        .collect();
    assert_eq!(batches(&passages, 8), vec![0..2, 2..3, 3..4, 4..5]);
    assert_eq!(batches(&passages, 100), vec![0..5]);
    assert!(batches(&[], 8).is_empty());
    let p: Value = serde_json::from_str(&prompt(&passages[..2])).unwrap();
    assert_eq!(p["passages"][1], json!({"id": 2, "text": "bbbb"}));
}

#[test]
fn a_quote_in_a_later_passage_uses_that_chunk() {
    let passages = [
        Passage {
            chunk: 3,
            start: 0,
            text: "Nothing relevant here.",
        },
        Passage {
            chunk: 4,
            start: 50,
            text: "Dana Scully works at Acme Corp.",
        },
    ];
    let p = reply(json!([triple(
        "Dana Scully",
        "works at",
        "Acme",
        "Dana Scully works at Acme Corp."
    )]));
    let mut b = FragmentBuilder::default();
    let mut t = Tally::default();
    b.add(&passages, &p, &mut t);
    let f = b.finish();
    assert_eq!(f.relations[0].chunk, 4);
    assert_eq!(f.relations[0].start, 50);
    assert!(f.mentions.iter().all(|m| m.chunk == 4 && m.start >= 50));
}
