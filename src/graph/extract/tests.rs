//! Behaviour tests of the public extractor API, a seeded fuzz test, a
//! bounded-work test and an (ignored) throughput measurement.
//!
//! Must never: depend on files, the network or wall-clock timing for
//! pass/fail in debug builds.

use super::*;

fn entity<'x>(x: &'x Extraction, key: &str) -> Option<&'x EntityCandidate> {
    x.entities.iter().find(|e| e.key == key)
}

fn index(x: &Extraction, key: &str) -> usize {
    x.entities
        .iter()
        .position(|e| e.key == key)
        .unwrap_or_else(|| panic!("no entity {key:?} in {:#?}", x.entities))
}

/// Pattern relations as (subject key, predicate, object key, negated).
fn triples(x: &Extraction) -> Vec<(String, String, String, bool)> {
    x.relations
        .iter()
        .filter(|r| r.kind == RelationKind::Pattern)
        .map(|r| {
            (
                x.entities[r.subject].key.clone(),
                r.predicate.clone(),
                x.entities[r.object].key.clone(),
                r.negated,
            )
        })
        .collect()
}

fn has(x: &Extraction, s: &str, p: &str, o: &str, negated: bool) -> bool {
    triples(x).contains(&(s.to_string(), p.to_string(), o.to_string(), negated))
}

#[test]
fn possessive_refers_to_same_entity() {
    let x = extract("Acme hired Bob. Acme's CEO praised him.");
    let acme = entity(&x, "acme").expect("acme");
    assert!(acme.aliases.is_empty(), "{acme:?}");
    assert_eq!(
        x.mentions
            .iter()
            .filter(|m| m.entity == index(&x, "acme"))
            .count(),
        2
    );
}

#[test]
fn corporate_suffix_variants_merge() {
    let x = extract("Acme Corp. grew. Acme Corporation hired Bob. Acme, Inc. thrived.");
    let acme = entity(&x, "acme").expect("acme");
    assert_eq!(acme.kind, EntityKind::Organization);
    assert_eq!(
        x.entities
            .iter()
            .filter(|e| e.key.starts_with("acme"))
            .count(),
        1
    );
}

#[test]
fn later_short_name_merges_into_earlier_full_name() {
    let x = extract("Marie Curie moved to Paris. Later, Curie won the Nobel Prize.");
    let curie = entity(&x, "marie curie").expect("marie curie");
    assert_eq!(curie.name, "Marie Curie");
    assert_eq!(curie.aliases, ["Curie"]);
    assert_eq!(curie.kind, EntityKind::Person);
    let x = extract("Acme Widgets opened a plant. Acme expects growth.");
    assert_eq!(
        entity(&x, "acme widgets").expect("acme widgets").aliases,
        ["Acme"]
    );
}

#[test]
fn ambiguous_short_name_stays_separate() {
    let x = extract("Bob Smith met Bob Jones. Bob left.");
    assert!(entity(&x, "bob").is_some());
}

#[test]
fn acronym_merges_with_its_expansion() {
    let x = extract("The World Health Organization warned Kenya. The WHO sent doctors.");
    let who = entity(&x, "world health organization").expect("who");
    assert_eq!(who.aliases, ["WHO"]);
}

#[test]
fn dates_merge_across_formats() {
    let x = extract("We met on 8 May, 2023. The contract from May 8, 2023 expired.");
    let date = entity(&x, "2023-05-08").expect("date");
    assert_eq!(date.kind, EntityKind::Date);
    assert_eq!(
        x.entities
            .iter()
            .filter(|e| e.kind == EntityKind::Date)
            .count(),
        1
    );
}

#[test]
fn verb_between_mentions_becomes_predicate() {
    let x = extract("Acme acquired Widgets Inc. in 2021.");
    assert!(
        has(&x, "acme", "acquired", "widgets", false),
        "{:?}",
        triples(&x)
    );
}

