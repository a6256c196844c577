//! The command line's parsing, flag by flag and subcommand by subcommand.

use super::*;

/// A task on the default directory, through the owner.
fn run(task: Task) -> Command {
    Command::Run {
        data_dir: None,
        task,
        in_process: false,
    }
}

#[test]
fn no_arguments_serves_with_default_dir() {
    assert_eq!(
        parse(Vec::<String>::new()),
        Ok(Command::Serve {
            data_dir: None,
            deterministic: false,
            ui: false,
            ui_bind: None,
            in_process: false,
            allow_remote: false,
        })
    );
    assert_eq!(
        parse(["--deterministic"]),
        Ok(Command::Serve {
            data_dir: None,
            deterministic: true,
            ui: false,
            ui_bind: None,
            in_process: false,
            allow_remote: false,
        })
    );
    assert!(parse(["export", "--deterministic"]).is_err());
}

#[test]
fn in_process_belongs_to_the_server_and_owner_is_a_subcommand() {
    assert_eq!(
        parse(["--in-process"]),
        Ok(Command::Serve {
            data_dir: None,
            deterministic: false,
            ui: false,
            ui_bind: None,
            allow_remote: false,
            in_process: true,
        })
    );
    assert!(parse(["record", "--in-process"]).is_err());
    assert_eq!(
        parse(["owner", "--data-dir", "/m"]),
        Ok(Command::Owner {
            data_dir: Some(PathBuf::from("/m"))
        })
    );
    assert!(parse(["owner", "extra"]).is_err());
}

#[test]
fn data_dir_is_taken_in_both_spellings() {
    let want = Ok(Command::Serve {
        data_dir: Some(PathBuf::from("/tmp/m")),
        deterministic: false,
        ui: false,
        ui_bind: None,
        in_process: false,
        allow_remote: false,
    });
    assert_eq!(parse(["--data-dir", "/tmp/m"]), want);
    assert_eq!(parse(["--data-dir=/tmp/m"]), want);
}

#[test]
fn help_and_version_win() {
    assert_eq!(parse(["--help"]), Ok(Command::Help));
    assert_eq!(parse(["-V"]), Ok(Command::Version));
}

#[test]
fn subcommands_take_the_data_dir_too() {
    assert_eq!(
        parse(["reindex", "--data-dir", "/m"]),
        Ok(Command::Reindex {
            data_dir: Some(PathBuf::from("/m")),
            in_process: false,
        })
    );
    assert_eq!(parse(["compact"]), Ok(run(Task::Compact)));
    assert_eq!(parse(["retry-failed"]), Ok(run(Task::RetryFailed)));
    assert_eq!(
        parse(["status", "--json", "--tenant", "t"]),
        Ok(run(Task::Status {
            tenant: Some("t".into()),
            json: true,
            duplicates: false,
        }))
    );
    assert_eq!(
        parse(["compact", "--in-process"]),
        Ok(Command::Run {
            data_dir: None,
            task: Task::Compact,
            in_process: true
        })
    );
    assert!(parse(["query", "x", "--json"]).is_err());
    assert!(parse(["export", "--duplicates"]).is_err());
    assert!(matches!(
        parse(["status", "--duplicates"]),
        Ok(Command::Run {
            task: Task::Status {
                duplicates: true,
                ..
            },
            ..
        })
    ));
    assert!(parse(["owner", "--in-process"]).is_err());
    assert!(parse(["frobnicate"]).is_err());
    assert!(parse(["reindex", "compact"]).is_err());
}

