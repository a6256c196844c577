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
//! layer may use (errors, limits, clock, ids, text offsets, configuration, logging, disk
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
//! - no `last_insert_rowid()` after an insert (which a replicated write
//!   cannot read back between requests): the writer binds a new row's id.
//! - every insert the store runs is an upsert (`ON CONFLICT …`, `OR
//!   IGNORE`, `OR REPLACE`) with the row's id or natural key bound, and no
//!   update sets a column from its own value (`n = n + ?`): the new value
//!   is bound. A statement run a second time (a retried write a replica
//!   applies again) then leaves what it left once. The exceptions are
//!   listed, each with why: [`KNOWN_PLAIN_INSERTS`] (where a repeat must
//!   fail) and [`KNOWN_SELF_UPDATES`] (set-based renumbering that a second
//!   run leaves as it is). Migrations are run once, in the transaction
//!   that records them in `schema_version`, and are not held to this.

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
            "text",
            "ids",
            "logging",
            "disk_health",
            "heap",
            "visible",
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
        &[
            "serve",
            "cli",
            "api_cli",
            "api_token",
            "admin",
            "replay",
            "main",
            "bin",
        ],
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
    without_tests(text)
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => line[..at].to_string(),
            None => line.to_string(),
        })
        .collect()
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

/// Inserts that are not upserts (file under src/, table): where a repeat
/// must be refused, not absorbed.
const KNOWN_PLAIN_INSERTS: &[(&str, &str)] = &[
    // A reader connection's view of its caller's memory scopes
    // (`temp.sight`): a per-connection temporary table, cleared before the
    // connection goes back to its pool, never journaled or replayed.
    ("store/sharing.rs", "temp"),
    // A migration's mark, in the migration's own local transaction: a
    // second one means two processes migrating, which must fail.
    ("store/db.rs", "schema_version"),
    // The cluster's log and its operation ledger: an entry or operation
    // sent again must fail its whole transaction, which is what keeps
    // everything else in it from applying twice.
    ("store/cluster/replica.rs", "cluster_log"),
    ("store/cluster/ops.rs", "cluster_ops"),
];

