//! Concept phrases: determiner-led lowercase noun phrases.
//!
//! Owns finding "a LGBTQ support group", "an English mathematician", "the
//! churn analysis": a determiner or possessive pronoun followed by up to
//! [`MAX_CONCEPT_WORDS`] lowercase content words (acronyms and nationality
//! adjectives may modify), trimmed of a trailing verb and of leading
//! evaluative adjectives.
//!
//! Must never: accept a lone generic noun, role or relative ("the deal", "a
//! professor", "my brother"), a lone noun that points back in documentation
//! ("the file"), swallow a verb ("the tests passed") or an adjective
//! complement ("keep the format simple").

use super::kinds::{self, Votes, SHAPE};
use super::lexicon::{
    self, ACRONYM_STOP, ADJ_DROP, DETERMINERS, GENERIC_NOUNS, KIN, LOWERCASE_TECH, NUMBER_WORDS,
    ROLES, STOPWORDS,
};
use super::mentions::{first_word, Category, Detector, RawMention};
use super::morph;
use super::normalize::concept_key;
use super::tokens::{Shape, Token};
use super::EntityKind;

/// Most words in a concept phrase after its determiner.
pub(super) const MAX_CONCEPT_WORDS: usize = 4;

impl Detector<'_, '_> {
    /// Whether the phrase at determiner `i` is the first words of the
    /// text.
    fn opens_note(&self, i: usize) -> bool {
        self.opens_text && i == first_word(self.toks)
    }

