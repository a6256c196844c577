//! Graph facts a document declares about itself, in its metadata under
//! [`DECLARED_GRAPH_KEY`]:
//!
//! ```json
//! {"declared_graph": {
//!    "entities": [{"name": "Ada Quill", "kind": "person"}],
//!    "triples": [{"subject": "Ada Quill", "subject_kind": "person",
//!                 "predicate": "works at", "object": "Harbor Labs",
//!                 "object_kind": "organization",
//!                 "evidence": "Ada Quill works at Harbor Labs"}]}}
//! ```
//!
//! `alayasiki-mcp import` writes them for the entities and relations of an
//! `@modelcontextprotocol/server-memory` file, so its relations become
//! graph relations rather than text the rule-based extractor may or may
//! not read as one.
//!
//! Declarations take the path the optional LLM's triples take
//! ([`super::llm_triples`]): the same parsing, bounds and predicate
//! normalization, and the same checks against the text (the evidence is a
//! quote of the document, both names are mentioned in it). What differs:
//! a claimed kind (`person`, `organization`, `place`, `artifact`,
//! `concept`; `other` or none claims nothing) wins over the rule-based
//! extractor's guess, and the relations are marked `declared`.
//!
//! A malformed declaration refuses the document, so a caller learns the
//! format; a well-formed one its text does not support is dropped and
//! logged, as an LLM's would be. Pure: no store.

use serde_json::{Map, Value};

use super::extract::EntityKind;
use super::fragment::Fragment;
use super::llm_triples::{self, FragmentBuilder, Passage, Proposal, Tally};
use crate::limits::{MAX_LLM_NAME_BYTES, MAX_LLM_TRIPLES};

/// The metadata key of a declaration.
pub const DECLARED_GRAPH_KEY: &str = "declared_graph";

/// A document's declaration, checked for shape and bounds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Declaration {
    pub entities: Vec<(String, Option<EntityKind>)>,
    pub triples: Vec<Proposal>,
}

/// What the text of a document made of its declaration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grounding {
    /// Triples as [`llm_triples::FragmentBuilder`] counted them.
    pub triples: Tally,
    /// Entities its text names / does not name.
    pub entities: usize,
    pub entities_unnamed: usize,
}

const SHAPE: &str = "`declared_graph` must be an object with `entities` ([{\"name\", \"kind\"}]) \
    and/or `triples` ([{\"subject\", \"subject_kind\", \"predicate\", \"object\", \"object_kind\", \
    \"negated\", \"evidence\"}])";

/// Reads the declaration in `metadata` (`None` without one).
pub fn parse(metadata: &Map<String, Value>) -> Result<Option<Declaration>, String> {
    let Some(v) = metadata.get(DECLARED_GRAPH_KEY) else {
        return Ok(None);
    };
    let obj = v.as_object().ok_or(SHAPE)?;
    if let Some(other) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "entities" | "triples"))
    {
        return Err(format!("{SHAPE}; `{other}` is not one of them"));
    }
    let mut out = Declaration::default();
    if obj.contains_key("triples") {
        let mut tally = Tally::default();
        out.triples = llm_triples::parse(v, &mut tally).ok_or(SHAPE)?;
        if tally.invalid > 0 {
            return Err(format!(
                "`declared_graph.triples`: {} item(s) malformed or beyond the first \
                 {MAX_LLM_TRIPLES} (MAX_LLM_TRIPLES); each needs non-blank `subject`, `object` \
                 (at most {MAX_LLM_NAME_BYTES} bytes, MAX_LLM_NAME_BYTES), a `predicate` of \
                 words (MAX_LLM_PREDICATE_BYTES) and an `evidence` quote of the text \
                 (MAX_LLM_EVIDENCE_BYTES)",
                tally.invalid
            ));
        }
    }
    if let Some(entities) = obj.get("entities") {
        let items = entities.as_array().ok_or(SHAPE)?;
        if items.len() > MAX_LLM_TRIPLES {
            return Err(format!(
                "`declared_graph.entities` has {} items; at most {MAX_LLM_TRIPLES} \
                 (MAX_LLM_TRIPLES)",
                items.len()
            ));
        }
        for (i, item) in items.iter().enumerate() {
            out.entities
                .push(entity(item).map_err(|e| format!("`declared_graph.entities[{i}]`: {e}"))?);
        }
    }
    Ok(Some(out))
}

fn entity(item: &Value) -> Result<(String, Option<EntityKind>), String> {
    let name = item
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty() && n.len() <= MAX_LLM_NAME_BYTES)
        .filter(|n| !n.chars().any(char::is_control))
        .ok_or_else(|| {
            format!("`name` must be a non-blank string of at most {MAX_LLM_NAME_BYTES} bytes")
        })?;
    let kind = match item.get("kind") {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) if k.eq_ignore_ascii_case("other") => None,
        Some(Value::String(k)) => Some(
            EntityKind::parse(k)
                .filter(|k| llm_triples::KINDS.contains(&k.as_str()))
                .ok_or_else(|| {
                    format!("`kind` must be one of: {}", llm_triples::KINDS.join(", "))
                })?,
        ),
        Some(_) => return Err("`kind` must be a string".into()),
    };
    if let Some(other) = item
        .as_object()
        .and_then(|o| o.keys().find(|k| !matches!(k.as_str(), "name" | "kind")))
    {
        return Err(format!("unknown field `{other}`"));
    }
    Ok((name.to_string(), kind))
}

