//! `rocescope`: the control CLI.

use anyhow::Context;
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
    /// Merge shards and dump files from any number of hosts into one trace ordered by
    /// mirror sequence number, headers restored (Lumina §3.5). Writes OUT/trace.pcapng,
    /// OUT/records.rsr (for the analyzers) and OUT/reconstruct.json (what was read, every
    /// missing seq range, every damaged input). Exit code 0 when nothing is missing or
    /// damaged, 1 otherwise, 2 on errors.
    Reconstruct {
        /// Dataplane run directories, Lumina / emulator run directories (*.pcap), or files.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// Output directory.
        #[arg(short, long)]
        out: PathBuf,
        /// Write only the records (what `check` and `analyze` read), not trace.pcapng:
        /// about a fifth of the bytes on a trimmed capture.
        #[arg(long)]
        records_only: bool,
        #[command(flatten)]
        merge: MergeArgs,
    },
    /// Lumina's integrity check (§3.5) of a reconstruction: consecutive mirror seqs (every
    /// missing range, and who should have had it), switch mirrored == trace == switch RoCE
    /// received, monotonic timestamps, no damaged input or capture drop. Given run
    /// directories instead, reconstructs them first into OUT (default RUN/rocescope).
    /// Exit code 0 when complete, 1 when not, 2 on errors.
    Check {
        /// A `reconstruct` output directory, or the runs to reconstruct.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// Lumina's switch counter dump (default: switch_state_snapshot.yml in the runs).
        #[arg(long)]
        switch_counters: Option<PathBuf>,
        /// Where to reconstruct when given runs.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        merge: MergeArgs,
    },
    /// Lumina's analyzers (§4): Go-back-N logic, retransmission latency, CNP generation and
    /// rate limiting, NIC counters, header interop, goodput and message completion times.
    /// Writes OUT/report.json and SVG plots; prints a summary. Given run directories,
    /// reconstructs them first. Exit code 0 when no analyzer flags a problem, 1 otherwise.
    Analyze {
        /// A `reconstruct` output directory, or the runs to reconstruct.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// Where to reconstruct (when given runs) and write the report.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Leave goodput's per-message lists (every message's PSNs, bytes and times) out of
        /// report.json; the per-connection and overall counts, goodput and completion-time
        /// statistics stay. On long traces the lists are most of the file.
        #[arg(long)]
        no_per_message: bool,
        #[command(flatten)]
        merge: MergeArgs,
    },
}

/// What report.json holds of goodput's messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PerMessage {
    Kept,
    LeftOut,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// Packets held per source to undo local reordering (at least 1).
    #[arg(long, default_value_t = 16_384, value_parser = clap::value_parser!(u32).range(1..))]
    window: u32,
    /// UDP dst port of mirrored copies.
    #[arg(long, default_value_t = wire::udp::LUMINA_MIRROR_PORT)]
    mirror_port: u16,
    /// UDP dst port of RoCEv2.
    #[arg(long, default_value_t = wire::udp::ROCE_PORT)]
    roce_port: u16,
}