    /// A determiner-led concept phrase at determiner `i`: "a LGBTQ support
    /// group", "an English mathematician". Returns the mention and the index
    /// to resume at.
    pub(super) fn concept_at(&self, i: usize) -> Option<(RawMention, usize)> {
        let toks = self.toks;
        let mut j = i + 1;
        while j < toks.len() && j - (i + 1) < MAX_CONCEPT_WORDS {
            let t = &toks[j];
            if t.line_start {
                break;
            }
            let next_lower = toks.get(j + 1).is_some_and(|x| x.shape == Shape::Lower);
            let ok = match t.shape {
                // "a 4-byte length prefix": a measure describes the noun.
                _ if j == i + 1 && is_measure(t.text) => next_lower,
                Shape::Lower => {
                    let ordinal = matches!(t.text, "first" | "second" | "third" | "last" | "next");
                    t.text.chars().all(|c| c.is_alphabetic() || c == '-')
                        && !t.is_in(STOPWORDS)
                        && !(j > i + 1 && t.is_in(NUMBER_WORDS))
                        && (ordinal || !morph::is_adverb(t.text))
                        && !(j == i + 1 && t.is_in(LOWERCASE_TECH))
                }
                Shape::Upper => {
                    next_lower
                        && !t.is_in(ACRONYM_STOP)
                        && !Self::is_role_acronym(t)
                        && !self.register.is_keyword(toks, j)
                }
                Shape::Cap => kinds::is_demonym(t) && next_lower,
                _ => false,
            };
            // "The WHO sent doctors", "the company reported losses", "the
            // chip runs hot": a finite verb after the first word is the
            // clause's verb, not part of the phrase.
            let third_person = t.text.ends_with('s')
                && !t.text.ends_with("ss")
                && morph::verb_base(t.text).is_some_and(|b| b != t.text);
            let finite = t.shape == Shape::Lower
                && j > i + 1
                && (t.is_in(lexicon::IRREGULAR_VERBS)
                    || (t.text.len() > 4 && t.text.ends_with("ed"))
                    || third_person);
            if !ok || finite {
                break;
            }
            j += 1;
            if t.possessive {
                return None; // "the company's CEO": the owner is not the concept
            }
        }
        let (mut s, mut e) = (i + 1, j);
        // "the daemon reopens every file", "the mode compresses 8%": a last
        // word followed by a determiner or a number is the clause's verb.
        if e == j
            && e - s >= 2
            && toks.get(e).is_some_and(starts_object)
            && is_finite_before_object(toks[e - 1].text)
        {
            e -= 1;
        }
        while e > s
            && toks[e - 1].shape == Shape::Lower
            && (is_trailing_verb(toks[e - 1].text, e - s)
                || (e - s >= 2 && is_clause_word(toks, e - 1)))
        {
            e -= 1;
        }
        while s < e && is_measure(toks[s].text) {
            s += 1;
        }
        // Documentation writes "the HTTP router", "a TOML file", "the LZ4
        // frame format": the acronym is a thing of its own, the phrase is
        // what is left ("frame format"), and the scan resumes at the acronym
        // so that it is found as itself.
        let mut resume = None;
        if self.register.is_documentation() {
            while s < e - 1 && toks[s].shape == Shape::Upper {
                resume.get_or_insert(s);
                s += 1;
            }
        }
        while s < e
            && toks[s].shape == Shape::Lower
            && (toks[s].is_in(ADJ_DROP)
                || is_order_adjective(toks[s].text)
                || (e - s >= 2 && is_descriptive(toks[s].text)))
        {
            s += 1;
        }
        if s >= e {
            return None;
        }
        let head = &toks[e - 1];
        if head.shape != Shape::Lower || head.text.chars().count() < 3 {
            return None;
        }
        // A lone generic noun ("the deal"), role ("a professor") or relative
        // ("my brother") is a reference to something else, not a concept;
        // so is a lone plural or "-ing" word after a definite determiner
        // ("the changes", "the following"). Outside a conversation, so is
        // any lone noun after a definite determiner or a possessive:
        // documentation and reports use "the file", "this parser" to point
        // back at what they already named, where a conversation names the
        // things of the speaker's life that way ("the gym", "my thesis").
        // A phrase opening a note has nothing before it to point back at:
        // "The standup is at 09:30" is about the standup. After
        // "a"/"an" a lone noun introduces one ("a beagle named Toby"),
        // except in documentation, which says "a file", "an error" of
        // things it describes in passing.
        let lone = e - s == 1 && !head.text.contains('-');
        let determiner = toks[i].text.to_ascii_lowercase();
        let indefinite = matches!(determiner.as_str(), "a" | "an");
        let definite = matches!(
            determiner.as_str(),
            "the" | "this" | "that" | "these" | "those"
        );
        let plural_or_ing =
            (head.text.ends_with('s') && !head.text.ends_with("ss")) || head.text.ends_with("ing");
        if lone
            && ((definite && plural_or_ing)
                || (!indefinite && !self.register.is_conversational() && !self.opens_note(i))
                || self.register.is_documentation()
                || head.is_in(GENERIC_NOUNS)
                || head.is_in(ROLES)
                || head.is_in(KIN))
        {
            return None;
        }
        // "my sister Anna": the name is the entity. "the CEO of Acme", "a
        // nurse at X": a role relating two entities, not a concept node.
        let after = toks.get(e);
        if e == j && e - s == 1 && after.is_some_and(Token::is_namey) {
            return None;
        }
        let described = i
            .checked_sub(1)
            .is_some_and(|p| toks[p].text.eq_ignore_ascii_case("as"));
        let role = head.is_in(ROLES) || (e - s == 1 && after.is_some_and(|a| a.text == "of"));
        if role && !described && after.is_some_and(|a| matches!(a.text, "of" | "at" | "for")) {
            let k = if toks.get(e + 1).is_some_and(|x| x.text == "the") {
                e + 2
            } else {
                e + 1
            };
            if toks.get(k).is_some_and(Token::is_namey) {
                return None;
            }
        }
        // "the boot parameter `mitigations=off`", "the option --verbose":
        // the code that follows is what the phrase introduces.
        if e == j
            && toks
                .get(e)
                .is_some_and(|t| matches!(t.shape, Shape::Code | Shape::Backtick))
        {
            return None;
        }
        let surface = &self.text[toks[s].start..toks[e - 1].end];
        let votes = Votes::of(EntityKind::Concept, SHAPE);
        Some((
            self.mention(s, e, Category::Concept, votes, concept_key(surface)),
            resume.unwrap_or(e),
        ))
    }
}

