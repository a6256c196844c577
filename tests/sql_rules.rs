//! The schema keeps to what a statement-replicating SQLite (rqlite, issue
//! 26) can run unchanged, and the store's statements add nothing that would
//! replay differently on another node:
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

use std::path::{Path, PathBuf};

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

/// Where the local store reads back the rowid of the row it just inserted
/// (file under src/, how many times); a replicated store assigns these ids
/// itself instead.
const KNOWN_ROWID_READS: &[(&str, usize)] = &[
    ("store/chunks.rs", 1),
    ("store/documents.rs", 2),
    ("store/graph/record.rs", 2),
    ("store/journal.rs", 1),
    ("store/writer.rs", 1),
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
