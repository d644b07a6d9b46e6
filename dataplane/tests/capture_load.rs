//! Under continuous load (`net_null` delivers frames as fast as it is polled) the capture
//! must stop cleanly on SIGINT and on `--duration`, flush everything, finalize the manifest,
//! and account for every packet: rx = written + buffer drops + write failures + over limit.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use trace::manifest::{Manifest, RunStatus};
use trace::reader::{verify_blocks, ShardReader};

fn spawn(name: &str, balance: &str, extra: &[&str]) -> (Child, PathBuf, String) {
    let tag = format!("rs-load-{}-{name}", std::process::id());
    let dir = std::env::temp_dir().join(&tag);
    let _ = std::fs::remove_dir_all(&dir);
    let lcores = if balance == "dispatch" { "(0-2)@(0,1)" } else { "(0-1)@(0,1)" };
    let child = Command::new(env!("CARGO_BIN_EXE_rocescope-dataplane"))
        .args(["--lcores", lcores, "--no-huge", "--no-pci", "--no-telemetry", "-m", "1024"])
        .args(["--file-prefix", &tag, "--log-level", "lib.eal:warning", "--vdev", "net_null0", "--"])
        .arg("-o")
        .arg(&dir)
        .args(["--balance", balance, "--buffer-mb", "8", "--stats-interval", "0.5"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting rocescope-dataplane");
    (child, dir, tag)
}

fn finish(child: Child, dir: &PathBuf, tag: &str, reason: &str) -> Manifest {
    let out = child.wait_with_output().expect("waiting for the dataplane");
    let _ = std::fs::remove_dir_all(std::path::Path::new("/var/run/dpdk").join(tag));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}\n{stderr}", out.status);
    assert!(stderr.contains("Mpps"), "a live stats line was printed:\n{stderr}");
    let m = Manifest::load(dir).expect("final manifest");
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(m.stop_reason.as_deref(), Some(reason));
    let mut rx_total = 0;
    for c in &m.cores {
        assert!(c.rx > 0, "core {} received traffic", c.core);
        assert_eq!(c.rx, c.written + c.buffer_drops + c.write_failed + c.over_limit, "core {} accounting", c.core);
        assert_eq!(c.classes.values().sum::<u64>(), c.rx - c.over_limit);
        let bytes = std::fs::read(dir.join(&c.shard)).unwrap();
        assert_eq!(verify_blocks(&bytes, &c.blocks), vec![]);
        assert_eq!(ShardReader::new(&bytes).map(|p| p.unwrap()).count() as u64, c.written);
        rx_total += c.rx;
    }
    match &m.dispatcher {
        Some(d) => assert_eq!(d.rx, d.over_limit + d.ring_drops.iter().sum::<u64>() + rx_total),
        None => assert_eq!(m.port.ipackets, rx_total),
    }
    std::fs::remove_dir_all(dir).unwrap();
    m
}

#[test]
fn stops_cleanly_on_sigint_and_on_duration_under_load() {
    let (child, dir, tag) = spawn("sigint", "rss", &["--duration", "60"]);
    // Wait until the run has started writing, then interrupt it like Ctrl-C would.
    let started = Instant::now();
    while !dir.join("manifest.json").exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1200));
    let rc = send_sigint(child.id());
    assert_eq!(rc, 0);
    let m = finish(child, &dir, &tag, "signal");
    assert!(m.finished_unix_ns.unwrap() - m.started_unix_ns < 30_000_000_000, "stopped promptly");

    let (child, dir, tag) = spawn("duration", "dispatch", &["--duration", "1"]);
    let m = finish(child, &dir, &tag, "duration");
    assert_eq!(m.cores.len(), 1);
}

/// Sends SIGINT with the `kill` command, so this test needs no unsafe FFI.
fn send_sigint(pid: u32) -> i32 {
    Command::new("kill").args(["-INT", &pid.to_string()]).status().map_or(-1, |s| s.code().unwrap_or(-1))
}
