//! The help pages of `alayasiki-mcp` and of its subcommands that have
//! one of their own.

pub const HELP: &str = "\
alayasiki-mcp: local knowledge memory for AI agents, served over MCP on stdio.

USAGE:
    alayasiki-mcp [--data-dir DIR] [--in-process] [--deterministic] [--ui]
                  [--ui-bind ADDR] [--allow-remote]
                                              serve MCP on stdio through the
                                              directory's memory owner,
                                              started when none runs (and,
                                              with --ui, the memory browser)
    alayasiki-mcp owner [--data-dir DIR]      own the directory and serve
                                              its memory to every local
                                              agent (what stdio starts)
    alayasiki-mcp ui [--data-dir DIR] [--bind ADDR] [--allow-remote]
                                              serve the memory browser,
                                              beside running agents, until
                                              Ctrl-C or SIGTERM
    alayasiki-mcp status [--json] [--duplicates]
                                              what the memory holds and
                                              which process serves it; with
                                              --duplicates, documents holding
                                              the same content (none deleted)
    alayasiki-mcp reindex [--data-dir DIR]    re-embed everything with the
                                              configured embedder (needs
                                              the memory alone)
    alayasiki-mcp retry-failed [--data-dir DIR]
                                              index every failed document
                                              again (see alayasiki_status)
    alayasiki-mcp compact [--data-dir DIR]    rewrite vector files and the
                                              full-text index without
                                              deleted chunks
    alayasiki-mcp ingest PATH...              store files and folders (walked
                                              recursively; resumable)
    alayasiki-mcp update ID [--file PATH | --text TEXT] [--metadata JSON]
                     [--title T]              store a new version of a
                                              document, superseding it
    alayasiki-mcp query TEXT [--top-k N]      print the evidence for a question
    alayasiki-mcp forget --id ID | --key KEY | --source SOURCE
                                              delete documents for good
    alayasiki-mcp export > memory.jsonl       write documents and originals as
                                              JSON Lines
    alayasiki-mcp import FILE                 restore an export, or import an
                                              MCP memory-server memory.jsonl
    alayasiki-mcp cluster status|push|pull [--cluster ADDR] [--data-dir DIR]
                                              an rqlite cluster's nodes; copy
                                              the data directory into one and
                                              back (see cluster --help)
    alayasiki-mcp replay FILE... [--seed EXPORT] [--format text|junit|tap]
                     [--deterministic]        run recorded MCP sessions on
                                              fresh temporary stores (see
                                              `alayasiki-mcp replay --help`)
    alayasiki-mcp record --out FILE [--seed EXPORT]
                                              serve MCP on stdio on a fresh
                                              temporary store, recording the
                                              session as a fixture

    ingest, update, query, forget, export, import and status also take
    [--data-dir DIR] and [--tenant T]. Subcommands that open a memory run
    in the directory's memory owner, beside the agents it serves (started
    when none runs); with --in-process they open it themselves and need it
    to themselves. reindex asks an owner with no agent connected to make
    way. ingest, update, query, forget, export, import, cluster and replay each
    have a page of their own: SUBCOMMAND --help.

OPTIONS:
    --data-dir DIR   Where the memory lives (created owner-only if missing).
                     Default: $ALAYASIKI_DATA_DIR, else $HOME/.alayasiki-mcp
                     (%USERPROFILE%\\.alayasiki-mcp on Windows).
    --tenant T       Tenant to use (default: $ALAYASIKI_MCP_TENANT, else local).
    --in-process     Open the store in this process instead of reaching
                     the directory's owner: the memory is then this
                     process's alone (deterministic mode and --ui do too).
                     Subcommands take it too; ALAYASIKI_IN_PROCESS=1 sets it
                     for all.
    --ui             Also serve the memory browser (the /ui page and the
                     JSON API it uses) on 127.0.0.1 at a free port, in this
                     process. Its URL, with a secret made for this start,
                     goes to stderr and to DIR/ui.url (owner-only, removed
                     on exit); alayasiki_status gives the address.
    --ui-bind ADDR   Where the memory browser listens (implies --ui): PORT
                     (on 127.0.0.1) or IP:PORT, a loopback address unless
                     --allow-remote is given.
    --bind ADDR      Where `ui` listens, as --ui-bind does for the server.
    --allow-remote   Allow a --ui-bind, --bind or ALAYASIKI_UI_BIND address
                     other machines can reach (such as 0.0.0.0). The memory
                     browser speaks plain HTTP, so the secret in its URL
                     crosses the network readable: put a TLS-terminating
                     reverse proxy in front of it (a warning is logged).
    -h, --help       Print this help and exit.
    -V, --version    Print the version and exit.

