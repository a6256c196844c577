//! The replay report in its three forms: text for people, JUnit XML and
//! TAP for CI systems. Each form lists every step of every fixture.

use super::{FixtureResult, StepOutcome};
use std::fmt::Write;

/// A line per step, a block per failure, a summary line.
pub fn text(results: &[FixtureResult]) -> String {
    let mut out = String::new();
    for r in results {
        if let Some(bad) = &r.bad {
            let _ = writeln!(out, "BAD  {}: {}", at(&r.name, bad.line), bad.message);
            continue;
        }
        let mark = if r.failed() { "FAIL" } else { "PASS" };
        let _ = writeln!(
            out,
            "{mark} {} ({} steps, {:.1} s)",
            r.name,
            r.steps.len(),
            r.elapsed.as_secs_f64()
        );
        for s in &r.steps {
            match &s.outcome {
                StepOutcome::Passed => {
                    let _ = writeln!(out, "  ok   line {}: {}", s.line, s.label);
                }
                StepOutcome::Skipped => {
                    let _ = writeln!(out, "  skip line {}: {}", s.line, s.label);
                }
                StepOutcome::Failed(why) => {
                    let _ = writeln!(out, "  FAIL {}: {}", at(&r.name, s.line), s.label);
                    for line in why.lines() {
                        let _ = writeln!(out, "       {line}");
                    }
                }
            }
        }
        if let Some(after) = &r.after {
            let _ = writeln!(out, "  FAIL {}: {after}", r.name);
        }
    }
    let bad = results.iter().filter(|r| r.bad.is_some()).count();
    let failed = results
        .iter()
        .filter(|r| r.bad.is_none() && r.failed())
        .count();
    let _ = writeln!(
        out,
        "{} fixture(s): {} passed, {failed} failed, {bad} could not run",
        results.len(),
        results.len() - failed - bad
    );
    out
}

fn at(name: &str, line: usize) -> String {
    if line == 0 {
        name.to_string()
    } else {
        format!("{name}:{line}")
    }
}

/// JUnit XML: a test suite per fixture, a test case per step.
pub fn junit(results: &[FixtureResult]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let tests: usize = results.iter().map(|r| r.steps.len().max(1)).sum();
    let failures = results
        .iter()
        .filter(|r| r.bad.is_none() && r.failed())
        .count();
    let errors = results.iter().filter(|r| r.bad.is_some()).count();
    let _ = writeln!(
        out,
        "<testsuites name=\"alayasiki-mcp replay\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">"
    );
    for r in results {
        let name = xml(&r.name);
        let time = r.elapsed.as_secs_f64();
        if let Some(bad) = &r.bad {
            let _ = writeln!(
                out,
                "  <testsuite name=\"{name}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"{time:.3}\">\n    <testcase classname=\"{name}\" name=\"fixture\" time=\"0\">\n      <error message=\"{}\"/>\n    </testcase>\n  </testsuite>",
                xml(&format!("{}: {}", at(&r.name, bad.line), bad.message))
            );
            continue;
        }
        let failed = r
            .steps
            .iter()
            .filter(|s| matches!(s.outcome, StepOutcome::Failed(_)))
            .count()
            + usize::from(r.after.is_some());
        let skipped = r
            .steps
            .iter()
            .filter(|s| s.outcome == StepOutcome::Skipped)
            .count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">",
            r.steps.len()
        );
        for s in &r.steps {
            let case = xml(&format!("line {}: {}", s.line, s.label));
            let t = s.elapsed.as_secs_f64();
            match &s.outcome {
                StepOutcome::Passed => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"{name}\" name=\"{case}\" time=\"{t:.3}\"/>"
                    );
                }
                StepOutcome::Skipped => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"{name}\" name=\"{case}\" time=\"0\"><skipped/></testcase>"
                    );
                }
                StepOutcome::Failed(why) => {
                    let first = why.lines().next().unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"{name}\" name=\"{case}\" time=\"{t:.3}\">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        xml(first),
                        xml(why)
                    );
                }
            }
        }
        if let Some(after) = &r.after {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{name}\" name=\"server exit\" time=\"0\">\n      <failure message=\"{}\"/>\n    </testcase>",
                xml(after)
            );
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// TAP version 13: a test point per step (a bad fixture is one).
pub fn tap(results: &[FixtureResult]) -> String {
    let mut points: Vec<String> = Vec::new();
    for r in results {
        if let Some(bad) = &r.bad {
            points.push(format!(
                "not ok {{n}} - {}\n  ---\n  message: {}\n  ...",
                at(&r.name, bad.line),
                yaml(&bad.message)
            ));
            continue;
        }
        for s in &r.steps {
            let name = format!("{}:{} {}", r.name, s.line, s.label);
            points.push(match &s.outcome {
                StepOutcome::Passed => format!("ok {{n}} - {name}"),
                StepOutcome::Skipped => format!("ok {{n}} - {name} # SKIP an earlier step failed"),
                StepOutcome::Failed(why) => {
                    format!(
                        "not ok {{n}} - {name}\n  ---\n  message: {}\n  ...",
                        yaml(why)
                    )
                }
            });
        }
        if let Some(after) = &r.after {
            points.push(format!(
                "not ok {{n}} - {} server exit\n  ---\n  message: {}\n  ...",
                r.name,
                yaml(after)
            ));
        }
    }
    let mut out = format!("TAP version 13\n1..{}\n", points.len());
    for (i, p) in points.iter().enumerate() {
        out.push_str(&p.replacen("{n}", &(i + 1).to_string(), 1));
        out.push('\n');
    }
    out
}

/// Text for an XML attribute or element.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            // Not allowed in XML 1.0 at all.
            c if (c as u32) < 0x20 && c != '\t' && c != '\r' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// Text as one double-quoted YAML scalar.
fn yaml(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{FixtureResult, StepResult};
    use std::time::Duration;

    fn result() -> FixtureResult {
        let step = |line, outcome| StepResult {
            line,
            label: "expect id 2".into(),
            outcome,
            elapsed: Duration::ZERO,
        };
        FixtureResult {
            name: "a <b>.jsonl".into(),
            steps: vec![
                step(2, StepOutcome::Passed),
                step(3, StepOutcome::Failed("at $.x: expected 1, got 2".into())),
                step(4, StepOutcome::Skipped),
            ],
            bad: None,
            after: None,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn every_form_lists_every_step() {
        let r = [result()];
        let t = text(&r);
        assert!(
            t.contains("FAIL a <b>.jsonl:3: expect id 2") && t.contains("skip line 4"),
            "{t}"
        );
        let j = junit(&r);
        assert!(
            j.contains("name=\"a &lt;b&gt;.jsonl\"") && j.contains("<skipped/>"),
            "{j}"
        );
        assert_eq!(j.matches("<testcase ").count(), 3);
        let p = tap(&r);
        assert!(p.starts_with("TAP version 13\n1..3\nok 1 - "), "{p}");
        assert!(p.contains("not ok 2 - a <b>.jsonl:3 expect id 2"), "{p}");
        assert!(p.contains("ok 3 - a <b>.jsonl:4 expect id 2 # SKIP"), "{p}");
    }
}