/// Adjectives of order and position ("the first release", "the current
/// state", "the following options"): they pick an item, they do not name
/// a kind of thing.
fn is_order_adjective(w: &str) -> bool {
    matches!(
        w,
        "first" | "last" | "next" | "previous" | "current" | "latest" | "following" | "former"
    )
}

/// A token that opens a verb's object: a determiner or a number (a name
/// may be an apposition: "the podcast network Gimlet Media").
fn starts_object(t: &Token) -> bool {
    t.is_in(DETERMINERS)
        || matches!(t.text, "every" | "each" | "all" | "any" | "some" | "no")
        || t.shape == Shape::Number
}

/// A modifier that describes rather than names: a participle ("the
/// configured limit", "the fixed page size"), an "-ical" adjective ("the
/// graphical tools"), or a compound adjective whose last part is one of
/// those or a word of degree ("a hand-written lexer", "a lock-free
/// queue").
fn is_descriptive(w: &str) -> bool {
    let participle = |w: &str| {
        (w.len() > 4 && w.ends_with("ed"))
            || matches!(
                w,
                "written" | "driven" | "known" | "grown" | "built" | "made"
            )
    };
    if participle(w) || w.ends_with("ical") {
        return true;
    }
    w.rsplit_once('-').is_some_and(|(_, last)| {
        participle(last) || matches!(last, "free" | "safe" | "like" | "aware" | "friendly")
    })
}

/// A last word that can be a finite verb before its object: "(the daemon)
/// reopens (every file)", "(the mode) compresses (8%)"; not a noun such as
/// "(a background) thread (every hour)".
fn is_finite_before_object(w: &str) -> bool {
    morph::is_verb_form(w) || (w.ends_with('s') && !w.ends_with("ss"))
}

/// A measure used as an adjective: "4-byte", "64-bit", "10-second".
fn is_measure(w: &str) -> bool {
    w.split_once('-').is_some_and(|(n, unit)| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && !unit.is_empty()
            && unit.chars().all(char::is_alphabetic)
    })
}

/// A last word of a phrase that belongs to the clause around it, not the
/// phrase: an adjective complement ("keep the format simple"), a
/// comparative before "than" ("a file larger than the limit"), the bare
/// verb after a plural subject ("the scripts live in debian/"), or the bare
/// verb of "make/let X do" ("why does the daemon refuse to start").
fn is_clause_word(toks: &[Token], k: usize) -> bool {
    let w = toks[k].text;
    let prev = toks[k - 1].text;
    let next = toks.get(k + 1).map(|t| t.text);
    if toks[k].is_in(ADJ_DROP) {
        return true;
    }
    if w.len() > 4 && w.ends_with("er") && next == Some("than") {
        return true;
    }
    let bare_verb = morph::verb_base(w).is_some_and(|b| b == w);
    let plural = prev.ends_with('s') && !prev.ends_with("ss");
    bare_verb && (plural || next == Some("to"))
}