ENVIRONMENT:
    ALAYASIKI_DATA_DIR      data directory (overridden by --data-dir)
    ALAYASIKI_MCP_TENANT    tenant of the stdio caller (default: local)
    ALAYASIKI_MCP_SUBJECT   subject of the stdio caller (default: local-agent)
    ALAYASIKI_DURABILITY    full (default: fsync every commit) or normal
    ALAYASIKI_IN_PROCESS    1: serve stdio in this process (as --in-process)
    ALAYASIKI_OWNER_IDLE_SECS  seconds an owner stays up with no agent
                            connected (default 300; 0: until stopped)
    ALAYASIKI_UI            1: serve the memory browser too (as --ui)
    ALAYASIKI_UI_BIND       where it listens (as --ui-bind; for `ui`, --bind)
    ALAYASIKI_LOG           error, warn, info (default), debug, trace, off
    ALAYASIKI_DETERMINISTIC 1: deterministic mode for test suites (as
                            --deterministic): a fixed clock from
                            ALAYASIKI_CLOCK_START (2026-01-01T00:00:00Z)
                            stepped ALAYASIKI_CLOCK_STEP_MS (1000) per
                            request, ids seeded by ALAYASIKI_ID_SEED (0),
                            one request at a time, background work before
                            each request
    ALAYASIKI_EMBED_URL     use an HTTP embedding server instead of the
                            built-in model (see README: Embeddings)
    ALAYASIKI_LLM_URL       optional LLM for triples, answers and community
                            summaries (off by default; see README: Optional LLM)
    ALAYASIKI_RETENTION_DAYS  hide and purge documents older than this
    ALAYASIKI_WM_TTL_SECS   working-memory session lifetime (default 1800)
    ALAYASIKI_FUSION, ALAYASIKI_HALF_LIFE_DAYS, ALAYASIKI_CHUNK_TARGET_BYTES,
    ALAYASIKI_RANKING_DEPTH:
                            retrieval tuning (README)

EXIT STATUS:
    0 done (and `ui` stopped by SIGINT or SIGTERM), 1 failure (the message
    says what; also when stdout would not take the output: the work is
    done, the report lost), 2 bad command line (a --bind or --ui-bind other
    machines can reach without --allow-remote is one), 3 data directory in
    use by another process. An interrupted ingest or replay exits 130
    (SIGINT, Ctrl-C) or 143 (SIGTERM): 128 + the signal's number.
    See `alayasiki-mcp ingest --help`.

The server reads newline-delimited JSON-RPC on stdin and writes only protocol
messages to stdout; logs go to stderr. One process owns a data directory,
its memory owner; every alayasiki-mcp on stdio reaches it over a socket in
the directory (DIR/alayasiki.sock, this user only), so any number of agents
share one memory. The owner logs to DIR/owner.log and stops once no agent
has been connected for ALAYASIKI_OWNER_IDLE_SECS. A team shares one memory
over HTTP with alayasiki-api. To browse the memory of a running server,
start it with --ui.
";

/// `alayasiki-mcp ingest --help`.
pub const INGEST_HELP: &str = "\
alayasiki-mcp ingest: store files and folders in the memory.

USAGE:
    alayasiki-mcp ingest PATH... [--data-dir DIR] [--tenant T]
    alayasiki-mcp ingest PATH --supersedes ID [--supersedes ID]...

Every PATH must exist and be readable, or the command stops before storing
anything. Folders are walked recursively in name order; hidden entries and
symbolic links inside them are not followed. Each file is stored like a File
upload, with its absolute path as source and its name as title. Files that
are empty, larger than MAX_CONTENT_BYTES (4 MiB), binary of no supported
type, images or audio (they need a description), or refused by ingestion
(invalid UTF-8, encrypted or scanned PDFs, ...) are skipped and counted by
reason in the report on stdout. Progress goes to stderr.

Each file's idempotency key hashes its path and content, so running the same
command again stores only files that are new or changed: that is how an
interrupted run resumes. Ctrl-C (SIGINT) or SIGTERM stops between files:
the files in progress finish, everything stored is made durable, and a
summary on stderr gives what was stored, what was not, and the command that
resumes.

