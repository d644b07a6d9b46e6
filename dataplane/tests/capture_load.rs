//! Under continuous load (`net_null` delivers frames as fast as it is polled) the capture
//! must stop cleanly on SIGINT and on `--duration` with two workers in both balancing
//! modes, flush everything, finalize the manifest, and account for every packet; and when
//! the disk fails, it must stop, say so with a non-zero exit, and leave shards that match
//! their manifest exactly.

mod dpdk_support;

use dpdk_support::line_channel;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tempfile::TempDir;
use trace::manifest::{Manifest, RunStatus};
use trace::reader::{verify_blocks, ShardReader};

struct Capture {
    child: Child,
    /// The run directory, removed on drop (on a panic too).
    dir: TempDir,
    /// The EAL file prefix.
    tag: String,
    /// Stderr lines, as they come.
    stderr: mpsc::Receiver<String>,
}

/// Starts the dataplane on `net_null` with two workers; `shell_prefix` runs it under `sh -c`
/// (for resource limits).
fn spawn(name: &str, balance: &str, extra: &[&str], shell_prefix: Option<&str>) -> Capture {
    let lcores = if balance == "dispatch" { "(0-3)@(0,1)" } else { "(0-2)@(0,1)" };
    spawn_on(name, lcores, balance, extra, shell_prefix)
}

/// [`spawn`] with EAL's `--lcores` map given.
fn spawn_on(name: &str, lcores: &str, balance: &str, extra: &[&str], shell_prefix: Option<&str>) -> Capture {
    let tag = format!("rs-load-{}-{name}", std::process::id());
    let dir = tempfile::Builder::new().prefix(&format!("rs-load-{name}-")).tempdir().unwrap();
    let mut argv: Vec<String> = [env!("CARGO_BIN_EXE_rocescope-dataplane"), "--lcores", lcores, "--no-huge"]
        .iter()
        .chain(&["--no-pci", "--no-telemetry", "-m", "1024", "--file-prefix", &tag, "--log-level", "lib.eal:warning"])
        .chain(&[
            "--vdev",
            "net_null0",
            "--",
            "-o",
            dir.path().to_str().unwrap(),
            "--balance",
            balance,
            "--buffer-mb",
            "8",
        ])
        .chain(&["--stats-interval", "0.5"])
        .chain(extra)
        .map(|s| s.to_string())
        .collect();
    let mut cmd = match shell_prefix {
        Some(prefix) => {
            let quoted: Vec<String> = argv.iter().map(|a| format!("'{a}'")).collect();
            let mut c = Command::new("sh");
            c.args(["-c", &format!("{prefix}; exec {}", quoted.join(" "))]);
            c
        }
        None => {
            let mut c = Command::new(argv.remove(0));
            c.args(&argv);
            c
        }
    };
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("starting rocescope-dataplane");
    let (stderr, _reader) = line_channel(child.stderr.take().unwrap());
    Capture { child, dir, tag, stderr }
}

impl Capture {
    /// Waits for the first live stats line: the capture is running.
    fn wait_running(&self) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(60)) {
            let running = line.contains("Mpps");
            seen.push(line);
            if running {
                return seen;
            }
        }
        panic!("no stats line within 60 s: {seen:?}");
    }

    fn finish(self, expect_success: bool, reason: &str) -> Manifest {
        let out = self.child.wait_with_output().expect("waiting for the dataplane");
        let _ = std::fs::remove_dir_all(Path::new("/var/run/dpdk").join(&self.tag));
        let stderr: Vec<String> = self.stderr.try_iter().collect();
        let summary = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.success(), expect_success, "exit {:?}\n{summary}\n{stderr:?}", out.status);
        assert!(summary.contains("recorded"), "the summary is printed either way:\n{summary}");
        let m = Manifest::load(self.dir.path()).expect("final manifest");
        assert_eq!(m.status, RunStatus::Complete);
        assert_eq!(m.stop_reason.as_deref(), Some(reason));
        check_accounting(&m, self.dir.path());
        // The control side's verifier must agree: shards intact, identities hold. A failed
        // write is reported (write_error), and nothing else may be.
        let verdict = control::verify::verify_run(self.dir.path()).expect("verifiable");
        let shard_problems: Vec<_> = verdict.shards.iter().flat_map(|s| s.problems.clone()).collect();
        assert_eq!(shard_problems, Vec::<String>::new(), "{verdict}");
        assert!(verdict.problems.iter().all(|p| p.contains("write error")), "{verdict}");
        m
    }
}

