//! `alayasiki-mcp`: parse the command line, then serve MCP on stdio or run
//! an administrative subcommand.

use std::process::ExitCode;

use alayasiki_mcp::cli::{self, Command};

fn main() -> ExitCode {
    let code = match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            alayasiki_mcp::cli::stdout::write(format_args!("{}", cli::HELP));
            ExitCode::SUCCESS
        }
        Ok(Command::SubcommandHelp(page)) => {
            alayasiki_mcp::cli::stdout::write(format_args!("{page}"));
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            alayasiki_mcp::cli::stdout::write(format_args!(
                "alayasiki-mcp {}\n",
                env!("CARGO_PKG_VERSION")
            ));
            ExitCode::SUCCESS
        }
        Ok(Command::Serve {
            data_dir,
            deterministic,
            ui,
            ui_bind,
            allow_remote,
            in_process,
        }) => alayasiki_mcp::serve::stdio(
            data_dir,
            deterministic,
            ui,
            ui_bind,
            allow_remote,
            in_process,
        ),
        Ok(Command::Owner { data_dir }) => alayasiki_mcp::serve::owner(data_dir),
        Ok(Command::Ui {
            data_dir,
            bind,
            allow_remote,
            in_process,
        }) => alayasiki_mcp::serve::browse(data_dir, bind, allow_remote, in_process),
        Ok(Command::Cluster(options)) => alayasiki_mcp::admin::cluster::run(options),
        Ok(Command::Reindex {
            data_dir,
            in_process,
        }) => alayasiki_mcp::admin::reindex(data_dir, in_process),
        Ok(Command::Run {
            data_dir,
            task,
            in_process,
        }) => alayasiki_mcp::admin::task::run(task, data_dir, in_process),
        Ok(Command::Replay(options)) => alayasiki_mcp::replay::replay(&options),
        Ok(Command::Record(options)) => alayasiki_mcp::replay::record::record(&options),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(cli::USAGE_EXIT as u8)
        }
    };
    let code = cli::stdout::finish("alayasiki-mcp", code);
    // Log lines are written by a thread of their own: let it finish.
    alayasiki_mcp::logging::flush();
    code
}
