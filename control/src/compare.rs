//! Several analyses side by side: NACK generation and reaction latency against the PSN of
//! the lost packet, one series per run, as Lumina §6.1's Figures 8–9 overlay NICs and
//! verbs. Reads each analysis's report.json (only what the plots need), so runs analyzed
//! at different times compare alike.

use std::path::{Path, PathBuf};

use crate::analyze::retrans::{PLOT_GENERATION, PLOT_REACTION};

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{0}: no report.json there or in its rocescope/ (run `rocescope analyze` first)")]
    NoReport(PathBuf),
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a rocescope report: {source}")]
    Parse { path: PathBuf, source: serde_json::Error },
    #[error("{path}: {source}")]
    Plot { path: PathBuf, source: std::io::Error },
}

/// The part of report.json the comparison reads.
#[derive(Debug, serde::Deserialize)]
struct ReportView {
    verb: Option<String>,
    retransmission: RetransView,
    counters: CountersView,
}

#[derive(Debug, serde::Deserialize)]
struct RetransView {
    recoveries: Vec<RecoveryView>,
}

#[derive(Debug, serde::Deserialize)]
struct RecoveryView {
    kind: String,
    psn: u64,
    psn_in_message: Option<u64>,
    generation_ns: Option<u64>,
    reaction_ns: Option<u64>,
}

/// The hosts, with their NICs, are named in the counters section (from the test
/// configuration).
#[derive(Debug, serde::Deserialize)]
struct CountersView {
    hosts: Vec<HostView>,
}

#[derive(Debug, serde::Deserialize)]
struct HostView {
    host: String,
    nic: Option<String>,
}

/// One analysis: its label and its NACK recoveries (WRITE/SEND NACKs and READ NACKs).
#[derive(Debug)]
pub struct Run {
    pub label: String,
    recoveries: Vec<RecoveryView>,
}

impl Run {
    /// Reads the analysis in `dir` (a report's directory, or a run whose `rocescope/` holds
    /// one); labelled "<dir name>: <requester NIC> → <responder NIC> <verb>" as far as the
    /// report says.
    pub fn load(dir: &Path) -> Result<Run, CompareError> {
        let path = [dir.join("report.json"), dir.join("rocescope").join("report.json")]
            .into_iter()
            .find(|p| p.exists())
            .ok_or_else(|| CompareError::NoReport(dir.to_path_buf()))?;
        let file = std::fs::File::open(&path).map_err(|source| CompareError::Read { path: path.clone(), source })?;
        let report: ReportView = serde_json::from_reader(std::io::BufReader::new(file))
            .map_err(|source| CompareError::Parse { path: path.clone(), source })?;
        let nic = |role: &str| {
            report
                .counters
                .hosts
                .iter()
                .find(|h| h.host == role)
                .and_then(|h| h.nic.clone())
                .unwrap_or_else(|| "?".into())
        };
        let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
        let verb = report.verb.as_deref().unwrap_or("unknown verb");
        let label = format!("{name}: {} → {} {verb}", nic("requester"), nic("responder"));
        let recoveries = report.retransmission.recoveries.into_iter().filter(|r| r.kind.ends_with("nack")).collect();
        Ok(Run { label, recoveries })
    }

    /// The latencies `f` picks, in µs.
    fn latencies(&self, f: fn(&RecoveryView) -> Option<u64>) -> Vec<f64> {
        let mut v: Vec<f64> = self.recoveries.iter().filter_map(f).map(|ns| ns as f64 / 1e3).collect();
        v.sort_by(f64::total_cmp);
        v
    }
}

/// Picks one latency of a recovery.
type Latency = fn(&RecoveryView) -> Option<u64>;

const LATENCIES: [(&str, &str, Latency); 2] = [
    (PLOT_GENERATION, "NACK generation latency", |r| r.generation_ns),
    (PLOT_REACTION, "NACK reaction latency", |r| r.reaction_ns),
];

/// Writes one plot per latency into `out`, each with a series per run; returns the files.
/// The x axis is the PSN within the message when every recovery has one, else the PSN
/// from the QP's first, as in each analysis's own plots.
pub fn plots(runs: &[Run], out: &Path) -> Result<Vec<PathBuf>, CompareError> {
    let in_message = runs.iter().flat_map(|r| &r.recoveries).all(|r| r.psn_in_message.is_some());
    let x = |r: &RecoveryView| i64::try_from(if in_message { r.psn_in_message.unwrap_or(0) } else { r.psn }).ok();
    let x_desc = if in_message {
        "PSN of the lost packet within its message (1 = its first)"
    } else {
        "PSN of the lost packet from the QP's first (1 = initial PSN)"
    };
    let mut written = Vec::new();
    for (file, title, f) in LATENCIES {
        let series: Vec<(&str, Vec<(i64, f64)>)> = runs
            .iter()
            .map(|run| {
                let pts = run.recoveries.iter().filter_map(|r| Some((x(r)?, f(r)? as f64 / 1e3))).collect();
                (run.label.as_str(), pts)
            })
            .collect();
        if series.iter().all(|(_, p)| p.is_empty()) {
            continue;
        }
        let path = out.join(file);
        log_scatter(&path, title, x_desc, &series)
            .map_err(|e| CompareError::Plot { path: path.clone(), source: std::io::Error::other(e) })?;
        written.push(path);
    }
    Ok(written)
}

/// A scatter plot of `series` (name, (x, µs)) with a logarithmic latency axis: NICs'
/// latencies differ by orders of magnitude (§6.1: a CX5 NACKs in µs, a CX4 Lx reacts in
/// hundreds, an E810's READ NACK takes tens of ms).
fn log_scatter(path: &Path, title: &str, x_desc: &str, series: &[(&str, Vec<(i64, f64)>)]) -> Result<(), String> {
    use plotters::prelude::*;
    let all = || series.iter().flat_map(|(_, p)| p.iter());
    let (x0, x1) = all().fold((i64::MAX, i64::MIN), |(lo, hi), &(x, _)| (lo.min(x), hi.max(x)));
    // A latency of 0 (the timestamps' resolution) is drawn at the axis' foot.
    let floor = 1e-3;
    let (y0, y1) = all().fold((f64::MAX, floor), |(lo, hi), &(_, y)| (lo.min(y.max(floor)), hi.max(y)));
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(crate::analyze::plot_range(x0, x1), (y0 / 2.0..y1 * 2.0).log_scale())
        .map_err(|e| e.to_string())?;
    chart.configure_mesh().x_desc(x_desc).y_desc("latency (µs, log scale)").draw().map_err(|e| e.to_string())?;
    for (i, (name, pts)) in series.iter().enumerate().filter(|(_, (_, p))| !p.is_empty()) {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y.max(floor)), 3, color.filled())))
            .map_err(|e| e.to_string())?
            .label(*name)
            .legend(move |(x, y)| Circle::new((x, y), 3, color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// One line per run and latency: how many, and their minimum, median and maximum.
pub fn render(runs: &[Run]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for run in runs {
        let _ = writeln!(out, "{} ({} NACK recoveries)", run.label, run.recoveries.len());
        for (_, title, f) in LATENCIES {
            let v = run.latencies(f);
            match (v.first(), v.get(v.len().saturating_sub(1) / 2), v.last()) {
                (Some(lo), Some(mid), Some(hi)) => {
                    let _ = writeln!(
                        out,
                        "  {title:<24} µs: n {:<5} min {lo:>12.3} median {mid:>12.3} max {hi:>12.3}",
                        v.len()
                    );
                }
                _ => {
                    let _ = writeln!(out, "  {title:<24} µs: none");
                }
            }
        }
    }
    out
}
