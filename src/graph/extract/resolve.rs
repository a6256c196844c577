//! Entity resolution within one text.
//!
//! Owns merging mentions into entities: identical keys merge (so "Acme's",
//! "Acme Corp." and "ACME" are one entity), a short name merges into the one
//! longer name it is a prefix or (for people) a suffix of ("Curie" -> "Marie
//! Curie", "Acme" -> "Acme Widgets"), and an acronym merges into the one
//! multi-word name whose initials it spells ("WHO" -> "World Health
//! Organization"). Ambiguous short names (two "Smith"s) stay separate.
//! Kind votes of merged mentions are summed; the display name is the longest
//! surface.
//!
//! Must never: merge across incompatible kinds, merge values (dates,
//! quantities) or code identifiers by name rules, or do work quadratic in the
//! number of entities (candidate buckets are capped by
//! [`MAX_ALIAS_CANDIDATES`]).

use std::collections::HashMap;

use super::kinds::{Votes, WEAK};
use super::lexicon::{self, FastHash, CONNECTORS};
use super::mentions::{Category, RawMention};
use super::{EntityCandidate, EntityKind};

/// Largest bucket of same-first-word (or same-last-word) names examined for
/// one short name; bigger buckets are ambiguous anyway and are skipped.
pub(super) const MAX_ALIAS_CANDIDATES: usize = 8;

/// Entities plus, for every raw mention (same order), its entity index.
pub(super) struct Resolved {
    pub entities: Vec<EntityCandidate>,
    pub mention_entity: Vec<usize>,
}

struct Draft<'m> {
    key: &'m str,
    words: Vec<&'m str>,
    votes: Votes,
    name_like: bool,
    acronym: bool,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Two entities may merge unless both have firm, different kinds; a kind
