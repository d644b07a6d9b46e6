//! `rocescope-rig` end to end: the run directory has every file, each parses, and the
//! files agree with each other the way Lumina's integrity check (§3.5) reads them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope-rig"))
}

/// A path not yet created, inside a scratch directory that is removed when the `TempDir`
/// drops (on a panic too): keep it alive while the path is used.
fn tmp(name: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix(&format!("rig-cli-{name}-")).tempdir().unwrap();
    let out = dir.path().join("out");
    (dir, out)
}

fn listing() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/lumina-listing.yaml")
}

fn pcap_seqs(file: &Path) -> Vec<u32> {
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(file).unwrap()).unwrap();
    let mut seqs = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let src: [u8; 6] = p.data[6..12].try_into().unwrap();
        seqs.push(wire::mirror::seq_from_mac(src).unwrap());
    }
    seqs
}

#[test]
fn run_writes_a_consistent_run_directory() {
    let (_scratch, out) = tmp("run");
    let status = bin().arg("run").arg(listing()).arg("-o").arg(&out).arg("--force").status().unwrap();
    assert!(status.success());

    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ground-truth.json")).unwrap()).unwrap();
    assert_eq!(truth["schema"], "rocescope-rig-truth");
    assert_eq!(truth["events"].as_array().unwrap().len(), 3);

    // Lumina §3.5: consecutive seqs over the merged trace; RoCE packets in at the host
    // ports = copies out of the mirror ports = packets in the trace.
    let mut seqs = Vec::new();
    for host in truth["dump_hosts"].as_array().unwrap() {
        let s = pcap_seqs(&out.join(host["file"].as_str().unwrap()));
        assert_eq!(s.len() as u64, host["frames"].as_u64().unwrap());
        seqs.extend(s);
    }
    seqs.sort_unstable();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
    let state: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(out.join("switch_state_snapshot.yml")).unwrap()).unwrap();
    let count = |dir: &str| -> BTreeMap<u64, u64> { serde_yaml_ng::from_value(state["counter"][dir].clone()).unwrap() };
    let (ingress, egress) = (count("ingress"), count("egress"));
    let host_ports = [144, 152];
    let mirror_ports: Vec<u64> =
        truth["dump_hosts"].as_array().unwrap().iter().map(|h| h["switch_port"].as_u64().unwrap()).collect();
    let rx: u64 = host_ports.iter().map(|p| ingress[p]).sum();
    let mirrored: u64 = mirror_ports.iter().map(|p| egress[p]).sum();
    assert_eq!(rx, mirrored);
    assert_eq!(mirrored, seqs.len() as u64);
    assert_eq!(state["event-table"].as_sequence().unwrap().len(), 3);

    let qps: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(out.join("switch_message_snapshot.yml")).unwrap()).unwrap();
    let qps = qps.as_sequence().unwrap();
    assert_eq!(qps.len(), 2);
    for (q, c) in qps.iter().zip(truth["connections"].as_array().unwrap()) {
        assert_eq!(q["qpn_snd"].as_u64(), c["requester"]["qpn"].as_u64());
        assert_eq!(q["psn_snd"].as_u64(), c["requester"]["ipsn"].as_u64());
        assert_eq!(q["qpn_rcv"].as_u64(), c["responder"]["qpn"].as_u64());
        assert_eq!(q["psn_rcv"].as_u64(), c["responder"]["ipsn"].as_u64());
    }

    // Counter dumps: finish − start = the deltas in nic-counters.json.
    let nic: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nic-counters.json")).unwrap()).unwrap();
    for side in ["requester", "responder"] {
        let read = |which: &str| -> BTreeMap<String, u64> {
            let text = std::fs::read_to_string(out.join(format!("{side}_counter_{which}.yml"))).unwrap();
            let v: BTreeMap<String, BTreeMap<String, u64>> = serde_yaml_ng::from_str(&text).unwrap();
            v.into_values().flatten().collect()
        };
        let (start, finish) = (read("start"), read("finish"));
        let deltas = nic[side]["counters"].as_object().unwrap();
        assert_eq!(start.len(), deltas.len());
        for (k, v) in deltas {
            assert_eq!(finish[k] - start[k], v.as_u64().unwrap(), "{side} {k}");
        }
    }
    let log = std::fs::read_to_string(out.join("ib_write_client_run.log")).unwrap();
    assert!(log.contains("Throughput:") && log.contains("QP  1: average"), "{log}");
    let cfg = rig::RigConfig::load(&out.join("config.yaml")).expect("the effective config loads back");
    assert_eq!(cfg.rig.seed, 7);

    let again = bin().arg("run").arg(listing()).arg("-o").arg(&out).output().unwrap();
    assert!(!again.status.success(), "refuses to overwrite without --force");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

#[test]
fn same_seed_same_files() {
    let ((_scratch_a, a), (_scratch_b, b)) = (tmp("a"), tmp("b"));
    for out in [&a, &b] {
        assert!(bin().arg("run").arg(listing()).arg("-o").arg(out).arg("--force").status().unwrap().success());
    }
    for f in ["dump-0.pcap", "dump-1.pcap", "ground-truth.json", "switch_state_snapshot.yml", "nic-counters.json"] {
        assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap(), "{f}");
    }
    let (_scratch_c, c) = tmp("c");
    assert!(bin()
        .arg("run")
        .arg(listing())
        .arg("-o")
        .arg(&c)
        .args(["--seed", "8", "--force"])
        .status()
        .unwrap()
        .success());
    assert_ne!(std::fs::read(a.join("dump-0.pcap")).unwrap(), std::fs::read(c.join("dump-0.pcap")).unwrap());
}

#[test]
fn scale_mode_writes_trimmed_copies() {
    let (_scratch, out) = tmp("scale");
    let ok = bin().args(["scale", "--qps", "64", "--packets", "20000", "--force", "-o"]).arg(&out).status().unwrap();
    assert!(ok.success());
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ground-truth.json")).unwrap()).unwrap();
    assert_eq!(truth["snaplen"], 128);
    let frames: u64 = truth["dump_hosts"].as_array().unwrap().iter().map(|h| h["frames"].as_u64().unwrap()).sum();
    assert!(frames >= 20_000);
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(out.join("dump-0.pcap")).unwrap()).unwrap();
    assert_eq!(r.header().snaplen, 128, "the header says the snap length, as a dumper's does");
    // Raw: pcap-file's checked packets refuse an original length above the snap length.
    let p = r.next_raw_packet().unwrap().unwrap();
    assert_eq!((p.incl_len, p.data.len()), (128, 128));
    assert!(p.orig_len > 1_000, "the original length is kept");
    assert_eq!(truth["events"].as_array().unwrap().len(), 1, "one drop per 64 QPs");
}

#[test]
fn bad_config_is_a_clear_error() {
    let (_scratch, dir) = tmp("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("bad.yaml");
    std::fs::write(&cfg, std::fs::read_to_string(listing()).unwrap().replace("mtu: 1024", "mtu: 1000")).unwrap();
    let out = bin().arg("run").arg(&cfg).arg("-o").arg(dir.join("out")).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an IB MTU"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A reader that goes away (`rocescope-rig run ... | head -0`) ends the summary, not the
/// run: exit 0, the run directory written (before: a panic, "failed printing to stdout").
#[test]
fn a_closed_stdout_does_not_fail_the_run() {
    let (_scratch, out) = tmp("closed-stdout");
    let mut child = bin()
        .arg("run")
        .arg(listing())
        .arg("-o")
        .arg(&out)
        .arg("--force")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closed long before the run ends and prints its summary.
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(out.join("ground-truth.json").exists());
}
