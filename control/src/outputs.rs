//! Which files in an output directory `reconstruct` or `analyze` may replace or remove:
//! its own and an analysis's of ours, told by what they hold, never by their name alone —
//! a user's `trace.pcapng` or `report.json` in the directory given with `-o` is not ours
//! to lose.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::analyze::{PLOT_FILES, REPORT_FILE, REPORT_FORMAT};
use crate::reconstruct::{SUMMARY_FILE, SUMMARY_FORMAT, TRACE_FILE};

/// A file `reconstruct` or `analyze` (`by`) would replace or remove that it cannot show
/// to be rocescope's.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {what}, which {by} would {action}; move it out of {dir} or {by} into another directory with -o")]
pub struct NotOurs {
    pub path: PathBuf,
    pub what: &'static str,
    pub action: &'static str,
    pub dir: PathBuf,
    /// The command: `reconstruct` or `analyze`.
    pub by: &'static str,
}

const REPORT_NOT_OURS: &str = "not a rocescope analysis report (format rocescope-report)";

/// Bytes read from the start of a file to tell whose it is.
const HEAD: usize = 4096;

/// Checks every file of `dir` a reconstruction would replace or remove (trace.pcapng
/// replaced, or removed when `pcapng` is false; records.rsr and reconstruct.json replaced;
/// report.json and the plots removed): each absent, empty (an unfinished run of ours left
/// it, and it holds nothing to lose) or rocescope's.
pub fn check_replaceable(dir: &Path, pcapng: bool) -> Result<(), NotOurs> {
    let trace_action = if pcapng { "replace" } else { "remove" };
    let analysis_ours = report_ours(dir);
    let files: [(&str, &'static str, &'static str, bool); 4] = [
        (
            TRACE_FILE,
            "not a trace rocescope reconstruct wrote",
            trace_action,
            is_ours(&dir.join(TRACE_FILE), trace_ours),
        ),
        (trace::record::FILE_NAME, "not a rocescope record file", "replace", record_file_ours(dir)),
        (SUMMARY_FILE, "not a rocescope reconstruct.json", "replace", summary_ours(dir)),
        (REPORT_FILE, REPORT_NOT_OURS, "remove", analysis_ours),
    ];
    for (name, what, action, ours) in files {
        if !ours {
            return Err(NotOurs { path: dir.join(name), what, action, dir: dir.to_path_buf(), by: "reconstruct" });
        }
    }
    check_plots(dir, analysis_ours, "reconstruct")
}

/// Checks the files of `dir` an analysis would replace (report.json) or remove (the plots
/// it does not draw this time): each absent, empty or rocescope's, as for
/// [`check_replaceable`] — so an analysis re-run into its own earlier output goes on.
pub fn check_analysis_replaceable(dir: &Path) -> Result<(), NotOurs> {
    let analysis_ours = report_ours(dir);
    if !analysis_ours {
        let path = dir.join(REPORT_FILE);
        return Err(NotOurs { path, what: REPORT_NOT_OURS, action: "replace", dir: dir.to_path_buf(), by: "analyze" });
    }
    check_plots(dir, analysis_ours, "analyze")
}

/// The plots go with the analysis that drew them: they are taken as ours only beside a
/// report.json of ours (an SVG does not say who drew it).
fn check_plots(dir: &Path, analysis_ours: bool, by: &'static str) -> Result<(), NotOurs> {
    let beside_report = analysis_ours && dir.join(REPORT_FILE).exists();
    match PLOT_FILES.iter().map(|f| dir.join(f)).find(|p| p.exists() && !beside_report) {
        Some(path) => Err(NotOurs {
            path,
            what: "not known to be a rocescope analysis's plot (no report.json of rocescope's beside it)",
            action: "remove",
            dir: dir.to_path_buf(),
            by,
        }),
        None => Ok(()),
    }
}

fn record_file_ours(dir: &Path) -> bool {
    // An unfinished record file of ours has a zeroed header: the real one is written last.
    is_ours(&dir.join(trace::record::FILE_NAME), |h| {
        h.starts_with(&trace::record::MAGIC) || (h.len() >= 64 && h[..64].iter().all(|&b| b == 0))
    })
}

fn report_ours(dir: &Path) -> bool {
    is_ours(&dir.join(REPORT_FILE), |h| json_format_is(h, REPORT_FORMAT))
}

fn summary_ours(dir: &Path) -> bool {
    is_ours(&dir.join(SUMMARY_FILE), |h| json_format_is(h, SUMMARY_FORMAT))
}

/// Whether the file at `path` is absent, empty, or its head passes `ours`. A file that
/// cannot be read is not shown to be ours.
fn is_ours(path: &Path, ours: impl Fn(&[u8]) -> bool) -> bool {
    let mut file = match trace::mapped::open_regular(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
        Err(_) => return false,
        Ok(f) => f,
    };
    let mut head = Vec::with_capacity(HEAD);
    if (&mut file).take(HEAD as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    head.is_empty() || ours(&head)
}

/// A pcapng file whose section header names `rocescope reconstruct` as its writer.
fn trace_ours(head: &[u8]) -> bool {
    trace::reader::section_application(head).is_some_and(|app| app.starts_with(b"rocescope reconstruct"))
}

/// Whether `head` is the start of a JSON object whose first key is `"format"` with the
/// value `format`, as serde writes our reports (the whole file may be hundreds of MB).
fn json_format_is(head: &[u8], format: &str) -> bool {
    // Lossy: a cut inside a character past our ASCII prefix changes nothing it reads.
    let text = String::from_utf8_lossy(&head[..head.len().min(256)]);
    starts_with_format(&text, format)
}

fn starts_with_format(text: &str, format: &str) -> bool {
    let rest = text.trim_start().strip_prefix('{').map(str::trim_start);
    let rest = rest.and_then(|r| r.strip_prefix("\"format\"")).map(str::trim_start);
    let rest = rest.and_then(|r| r.strip_prefix(':')).map(str::trim_start);
    rest.is_some_and(|r| r.strip_prefix('"').is_some_and(|r| r.starts_with(&format!("{format}\""))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_head_is_ours_only_with_our_format_first() {
        assert!(json_format_is(b"{\n  \"format\": \"rocescope-report\",\n  \"version\": 1", "rocescope-report"));
        assert!(!json_format_is(b"{\"format\": \"rocescope-reportX\"}", "rocescope-report"));
        assert!(!json_format_is(b"{\"mine\": 1, \"format\": \"rocescope-report\"}", "rocescope-report"));
        assert!(!json_format_is("{\"é\": \"".repeat(60).as_bytes(), "rocescope-report"));
    }
}
