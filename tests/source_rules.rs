//! Rules the source keeps by itself, checked by reading it.
//!
//! **Layers.** The crate's layers point one way (../shared/DESIGN.md §3: data flows
//! down, never up): every `crate::…` path in every module's non-test code
//! names a module of its own layer or one below it.
//!
//! From the top: the application (binaries, subcommands, replay), transport,
//! protocol, service, the engine (ingest, query, graph, embed, llm), the
//! store, the knowledge model's values (fragments, provenance and
//! confidence, resolution evidence, community summaries: what the engine
//! computes and the store records), and the cross-cutting leaves every
//! layer may use (errors, limits, clock, ids, configuration, logging, disk
//! health, the model-server client). The leaves may use only each other.
//!
//! The imports that break the rule are listed in [`KNOWN_UPWARD`] (none
//! today), each with why it is there; the test fails on any other, and on
//! a listed one that has gone (so the list only shrinks). Test code (`#[cfg(test)]`
//! modules at the end of a file, `test_support.rs`, `tests.rs`) may reach
//! anywhere.
//!
//! **Statements.** The schema keeps to what a statement-replicating SQLite
//! (such as rqlite) can run unchanged, and the store's statements add
//! nothing that would replay differently on another node:
//!
//! - `sql/` migrations: no transaction control (`BEGIN`, `COMMIT`, `END`,
//!   `ROLLBACK`, `SAVEPOINT`, `RELEASE`: the applier owns the transaction),
//!   no `PRAGMA`, `VACUUM`, `ATTACH` or `DETACH`, and no function whose
//!   value differs between runs (`random()`, `randomblob()`, `'now'`,
//!   `CURRENT_TIMESTAMP`/`_DATE`/`_TIME`, `last_insert_rowid()`,
//!   `changes()`): times and ids are passed in.
//! - every SQL statement in `src/`: none of those functions either.
//! - `last_insert_rowid()` after an insert (which a replicated write cannot
//!   read back between requests) only where [`KNOWN_ROWID_READS`] lists
//!   it; the list only shrinks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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

// ---------------------------------------------------------------------
// Layers

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
    ("knowledge", &["knowledge"]),
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

/// Upward imports allowed: (file under src/, module it names). None: the
/// values the engine and the store share live in `knowledge`, below both,
/// and the store is handed the engine's name-resolution policy as a
/// trait object. Keep it empty.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

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
    assert_eq!(layer_of("knowledge"), Some(1));
    assert_eq!(layer_of("store"), Some(2));
    assert!(layer_of("transport") > layer_of("protocol"));
}

// ---------------------------------------------------------------------
// Statements

/// Functions whose value differs from one run (or node) to the next.
const NONDETERMINISTIC: &[&str] = &[
    "random(",
    "randomblob(",
    "'now'",
    "current_timestamp",
    "current_date",
    "current_time",
    "last_insert_rowid(",
    "changes(",
];

/// Statements the migrations must not hold.
const FORBIDDEN_STATEMENTS: &[&str] = &[
    "BEGIN",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "PRAGMA",
    "VACUUM",
    "ATTACH",
    "DETACH",
];

