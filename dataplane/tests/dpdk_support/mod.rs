//! Helpers shared by the `dpdk_*` integration tests (one EAL scenario per test binary).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The EAL file prefix for this test process and scenario (unique while the process runs).
pub fn file_prefix(scenario: &str) -> String {
    format!("rs-{scenario}-{}", std::process::id())
}

/// EAL flags for a test process: no hugepages, no PCI, [`file_prefix`], 1 GB of memory,
/// lcores `lcores`, plus the given vdevs.
pub fn eal_args(scenario: &str, lcores: &str, vdevs: &[String]) -> Vec<String> {
    let mut args = dataplane::dpdk::Eal::no_huge_args(&file_prefix(scenario), 1024);
    args.push("-l".into());
    args.push(lcores.into());
    args.push("--log-level=lib.eal:warning".into());
    for v in vdevs {
        args.push("--vdev".into());
        args.push(v.clone());
    }
    args
}

/// Removes the EAL runtime directory of a file prefix on drop: DPDK 22.11 leaves
/// `/var/run/dpdk/<prefix>` (or `$XDG_RUNTIME_DIR/dpdk/<prefix>`, `/tmp/dpdk/<prefix>` for
/// non-root) behind even after `rte_eal_cleanup`. Create it before the `Eal` so it drops after.
pub struct RuntimeDirGuard(String);

impl RuntimeDirGuard {
    pub fn new(prefix: String) -> RuntimeDirGuard {
        RuntimeDirGuard(prefix)
    }
}

impl Drop for RuntimeDirGuard {
    fn drop(&mut self) {
        let mut bases = vec![PathBuf::from("/var/run/dpdk"), PathBuf::from("/tmp/dpdk")];
        if let Some(xdg) = std::env::var_os("XDG_RUNTIME_DIR") {
            bases.push(PathBuf::from(xdg).join("dpdk"));
        }
        for base in bases {
            let _ = std::fs::remove_dir_all(base.join(&self.0));
        }
    }
}

/// A scratch directory for a test, removed on drop (on a panic too).
pub fn scratch_dir(scenario: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("rocescope-{scenario}-")).tempdir().expect("create temp dir")
}

/// A test frame: Ethernet II (ethertype 0x88b5, local experimental) whose payload starts with
/// `tag` and `index` (big-endian u32 each) followed by a byte pattern; `len` >= 22.
pub fn frame(tag: u32, index: u32, len: usize) -> Vec<u8> {
    assert!(len >= 22);
    let mut f = Vec::with_capacity(len);
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01]); // dst
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02]); // src
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(&tag.to_be_bytes());
    f.extend_from_slice(&index.to_be_bytes());
    let seed = tag.wrapping_mul(31).wrapping_add(index) as u8;
    f.extend((f.len()..len).map(|i| seed.wrapping_add(i as u8)));
    f
}

/// The `(tag, index)` a [`frame`] carries.
pub fn frame_id(bytes: &[u8]) -> (u32, u32) {
    let tag = u32::from_be_bytes(bytes[14..18].try_into().unwrap());
    let index = u32::from_be_bytes(bytes[18..22].try_into().unwrap());
    (tag, index)
}

/// Write `frames` as a classic little-endian pcap (microsecond timestamps, LINKTYPE_ETHERNET).
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    out.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    out.extend_from_slice(&65535u32.to_le_bytes()); // snaplen
    out.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    for (i, f) in frames.iter().enumerate() {
        out.extend_from_slice(&(1_700_000_000u32 + i as u32).to_le_bytes());
        out.extend_from_slice(&(i as u32 % 1_000_000).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f);
    }
    std::fs::write(path, out).expect("write pcap");
}

/// Poll `f` until it returns true or `secs` pass (a hang guard, never an assertion on time).
pub fn poll_until(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if f() {
            return true;
        }
    }
    false
}

/// Stock `dpdk-testpmd`, as the tests that talk to a second DPDK process run it.
pub const TESTPMD: &str = "dpdk-testpmd";

/// Whether `dpdk-testpmd` can be run (tests that need it skip with a note otherwise).
pub fn testpmd_available() -> bool {
    std::process::Command::new(TESTPMD)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok()
}

/// testpmd as a memif client of `sock` (interactive, rxonly until told otherwise), with
/// piped stdin and stdout.
pub fn testpmd_memif_client(sock: &Path, file_prefix: &str) -> std::process::Child {
    std::process::Command::new(TESTPMD)
        .args(["--no-huge", "--no-pci", "-m", "256", "-l", "0-1", "--log-level=lib.eal:warning"])
        .arg(format!("--file-prefix={file_prefix}"))
        .arg("--vdev")
        .arg(format!("net_memif0,role=client,socket={},socket-abstract=no", sock.display()))
        .args(["--", "-i", "--total-num-mbufs=2048", "--forward-mode=rxonly"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn dpdk-testpmd")
}

/// `TX-packets: N` of the port summary testpmd prints on `stop`.
pub fn testpmd_tx_packets(out: &str) -> Option<u64> {
    out.lines()
        .filter_map(|l| l.split("TX-packets:").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .max()
}

/// A child's output pipe read line by line on a thread of its own, so a test can wait for a
/// line with a timeout; join the handle to be sure every line has been sent.
pub fn line_channel(
    pipe: impl std::io::Read + Send + 'static,
) -> (std::sync::mpsc::Receiver<String>, std::thread::JoinHandle<()>) {
    use std::io::BufRead;
    let (tx, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (lines, reader)
}