fn check_accounting(m: &Manifest, dir: &Path) {
    let mut rx_total = 0;
    for c in &m.cores {
        assert!(c.rx > 0, "core {} received traffic", c.core);
        assert_eq!(c.rx, c.written + c.buffer_drops + c.write_failed + c.over_limit, "core {} accounting", c.core);
        assert_eq!(c.classes.values().sum::<u64>(), c.rx - c.over_limit);
        let bytes = std::fs::read(dir.join(&c.shard)).unwrap();
        assert_eq!(verify_blocks(&bytes, &c.blocks), vec![], "core {} blocks tile the shard", c.core);
        assert_eq!(ShardReader::new(&bytes).filter(|p| p.is_ok()).count() as u64, c.written, "core {}", c.core);
        rx_total += c.rx;
    }
    match &m.dispatcher {
        Some(d) => assert_eq!(d.rx, d.over_limit + d.ring_drops.iter().sum::<u64>() + rx_total),
        None => assert!(m.port.ipackets >= rx_total),
    }
}

fn send_sigint(pid: u32) {
    let status = Command::new("kill").args(["-INT", &pid.to_string()]).status().expect("kill");
    assert!(status.success());
}

#[test]
fn stops_cleanly_on_sigint_and_on_duration_with_two_workers() {
    let c = spawn("sigint", "rss", &["--duration", "60"], None);
    let lines = c.wait_running();
    let stats = lines.last().unwrap();
    assert!(
        stats.contains("| c0 ") && stats.contains(" busy ") && stats.contains(" off-cpu "),
        "per-core load: {stats}"
    );
    std::thread::sleep(Duration::from_millis(700));
    send_sigint(c.child.id());
    let m = c.finish(true, "signal");
    assert_eq!(m.cores.len(), 2);
    assert!(m.port.rss, "net_null takes an RSS configuration");
    for core in &m.cores {
        // net_null fills every burst it is polled for: nearly all polling time is packets.
        let busy = core.busy_percent.expect("busy share in the manifest");
        assert!((90.0..=100.0).contains(&busy), "core {} under net_null: busy {busy} %", core.core);
        let off = core.off_cpu_percent.expect("off-CPU share in the manifest");
        assert!((0.0..=100.0).contains(&off), "core {}: off-CPU {off} %", core.core);
    }
    assert!(m.finished_unix_ns.unwrap() - m.started_unix_ns < 30_000_000_000, "stopped promptly");

    let c = spawn("duration", "dispatch", &["--duration", "1", "--writer-cpus", "0"], None);
    let m = c.finish(true, "duration");
    assert_eq!(m.cores.len(), 2);
    assert!(m.dispatcher.is_some());
}

#[test]
fn a_worker_that_shares_its_cpu_reports_the_time_it_was_off_it() {
    // The one worker (lcore 1) is pinned to CPU 1, and a thread of this test spins there too:
    // the scheduler splits CPU 1 between them, so the worker runs about half of the time.
    // Its busy share cannot show that (net_null fills every poll); its off-CPU share must.
    let spin = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let spinner = {
        let spin = spin.clone();
        std::thread::spawn(move || {
            assert!(core_affinity::set_for_current(core_affinity::CoreId { id: 1 }), "pinning to CPU 1");
            while spin.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    let c = spawn_on("offcpu", "0@0,1@1", "rss", &["--duration", "2", "--writer-cpus", "0"], None);
    let m = c.finish(true, "duration");
    spin.store(false, std::sync::atomic::Ordering::Relaxed);
    spinner.join().unwrap();
    let core = &m.cores[0];
    let off = core.off_cpu_percent.expect("off-CPU share in the manifest");
    assert!((20.0..=100.0).contains(&off), "a worker sharing its CPU with a spinning thread: off-CPU {off} %");
    assert!(core.busy_percent.unwrap() >= 90.0, "net_null still fills every poll the worker makes");
}

#[test]
fn a_full_disk_stops_the_capture_with_an_error_and_consistent_shards() {
    // RLIMIT_FSIZE of 20 MB (dash counts 512-byte blocks; EAL's own sparse memseg file
    // needs room too), with SIGXFSZ ignored so a write fails with EFBIG instead of killing us.
    let c = spawn("fsize", "rss", &["--duration", "60"], Some("trap '' XFSZ; ulimit -f 40000"));
    let m = c.finish(false, "write_error");
    assert!(m.cores.iter().any(|c| c.write_error.is_some() && c.write_failed > 0), "{:?}", m.cores);
}
