//! The layers of the crate point one way (../shared/DESIGN.md §3: data flows
//! down, never up): every `crate::…` path in every module's non-test code
//! names a module of its own layer or one below it.
//!
//! From the top: the application (binaries, subcommands, replay), transport,
//! protocol, service, the engine (ingest, query, graph, embed, llm), the
//! store, and the cross-cutting leaves every layer may use (errors, limits,
//! clock, ids, configuration, logging, disk health, the model-server
//! client). The leaves may use only each other.
//!
//! The imports that break the rule today are listed in [`KNOWN_UPWARD`],
//! each with why it is there; the test fails on any other, and on a listed
//! one that has gone (so the list only shrinks). Test code (`#[cfg(test)]`
//! modules at the end of a file, `test_support.rs`, `tests.rs`) may reach
//! anywhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Layers, lowest first; a module may use its own and those before it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "cross-cutting",
        &[
            "error",
            "limits",
            "base64",
            "clock",
            "ids",
            "logging",
            "disk_health",
            "config",
            "model_endpoint",
        ],
    ),
    ("store", &["store"]),
    ("engine", &["embed", "llm", "graph", "ingest", "query"]),
    ("service", &["service"]),
    ("protocol", &["protocol"]),
    ("transport", &["transport"]),
    (
        "application",
        &["serve", "cli", "api_cli", "admin", "replay", "main", "bin"],
    ),
];

/// Upward imports that exist today: (file under src/, module it names).
/// They go when the value types both sides need move below both (issue
/// 26's store boundary).
const KNOWN_UPWARD: &[(&str, &str)] = &[
    // The store records the graph engine's fragments, provenance and
    // confidence evidence, resolution evidence and community summaries.
    ("store/communities.rs", "graph"),
    ("store/graph/evidence.rs", "graph"),
    ("store/graph/forget.rs", "graph"),
    ("store/graph/record.rs", "graph"),
    ("store/journal.rs", "graph"),
    ("store/name_hints.rs", "graph"),
    ("store/resolution.rs", "graph"),
    // The journal stores the ingest engine's prepared documents.
    ("store/journal.rs", "ingest"),
    // Configuration builds the LLM client's and the fusion's settings
    // from the environment.
    ("config.rs", "llm"),
    ("config.rs", "query"),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The top-level module a file under src/ belongs to.
fn module_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn is_test_file(rel: &Path) -> bool {
    let name = rel.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name == "test_support.rs" || name.ends_with("_tests.rs")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and without the test module it
/// ends with.
fn code_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start() == "#[cfg(test)]"
            && lines
                .get(i + 1)
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        out.push(code.to_string());
    }
    out
}

/// The top-level modules `crate::…` paths in `code` name.
fn named_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` or a longer identifier ending in "crate" is not this.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        if is_test_file(rel) || rel.file_name().unwrap() == "lib.rs" {
            continue;
        }
        let module = module_of(rel);
        let Some(own) = layer_of(&module) else {
            unknown.insert(format!("{} (module {module})", rel.display()));
            continue;
        };
        let text = std::fs::read_to_string(path).unwrap();
        for line in code_lines(&text) {
            for named in named_modules(&line) {
                let Some(theirs) = layer_of(&named) else {
                    unknown.insert(format!("{} names crate::{named}", rel.display()));
                    continue;
                };
                // The leaves are below everything: they may use only each
                // other; every other layer may use its own and those below.
                let allowed = if own == 0 { theirs == 0 } else { theirs <= own };
                if !allowed {
                    found.insert((rel.to_string_lossy().replace('\\', "/"), named));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules with no layer in LAYERS (add them where they belong): {unknown:#?}"
    );
    let known: BTreeSet<(String, String)> = KNOWN_UPWARD
        .iter()
        .map(|(f, m)| (f.to_string(), m.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "imports of a layer above the importing module's own (data flows down; move the \
         shared type below both instead): {new:#?}"
    );
    assert!(
        gone.is_empty(),
        "upward imports that no longer exist: take them off KNOWN_UPWARD: {gone:#?}"
    );
}

#[test]
fn the_scanner_reads_paths_not_comments_or_tests() {
    assert_eq!(
        named_modules("use crate::store::Store; let x = crate::graph::f();"),
        vec!["store", "graph"]
    );
    assert!(named_modules("$crate::limits::X").is_empty());
    let text = "use crate::error::Result; // crate::transport\n/// [`crate::service`]\n\
                #[cfg(test)]\nmod tests {\n    use crate::transport::x;\n}\n";
    let code = code_lines(text).join("\n");
    assert_eq!(named_modules(&code), vec!["error"]);
    assert_eq!(layer_of("store"), Some(1));
    assert!(layer_of("transport") > layer_of("protocol"));
}
