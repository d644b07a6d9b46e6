//! `rocescope-dataplane [EAL args] -- [app args]`: see `--help` and docs/architecture.md.

use clap::Parser;
use std::io::IsTerminal;

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let (eal_args, app_args) = dataplane::config::split_args(std::env::args().collect());
    let args = dataplane::config::Args::parse_from(app_args);
    match dataplane::run::capture(&eal_args, &args) {
        Ok(summary) => {
            print!("{summary}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocescope-dataplane: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
