//! Running the real `rocescope-dataplane` binary on a virtual device, for the capture
//! tests (each run is its own process, so one test binary can run several).

use std::path::Path;
use std::process::Command;
use tempfile::TempDir;
use trace::manifest::Manifest;

pub struct Run {
    /// The run directory, removed on drop (on a panic too).
    pub dir: TempDir,
    pub manifest: Manifest,
}

/// Runs the dataplane with `lcores` EAL lcores on the given vdev, stopping when idle.
pub fn capture(name: &str, lcores: usize, vdev: &str, app: &[&str]) -> Run {
    let (dir, out) = run_dataplane(name, lcores, vdev, app);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "dataplane failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("recorded"), "no summary:\n{stdout}");
    let manifest = Manifest::load(dir.path()).expect("manifest.json");
    let verdict = control::verify::verify_run(dir.path()).expect("verifiable");
    assert!(verdict.intact(), "rocescope verify:\n{verdict}");
    Run { dir, manifest }
}

/// The dataplane's stderr from a run that must fail.
#[allow(dead_code)] // a module of each capture test binary; not all of them use it
pub fn capture_fails(name: &str, lcores: usize, vdev: &str, app: &[&str]) -> String {
    let (_dir, out) = run_dataplane(name, lcores, vdev, app);
    assert!(!out.status.success(), "the dataplane ran:\n{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run_dataplane(name: &str, lcores: usize, vdev: &str, app: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    // The EAL file prefix; the run directory is a scratch directory of its own.
    let tag = format!("rs-e2e-{}-{name}", std::process::id());
    let dir = tempfile::Builder::new().prefix(&format!("rs-e2e-{name}-")).tempdir().unwrap();
    let cpus: Vec<String> = core_affinity::get_core_ids()
        .map(|ids| ids.iter().take(2).map(|c| c.id.to_string()).collect())
        .unwrap_or_else(|| vec!["0".into()]);
    let lcore_map = format!("(0-{})@({})", lcores - 1, cpus.join(","));
    let out = Command::new(env!("CARGO_BIN_EXE_rocescope-dataplane"))
        .args(["--lcores", &lcore_map, "--no-huge", "--no-pci", "--no-telemetry", "-m", "1024"])
        .args(["--file-prefix", &tag, "--log-level", "lib.eal:warning", "--vdev", vdev, "--"])
        .arg("-o")
        .arg(dir.path())
        // The duration is only a safety net; the run must end by going idle.
        .args(["--stop-when-idle", "1", "--duration", "120", "--stats-interval", "0"])
        .args(app)
        .output()
        .expect("running rocescope-dataplane");
    let _ = std::fs::remove_dir_all(Path::new("/var/run/dpdk").join(&tag));
    (dir, out)
}