#[test]
fn negated_verb_sets_negated_flag() {
    let x = extract("Globex did not acquire Initech.");
    assert!(
        has(&x, "globex", "acquire", "initech", true),
        "{:?}",
        triples(&x)
    );
    let x = extract("Initech isn't based in Berlin.");
    assert!(
        has(&x, "initech", "based in", "berlin", true),
        "{:?}",
        triples(&x)
    );
    let x = extract("Gina never worked at Google.");
    assert!(
        has(&x, "gina", "worked at", "google", true),
        "{:?}",
        triples(&x)
    );
}

#[test]
fn copula_with_concept_gives_is_relation() {
    let x = extract("Ada Lovelace was an English mathematician.");
    assert!(
        has(&x, "ada lovelace", "is", "english mathematician", false),
        "{:?}",
        triples(&x)
    );
}

#[test]
fn role_of_pattern_in_copula_and_apposition() {
    let x = extract("Bob Lee is the CEO of Initech.");
    assert!(
        has(&x, "bob lee", "ceo of", "initech", false),
        "{:?}",
        triples(&x)
    );
    let x = extract("Bob Lee, the CTO of Initech, resigned.");
    assert!(
        has(&x, "bob lee", "cto of", "initech", false),
        "{:?}",
        triples(&x)
    );
    let x = extract("Paris, the capital of France, is busy.");
    assert!(
        has(&x, "paris", "capital of", "france", false),
        "{:?}",
        triples(&x)
    );
}

#[test]
fn possessive_role_inverts_subject_and_object() {
    let x = extract("Acme's CEO, Paul Martin, spoke.");
    assert!(
        has(&x, "paul martin", "ceo of", "acme", false),
        "{:?}",
        triples(&x)
    );
}

#[test]
fn coordination_distributes_subjects_and_objects() {
    let x = extract("Larry Page and Sergey Brin founded Google.");
    assert!(has(&x, "larry page", "founded", "google", false));
    assert!(has(&x, "sergey brin", "founded", "google", false));
    let x = extract("The Danube flows through Vienna, Budapest and Belgrade.");
    for city in ["vienna", "budapest", "belgrade"] {
        assert!(
            has(&x, "danube", "flows through", city, false),
            "{city}: {:?}",
            triples(&x)
        );
    }
}

#[test]
fn previous_verb_carries_to_a_new_preposition() {
    let x = extract("Jon moved from Sweden to Boston.");
    assert!(has(&x, "jon", "moved from", "sweden", false));
    assert!(
        has(&x, "jon", "moved to", "boston", false),
        "{:?}",
        triples(&x)
    );
}

#[test]
fn chat_first_person_is_the_speaker() {
    let x = extract("Caroline: I went to a LGBTQ support group yesterday.");
    assert!(
        has(&x, "caroline", "went to", "lgbtq support group", false),
        "{:?}",
        triples(&x)
    );
    assert_eq!(
        entity(&x, "caroline").expect("caroline").kind,
        EntityKind::Person
    );
}

#[test]
fn unpatterned_pairs_get_cooccurrence() {
    let x = extract("Alice, Paris, and Rust were all mentioned in passing.");
    let cooc: Vec<_> = x
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Cooccurrence)
        .collect();
    assert!(!cooc.is_empty());
    assert!(cooc
        .iter()
        .all(|r| r.predicate == COOCCURRENCE_PREDICATE && r.subject != r.object));
}

#[test]
fn relation_evidence_is_the_sentence() {
    let text = "Intro here. Acme acquired Widgets Inc. today.";
    let x = extract(text);
    let r = x
        .relations
        .iter()
        .find(|r| r.kind == RelationKind::Pattern)
        .expect("relation");
    assert_eq!(&text[r.start..r.end], "Acme acquired Widgets Inc. today.");
}