With --supersedes (at most MAX_SUPERSEDES, 64), the one file PATH is stored
as a new version of the documents named, as alayasiki_ingest's `supersedes`
does: they are kept as its history. The command waits until it is
searchable and prints its id; a document unknown or already superseded is
refused (exit 1) and nothing is stored.

EXIT STATUS:
    0    every file found is stored (by this run or an earlier one) or was
         skipped for its content, and at least one is stored; or the
         folders hold no files at all
    1    a PATH does not exist or cannot be read (nothing is stored); none
         of the files found could be stored; or a file failed for a reason
         other than its content (the report names it)
    2    bad command line
    3    the data directory is kept by a process that serves it alone
         (alayasiki-api, or a command run with --in-process)
    130  interrupted by SIGINT (Ctrl-C)
    143  interrupted by SIGTERM
";

/// `alayasiki-mcp update --help`.
pub const UPDATE_HELP: &str = "\
alayasiki-mcp update: store a new version of a document.

USAGE:
    alayasiki-mcp update ID [--file PATH | --text TEXT] [--metadata JSON]
                            [--title T] [--data-dir DIR] [--tenant T]

    --file PATH      new content: the file's bytes, typed as `ingest` types
                     them (its name becomes the title unless --title)
    --text TEXT      new content: plain text
    --metadata JSON  new metadata, a JSON object replacing the old whole
    --title T        new title

Does what the alayasiki_update tool does: the document ID (its current
version) is superseded by a new version holding what is given and what is
not given kept (content kept is the same original bytes). The old version
stays readable as history. The command waits until the new version is
searchable and prints its id.

EXIT STATUS:
    0    stored
    1    refused: no such document, a version already superseded (the
         message names the current one), content that cannot be stored; or
         there is no memory in the data directory
    2    bad command line (no ID, nothing to change, --file with --text,
         --metadata that is not a JSON object)
    3    the data directory is kept by a process that serves it alone
         (alayasiki-api, or a command run with --in-process)
";

/// `alayasiki-mcp replay --help`.
pub const REPLAY_HELP: &str = "\
alayasiki-mcp replay: run recorded MCP sessions (fixtures) and check every reply.

USAGE:
    alayasiki-mcp replay FILE... [--seed EXPORT] [--format text|junit|tap]
                         [--deterministic | --through-owner]

