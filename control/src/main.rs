//! `rocescope`: the control CLI.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "rocescope", version, about = "Verify, reconstruct and analyze rocescope captures")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prove a run directory intact: every shard block's CRC-32C, every packet readable,
    /// counts equal to the manifest's, and every received packet accounted for.
    /// Exit code 0 when intact, 1 when not, 2 on usage or I/O errors.
    Verify {
        /// Run directories written by rocescope-dataplane.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// Print the findings as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Verify { runs, json } => {
            let mut intact = true;
            for run in &runs {
                match control::verify::verify_run(run) {
                    Ok(report) => {
                        intact &= report.intact();
                        if json {
                            println!("{}", serde_json::to_string_pretty(&report).expect("serializable"));
                        } else {
                            print!("{report}");
                        }
                    }
                    Err(e) => {
                        eprintln!("rocescope: {}: {e:#}", run.display());
                        return ExitCode::from(2);
                    }
                }
            }
            if intact {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}