/// backed only by a weak cue does not block a merge.
fn compatible(a: &Votes, b: &Votes) -> bool {
    let firm = |v: &Votes| {
        let k = v.best();
        (k != EntityKind::Unknown && v.get(k) > WEAK).then_some(k)
    };
    match (firm(a), firm(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// Merges `mentions` (in text order) into entities.
pub(super) fn resolve(text: &str, mentions: &[RawMention]) -> Resolved {
    let mut by_key: HashMap<&str, usize, FastHash> = HashMap::default();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut mention_draft = Vec::with_capacity(mentions.len());
    for m in mentions {
        let d = *by_key.entry(m.key.as_str()).or_insert_with(|| {
            let surface = &text[m.start..m.end];
            drafts.push(Draft {
                key: m.key.as_str(),
                words: m.key.split(' ').collect(),
                votes: Votes::default(),
                name_like: m.category == Category::Name,
                acronym: surface.len() >= 2
                    && surface.len() <= 8
                    && surface.chars().all(|c| c.is_ascii_uppercase() || c == '.'),
            });
            drafts.len() - 1
        });
        drafts[d].votes.merge(&m.votes);
        mention_draft.push(d);
    }
    let mut parent: Vec<usize> = (0..drafts.len()).collect();
    merge_short_names(&drafts, &mut parent);
    merge_acronyms(&drafts, &mut parent);

    // Group drafts by root, ordered by first mention.
    let mut root_entity: HashMap<usize, usize, FastHash> = HashMap::default();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut mention_entity = Vec::with_capacity(mentions.len());
    for &d in &mention_draft {
        let root = find(&mut parent, d);
        let e = *root_entity.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        mention_entity.push(e);
    }
    for (mi, &e) in mention_entity.iter().enumerate() {
        groups[e].push(mi);
    }
    let entities = groups
        .iter()
        .map(|ms| build_entity(text, mentions, ms, &drafts, &mention_draft, &mut parent))
        .collect();
    Resolved {
        entities,
        mention_entity,
    }
}

/// "Curie" -> "Marie Curie", "Acme" -> "Acme Widgets" when unambiguous.
fn merge_short_names(drafts: &[Draft], parent: &mut [usize]) {
    let mut by_first: HashMap<&str, Vec<usize>, FastHash> = HashMap::default();
    let mut by_last: HashMap<&str, Vec<usize>, FastHash> = HashMap::default();
    for (i, d) in drafts.iter().enumerate() {
        if d.name_like && d.words.len() >= 2 {
            by_first.entry(d.words[0]).or_default().push(i);
            if let Some(last) = d.words.last() {
                by_last.entry(last).or_default().push(i);
            }
        }
    }
    let empty = Vec::new();
    for (s, short) in drafts.iter().enumerate() {
        if !short.name_like {
            continue;
        }
        let k = short.words.len();
        let first = by_first.get(short.words[0]).unwrap_or(&empty);
        let last = short
            .words
            .last()
            .and_then(|w| by_last.get(w))
            .unwrap_or(&empty);
        if first.len() > MAX_ALIAS_CANDIDATES || last.len() > MAX_ALIAS_CANDIDATES {
            continue;
        }
        let mut roots: Vec<usize> = Vec::new();
        for &f in first {
            let long = &drafts[f];
            if long.words.len() > k
                && long.words[..k] == short.words[..]
                && compatible(&short.votes, &long.votes)
            {
                roots.push(find(parent, f));
            }
        }
        // Surnames refer back to people only: "Curie", not "Paris" in
        // "University of Paris".
        for &f in last {
            let long = &drafts[f];
            let person = long.votes.get(EntityKind::Person) > 0;
            if k == 1
                && long.words.len() > k
                && long.words[long.words.len() - k..] == short.words[..]
                && person
                && compatible(&short.votes, &long.votes)
            {
                roots.push(find(parent, f));
            }
        }
        roots.sort_unstable();
        roots.dedup();
        if let [only] = roots[..] {
            let rs = find(parent, s);
            if rs != only {
                parent[rs] = only;
            }
        }
    }
}

/// Initials of a multi-word name, with and without its connectors.
fn initials(words: &[&str]) -> [String; 2] {
    let mut all = String::new();
    let mut content = String::new();
    for w in words {
        let Some(c) = w.chars().next() else { continue };
        if !c.is_alphabetic() {
            continue;
        }
        all.push(c);
        if !lexicon::contains(CONNECTORS, w) && *w != "and" && *w != "the" {
            content.push(c);
        }
    }
    [all, content]
}

/// "WHO" -> "World Health Organization" when exactly one name matches.
fn merge_acronyms(drafts: &[Draft], parent: &mut [usize]) {
    let mut by_initials: HashMap<String, Vec<usize>, FastHash> = HashMap::default();
    for (i, d) in drafts.iter().enumerate() {
        if d.name_like && d.words.len() >= 2 {
            let [all, content] = initials(&d.words);
            if content.len() >= 2 {
                by_initials.entry(content.clone()).or_default().push(i);
            }
            if all != content && all.len() >= 2 {
                by_initials.entry(all).or_default().push(i);
            }
        }
    }
    for (s, d) in drafts.iter().enumerate() {
        if !d.acronym || d.words.len() != 1 {
            continue;
        }
        let letters: String = d.key.chars().filter(|c| *c != '.').collect();
        let Some(candidates) = by_initials.get(&letters) else {
            continue;
        };
        let mut roots: Vec<usize> = candidates.iter().map(|&f| find(parent, f)).collect();
        roots.sort_unstable();
        roots.dedup();
        if let [only] = roots[..] {
            let rs = find(parent, s);
            if rs != only && compatible(&d.votes, &drafts[only].votes) {
                parent[rs] = only;
            }
        }
    }
}

fn build_entity(
    text: &str,
    mentions: &[RawMention],
    members: &[usize],
    drafts: &[Draft],
    mention_draft: &[usize],
    parent: &mut [usize],
) -> EntityCandidate {
    let mut votes = Votes::default();
    let mut seen_drafts: Vec<usize> = Vec::new();
    for &mi in members {
        let d = mention_draft[mi];
        if !seen_drafts.contains(&d) {
            seen_drafts.push(d);
            votes.merge(&drafts[d].votes);
        }
    }
    let surface = |mi: usize| text[mentions[mi].start..mentions[mi].end].trim();
    let words = |s: &str| s.split_whitespace().count();
    // Longest surface names the entity; earlier wins ties.
    let mut best = members[0];
    for &mi in members {
        if words(surface(mi)) > words(surface(best)) {
            best = mi;
        }
    }
    let root = find(parent, mention_draft[best]);
    let key = drafts[root].key.to_string();
    let name = collapse_whitespace(surface(best));
    let mut aliases: Vec<String> = Vec::new();
    for &mi in members {
        let s = collapse_whitespace(surface(mi));
        let dup =
            s.eq_ignore_ascii_case(&name) || aliases.iter().any(|a| a.eq_ignore_ascii_case(&s));
        if !dup {
            aliases.push(s);
        }
    }
    EntityCandidate {
        name,
        key,
        kind: votes.best(),
        aliases,
    }
}

fn collapse_whitespace(s: &str) -> String {
    let irregular = s.contains(['\n', '\t', '\r']) || s.contains("  ");
    if !irregular {
        return s.to_string(); // the usual case: nothing to collapse
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
