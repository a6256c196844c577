//! `alayasiki-api`: parse the command line, then serve the HTTP API and MCP
//! over Streamable HTTP and SSE until SIGTERM or SIGINT.

use std::process::ExitCode;

use alayasiki_mcp::api_cli::{self, ApiCommand};

fn main() -> ExitCode {
    let code = match api_cli::parse(std::env::args_os().skip(1)) {
        Ok(ApiCommand::Help) => {
            alayasiki_mcp::cli::stdout::write(format_args!("{}", api_cli::HELP));
            ExitCode::SUCCESS
        }
        Ok(ApiCommand::Version) => {
            alayasiki_mcp::cli::stdout::write(format_args!(
                "alayasiki-api {}\n",
                env!("CARGO_PKG_VERSION")
            ));
            ExitCode::SUCCESS
        }
        Ok(ApiCommand::Serve {
            bind,
            data_dir,
            store,
        }) => alayasiki_mcp::serve::api(bind, data_dir, store),
        Ok(ApiCommand::Token(command)) => match alayasiki_mcp::api_token::run(command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("alayasiki-api: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("alayasiki-api: {} (see --help)", e.0);
            ExitCode::from(api_cli::USAGE_EXIT as u8)
        }
    };
    let code = alayasiki_mcp::cli::stdout::finish("alayasiki-api", code);
    // Log lines are written by a thread of their own: let it finish.
    alayasiki_mcp::logging::flush();
    code
}