#[test]
fn file_subcommands_take_their_arguments() {
    assert_eq!(
        parse(["ingest", "a", "b/c", "--tenant", "t"]),
        Ok(run(Task::Ingest {
            supersedes: Vec::new(),
            tenant: Some("t".into()),
            paths: vec![PathBuf::from("a"), PathBuf::from("b/c")],
        }))
    );
    assert_eq!(
        parse(["query", "what", "is", "x?", "--top-k", "3"]),
        Ok(run(Task::Query {
            tenant: None,
            text: "what is x?".into(),
            top_k: Some(3),
            filter: None,
            include_history: false,
            as_of: None,
        }))
    );
    assert_eq!(
        parse([
            "query",
            "x",
            "--filter",
            r#"{"tags": ["ops"]}"#,
            "--include-history"
        ]),
        Ok(run(Task::Query {
            tenant: None,
            text: "x".into(),
            top_k: None,
            filter: Some(r#"{"tags": ["ops"]}"#.into()),
            include_history: true,
            as_of: None,
        }))
    );
    assert!(parse(["status", "--filter", "{}"]).is_err());
    assert!(parse(["forget", "--include-history", "--id", "d"]).is_err());
    assert_eq!(
        parse(["forget", "--source", "s", "--data-dir", "/m"]),
        Ok(Command::Run {
            data_dir: Some(PathBuf::from("/m")),
            task: Task::Forget {
                tenant: None,
                by: ForgetBy::Source("s".into()),
            },
            in_process: false,
        })
    );
    assert_eq!(
        parse(["import", "m.jsonl"]),
        Ok(run(Task::Import {
            tenant: None,
            file: PathBuf::from("m.jsonl"),
        }))
    );
    assert_eq!(parse(["export"]), Ok(run(Task::Export { tenant: None })));
    // A positional that names a subcommand is text after the first.
    assert!(matches!(
        parse(["ingest", "compact"]),
        Ok(Command::Run {
            task: Task::Ingest { .. },
            ..
        })
    ));
}

#[test]
fn file_subcommands_refuse_what_does_not_apply() {
    assert!(parse(["ingest"]).is_err());
    assert!(parse(["query"]).is_err());
    assert!(parse(["query", "x", "--top-k", "0"]).is_err());
    assert!(parse(["query", "x", "--top-k", "101"]).is_err());
    assert!(parse(["forget"]).is_err());
    assert!(parse(["forget", "--id", "a", "--key", "b"]).is_err());
    assert!(parse(["forget", "--id", ""]).is_err());
    assert!(parse(["import"]).is_err());
    assert!(parse(["import", "a", "b"]).is_err());
    assert!(parse(["export", "extra"]).is_err());
    let err = parse(["compact", "--tenant", "t"]).unwrap_err();
    assert!(err.0.contains("--tenant"), "{err}");
    assert!(parse(["--tenant", "t"]).is_err());
    assert!(parse(["ingest", "a", "--top-k", "3"]).is_err());
    assert!(parse(["query", "a", "--id", "x"]).is_err());
}

#[test]
fn query_forget_export_and_import_have_their_own_help_quoting_their_limits() {
    for (name, page) in [
        ("query", QUERY_HELP),
        ("forget", FORGET_HELP),
        ("export", EXPORT_HELP),
        ("import", IMPORT_HELP),
    ] {
        assert_eq!(parse([name, "--help"]), Ok(Command::SubcommandHelp(page)));
        assert_eq!(parse([name, "-h"]), Ok(Command::SubcommandHelp(page)));
        assert!(
            page.starts_with(&format!("alayasiki-mcp {name}: ")),
            "{page}"
        );
        for status in ["\n    0 ", "\n    1 ", "\n    2 ", "\n    3 "] {
            assert!(page.contains(status), "{name}: no exit status{status}");
        }
    }
    let query_limit = format!("MAX_QUERY_BYTES ({})", crate::limits::MAX_QUERY_BYTES);
    assert!(QUERY_HELP.contains(&query_limit), "{query_limit}");
    let settle = format!(
        "FORGET_SETTLE_MS ({} s)",
        crate::limits::FORGET_SETTLE_MS / 1000
    );
    assert!(FORGET_HELP.contains(&settle), "{settle}");
    let top_k = format!(
        "({}-{}, default {})",
        MIN_TOP_K,
        MAX_TOP_K,
        crate::limits::DEFAULT_TOP_K
    );
    assert!(QUERY_HELP.contains(&top_k), "{top_k}");
}

#[test]
fn ingest_has_its_own_help_with_exit_statuses() {
    assert_eq!(
        parse(["ingest", "--help"]),
        Ok(Command::SubcommandHelp(INGEST_HELP))
    );
    assert_eq!(parse(["--help", "ingest"]), Ok(Command::Help));
    // The figures quoted are the constants' own.
    let limit = format!(
        "MAX_CONTENT_BYTES ({} MiB)",
        crate::limits::MAX_CONTENT_BYTES >> 20
    );
    assert!(INGEST_HELP.contains(&limit), "{limit}");
    for signal in [
        crate::transport::signals::SIGINT,
        crate::transport::signals::SIGTERM,
    ] {
        let status = format!("\n    {}  interrupted", SIGNAL_EXIT_BASE + signal);
        assert!(INGEST_HELP.contains(&status), "{status}");
    }
}

#[test]
fn the_memory_browser_flags_belong_to_the_server_and_ui() {
    assert_eq!(
        parse(["--ui"]),
        Ok(Command::Serve {
            data_dir: None,
            deterministic: false,
            ui: true,
            ui_bind: None,
            in_process: false,
            allow_remote: false,
        })
    );
    assert_eq!(
        parse(["--ui-bind", "8765"]),
        Ok(Command::Serve {
            data_dir: None,
            deterministic: false,
            ui: false,
            ui_bind: Some("127.0.0.1:8765".parse().unwrap()),
            in_process: false,
            allow_remote: false,
        })
    );
    assert_eq!(
        parse(["ui", "--data-dir", "/m", "--bind", "[::1]:0"]),
        Ok(Command::Ui {
            data_dir: Some(PathBuf::from("/m")),
            bind: Some("[::1]:0".parse().unwrap()),
            allow_remote: false,
            in_process: false,
        })
    );
    assert_eq!(
        parse(["ui"]),
        Ok(Command::Ui {
            data_dir: None,
            bind: None,
            allow_remote: false,
            in_process: false,
        })
    );
    assert!(parse(["ui", "--ui"]).is_err());
    assert!(parse(["export", "--ui-bind", "80"]).is_err());
    assert!(parse(["--bind", "80"]).is_err());
    assert!(parse(["ui", "extra"]).is_err());
    let err = parse(["--ui-bind", "localhost"]).unwrap_err();
    assert!(err.0.contains("--ui-bind"), "{err}");
}

#[test]
fn a_memory_browser_other_machines_can_reach_needs_allow_remote() {
    for args in [
        &["ui", "--bind", "0.0.0.0:0"][..],
        &["ui", "--bind", "192.0.2.7:80"],
        &["ui", "--bind", "[::]:0"],
        &["--ui-bind", "0.0.0.0:8765"],
    ] {
        let err = parse(args.iter().copied()).unwrap_err();
        assert!(err.0.contains("--allow-remote"), "{args:?}: {err}");
    }
    assert_eq!(
        parse(["ui", "--bind", "0.0.0.0:0", "--allow-remote"]),
        Ok(Command::Ui {
            data_dir: None,
            bind: Some("0.0.0.0:0".parse().unwrap()),
            allow_remote: true,
            in_process: false,
        })
    );
    assert!(parse(["--allow-remote", "--ui-bind", "0.0.0.0:0"]).is_ok());
    // Loopback needs nothing; the flag belongs to the browser's commands.
    assert!(parse(["ui", "--bind", "127.0.0.1:0"]).is_ok());
    assert!(parse(["ui", "--bind", "[::1]:0"]).is_ok());
    let err = parse(["export", "--allow-remote"]).unwrap_err();
    assert!(err.0.contains("--allow-remote"), "{err}");
}

#[test]
fn unknown_flag_is_named() {
    let err = parse(["--frobnicate"]).unwrap_err();
    assert!(err.0.contains("--frobnicate"), "{err}");
}

#[test]
fn missing_value_is_named() {
    let err = parse(["--data-dir"]).unwrap_err();
    assert!(err.0.contains("--data-dir"), "{err}");
}