Each FILE is a fixture (README: Fixture replay): JSON Lines starting with
{\"fixture_format\": 1}, then send, send_raw, expect, expect_silence_ms and
comment steps. Each runs against this binary on a fresh temporary data
directory, deleted afterwards; --seed imports an `alayasiki-mcp export`
into it first. A fixture stops at its first failing step; the report names
the fixture's line, the JSON path where the reply differed and both values.

    --seed EXPORT    import this export into every fixture's store first
    --format F       text (default), junit (JUnit XML) or tap (TAP 13),
                     printed on stdout
    --deterministic  serve every fixture in deterministic mode (fixed clock,
                     seeded ids, one request at a time): replies are then
                     the same bytes on every run
    --through-owner  serve every fixture as agents are served: a stdio
                     relay to a memory owner on the temporary directory
                     (stopped after the fixture); replies must be the same
                     as in-process

EXIT STATUS:
    0    every fixture passed
    1    a reply did not match (or the server exited badly)
    2    a fixture could not run: malformed, a step kind this version does
         not know, a capture used before it is set, a send over
         MAX_FRAME_BYTES, a newer fixture format, a seed that would not
         import; or a bad command line
    130  interrupted by SIGINT (Ctrl-C): the server is killed, the temporary
         data directory deleted, the fixtures run so far reported
    143  interrupted by SIGTERM, likewise
";

/// `alayasiki-mcp query --help`.
pub const QUERY_HELP: &str = "\
alayasiki-mcp query: print the answer and the evidence for a question.

USAGE:
    alayasiki-mcp query TEXT [--top-k N] [--filter JSON] [--include-history]
                             [--as-of TIME] [--data-dir DIR] [--tenant T]

Searches the memory as the alayasiki_query tool does (every lane, answer
mode) and prints, for a person to read, the extractive answer and each
piece of evidence: rank, score, source, byte span, page and chunk id, then
its text. TEXT is at most MAX_QUERY_BYTES (4096) bytes.

    --top-k N            most evidence items (1-100, default 10)
    --filter JSON        search only documents matching the query tool's
                         `filter` object, e.g.
                         '{\"source_prefix\": \"notes/\", \"tags\": [\"ops\"],
                           \"since\": \"2026-11-30\"}'
    --include-history    also search versions a newer one superseded
    --as-of TIME         judge facts that change as of TIME (RFC 3339 or a
                         date, at most MAX_AS_OF_BYTES (64) bytes): the value
                         that held then ranks first; each statement of such
                         a fact is shown as current, superseded or ended,
                         with its dates

EXIT STATUS:
    0    answered (also when nothing in memory matches: it says so)
    1    there is no memory in the data directory, or the search failed
    2    bad command line (no TEXT, a TEXT over the limit, a bad --top-k
         --filter or --as-of)
    3    the data directory is kept by a process that serves it alone
         (alayasiki-api, or a command run with --in-process)
";

/// `alayasiki-mcp forget --help`.
pub const FORGET_HELP: &str = "\
alayasiki-mcp forget: delete documents from the memory for good.

USAGE:
    alayasiki-mcp forget --id ID | --key KEY | --source SOURCE
                         [--data-dir DIR] [--tenant T]

    --id ID          the document with this id (doc_...)
    --key KEY        the document stored with this idempotency key
    --source SOURCE  every document stored with exactly this source (for
                     `ingest PATH`, a file's absolute path)

Deletes as the alayasiki_forget tool does: the documents, their chunks,
vectors, graph mentions and originals (an original another document shares
is kept), each listed on stdout. The command then waits up to
FORGET_SETTLE_MS (30 s) for indexing the deletion set off; what is still
pending finishes the next time the memory is opened. `alayasiki-mcp
compact` then drops the freed vector slots and index entries from the files.

EXIT STATUS:
    0    forgotten
    1    no document matches (nothing is deleted), or there is no memory in
         the data directory
    2    bad command line (not exactly one of --id, --key and --source)
    3    the data directory is kept by a process that serves it alone
         (alayasiki-api, or a command run with --in-process)
";

/// `alayasiki-mcp export --help`.
pub const EXPORT_HELP: &str = "\
alayasiki-mcp export: write one tenant's memory as JSON Lines on stdout.

USAGE:
    alayasiki-mcp export [--data-dir DIR] [--tenant T] > memory.jsonl

The first line is a header naming the format, its version and the number
of documents; then one line per document, oldest first, with its metadata
and its original bytes (base64). Chunks, vectors and the graph are not
written: `alayasiki-mcp import` rebuilds them, with whichever embedder it
runs with. Documents past their expiry or the retention period are left out.

EXIT STATUS:
    0    written (a tenant whose documents were all forgotten gives the
         header alone)
    1    the tenant never wrote to this data directory (nothing is written,
         so a misspelt name does not make an empty backup), or stdout would
         not take the export
    2    bad command line, or stdout is a terminal (redirect it to a file)
    3    the data directory is kept by a process that serves it alone
         (alayasiki-api, or a command run with --in-process)
";

/// `alayasiki-mcp import --help`.
pub const IMPORT_HELP: &str = "\
alayasiki-mcp import: read an export, or an MCP memory-server file, into
the memory.

USAGE:
    alayasiki-mcp import FILE [--data-dir DIR] [--tenant T]

FILE is an `alayasiki-mcp export` (documents keep their ids, times, keys
and originals) or the memory.jsonl of @modelcontextprotocol/server-memory
(each entity becomes a document, with its observations as text and its
relations declared in the graph); the first line tells which. A document
already in the memory is counted and left alone, so importing the same file
again stores nothing twice, and an import that stopped goes on from where
it stopped. Lines that cannot be imported are skipped and listed by reason
in the report on stdout.

EXIT STATUS:
    0    imported (skipped lines are in the report)
    1    FILE cannot be opened or is neither format; an export holds fewer
         documents than its header declares (cut short: what is there is
         imported); or the disk refused writes (what was imported before is
         kept; run it again once the disk accepts writes)
    2    bad command line
    3    the data directory is kept by a process that serves it alone
         (alayasiki-api, or a command run with --in-process)
";

/// The help page of a subcommand, when it has one of its own.
pub(super) fn subcommand_help(subcommand: Option<&str>) -> Option<&'static str> {
    match subcommand {
        Some("ingest") => Some(INGEST_HELP),
        Some("update") => Some(UPDATE_HELP),
        Some("cluster") => Some(crate::admin::cluster::HELP),
        Some("replay") => Some(REPLAY_HELP),
        Some("query") => Some(QUERY_HELP),
        Some("forget") => Some(FORGET_HELP),
        Some("export") => Some(EXPORT_HELP),
        Some("import") => Some(IMPORT_HELP),
        _ => None,
    }
}