#[test]
fn mentions_cover_identifiers_links_values_and_quotes() {
    let text = "See src/main.rs, foo::bar() and https://x.org/a; mail ops@x.org. \
                It costs $30, weighs 5 km, runs at 3.5 GHz, is \"project lantern\" and GPT-4.";
    let x = extract(text);
    let surfaces: Vec<&str> = x.mentions.iter().map(|m| m.surface.as_str()).collect();
    for want in [
        "src/main.rs",
        "foo::bar()",
        "https://x.org/a",
        "ops@x.org",
        "$30",
        "5 km",
        "3.5 GHz",
        "project lantern",
        "GPT-4",
    ] {
        assert!(surfaces.contains(&want), "{want} not in {surfaces:?}");
    }
}

#[test]
fn empty_and_whitespace_texts_extract_nothing() {
    assert_eq!(extract(""), Extraction::default());
    assert_eq!(extract(" \n\t "), Extraction::default());
}

/// Checks every structural invariant of an extraction.
fn assert_well_formed(text: &str, x: &Extraction) {
    let mut last_end = 0;
    for m in &x.mentions {
        assert!(m.start < m.end && m.end <= text.len(), "{m:?}");
        assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end));
        assert!(m.start >= last_end, "overlap at {m:?}");
        last_end = m.end;
        assert_eq!(m.surface, text[m.start..m.end]);
        assert!(m.entity < x.entities.len());
    }
    for e in &x.entities {
        assert!(!e.key.is_empty() && !e.name.is_empty(), "{e:?}");
    }
    for r in &x.relations {
        assert!(r.subject < x.entities.len() && r.object < x.entities.len());
        assert_ne!(r.subject, r.object);
        assert!(r.start <= r.end && r.end <= text.len());
        assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        assert!(!r.predicate.is_empty());
    }
}

/// xorshift64*: a tiny seeded PRNG so the fuzz corpus is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Fragments that exercise the tricky paths (abbreviations, quotes,
/// possessives, dates, code) glued to random characters.
const FRAGMENTS: &[&str] = &[
    "Dr.",
    "U.S.",
    "e.g.",
    "Inc.",
    "'s",
    "\u{2019}s",
    "`",
    "\"",
    "\u{201c}",
    "\u{201d}",
    ":",
    "\n",
    "\n\n",
    "2024-05-01",
    "1:56 pm",
    "8 May, 2023",
    "$30",
    "20%",
    "GPT-4",
    "foo::bar()",
    "a_b",
    "src/x.rs",
    "http://",
    "@",
    "Acme",
    "Marie Curie",
    " of ",
    " and ",
    ", the CEO of ",
    " is a ",
    " did not ",
    "I",
    "Caroline: ",
    "(",
    ")",
    "[",
    "]",
    "...",
    "?!",
    "-",
    "\u{2026}",
    "\u{301}",
    "\u{200d}",
    "\u{fe0f}",
    "\u{1f600}",
    "\u{5d0}\u{5d1}",
    "\u{4e2d}\u{6587}",
    "\u{10410}\u{10410}",
    "\u{c5}ngstr\u{f6}m",
    "ß",
    "İ",
    "Q3",
    "last Tuesday",
    "three years ago",
    "St. Michael's",
];

fn random_text(rng: &mut Rng) -> String {
    let mut s = String::new();
    let pieces = rng.below(60);
    for _ in 0..pieces {
        match rng.below(4) {
            0 => s.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]),
            1 => {
                let c = char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('?');
                s.push(c);
            }
            2 => s.push(' '),
            _ => {
                let c = (b' ' + rng.below(95) as u8) as char;
                s.push(c);
            }
        }
    }
    s
}

#[test]
fn never_panics_on_random_unicode() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3_000 {
        let text = random_text(&mut rng);
        let x = extract(&text);
        assert_well_formed(&text, &x);
    }
}

#[test]
fn work_is_bounded_on_pathological_input() {
    // One "sentence" of thousands of names: sentence length and
    // co-occurrence caps keep the relation count linear.
    let text = "Alice Bob Carol Dave Erin Frank Grace Heidi, ".repeat(2_000);
    let x = extract(&text);
    assert_well_formed(&text, &x);
    let sentences = text.len() / sentences::MAX_SENTENCE_BYTES + 1;
    let per_sentence_cap = relations::MAX_COOCCURRENCE_ENTITIES.pow(2) * 2;
    assert!(x.relations.len() <= sentences * per_sentence_cap);
    let text = "x".repeat(200_000);
    let x = extract(&text);
    assert_well_formed(&text, &x);
    assert!(x.entities.is_empty());
}

