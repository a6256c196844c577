//! Sweeps the cross-document entity resolution thresholds over the
//! hand-labelled pairs and prints merge precision and recall at each.
//!
//! For every pair of `fixtures/extraction/resolution_pairs.jsonl` it
//! prints the name rule, name score and embedding cosine (`--pairs`), then
//! one table per split: rows are name-score floors, columns embedding
//! floors, cells `precision/recall (false merges)`; the thresholds in use
//! (`graph::resolution::MERGE` and `QUESTION`) are marked `*`.
//!
//! Run: `cargo run --release --example sweep_resolution -- [--pairs]
//!       [--fixture PATH]`

use alayasiki_mcp::graph::resolution::eval::{figures, parse_pairs, score, Scored};
use alayasiki_mcp::graph::resolution::{Thresholds, MERGE, QUESTION};

const NAME_FLOORS: &[f64] = &[0.5, 0.6, 0.66, 0.75, 0.8, 0.9, 1.0];
const EMBEDDING_FLOORS: &[f32] = &[-1.0, 0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

fn main() {
    let mut show_pairs = false;
    let mut fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/extraction/resolution_pairs.jsonl"
    )
    .to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--pairs" => show_pairs = true,
            "--fixture" => fixture = args.next().expect("--fixture PATH"),
            other => {
                eprintln!("usage: sweep_resolution [--pairs] [--fixture PATH] (got {other})");
                std::process::exit(2);
            }
        }
    }
    let text = std::fs::read_to_string(&fixture).expect("read the fixture");
    let pairs = parse_pairs(&text).expect("parse the fixture");
    let mut splits: Vec<String> = Vec::new();
    for p in &pairs {
        if !splits.contains(&p.split) {
            splits.push(p.split.clone());
        }
    }
    splits.push("all".into());
    let scored: Vec<(String, bool, Scored)> = pairs
        .iter()
        .map(|p| (p.split.clone(), p.merge, score(p)))
        .collect();
    if show_pairs {
        println!("split    label  name  rule       cosine  pair");
        for (p, (_, _, s)) in pairs.iter().zip(&scored) {
            let (name, rule, cosine) = match (s.same_key, s.evidence) {
                (true, _) => ("1.00".to_string(), "same key".to_string(), "-".to_string()),
                (false, None) => ("-".into(), "kinds".into(), "-".into()),
                (false, Some(e)) => (
                    format!("{:.2}", e.name.score),
                    format!("{:?}", e.name.rule),
                    format!("{:.3}", e.cosine),
                ),
            };
            let mark = if s.merges(MERGE) == p.merge { ' ' } else { '!' };
            println!(
                "{:<8} {:<5}{mark} {name:>5} {rule:<10} {cosine:>6}  {} ({}) / {} ({})",
                p.split, p.merge, p.a, p.a_kind, p.b, p.b_kind
            );
        }
        println!("(! = the MERGE thresholds decide it against the label)\n");
    }
    for split in &splits {
        let subset: Vec<(bool, Scored)> = scored
            .iter()
            .filter(|(s, _, _)| split == "all" || s == split)
            .map(|(_, label, s)| (*label, *s))
            .collect();
        let positives = subset.iter().filter(|(l, _)| *l).count();
        println!(
            "split {split}: {} pairs, {positives} should merge, {} must not",
            subset.len(),
            subset.len() - positives
        );
        print!("name \\ cos");
        for e in EMBEDDING_FLOORS {
            print!(" {:>15}", format!(">= {e:.1}"));
        }
        println!();
        for &name in NAME_FLOORS {
            print!("{:>10}", format!(">= {name:.2}"));
            for &embedding in EMBEDDING_FLOORS {
                let t = Thresholds { name, embedding };
                let f = figures(&subset, t);
                let mark = if t == MERGE {
                    '*'
                } else if t == QUESTION {
                    'q'
                } else {
                    ' '
                };
                print!(
                    " {:>15}",
                    format!(
                        "{mark}{:.2}/{:.2} ({})",
                        f.precision, f.recall, f.false_merges
                    )
                );
            }
            println!();
        }
        // The selection rule: best F0.5, ties to the stricter thresholds.
        let mut best: Option<(f64, Thresholds)> = None;
        for &name in NAME_FLOORS {
            for &embedding in EMBEDDING_FLOORS {
                let t = Thresholds { name, embedding };
                let f = figures(&subset, t).f_half();
                if best.is_none_or(|(b, _)| f > b + 1e-12) {
                    best = Some((f, t));
                }
            }
        }
        if let Some((f, t)) = best {
            println!(
                "best F0.5 {f:.3} at name >= {}, cosine >= {}",
                t.name, t.embedding
            );
        }
        let f = figures(&subset, MERGE);
        println!(
            "MERGE (name >= {}, cosine >= {}): precision {:.3}, recall {:.3}, F0.5 {:.3}, \
             {} true merges, {} false merges, {} missed\n",
            MERGE.name,
            MERGE.embedding,
            f.precision,
            f.recall,
            f.f_half(),
            f.true_merges,
            f.false_merges,
            f.missed
        );
    }
}
