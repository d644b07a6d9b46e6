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
        /// Print the findings as JSON instead of text: an array, one report per run, in
        /// the order given.
        #[arg(long)]
        json: bool,
    },
    /// Merge shards and dump files from any number of hosts into one trace ordered by
    /// mirror sequence number, headers restored (Lumina §3.5). Writes OUT/trace.pcapng,
    /// OUT/records.rsr (for the analyzers) and OUT/reconstruct.json (what was read, every
    /// missing seq range, every damaged input); removes an earlier analysis's report.json
    /// and plots from OUT. Refuses to replace or remove a file of those names that rocescope
    /// did not write. Exit code 0 when the trace has copies and nothing is missing or
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
    /// reconstructs them first. Exit code 0 when no analyzer flags a problem, 1 otherwise
    /// (and when the trace holds no mirrored copy: nothing was analyzed).
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
    /// NACK generation and reaction latency of several analyses side by side, one series
    /// per analysis (Lumina §6.1's Figures 8–9 overlay NICs and verbs): writes
    /// OUT/retrans-nack-generation.svg and OUT/retrans-nack-reaction.svg and prints each
    /// analysis's counts and range. Reads each analysis's report.json (`analyze` first).
    Compare {
        /// Analysis directories (with report.json), or runs analyzed into RUN/rocescope.
        #[arg(required = true)]
        analyses: Vec<PathBuf>,
        /// Where to write the plots.
        #[arg(short, long)]
        out: PathBuf,
    },
}

/// What report.json holds of goodput's messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PerMessage {
    Kept,
    LeftOut,
}

/// How to reconstruct; given an existing reconstruction, `check` and `analyze` ignore them
/// (and say so).
#[derive(clap::Args)]
struct MergeArgs {
    /// Packets held per source to undo local reordering (at least 1) [default: 16384].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    window: Option<u32>,
    /// UDP dst port of mirrored copies [default: the one the run's config.yaml names
    /// (rig.mirror-port, else Lumina's rewrite-udp-dst-port), else 9741].
    #[arg(long)]
    mirror_port: Option<u16>,
    /// UDP dst port of RoCEv2 [default: 4791].
    #[arg(long)]
    roce_port: Option<u16>,
}

impl MergeArgs {
    /// The options to reconstruct `runs` with; says where the mirror port came from when
    /// a run's configuration gave it.
    fn options(&self, runs: &[PathBuf]) -> anyhow::Result<control::reconstruct::Options> {
        use control::mirror_port::PortFrom;
        let mirror = control::mirror_port::choose(runs, self.mirror_port)?;
        if let PortFrom::Config { path, key } = &mirror.from {
            eprintln!(
                "rocescope: mirror port {} from {} ({key}); --mirror-port overrides it",
                mirror.port,
                path.display()
            );
        }
        let roce_port = self.roce_port.unwrap_or(wire::udp::ROCE_PORT);
        Ok(control::reconstruct::Options {
            classify: wire::frame::ClassifyConfig { mirror_port: mirror.port, roce_port },
            window: self.window.map_or(control::reconstruct::Options::default().window, |w| w as usize),
            progress: true,
            ..Default::default()
        })
    }

    /// The flags given, by name.
    fn given(&self) -> Vec<&'static str> {
        let given = [("--window", self.window.is_some()), ("--mirror-port", self.mirror_port.is_some())];
        given
            .into_iter()
            .chain([("--roce-port", self.roce_port.is_some())])
            .filter(|(_, g)| *g)
            .map(|(n, _)| n)
            .collect()
    }

    /// Warns that the flags given do not apply to `dir`, a reconstruction already.
    fn ignored_for(&self, dir: &std::path::Path) {
        let given = self.given();
        if given.is_empty() {
            return;
        }
        let made = control::reconstruct::Summary::load(dir)
            .map(|s| {
                format!(" (made with mirror port {}, RoCE port {}, window {})", s.mirror_port, s.roce_port, s.window)
            })
            .unwrap_or_default();
        eprintln!(
            "rocescope: warning: {} ignored: {} is a reconstruction already{made}; they apply only when reconstructing \
             (rocescope reconstruct RUN... -o {})",
            given.join(", "),
            dir.display(),
            dir.display()
        );
    }
}