/// The graph fragment of `declaration` over a document's chunks
/// (`passages[i].chunk == i`), with what became of it.
pub fn fragment(declaration: &Declaration, passages: &[Passage<'_>]) -> (Fragment, Grounding) {
    let mut builder = FragmentBuilder::declared();
    let mut grounding = Grounding::default();
    for (name, kind) in &declaration.entities {
        if builder.add_entity(passages, name, *kind) {
            grounding.entities += 1;
        } else {
            grounding.entities_unnamed += 1;
        }
    }
    builder.add(passages, &declaration.triples, &mut grounding.triples);
    (builder.finish(), grounding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fragment::{predicate_key, Extractor};
    use serde_json::json;

    fn declared(v: Value) -> Result<Option<Declaration>, String> {
        parse(json!({ DECLARED_GRAPH_KEY: v }).as_object().unwrap())
    }

    fn passages(text: &str) -> Vec<Passage<'_>> {
        vec![Passage {
            chunk: 0,
            start: 0,
            text,
        }]
    }

    #[test]
    fn a_declared_triple_becomes_a_declared_relation_with_the_claimed_kinds() {
        let text = "John_Smith works at Anthropic";
        let d = declared(json!({"triples": [{
            "subject": "John_Smith", "subject_kind": "person", "predicate": "Works  at",
            "object": "Anthropic", "object_kind": "organization", "evidence": text}]}))
        .unwrap()
        .unwrap();
        let (f, g) = fragment(&d, &passages(text));
        assert_eq!(g.triples.accepted, 1, "{g:?}");
        let r = &f.relations[0];
        assert_eq!(r.extractor, Extractor::Declared);
        assert_eq!(r.predicate, "works at", "normalized as an LLM's predicate");
        assert_eq!(predicate_key(&r.predicate), predicate_key("working at"));
        assert_eq!((r.start, r.end), (0, text.len()));
        let subject = &f.entities[r.subject];
        assert_eq!(subject.name, "John_Smith");
        assert_eq!(
            subject.kind,
            EntityKind::Person,
            "the claim wins over the rules"
        );
        assert_eq!(f.entities[r.object].kind, EntityKind::Organization);
    }

    #[test]
    fn declared_entities_get_their_kind_and_mentions() {
        let text = "Harbor Labs (organization): Builds tidal turbines";
        let d = declared(
            json!({"entities": [{"name": "Harbor Labs", "kind": "organization"},
                                             {"name": "Nowhere Inc"}]}),
        )
        .unwrap()
        .unwrap();
        let (f, g) = fragment(&d, &passages(text));
        assert_eq!((g.entities, g.entities_unnamed), (1, 1));
        assert_eq!(f.entities.len(), 1, "{f:#?}");
        assert_eq!(f.entities[0].kind, EntityKind::Organization);
        let m = f.mentions[0];
        assert_eq!(&text[m.start..m.end], "Harbor Labs");
    }

    #[test]
    fn ungrounded_triples_are_dropped_and_counted() {
        let text = "Ada Quill mentors John";
        let d = declared(json!({"triples": [
            {"subject": "Ada Quill", "predicate": "mentors", "object": "Bob",
             "evidence": text},
            {"subject": "Ada Quill", "predicate": "mentors", "object": "John",
             "evidence": "Ada mentors John"}]}))
        .unwrap()
        .unwrap();
        let (f, g) = fragment(&d, &passages(text));
        assert!(f.relations.is_empty());
        assert_eq!((g.triples.unresolved, g.triples.unquoted), (1, 1));
    }

    #[test]
    fn malformed_declarations_are_refused_with_the_format() {
        assert_eq!(parse(json!({"a": 1}).as_object().unwrap()).unwrap(), None);
        for bad in [
            json!("x"),
            json!({"relations": []}),
            json!({"triples": "x"}),
            json!({"triples": [{"subject": "a", "predicate": "p"}]}),
            json!({"entities": [{"name": ""}]}),
            json!({"entities": [{"name": "A", "kind": "date"}]}),
            json!({"entities": [{"name": "A", "type": "person"}]}),
            json!({"entities": vec![json!({"name": "A"}); MAX_LLM_TRIPLES + 1]}),
        ] {
            assert!(declared(bad.clone()).is_err(), "{bad} accepted");
        }
        let ok = declared(json!({"entities": [{"name": "A", "kind": "other"}], "triples": []}));
        assert_eq!(ok.unwrap().unwrap().entities, vec![("A".to_string(), None)]);
    }
}