impl MergeArgs {
    fn options(&self) -> control::reconstruct::Options {
        control::reconstruct::Options {
            classify: wire::frame::ClassifyConfig { mirror_port: self.mirror_port, roce_port: self.roce_port },
            window: self.window as usize,
            progress: true,
            ..Default::default()
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Verify { runs, json } => return verify(&runs, json),
        Command::Reconstruct { runs, out, records_only, merge } => reconstruct(&runs, &out, records_only, &merge),
        Command::Check { runs, switch_counters, out, json, merge } => {
            check(&runs, switch_counters.as_deref(), out, json, &merge)
        }
        Command::Analyze { runs, out, no_per_message, merge } => {
            let per_message = if no_per_message { PerMessage::LeftOut } else { PerMessage::Kept };
            analyze(&runs, out, per_message, &merge)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocescope: {}", describe(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes, each said once: the library's messages already name their
/// cause (`{path}: {source}`), which anyhow's chain would repeat.
fn describe(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1).map(|c| c.to_string()) {
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}

/// Writes `text` to standard output. A reader that went away (`| head`) ends the output,
/// not the run: the work is done and its files written.
fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn reconstruct(
    runs: &[PathBuf],
    out: &std::path::Path,
    records_only: bool,
    merge: &MergeArgs,
) -> anyhow::Result<ExitCode> {
    let opts = control::reconstruct::Options { pcapng: !records_only, ..merge.options() };
    let summary = control::reconstruct::reconstruct_to(runs, out, &opts)?;
    emit(&control::reconstruct::render(&summary))?;
    emit(&format!("wrote {}\n", out.display()))?;
    Ok(verdict(summary.missing_total == 0 && summary.issues.is_empty()))
}

/// The reconstruction directory for `runs`: the one given, or a fresh reconstruction.
fn reconstruction(runs: &[PathBuf], out: Option<PathBuf>, merge: &MergeArgs) -> anyhow::Result<PathBuf> {
    if let [dir] = runs {
        if dir.join(control::reconstruct::SUMMARY_FILE).exists() {
            return Ok(dir.clone());
        }
        if !dir.exists() {
            anyhow::bail!("{}: no such file or directory", dir.display());
        }
        if let Some(parent) = dir.parent().filter(|p| p.join(control::reconstruct::SUMMARY_FILE).exists()) {
            anyhow::bail!("{} is part of a reconstruction: give its directory, {}", dir.display(), parent.display());
        }
    }
    let out = match out {
        Some(o) => o,
        None => match runs {
            [dir] if dir.is_dir() => dir.join("rocescope"),
            [file] => anyhow::bail!("{}: say where to reconstruct it with -o DIR", file.display()),
            _ => anyhow::bail!("several inputs: say where to reconstruct them with -o DIR"),
        },
    };
    let summary = control::reconstruct::reconstruct_to(runs, &out, &merge.options())?;
    eprintln!("reconstructed {} packets into {}", summary.packets, out.display());
    Ok(out)
}

fn check(
    runs: &[PathBuf],
    switch_counters: Option<&std::path::Path>,
    out: Option<PathBuf>,
    json: bool,
    merge: &MergeArgs,
) -> anyhow::Result<ExitCode> {
    let dir = reconstruction(runs, out, merge)?;
    let report = control::check::check_dir(&dir, switch_counters)?;
    if json {
        emit(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        emit(&report.render())?;
    }
    Ok(verdict(report.complete))
}

fn analyze(
    runs: &[PathBuf],
    out: Option<PathBuf>,
    per_message: PerMessage,
    merge: &MergeArgs,
) -> anyhow::Result<ExitCode> {
    let dir = reconstruction(runs, out.clone(), merge)?;
    let analysis = control::analyze::Analysis::load(&dir)?;
    let mut report = analysis.run();
    if per_message == PerMessage::LeftOut {
        report.goodput.leave_out_per_message();
    }
    // Given a reconstruction, -o says where the report goes (else beside it).
    let to = out.unwrap_or_else(|| dir.clone());
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", to.display()))?;
    let path = to.join(control::analyze::REPORT_FILE);
    write_json(&path, &report).with_context(|| format!("writing {}", path.display()))?;
    let mut text = report.render();
    for plot in report.plots(&to)? {
        text += &format!("plot: {}\n", plot.display());
    }
    text += &format!("report: {}\n", path.display());
    emit(&text)?;
    Ok(verdict(report.problems() == 0))
}

/// Streams `value` into `path`: a long trace's report runs to hundreds of MB, which need
/// not be held in memory first.
fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut out, value)?;
    std::io::Write::flush(&mut out)?;
    Ok(())
}

fn verdict(good: bool) -> ExitCode {
    if good {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn verify(runs: &[PathBuf], json: bool) -> ExitCode {
    {
        {
            let mut intact = true;
            for run in runs {
                match control::verify::verify_run(run) {
                    Ok(report) => {
                        intact &= report.intact();
                        let text = match json {
                            true => format!("{}\n", serde_json::to_string_pretty(&report).expect("serializable")),
                            false => report.to_string(),
                        };
                        if let Err(e) = emit(&text) {
                            eprintln!("rocescope: {e}");
                            return ExitCode::from(2);
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