/// Warns when a reconstruction holds no mirrored copy: there is nothing to check or analyze.
fn warn_no_copies(summary: &control::reconstruct::Summary) {
    if let Some(advice) = &summary.no_copies {
        eprintln!("rocescope: warning: {advice}");
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
        Command::Compare { analyses, out } => compare(&analyses, &out),
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

fn compare(analyses: &[PathBuf], out: &std::path::Path) -> anyhow::Result<ExitCode> {
    use control::compare;
    let runs = analyses.iter().map(|d| compare::Run::load(d)).collect::<Result<Vec<_>, _>>()?;
    std::fs::create_dir_all(out).map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
    let written = compare::plots(&runs, out)?;
    let mut text = compare::render(&runs);
    for path in &written {
        text.push_str(&format!("plot: {}\n", path.display()));
    }
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn reconstruct(
    runs: &[PathBuf],
    out: &std::path::Path,
    records_only: bool,
    merge: &MergeArgs,
) -> anyhow::Result<ExitCode> {
    let opts = control::reconstruct::Options { pcapng: !records_only, ..merge.options(runs)? };
    let summary = control::reconstruct::reconstruct_to(runs, out, &opts)?;
    emit(&control::reconstruct::render(&summary))?;
    emit(&format!("wrote {}\n", out.display()))?;
    warn_no_copies(&summary);
    Ok(verdict(summary.whole()))
}

/// The reconstruction directory for `runs`: the one given, or a fresh reconstruction.
fn reconstruction(runs: &[PathBuf], out: Option<PathBuf>, merge: &MergeArgs) -> anyhow::Result<PathBuf> {
    if let [dir] = runs {
        if dir.join(control::reconstruct::SUMMARY_FILE).exists() {
            merge.ignored_for(dir);
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
    let summary = control::reconstruct::reconstruct_to(runs, &out, &merge.options(runs)?)?;
    eprintln!("reconstructed {} packets into {}", summary.packets, out.display());
    warn_no_copies(&summary);
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
    // Given a reconstruction, -o says where the report goes (else beside it). Its
    // report.json and plots are replaced only when they are ours (a fresh reconstruction
    // into `to` has checked them already), checked before the analysis runs.
    let to = out.unwrap_or_else(|| dir.clone());
    control::outputs::check_analysis_replaceable(&to)?;
    let analysis = control::analyze::Analysis::load(&dir)?;
    let mut report = analysis.run();
    if per_message == PerMessage::LeftOut {
        report.goodput.leave_out_per_message();
    }
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", to.display()))?;
    let path = to.join(control::analyze::REPORT_FILE);
    write_json(&path, &report).with_context(|| format!("writing {}", path.display()))?;
    let mut text = report.render();
    for plot in report.plots(&to)? {
        text += &format!("plot: {}\n", plot.display());
    }
    text += &format!("report: {}\n", path.display());
    emit(&text)?;
    Ok(verdict(report.problems() == 0 && report.analyzed_copies()))
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

/// Verifies each run: text per run as it is verified, or with `json` one array of every
/// run's report (one JSON document however many runs). A run that cannot be read stops
/// with exit code 2.
fn verify(runs: &[PathBuf], json: bool) -> ExitCode {
    let mut reports = Vec::new();
    for run in runs {
        let report = match control::verify::verify_run(run) {
            Ok(report) => report,
            Err(e) => {
                eprintln!("rocescope: {}: {e:#}", run.display());
                return ExitCode::from(2);
            }
        };
        if !json {
            if let Err(e) = emit(&report.to_string()) {
                eprintln!("rocescope: {e}");
                return ExitCode::from(2);
            }
        }
        reports.push(report);
    }
    let intact = reports.iter().all(|r| r.intact());
    if json {
        let text = serde_json::to_string_pretty(&reports).map(|t| t + "\n").map_err(anyhow::Error::from);
        if let Err(e) = text.and_then(|t| emit(&t)) {
            eprintln!("rocescope: {e}");
            return ExitCode::from(2);
        }
    }
    verdict(intact)
}