/// CPU seconds used by this thread so far (Linux `/proc`), so throughput
/// can be reported independently of other load on a shared machine.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the parenthesized command name; utime and stime are the
    // 14th and 15th fields overall, in clock ticks (100 per second).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Throughput in release mode: `cargo test --release -- --ignored
/// --nocapture throughput`. Prints wall-clock and, where available,
/// CPU-time rates.
#[test]
#[ignore]
fn throughput() {
    let corpus = [
        "Acme Corp. acquired Widgets Inc. for $30 million on 8 May, 2023. The deal was announced \
         by Jane Smith, the CEO of Acme. ",
        "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\n",
        "The `parse_config` function in src/config.rs now returns a Result instead of panicking. ",
        "Meeting notes 2024-05-01\nAttendees: Alice Wong, Raj Patel, Tom\n- Budget approved: \
         $45,000 for Q3 marketing.\n",
        "Born in Warsaw in 1867, Marie Sklodowska later moved to Paris and married Pierre Curie. ",
    ]
    .concat();
    // ~1 KB documents, as stored by agents.
    let long = corpus.repeat(1_024 / corpus.len() + 1);
    let doc = &long[..crate::text::floor_char_boundary(&long, 1_024)];
    let docs = 6_000;
    let cpu_start = thread_cpu_seconds();
    let start = std::time::Instant::now();
    let mut entities = 0;
    for _ in 0..docs {
        entities += extract(std::hint::black_box(doc)).entities.len();
    }
    let wall = start.elapsed().as_secs_f64();
    let mb = (doc.len() * docs) as f64 / 1e6;
    println!(
        "1 KB docs, wall clock: {:.1} MB/s, {:.0} docs/s ({entities} entities)",
        mb / wall,
        docs as f64 / wall
    );
    if let (Some(a), Some(b)) = (cpu_start, thread_cpu_seconds()) {
        let cpu = (b - a).max(0.01);
        println!(
            "1 KB docs, CPU time:   {:.1} MB/s, {:.0} docs/s",
            mb / cpu,
            docs as f64 / cpu
        );
    }
    let big = corpus.repeat(2_000);
    let start = std::time::Instant::now();
    let x = extract(&big);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "single {:.1} MB text: {:.1} MB/s wall clock, {} entities, {} relations",
        big.len() as f64 / 1e6,
        big.len() as f64 / 1e6 / secs,
        x.entities.len(),
        x.relations.len()
    );
}

/// A note states a single-valued fact about what it opens with: the
/// attribute noun ("The deadline for X is ..."), a thing it names with
/// "the" ("The standup is at ..."), or a name ending in "s" before a
/// singular verb ("Atlas is at ...") is the fact's holder, though outside
/// a conversation a lone noun after "the" further on points back and a
/// capitalized plural opening a sentence is its capital.
#[test]
fn a_note_states_a_fact_about_what_it_opens_with() {
    for (text, fact) in [
        (
            "The deadline for the Falcon report moved to May 15.",
            ("falcon", "deadline", "--05-15"),
        ),
        ("The standup is at 09:30.", ("standup", "is at", "09:30")),
        (
            "The tax filing is now due on October 15.",
            ("tax", "filing due on", "--10-15"),
        ),
        (
            "Atlas was upgraded to version 2.4.",
            ("atlas", "upgraded to version", "2.4"),
        ),
    ] {
        let x = extract(text);
        let (s, p, o) = fact;
        assert!(has(&x, s, p, o, false), "{text}: {:?}", triples(&x));
    }
    let x = extract("Errors are logged. Open the file in the browser.");
    assert!(entity(&x, "errors").is_none() && entity(&x, "file").is_none());
}
