//! The real `rocescope-dataplane` as a memif server, fed by stock `dpdk-testpmd`.
//!
//! `--stop-when-idle` must not end a capture whose peer has not connected yet (a memif
//! client can take seconds: with zero-copy it first maps all its memory), but must end it
//! once the peer's packets have stopped. Every packet testpmd reports as sent is recorded.
//! Skips with a note when `dpdk-testpmd` is not installed.

mod dpdk_support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dpdk_support::{
    file_prefix, line_channel, scratch_dir, testpmd_available, testpmd_memif_client, testpmd_tx_packets,
    RuntimeDirGuard, TESTPMD,
};
use trace::manifest::Manifest;

/// Asks testpmd for its port's link status until it is up (at most 60 s); keeps what it
/// printed in `out`.
fn link_up(stdin: &mut impl Write, lines: &mpsc::Receiver<String>, out: &mut Vec<String>) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        stdin.write_all(b"show port info 0\n").unwrap();
        stdin.flush().unwrap();
        while let Ok(line) = lines.recv_timeout(Duration::from_millis(500)) {
            let up = line.contains("Link status:") && line.contains("up");
            out.push(line);
            if up {
                return true;
            }
        }
    }
    false
}

#[test]
fn idle_stop_waits_for_the_memif_peer_then_records_all_it_sent() {
    if !testpmd_available() {
        eprintln!("note: {TESTPMD} not found; skipping the memif capture test (install dpdk)");
        return;
    }
    let dir = scratch_dir("cap-memif");
    let sock = dir.path().join("memif.sock");
    let run = dir.path().join("run");
    let _runtime_dir = RuntimeDirGuard::new(file_prefix("cap-memif"));
    let _testpmd_runtime_dir = RuntimeDirGuard::new(file_prefix("cap-memif-tp"));
    let mut capture = Command::new(env!("CARGO_BIN_EXE_rocescope-dataplane"))
        .args(["--lcores", "0@0,1@1", "--no-huge", "--no-pci", "--no-telemetry", "-m", "512"])
        .arg(format!("--file-prefix={}", file_prefix("cap-memif")))
        .args(["--log-level", "lib.eal:warning", "--vdev"])
        .arg(format!("net_memif0,role=server,socket={},socket-abstract=no", sock.display()))
        .args(["--", "-o", run.to_str().unwrap(), "--buffer-mb", "8", "--stop-when-idle", "3", "--stats-interval", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting rocescope-dataplane");

    // No peer for longer than the idle period: the capture must still be waiting. (Once
    // testpmd is up it has 3 s to send, plenty even on a loaded machine.)
    let deadline = Instant::now() + Duration::from_secs(60);
    while !sock.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(sock.exists(), "the dataplane never opened its memif socket");
    std::thread::sleep(Duration::from_secs(5));
    assert!(capture.try_wait().unwrap().is_none(), "stopped as idle before any peer connected");

    let mut testpmd = testpmd_memif_client(&sock, &file_prefix("cap-memif-tp"));
    let mut stdin = testpmd.stdin.take().unwrap();
    let (lines, reader) = line_channel(testpmd.stdout.take().unwrap());
    let mut out = Vec::new();
    assert!(link_up(&mut stdin, &lines, &mut out), "testpmd never connected:\n{}", out.join("\n"));
    stdin.write_all(b"start tx_first 4\n").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    stdin.write_all(b"stop\nquit\n").unwrap();
    drop(stdin);
    assert!(testpmd.wait().unwrap().success(), "testpmd failed:\n{}", out.join("\n"));
    reader.join().unwrap();
    out.extend(lines.try_iter());
    let out = out.join("\n");
    let sent = testpmd_tx_packets(&out).unwrap_or_else(|| panic!("no TX-packets in testpmd output:\n{out}"));
    assert!(sent > 0, "testpmd sent nothing:\n{out}");

    let finished = capture.wait_with_output().expect("waiting for the dataplane");
    let summary = String::from_utf8_lossy(&finished.stdout);
    assert!(finished.status.success(), "{summary}\n{}", String::from_utf8_lossy(&finished.stderr));
    let m = Manifest::load(&run).expect("final manifest");
    assert_eq!(m.stop_reason.as_deref(), Some("idle"), "{summary}");
    let written: u64 = m.cores.iter().map(|c| c.written).sum();
    let rx: u64 = m.cores.iter().map(|c| c.rx).sum();
    assert_eq!((rx, written), (sent, sent), "testpmd sent {sent}\n{summary}");
    // Seconds of waiting for the peer and a few bursts: the worker was mostly idle.
    let busy = m.cores[0].busy_percent.expect("busy share in the manifest");
    assert!((0.0..50.0).contains(&busy), "busy {busy} % after waiting for the peer\n{summary}");
}
