//! `alayasiki-mcp`: parse the command line, then serve MCP on stdio.

use std::process::ExitCode;

use alayasiki_mcp::cli::{self, Command};

fn main() -> ExitCode {
    match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            print!("{}", cli::HELP);
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("alayasiki-mcp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(Command::Serve { data_dir }) => alayasiki_mcp::serve::stdio(data_dir),
        Ok(Command::Reindex { data_dir }) => alayasiki_mcp::admin::reindex(data_dir),
        Ok(Command::Compact { data_dir }) => alayasiki_mcp::admin::compact(data_dir),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(cli::USAGE_EXIT as u8)
        }
    }
}
