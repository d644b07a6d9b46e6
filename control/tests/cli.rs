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

/// Files in the output directory that rocescope did not write — a user's trace.pcapng, a
/// report.json of another tool, an SVG with a plot's name but no report of ours beside it
/// — are neither replaced nor removed: reconstruct refuses (exit 2), names the file and
/// says how to go on, before it writes anything. Its own earlier outputs it replaces.
#[test]
fn a_reconstruction_replaces_only_files_that_are_its_own() {
    let run = rig_run("cli-not-ours", &Knobs::default());
    let out = scratch("cli-not-ours-out");
    let user_files = [
        (control::reconstruct::TRACE_FILE, &b"a capture of mine"[..]),
        (control::analyze::REPORT_FILE, b"{\"mine\": 1, \"format\": \"rocescope-report\"}"),
        (control::analyze::PLOT_FILES[2], b"<svg/>"),
    ];
    for (name, bytes) in user_files {
        let file = out.join(name);
        std::fs::write(&file, bytes).unwrap();
        for records_only in [true, false] {
            let args = [&["reconstruct", path(&run.dir), "-o", path(&out)][..], &["--records-only"]].concat();
            let (code, text, err) = rocescope(&args[..args.len() - usize::from(!records_only)]);
            assert_eq!(code, 2, "{name}: {text}{err}");
            assert!(err.contains(path(&file)) && err.contains("move it out of"), "{err}");
            assert_eq!(std::fs::read(&file).unwrap(), bytes, "{name} is left as it was");
            assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "nothing is written: {name}");
        }
        std::fs::remove_file(&file).unwrap();
    }
    for (args, trace) in [(&[][..], true), (&["--records-only"], false), (&[], true)] {
        let (code, text, err) = rocescope(&[&["reconstruct", path(&run.dir), "-o", path(&out)][..], args].concat());
        assert_eq!(code, 0, "its own outputs are replaced: {text}{err}");
        assert_eq!(out.join(control::reconstruct::TRACE_FILE).exists(), trace, "{args:?}");
    }
}

/// `analyze` of a reconstruction into a directory (-o, or beside it) replaces report.json
/// and removes the plots it does not draw only when they are an analysis's of ours: a
/// user's report.json, or an SVG with a plot's name and no report of ours beside it, makes
/// it refuse (exit 2), naming the file and how to go on, before it writes anything. A
/// re-run into its own earlier output goes on.
#[test]
fn an_analysis_replaces_only_files_that_are_its_own() {
    let run =
        rig_run("cli-analyze-not-ours", &Knobs { events: vec![ev(1, 3, EventKind::Drop, 1)], ..Knobs::default() });
    let trace = scratch("cli-analyze-not-ours-trace");
    let (code, text, err) = rocescope(&["reconstruct", path(&run.dir), "-o", path(&trace)]);
    assert_eq!(code, 0, "{text}{err}");
    let out = scratch("cli-analyze-not-ours-out");
    let user_files = [
        (control::analyze::REPORT_FILE, &b"{\"mine\": 1, \"format\": \"rocescope-report\"}"[..]),
        (control::analyze::PLOT_FILES[2], b"<svg/>"),
    ];
    for (name, bytes) in user_files {
        for (args, dir) in [(vec![path(&trace), "-o", path(&out)], &out), (vec![path(&trace)], &trace)] {
            let file = dir.join(name);
            std::fs::write(&file, bytes).unwrap();
            let before = std::fs::read_dir(dir).unwrap().count();
            let (code, text, err) = rocescope(&[&["analyze"][..], &args].concat());
            assert_eq!(code, 2, "{name}: {text}{err}");
            assert!(err.contains(path(&file)) && err.contains("move it out of"), "{err}");
            assert!(err.contains("analyze into another directory with -o"), "{err}");
            assert_eq!(std::fs::read(&file).unwrap(), bytes, "{name} is left as it was");
            assert_eq!(std::fs::read_dir(dir).unwrap().count(), before, "nothing is written: {name}");
            std::fs::remove_file(&file).unwrap();
        }
    }
    // Its own earlier output, twice over: replaced.
    for _ in 0..2 {
        let (code, text, err) = rocescope(&["analyze", path(&trace), "-o", path(&out)]);
        assert_eq!(code, 0, "{text}{err}");
        assert!(out.join(control::analyze::REPORT_FILE).exists());
    }
    let plots = control::analyze::PLOT_FILES.iter().filter(|f| out.join(f).exists()).count();
    assert!(plots > 0, "the drop's recovery is plotted");
}