/// Where the writer reads back the rowid of the row it just inserted (file
/// under src/, how many times): inside its own transaction, so the id it
/// binds into the statements after is recorded with them and a replica
/// that runs them in order assigns the same one (`store/write_log.rs`
/// passes the call through). Never across requests; the list only shrinks.
const KNOWN_ROWID_READS: &[(&str, usize)] = &[
    ("store/chunks.rs", 1),
    ("store/documents.rs", 2),
    ("store/graph/record.rs", 2),
    ("store/journal/mod.rs", 1),
    ("store/write_log.rs", 1),
    ("store/writer/mod.rs", 1),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `sql` without its `--` and `/* */` comments (string literals kept).
fn without_comments(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\'' {
                in_string = false;
            }
            continue;
        }
        match c {
            '\'' => {
                in_string = true;
                out.push(c);
            }
            '-' if chars.peek() == Some(&'-') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out
}

/// The statements of a script: split at semicolons outside string
/// literals (a trigger's body stays with its trigger).
fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_string = false;
    for c in sql.chars() {
        current.push(c);
        if c == '\'' {
            in_string = !in_string;
        }
        if c != ';' || in_string {
            continue;
        }
        let upper = current
            .trim()
            .trim_end_matches(';')
            .trim_end()
            .to_ascii_uppercase();
        let in_trigger =
            upper.starts_with("CREATE TRIGGER") || upper.starts_with("CREATE TEMP TRIGGER");
        if in_trigger && !upper.ends_with("END") {
            continue;
        }
        let statement = current.trim().trim_end_matches(';').trim().to_string();
        if !statement.is_empty() {
            out.push(statement);
        }
        current.clear();
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

fn faults_of(statement: &str) -> Vec<String> {
    let mut faults = Vec::new();
    let first = statement
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    if FORBIDDEN_STATEMENTS.contains(&first.as_str()) {
        faults.push(format!("a {first} statement"));
    }
    let lower = statement.to_ascii_lowercase();
    for f in NONDETERMINISTIC {
        if lower.contains(f) {
            faults.push(format!("{f} (pass the value in)"));
        }
    }
    faults
}

#[test]
fn migrations_hold_only_statements_a_replicated_store_can_run() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("sql"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "the migrations were not found");
    let mut faults = Vec::new();
    let mut checked = 0;
    for path in &files {
        let sql = std::fs::read_to_string(path).unwrap();
        for statement in statements(&without_comments(&sql)) {
            checked += 1;
            for fault in faults_of(&statement) {
                let head: String = statement.chars().take(60).collect();
                faults.push(format!("{}: {fault}: {head}…", path.display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} statements read");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// The string literals of a Rust file's code (comments skipped), joined:
/// where its SQL is.
fn string_literals(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut inside = false;
        let mut escaped = false;
        for c in line.chars() {
            if inside {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    inside = false;
                    out.push('\n');
                    continue;
                }
                out.push(c);
            } else if c == '"' {
                inside = true;
            }
        }
        if inside {
            out.push(' ');
        }
    }
    out
}

#[test]
fn statements_in_the_code_pass_every_value_in() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut faults = Vec::new();
    let mut rowid_reads = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        let literals = string_literals(&text).to_ascii_lowercase();
        for f in NONDETERMINISTIC {
            // SQL is what holds these; the rest of the code never does.
            if literals.contains(f) && (literals.contains("insert") || literals.contains("update"))
            {
                faults.push(format!("{rel}: {f} in a statement (pass the value in)"));
            }
        }
        let reads = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .filter(|l| l.contains(".last_insert_rowid()"))
            .count();
        if reads > 0 {
            rowid_reads.push((rel, reads));
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    rowid_reads.sort();
    let known: Vec<(String, usize)> = KNOWN_ROWID_READS
        .iter()
        .map(|(f, n)| (f.to_string(), *n))
        .collect();
    assert_eq!(
        rowid_reads, known,
        "rowid reads after an insert changed: a new one should assign its id instead; a gone \
         one comes off KNOWN_ROWID_READS"
    );
}

#[test]
fn the_linter_finds_what_it_looks_for() {
    let script = "-- BEGIN in a comment\nCREATE TABLE t (a TEXT DEFAULT 'x;y');\n\
                  /* PRAGMA */ INSERT INTO t VALUES (random());\nBEGIN;\n\
                  CREATE TRIGGER g AFTER INSERT ON t BEGIN UPDATE t SET a = 1; END;";
    let statements = statements(&without_comments(script));
    assert_eq!(statements.len(), 4, "{statements:#?}");
    assert!(faults_of(&statements[0]).is_empty());
    assert_eq!(faults_of(&statements[1]).len(), 1);
    assert_eq!(faults_of(&statements[2]), vec!["a BEGIN statement"]);
    assert!(faults_of(&statements[3]).is_empty());
    assert!(!faults_of("UPDATE t SET at = strftime('%s', 'now')").is_empty());
    assert!(!faults_of("PRAGMA journal_mode = WAL").is_empty());
}
