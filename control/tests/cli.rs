//! What the `rocescope` command says and does with what a user gives it: stale outputs,
//! flags that do not apply, traces with nothing to read. Run as a user runs it.

mod support;

use std::path::Path;
use std::process::Command;

use rig::config::EventKind;
use support::*;

/// Runs `rocescope` with `args`: its exit code, standard output and standard error.
fn rocescope<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("rocescope runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().expect("exited"), text(&out.stdout), text(&out.stderr))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// A new reconstruction into a directory an analysis wrote into removes that analysis's
/// report.json and plots (they described the trace it replaces), and says so.
#[test]
fn a_reconstruction_removes_the_analysis_of_the_trace_it_replaces() {
    let with_drop = Knobs { events: vec![ev(1, 3, EventKind::Drop, 1)], ..Knobs::default() };
    let first = rig_run("cli-stale-first", &with_drop);
    let second = rig_run("cli-stale-second", &Knobs { msgs: 2, ..Knobs::default() });
    let out = scratch("cli-stale").join("out");
    let (code, text, err) = rocescope(&["analyze", path(&first.dir), "-o", path(&out)]);
    assert_eq!(code, 0, "{text}{err}");
    let report = out.join(control::analyze::REPORT_FILE);
    let plots: Vec<_> = control::analyze::PLOT_FILES.iter().map(|f| out.join(f)).filter(|p| p.exists()).collect();
    assert!(report.exists() && !plots.is_empty(), "{text}");

    let (code, text, err) = rocescope(&["reconstruct", path(&second.dir), "-o", path(&out)]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(!report.exists(), "report.json of the first trace is left beside the second");
    assert!(plots.iter().all(|p| !p.exists()), "plots of the first trace are left beside the second");
    assert!(text.contains("removed report.json"), "{text}");
    let summary = control::reconstruct::Summary::load(&out).unwrap();
    assert_eq!(summary.removed_outputs.len(), 1 + plots.len(), "{:?}", summary.removed_outputs);
    // Nothing to remove the next time: nothing said.
    let (_, text, _) = rocescope(&["reconstruct", path(&second.dir), "-o", path(&out)]);
    assert!(!text.contains("removed"), "{text}");
}
