//! Shared by control's integration tests: emulated Lumina runs (the testbed emulator,
//! `rocescope-rig`) written to a run directory exactly as `rocescope-rig run` writes it,
//! reconstructed, and loaded for analysis.

#![allow(dead_code)]

pub mod keys;
#[path = "../../../tests/rig/tests/common/mod.rs"]
pub mod rig_common;

use std::path::{Path, PathBuf};

use control::reconstruct::Reconstruction;
use rig::config::RigConfig;
use rig::{Capture, Rig, RunResult};
#[allow(unused_imports)]
pub use rig_common::{ev, Knobs};

pub struct RigRun {
    pub dir: PathBuf,
    pub cfg: RigConfig,
    pub result: RunResult,
}

/// A fresh directory under the target dir's tmp, unique per test name.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("control-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the emulator on `knobs` into `scratch(name)/run`, as `rocescope-rig run` does.
pub fn rig_run(name: &str, knobs: &Knobs) -> RigRun {
    rig_run_yaml(name, &knobs.yaml())
}

pub fn rig_run_yaml(name: &str, yaml: &str) -> RigRun {
    let cfg = RigConfig::from_yaml(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let dir = scratch(name).join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let result = Rig::new(&cfg, Capture::Pcap(&dir), true).unwrap().run().unwrap();
    rig::output::write_run(&dir, &cfg, &result).unwrap();
    std::fs::write(dir.join("config.yaml"), serde_yaml_ng::to_string(&cfg).unwrap()).unwrap();
    RigRun { dir, cfg, result }
}

/// Reconstructs `run` into `<run>/../out` with default options; returns that directory.
pub fn reconstruct(run: &RigRun) -> PathBuf {
    let out = out_dir(run);
    control::reconstruct::reconstruct_to(std::slice::from_ref(&run.dir), &out, &Default::default()).unwrap();
    out
}

/// Reconstructs `run` and loads it.
pub fn reconstructed(run: &RigRun) -> Reconstruction {
    Reconstruction::load(&reconstruct(run)).unwrap()
}

pub fn out_dir(run: &RigRun) -> PathBuf {
    run.dir.parent().unwrap().join("out")
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}

/// Reconstructs `run` and loads it for analysis.
pub fn analysis(run: &RigRun) -> control::analyze::Analysis {
    control::analyze::Analysis::load(&reconstruct(run)).unwrap()
}

/// Sweep seed 3109: four READ QPs from a CX6 Dx (100 GbE) to a CX4 Lx (40 GbE) requester
/// with a 16 µs timer, 7 retries: the switch port toward the requester queues the READ
/// answers for hundreds of µs, longer than the timer, and every QP runs out of retries.
pub const READ_QUEUED_TOWARD_A_SLOWER_REQUESTER: &str = "requester: {nic: {type: cx4lx, switch-port: 144, ip-list: [10.1.0.2/24, 10.1.0.3/24, 10.1.0.4/24, 10.1.0.5/24]}, roce-parameters: {dcqcn-rp-enable: false, dcqcn-np-enable: true, adaptive-retrans: false, slow-restart: true}}
responder: {nic: {type: cx6dx, switch-port: 152, ip-list: [10.2.0.2/24, 10.2.0.3/24, 10.2.0.4/24, 10.2.0.5/24]}, roce-parameters: {dcqcn-rp-enable: true, dcqcn-np-enable: true, adaptive-retrans: false}}
traffic: {num-connections: 4, rdma-verb: read, num-msgs-per-qp: 19, mtu: 4096, message-size: 51399, tx-depth: 4, min-retransmit-timeout: 2, max-retransmit-retry: 7}
rig: {seed: 884882}
";