/// A word ending a concept phrase that is really the following verb: "the
/// tests passed", "the cache layer kept", "the chip runs".
fn is_trailing_verb(w: &str, phrase_len: usize) -> bool {
    if w.len() > 4 && w.ends_with("ed") {
        return true;
    }
    if matches!(
        w,
        "went"
            | "came"
            | "made"
            | "took"
            | "gave"
            | "got"
            | "said"
            | "told"
            | "became"
            | "began"
            | "kept"
            | "left"
            | "won"
            | "lost"
            | "broke"
            | "ran"
            | "wrote"
            | "sold"
            | "bought"
    ) {
        return true;
    }
    // An inflected "-s" verb ("chip runs") or a participle ("rotation
    // starting") after a noun, never the only word.
    let inflected = (w.ends_with('s') && !w.ends_with("ss")) || w.ends_with("ing");
    phrase_len >= 2 && inflected && morph::verb_base(w).is_some_and(|b| b != w)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::super::register::Register;
    use super::super::tokens::tokenize;
    use super::*;

    fn concepts(text: &str) -> Vec<String> {
        let mut toks = Vec::new();
        tokenize(text, 0, text.len(), true, &mut toks);
        let midcaps = HashSet::default();
        let register = Register::read(text, &toks);
        let d = Detector {
            text,
            toks: &toks,
            midcaps: &midcaps,
            register: &register,
            opens_text: true,
        };
        d.detect()
            .into_iter()
            .filter(|m| m.category == Category::Concept)
            .map(|m| text[m.start..m.end].to_string())
            .collect()
    }

    #[test]
    fn evaluative_adjectives_and_trailing_verbs_are_trimmed() {
        assert_eq!(concepts("We opened a great new factory."), ["factory"]);
        assert_eq!(
            concepts("Then the cache layer kept failing."),
            ["cache layer"]
        );
        assert_eq!(concepts("And the memory chip runs hot."), ["memory chip"]);
        assert_eq!(
            concepts("Each message is a 4-byte length prefix."),
            ["length prefix"]
        );
        assert_eq!(
            concepts("Written by a background thread every hour."),
            ["background thread"]
        );
        assert_eq!(
            concepts("Keep the on-disk format simple."),
            ["on-disk format"]
        );
        assert_eq!(
            concepts("Upload a file larger than the configured limit."),
            ["file"]
        );
        assert_eq!(
            concepts("The packaging scripts live in debian/."),
            ["packaging scripts"]
        );
        assert_eq!(
            concepts("The compression level defaults to 6."),
            ["compression level"]
        );
        assert!(concepts("See the following.").is_empty());
        assert!(concepts("Read the changes.").is_empty());
    }

    #[test]
    fn lone_nouns_are_not_concepts() {
        assert!(concepts("We closed the deal with my brother.").is_empty());
        assert!(concepts("She became a professor.").is_empty());
        assert!(concepts("Open the file in the browser.").is_empty());
        assert_eq!(concepts("I met her at the gym."), ["gym"]);
        assert_eq!(concepts("Mel: How was the concert?"), ["concert"]);
        assert!(concepts("She said the concert was loud.").is_empty());
        assert_eq!(concepts("When did she go to the concert?"), ["concert"]);
        assert!(concepts("# Errors\n\nFunctions return an error.").is_empty());
        assert!(concepts("Set the boot parameter `mitigations=off`.").is_empty());
        assert_eq!(concepts("Write a hand-written lexer."), ["lexer"]);
        assert_eq!(concepts("The standup is at 09:30."), ["standup"]);
    }

    #[test]
    fn acronyms_and_nationalities_may_modify_a_concept() {
        assert_eq!(
            concepts("I joined a LGBTQ support group."),
            ["LGBTQ support group"]
        );
        assert_eq!(
            concepts("She was an English mathematician."),
            ["English mathematician"]
        );
    }

    #[test]
    fn in_documentation_an_acronym_leading_a_phrase_is_its_own_entity() {
        let text = "# Notes\n\nRead the HTTP frame format.";
        assert_eq!(concepts(text), ["frame format"]);
        let x = super::super::extract(text);
        let keys: Vec<&str> = x.entities.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["http", "frame format"]);
    }

    #[test]
    fn plural_concepts_share_the_singular_key() {
        let x = super::super::extract("I love support groups. The support group helps.");
        assert_eq!(x.entities.len(), 1, "{:?}", x.entities);
        assert_eq!(x.entities[0].key, "support group");
    }
}
