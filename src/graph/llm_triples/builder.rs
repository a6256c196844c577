//! Deciding which proposals become graph facts: each is checked against
//! its passage and the rule-based extraction there, then merged into one
//! document fragment.

use std::collections::{HashMap, HashSet};

use super::super::extract::{self, EntityKind, Extraction};
use super::super::fragment::{
    is_node, predicate_key, Extractor, Fragment, FragmentEntity, FragmentMention, FragmentRelation,
};
use super::quotes::find_name;
use super::*;

/// Accumulates the accepted proposals of a document's replies into one
/// fragment (entities merged by key across chunks, as the rule-based
/// fragment does).
#[derive(Default)]
pub struct FragmentBuilder {
    fragment: Fragment,
    by_key: HashMap<String, usize>,
    mentions: HashSet<(usize, usize, usize)>,
    relations: HashSet<(usize, String, usize, bool)>,
    /// The rule-based extraction of each chunk seen (by chunk index).
    rules: HashMap<usize, Extraction>,
    /// The proposals are the document's own declarations, not an LLM's.
    declared: bool,
}

/// An endpoint of a proposal resolved in a passage: its key, display name,
/// kind and its mention spans (passage offsets).
struct Resolved {
    key: String,
    name: String,
    kind: EntityKind,
    spans: Vec<(usize, usize)>,
}

impl FragmentBuilder {
    /// A builder for facts a document declares ([`crate::graph::declared`]):
    /// the checks are the same, but a claimed kind wins over the
    /// rule-based extractor's guess (the declaring source knows what its
    /// entities are) and relations are marked [`Extractor::Declared`].
    pub fn declared() -> FragmentBuilder {
        FragmentBuilder {
            declared: true,
            ..FragmentBuilder::default()
        }
    }

    /// Checks `proposals` (a reply to `passages`) and keeps those that
    /// pass; see the module documentation.
    pub fn add(&mut self, passages: &[Passage<'_>], proposals: &[Proposal], tally: &mut Tally) {
        for p in proposals {
            let Some((passage, quote)) = passages
                .iter()
                .find_map(|passage| find_quote(passage.text, &p.evidence).map(|q| (passage, q)))
            else {
                tally.unquoted += 1;
                continue;
            };
            let rules = self
                .rules
                .entry(passage.chunk)
                .or_insert_with(|| extract::extract(passage.text));
            let wins = self.declared;
            let subject = Claim {
                name: &p.subject,
                kind: p.subject_kind,
                wins,
            };
            let object = Claim {
                name: &p.object,
                kind: p.object_kind,
                wins,
            };
            let subject = resolve(passage.text, rules, subject, quote);
            let object = resolve(passage.text, rules, object, quote);
            let (Some(subject), Some(object)) = (subject, object) else {
                tally.unresolved += 1;
                continue;
            };
            let in_quote = |r: &Resolved| r.spans.iter().any(|&(s, e)| s < quote.1 && e > quote.0);
            if subject.key == object.key || !(in_quote(&subject) || in_quote(&object)) {
                tally.unresolved += 1;
                continue;
            }
            let s = self.entity(passage, subject);
            let o = self.entity(passage, object);
            if !self
                .relations
                .insert((s, predicate_key(&p.predicate), o, p.negated))
            {
                tally.accepted += 1;
                continue;
            }
            self.fragment.relations.push(FragmentRelation {
                subject: s,
                predicate: p.predicate.clone(),
                object: o,
                negated: p.negated,
                pattern: true,
                chunk: passage.chunk,
                start: passage.start + quote.0,
                end: passage.start + quote.1,
                extractor: if self.declared {
                    Extractor::Declared
                } else {
                    Extractor::Llm
                },
            });
            tally.accepted += 1;
        }
    }

    /// Adds an entity by name (and claimed kind) with its mentions in each
    /// of `passages` that names it, resolved as the ends of a triple are.
    /// False when no passage names it (or it is a date or a quantity).
    pub fn add_entity(
        &mut self,
        passages: &[Passage<'_>],
        name: &str,
        kind: Option<EntityKind>,
    ) -> bool {
        let mut found = false;
        for passage in passages {
            let rules = self
                .rules
                .entry(passage.chunk)
                .or_insert_with(|| extract::extract(passage.text));
            let claim = Claim {
                name,
                kind,
                wins: self.declared,
            };
            if let Some(r) = resolve(passage.text, rules, claim, (0, passage.text.len())) {
                self.entity(passage, r);
                found = true;
            }
        }
        found
    }

    /// The fragment entity for `r`, with its mentions in `passage`.
    fn entity(&mut self, passage: &Passage<'_>, r: Resolved) -> usize {
        let index = *self.by_key.entry(r.key.clone()).or_insert_with(|| {
            self.fragment.entities.push(FragmentEntity {
                key: r.key.clone(),
                name: r.name.clone(),
                kind: r.kind,
                aliases: Vec::new(),
                mentions: 0,
            });
            self.fragment.entities.len() - 1
        });
        for (s, e) in r.spans {
            let start = passage.start + s;
            if self.mentions.insert((index, passage.chunk, start)) {
                self.fragment.entities[index].mentions += 1;
                self.fragment.mentions.push(FragmentMention {
                    entity: index,
                    chunk: passage.chunk,
                    start,
                    end: passage.start + e,
                });
            }
        }
        index
    }

    pub fn finish(self) -> Fragment {
        self.fragment
    }
}

/// A name as a proposal gives it.
#[derive(Clone, Copy)]
struct Claim<'a> {
    name: &'a str,
    kind: Option<EntityKind>,
    /// The claimed kind replaces the rule-based extractor's (declared
    /// facts); otherwise the extractor's kind stands.
    wins: bool,
}

/// Finds a proposal's name in a passage: as an entity of the rule-based
/// extraction (by key or alias key), else as the name itself, preferring
/// an occurrence inside the quote.
fn resolve(
    text: &str,
    rules: &Extraction,
    claim: Claim<'_>,
    quote: (usize, usize),
) -> Option<Resolved> {
    let (name, claimed) = (claim.name, claim.kind);
    let kind = claimed.unwrap_or(if name.starts_with(char::is_lowercase) {
        EntityKind::Concept
    } else {
        EntityKind::Unknown
    });
    let key = extract::entity_key(name, kind);
    let matched = rules.entities.iter().position(|e| {
        e.key == key
            || extract::entity_key(name, e.kind) == e.key
            || e.aliases
                .iter()
                .any(|a| extract::entity_key(a, e.kind) == key)
    });
    let resolved = match matched {
        Some(i) => {
            let e = &rules.entities[i];
            Resolved {
                key: e.key.clone(),
                name: e.name.clone(),
                kind: match claimed {
                    Some(k) if claim.wins => k,
                    _ => e.kind,
                },
                spans: rules
                    .mentions
                    .iter()
                    .filter(|m| m.entity == i)
                    .map(|m| (m.start, m.end))
                    .collect(),
            }
        }
        None => {
            let (s, e) = find_name(&text[quote.0..quote.1], name)
                .map(|(s, e)| (quote.0 + s, quote.0 + e))
                .or_else(|| find_name(text, name))?;
            let surface = &text[s..e];
            Resolved {
                key: extract::entity_key(surface, kind),
                name: surface.to_string(),
                kind,
                spans: vec![(s, e)],
            }
        }
    };
    is_node(resolved.kind, &resolved.key).then_some(resolved)
}