/// Lumina's switch sends the copies to the run's `rewrite-udp-dst-port`: without
/// `--mirror-port`, reconstruct takes it from the run's config.yaml and says so. Given
/// the wrong port, a trace of frames none of which is a copy is no success: reconstruct
/// warns and names the port the frames' mirror metadata came on, check is not complete,
/// analyze has nothing to analyze; all exit 1.
#[test]
fn the_mirror_port_comes_from_the_run_configuration_and_a_trace_without_copies_fails() {
    let yaml = format!("{}rewrite-udp-dst-port: 5555\n", Knobs::default().yaml());
    let run = rig_run_yaml("cli-mirror-port", &yaml);
    let copies = run.result.packets.len() as u64;
    let out = out_dir(&run);
    let (code, text, err) = rocescope(&["reconstruct", path(&run.dir), "-o", path(&out)]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(err.contains("mirror port 5555 from") && err.contains("rewrite-udp-dst-port"), "{err}");
    assert!(!err.contains("warning"), "copies found: no warning\n{err}");
    let summary = control::reconstruct::Summary::load(&out).unwrap();
    assert_eq!((summary.mirrored, summary.mirror_port, summary.no_copies.as_deref()), (copies, 5555, None));

    let (code, text, err) = rocescope(&["reconstruct", path(&run.dir), "-o", path(&out), "--mirror-port", "9741"]);
    assert_eq!(code, 1, "{text}{err}");
    assert!(!err.contains("from"), "the port given is the port used\n{err}");
    assert!(err.contains("warning: no mirrored copy") && err.contains("--mirror-port 5555"), "{err}");
    let (code, text, _) = rocescope(&["check", path(&out)]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("[FAIL] 1. consecutive mirror sequence numbers: no mirrored copy"), "{text}");
    let (code, text, _) = rocescope(&["analyze", path(&out)]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("warning: nothing to analyze: no mirrored copy"), "{text}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join(control::analyze::REPORT_FILE)).unwrap()).unwrap();
    assert_eq!(report["mirrored"], 0);
    assert!(report["no_copies"].as_str().unwrap().contains("--mirror-port 5555"), "{report}");
}

/// A capture file with a header and no frame: no copy, said so, exit 1.
#[test]
fn a_capture_without_frames_is_no_trace() {
    let dir = scratch("cli-header-only");
    let pcap = dir.join("empty.pcap");
    let header =
        [0xa1b2_c3d4u32.to_le_bytes(), [2, 0, 4, 0], [0; 4], [0; 4], 65_535u32.to_le_bytes(), 1u32.to_le_bytes()];
    std::fs::write(&pcap, header.concat()).unwrap();
    let out = dir.join("out");
    let (code, text, err) = rocescope(&["reconstruct", path(&pcap), "-o", path(&out)]);
    assert_eq!(code, 1, "{text}{err}");
    assert!(err.contains("the inputs hold no frame at all"), "{err}");
    let (code, text, _) = rocescope(&["check", path(&out)]);
    assert_eq!(code, 1, "{text}");
}

/// `--window`, `--mirror-port` and `--roce-port` say how to reconstruct: given a
/// reconstruction, check and analyze do not, and say the flags are ignored.
#[test]
fn merge_flags_given_with_a_reconstruction_are_said_to_be_ignored() {
    let run = rig_run("cli-ignored-flags", &Knobs::default());
    let out = reconstruct(&run);
    for command in ["check", "analyze"] {
        let (code, text, err) = rocescope(&[command, path(&out), "--window", "3", "--mirror-port", "1234"]);
        assert_eq!(code, 0, "{text}{err}");
        assert!(err.contains("warning: --window, --mirror-port ignored"), "{command}: {err}");
        assert!(err.contains("apply only when reconstructing"), "{command}: {err}");
        let (_, _, err) = rocescope(&[command, path(&out)]);
        assert!(!err.contains("ignored"), "{command}: {err}");
    }
}

/// `compare` overlays the NACK latencies of several analyses, one series per run labelled
/// with its NICs and verb (Lumina §6.1's Figures 8–9), and prints each one's range: the
/// figures it prints are those of each report.json.
#[test]
fn compare_puts_several_analyses_side_by_side() {
    // Each drop's go-back starts the next ITER round (Lumina §3.3).
    let drops: Vec<_> = (0..4).map(|m| ev(1, 8 * m + 3, EventKind::Drop, m + 1)).collect();
    let mut dirs = Vec::new();
    for nic in [rig::profile::NicKind::Cx4Lx, rig::profile::NicKind::Cx5] {
        let run = rig_run(&format!("cli-compare-{nic:?}"), &Knobs { nic, events: drops.clone(), ..Knobs::default() });
        let (code, text, err) = rocescope(&["analyze", path(&run.dir)]);
        assert_eq!(code, 0, "{text}{err}");
        dirs.push(run.dir);
    }
    let out = scratch("cli-compare").join("plots");
    let (code, text, err) = rocescope(&["compare", path(&dirs[0]), path(&dirs[1]), "-o", path(&out)]);
    assert_eq!(code, 0, "{text}{err}");
    for (dir, nic) in dirs.iter().zip(["cx4", "cx5"]) {
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("rocescope/report.json")).unwrap()).unwrap();
        let reaction: Vec<u64> = report["retransmission"]["recoveries"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["reaction_ns"].as_u64())
            .collect();
        assert_eq!(reaction.len(), 4);
        let (lo, hi) = (reaction.iter().min().unwrap(), reaction.iter().max().unwrap());
        let label = format!("run: {nic} → {nic} write (4 NACK recoveries)");
        let block = text.split(&label).nth(1).unwrap_or_else(|| panic!("{label} in\n{text}"));
        let line = block.lines().find(|l| l.contains("NACK reaction latency")).unwrap();
        let (lo, hi) = (format!("min {:>12.3}", *lo as f64 / 1e3), format!("max {:>12.3}", *hi as f64 / 1e3));
        assert!(line.contains("n 4") && line.contains(&lo) && line.contains(&hi), "{line}");
    }
    for file in control::analyze::PLOT_FILES[..2].iter() {
        let svg = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(svg.contains("cx4 → cx4 write") && svg.contains("cx5 → cx5 write"), "{file}");
    }
    let (code, _, err) = rocescope(&["compare", path(&out), "-o", path(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("no report.json"), "{err}");
}