/// Updates that set a column from its own value (file under src/,
/// column), each idempotent as a whole: a compaction's renumbering moves
/// each slot to its rank negated, then flips the negated ones; run again,
/// every slot is at its rank already (the first statement skips those) and
/// none is negative.
const KNOWN_SELF_UPDATES: &[(&str, &str)] = &[
    ("store/write_log.rs", "slot"),
    ("store/maintenance.rs", "vector_slot"),
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

/// A Rust file's text before the test module it ends with.
fn without_tests(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start() == "#[cfg(test)]"
            && lines
                .get(i + 1)
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Each string literal of Rust code, whole (one that spans lines, or
/// continues them with `\`, is one), comments and char literals skipped.
fn whole_literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\'' => {
                // A char literal ('x', '\n', '\''), or else a lifetime.
                let close = if chars.get(i + 1) == Some(&'\\') {
                    chars[i + 2..]
                        .iter()
                        .position(|&c| c == '\'')
                        .map(|p| i + 2 + p)
                } else {
                    (chars.get(i + 2) == Some(&'\'')).then_some(i + 2)
                };
                i = close.unwrap_or(i);
            }
            '"' => {
                let mut literal = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if let Some(&c) = chars.get(i) {
                        literal.push(c);
                    }
                    i += 1;
                }
                out.push(literal);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The SQL statements among a Rust file's string literals (test code and
/// comments skipped), lowercased, with whitespace collapsed.
fn sql_literals(text: &str) -> Vec<String> {
    whole_literals(&without_tests(text))
        .iter()
        .map(|l| {
            l.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_ascii_lowercase()
        })
        .filter(|l| {
            l.contains("insert into ")
                || l.contains("insert or ")
                || l.contains("replace into ")
                || (l.contains("update ") && l.contains(" set "))
        })
        .collect()
}

/// The table of each insert in `sql` that is not an upsert. An FTS5
/// command (`INSERT INTO t(t, …)`, which configures or merges the index
/// and adds no row) is not an insert of a row.
fn plain_inserts(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in sql.match_indices("insert ") {
        let statement = sql[at..].split(';').next().unwrap_or("");
        if statement.starts_with("insert or ") || statement.contains(" on conflict") {
            continue;
        }
        let Some(target) = statement.strip_prefix("insert into ") else {
            continue;
        };
        let table: String = target
            .chars()
            .take_while(|c| c.is_alphanumeric() || "_{}\"".contains(*c))
            .collect();
        let rest = &target[table.len()..];
        if rest.starts_with(&format!("({table},")) || rest.starts_with(&format!("({table})")) {
            continue;
        }
        out.push(table);
    }
    out
}

/// The columns an update in `sql` sets from their own value.
fn self_updates(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in sql.match_indices("update ") {
        let statement = sql[at..].split(';').next().unwrap_or("");
        let Some(set_at) = statement.find(" set ") else {
            continue;
        };
        let clause = &statement[set_at + " set ".len()..];
        // The assignments end where the clause after them starts, at depth 0.
        let mut depth = 0i32;
        let mut assignments = vec![String::new()];
        for (i, c) in clause.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    assignments.push(String::new());
                    continue;
                }
                ' ' if depth == 0
                    && [" where ", " from ", " returning "]
                        .iter()
                        .any(|k| clause[i..].starts_with(k)) =>
                {
                    break;
                }
                _ => {}
            }
            assignments.last_mut().unwrap().push(c);
        }
        for a in &assignments {
            let Some((column, value)) = a.split_once('=') else {
                continue;
            };
            let column = column.trim();
            // A qualified name (`excluded.n`) is another row's column.
            let word = |c: char| c.is_alphanumeric() || "_{}.".contains(c);
            if !column.is_empty() && value.split(|c: char| !word(c)).any(|w| w == column) {
                out.push(column.to_string());
            }
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
    let mut plain = BTreeSet::new();
    let mut self_set = BTreeSet::new();
    let mut inserts = 0;
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
        if text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .any(|l| l.contains(".last_insert_rowid()"))
        {
            faults.push(format!(
                "{rel}: reads last_insert_rowid (bind the new row's id)"
            ));
        }
        if is_test_file(Path::new(&rel)) {
            continue;
        }
        for sql in sql_literals(&text) {
            inserts += sql.matches("insert ").count();
            for table in plain_inserts(&sql) {
                plain.insert((rel.clone(), table));
            }
            for column in self_updates(&sql) {
                self_set.insert((rel.clone(), column));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
    assert!(inserts > 20, "only {inserts} inserts read");
    let known = |list: &[(&str, &str)]| -> BTreeSet<(String, String)> {
        list.iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    };
    assert_eq!(
        plain,
        known(KNOWN_PLAIN_INSERTS),
        "inserts that are not upserts changed: make a new one an upsert (ON CONFLICT, with \
         the row's id or key bound); a gone one comes off KNOWN_PLAIN_INSERTS"
    );
    assert_eq!(
        self_set,
        known(KNOWN_SELF_UPDATES),
        "updates that set a column from its own value changed: bind the new value instead; \
         a gone one comes off KNOWN_SELF_UPDATES"
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

    let sql = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase()
    };
    assert_eq!(
        plain_inserts(&sql("INSERT INTO jobs(id, kind) VALUES (?1, ?2)")),
        vec!["jobs"]
    );
    assert!(plain_inserts(&sql(
        "INSERT INTO jobs(id) VALUES (?1) ON CONFLICT DO NOTHING"
    ))
    .is_empty());
    assert!(plain_inserts(&sql(
        "INSERT OR REPLACE INTO {fts}(rowid, text) VALUES (?1, ?2)"
    ))
    .is_empty());
    assert!(plain_inserts(&sql("INSERT INTO {t}({t}, rank) VALUES ('rank', 'bm25()')")).is_empty());
    assert_eq!(
        self_updates(&sql("UPDATE t SET a = ?2, n = n + ?3 WHERE n = n")),
        vec!["n"]
    );
    assert_eq!(
        self_updates(&sql(
            "UPDATE r SET {column} = max({column} - 1, 0) WHERE id = ?1"
        )),
        vec!["{column}"]
    );
    assert!(self_updates(&sql(
        "UPDATE e SET mention_count = (SELECT count(*) FROM m WHERE m.id = ?1), at = ?2 \
         WHERE id = ?1 AND mention_count = 0"
    ))
    .is_empty());
    assert!(self_updates(&sql("UPDATE jobs SET begun = max(attempts - 1, 0) > 0")).is_empty());
    assert!(self_updates(&sql(
        "INSERT INTO c(name, n) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET n = excluded.n"
    ))
    .is_empty());

    let code = "let a = '\"'; // \"not\" \n f(\"one \\\"two\\\"\n  three\", 'x', &'a str)";
    assert_eq!(whole_literals(code), vec!["one \"two\"\n  three"]);
}
