//! Pcaps as Lumina's own DPDK dumper writes them (issue 4, review F1): ports restored, a
//! UDP checksum over the 128 bytes kept, CE re-applied, the switch timestamp as the record
//! time, records grouped by lcore. The emulator writes a run both ways (`rig.dumper`); the
//! dumper's files must reconstruct to the records and frames of the raw dumps of the same
//! run, pass the check, analyze to the ground truth, and name the host of a lost copy.

mod support;

use std::path::Path;

use control::check::check_dir;
use control::input::ReadAs;
use control::reconstruct::{reconstruct_to, Options, Reconstruction};
use rig::config::{EventKind, Verb};
use support::*;

/// Three dump hosts (1:2:1), every event kind, two connections.
fn knobs(extra_rig: &str) -> Knobs {
    Knobs {
        conns: 2,
        msgs: 8,
        msg_pkts: 10,
        dump_hosts: vec![1, 2, 1],
        events: vec![
            ev(1, 4, EventKind::Ecn, 1),
            ev(2, 5, EventKind::Drop, 1),
            ev(1, 30, EventKind::Drop, 1),
            ev(2, 50, EventKind::Corrupt, 1),
        ],
        extra_rig: extra_rig.to_string(),
        ..Knobs::default()
    }
}

/// The raw dumps keep what the dumper keeps: 128 bytes.
const RAW: &str = "  snaplen: 128\n";
fn lumina(lcores: u32) -> String {
    format!("  dumper: lumina\n  dumper-lcores: {lcores}\n")
}

/// The same run (same seed and knobs) written raw and by Lumina's dumper, reconstructed.
fn both(name: &str, knobs: &Knobs, dumper: &str) -> (RigRun, Reconstruction, RigRun, Reconstruction) {
    let with = |extra: &str| Knobs { extra_rig: format!("{}{extra}", knobs.extra_rig), ..knobs.clone() };
    let raw = rig_run(&format!("{name}-raw"), &with(RAW));
    let dumped = rig_run(&format!("{name}-lumina"), &with(dumper));
    assert_eq!(raw.result.packets.len(), dumped.result.packets.len(), "{name}: the same run");
    let (r, d) = (reconstructed(&raw), reconstructed(&dumped));
    (raw, r, dumped, d)
}

/// The trace's frames as (switch time, original length, bytes, annotation).
fn frames(out: &Path) -> Vec<(u64, u32, Vec<u8>, Option<trace::Annotation>)> {
    let bytes = std::fs::read(out.join(control::reconstruct::TRACE_FILE)).unwrap();
    trace::reader::ShardReader::new(&bytes)
        .map(|p| p.unwrap())
        .map(|p| (p.timestamp_ns, p.original_len, p.data.to_vec(), p.annotation()))
        .collect()
}

fn records(rec: &Reconstruction) -> Vec<u8> {
    std::fs::read(rec.dir.join(trace::record::FILE_NAME)).unwrap()
}

/// Everything the dumper's files must give as the raw ones do.
fn assert_same_reconstruction(name: &str, raw: &Reconstruction, dumped: &Reconstruction) {
    assert_eq!(dumped.summary.mirrored, raw.summary.mirrored, "{name}");
    assert!(records(dumped) == records(raw), "{name}: records.rsr differs from the raw dumps'");
    let (f, g) = (frames(&dumped.dir), frames(&raw.dir));
    assert_eq!(f.len(), g.len(), "{name}");
    for (i, (a, b)) in f.iter().zip(&g).enumerate() {
        assert_eq!(a, b, "{name}: frame {i} of the trace");
    }
    assert_eq!(dumped.summary.issue_counts, raw.summary.issue_counts, "{name}: {:?}", dumped.summary.issues);
    assert_eq!(dumped.summary.missing_total, raw.summary.missing_total, "{name}");
    for (d, r) in dumped.summary.sources.iter().zip(&raw.summary.sources) {
        assert_eq!((d.read_as, r.read_as), (ReadAs::LuminaDumper, ReadAs::MirrorFormat), "{name}");
        assert_eq!((&d.name, d.stats.mirrored, d.stats.other), (&r.name, r.stats.mirrored, 0), "{name}");
        assert_eq!((d.stats.first_seq, d.stats.last_seq), (r.stats.first_seq, r.stats.last_seq), "{name}");
        let in_runs: u64 = d.lcore_runs.iter().map(|r| r.stats.mirrored).sum();
        assert_eq!(in_runs, d.stats.mirrored, "{name}: {}", d.name);
    }
}

/// The analysis of the dumper's files: what the raw files give, and the truth's
/// recoveries to the nanosecond.
fn assert_same_analysis(name: &str, raw: &RigRun, dumped: &RigRun) {
    let (a, b) = (analysis(raw), analysis(dumped));
    let (ra, rb) = (a.run(), b.run());
    for key in ["gbn", "retransmission", "cnp", "goodput", "interop", "counters"] {
        let (x, y) = (serde_json::to_value(&ra).unwrap()[key].clone(), serde_json::to_value(&rb).unwrap()[key].clone());
        assert_eq!(y, x, "{name}: {key}");
    }
    let truth = &dumped.result.truth;
    let mut got: Vec<_> = rb
        .retransmission
        .recoveries
        .iter()
        .map(|r| (r.conn, r.first_retransmission.map(|f| f.seq), r.generation_ns, r.reaction_ns))
        .collect();
    let mut want: Vec<_> = truth
        .recoveries
        .iter()
        .map(|r| (r.conn, Some(r.first_retransmission_seq), r.observed_generation_ns, r.observed_reaction_ns))
        .collect();
    // In trace order against the truth's wire seqs: across the wrap the orders differ.
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{name}: recoveries against the truth");
    assert_eq!(rb.problems(), 0, "{name}: {}", rb.render());
}

#[test]
fn dumper_files_over_three_hosts_reconstruct_as_the_raw_dumps() {
    for (name, extra, lcores) in [
        ("lumd-4", String::new(), 4),
        ("lumd-wrap", "  first-mirror-seq: 2147483600\n".to_string(), 3),
        ("lumd-8-read", String::new(), 8),
    ] {
        let k = Knobs { extra_rig: extra, ..knobs("") };
        let k = if name.ends_with("read") { Knobs { verb: Verb::Read, ..k } } else { k };
        let (raw, r, dumped, d) = both(name, &k, &lumina(lcores));
        assert_same_reconstruction(name, &r, &d);
        for s in &d.summary.sources {
            let runs = s.lcore_runs.len();
            assert!((2..=lcores as usize).contains(&runs), "{name}: {} read as {runs} runs", s.name);
        }
        let report = check_dir(&d.dir, None).unwrap();
        assert!(report.complete, "{name}: {}", report.render());
        assert_same_analysis(name, &raw, &dumped);
    }
}

/// Copies a dump host received out of order stay so within their lcore's records: a run
/// is cut there too (one more source), and the trace is the raw dumps' still.
#[test]
fn copies_reordered_before_the_dumper_reconstruct_as_the_raw_dumps() {
    let faults = "    reorder: [{dump-host: 0, probability: 0.05}, {dump-host: 1, probability: 0.02}]\n";
    let k = Knobs { faults: faults.to_string(), msgs: 20, ..knobs("") };
    let (raw, r, dumped, d) = both("lumd-reorder", &k, &lumina(4));
    assert!(!dumped.result.truth.faults.reordered.is_empty(), "some copies were swapped");
    assert_same_reconstruction("lumd-reorder", &r, &d);
    assert!(check_dir(&d.dir, None).unwrap().complete);
    assert_same_analysis("lumd-reorder", &raw, &dumped);
}

#[test]
fn a_dump_host_with_one_lcore_is_one_run() {
    let extra = "  dumper: lumina\n  dumper-lcores: 4\n";
    let yaml = knobs(extra).yaml().replacen("  - {weight: 2}\n", "  - {weight: 2, lcores: 1}\n", 1);
    assert!(yaml.contains("lcores: 1"), "{yaml}");
    let run = rig_run_yaml("lumd-one-lcore", &yaml);
    let rec = reconstructed(&run);
    let runs: Vec<usize> = rec.summary.sources.iter().map(|s| s.lcore_runs.len()).collect();
    assert_eq!(runs[1], 0, "a single run is read whole: {runs:?}");
    assert!(rec.summary.sources.iter().all(|s| s.read_as == ReadAs::LuminaDumper));
    assert!(check_dir(&rec.dir, None).unwrap().complete);
}

#[test]
fn a_copy_lost_before_the_dumper_is_found_with_its_host() {
    for (name, first) in [("lumd-lost", ""), ("lumd-lost-wrap", "  first-mirror-seq: 2147483620\n")] {
        let faults = "    lose-mirror-copies:\n    - {dump-host: 1, count: 3}\n    - {dump-host: 2, count: 1}\n";
        let k = Knobs { faults: faults.to_string(), extra_rig: format!("{first}{}", lumina(4)), ..knobs("") };
        let run = rig_run(name, &k);
        let mut lost = run.result.truth.faults.lost_mirror_copies.clone();
        lost.sort_unstable();
        assert_eq!(lost.len(), 4, "{name}");
        let out = reconstruct(&run);
        let r = check_dir(&out, None).unwrap();
        assert!(!r.complete, "{name}");
        let b = r.balance.as_ref().expect("WRR 1:2:1 is inferable");
        assert_eq!((b.period, b.level.as_str()), (4, "source"), "{name}: {}", r.render());
        let on_host = |seq: u32| run.result.packets.iter().find(|p| p.seq == seq).and_then(|p| p.dump_host);
        let mut found = Vec::new();
        for m in &r.missing {
            assert_eq!(m.range.count, 1, "{name}: {m:?}");
            let host = on_host(m.range.first).expect("sent");
            assert_eq!(m.expected_at, [format!("run/dump-{host}.pcap")], "{name}: {m:?}");
            found.push(m.range.first);
        }
        found.sort_unstable();
        assert_eq!(found, lost, "{name}: {}", r.render());
    }
}

/// The review's case (F1): `rocescope reconstruct` on the dumper's files read no copy (every
/// frame "other") and exited 0; at scale, one source per file with the records grouped by
/// lcore overflowed the reorder window (late copies). Now: every copy, no late one even
/// with a window far below an lcore's run.
#[test]
fn the_users_dumper_files_are_read_and_their_lcores_merged_in_a_small_window() {
    let k = Knobs { conns: 4, msgs: 20, msg_pkts: 16, dump_hosts: vec![1, 1], ..Knobs::default() };
    let run = rig_run("lumd-user", &Knobs { extra_rig: lumina(4), ..k.clone() });
    let sent = run.result.stats.mirrored;
    let out = scratch("lumd-user-out").join("out");
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args([Path::new("reconstruct"), &run.dir, Path::new("-o"), &out])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&cli.stdout);
    assert!(cli.status.success(), "{text}");
    assert!(text.contains("read as Lumina's dumper writes it"), "{text}");
    let s = Reconstruction::load(&out).unwrap().summary;
    assert_eq!((s.mirrored, s.missing_total), (sent, 0), "{text}");
    assert!(s.sources.iter().all(|f| f.stats.other == 0 && f.stats.malformed == 0), "{text}");

    let opts = Options { window: 16, ..Options::default() };
    let small = scratch("lumd-user-small").join("out");
    let s = reconstruct_to(std::slice::from_ref(&run.dir), &small, &opts).unwrap();
    assert!(s.sources.iter().all(|f| f.lcore_runs.iter().all(|r| r.stats.mirrored > 16)));
    assert_eq!((s.mirrored, s.issue_counts.len()), (sent, 0), "{:?}", s.issue_counts);
    let raw = rig_run("lumd-user-raw", &Knobs { extra_rig: RAW.to_string(), ..k });
    let raw_out = scratch("lumd-user-raw-out").join("out");
    reconstruct_to(std::slice::from_ref(&raw.dir), &raw_out, &opts).unwrap();
    assert!(std::fs::read(small.join("records.rsr")).unwrap() == std::fs::read(raw_out.join("records.rsr")).unwrap());
}

/// A µs pcap of the dumper's records (timestamps cut to µs, as a conversion writes them)
/// is recognised too, and gives the same records: the switch time is the dst MAC's.
#[test]
fn a_microsecond_copy_of_a_dumper_file_reads_the_same() {
    let run = rig_run("lumd-us", &knobs(&lumina(4)));
    let want = records(&reconstructed(&run));
    for f in std::fs::read_dir(&run.dir).unwrap().map(|e| e.unwrap().path()) {
        if f.extension().is_some_and(|e| e == "pcap") {
            std::fs::write(&f, to_microseconds(&std::fs::read(&f).unwrap())).unwrap();
        }
    }
    let rec = reconstructed(&run);
    assert!(rec.summary.sources.iter().all(|s| s.read_as == ReadAs::LuminaDumper && s.lcore_runs.len() > 1));
    assert!(records(&rec) == want, "the µs file's records differ");
}

/// A little-endian ns pcap rewritten with µs timestamps (truncated).
fn to_microseconds(ns: &[u8]) -> Vec<u8> {
    let mut out = ns.to_vec();
    out[..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    let mut at = 24;
    while at + 16 <= out.len() {
        let frac = u32::from_le_bytes(out[at + 4..at + 8].try_into().unwrap());
        out[at + 4..at + 8].copy_from_slice(&(frac / 1000).to_le_bytes());
        at += 16 + u32::from_le_bytes(out[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    out
}

/// A copy as the dumper writes it, headers only as far as peeking needs: IPv4 UDP to 4791,
/// seq in the src MAC, the timestamp in the dst MAC, TTL 0.
fn dumped_frame(seq: u32, ts: u64) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 20 + 8 + 12 + 4];
    f[0..6].copy_from_slice(&ts.to_be_bytes()[2..]);
    f[8..12].copy_from_slice(&seq.to_be_bytes());
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    let ip_len = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[23] = 17;
    f[36..38].copy_from_slice(&4791u16.to_be_bytes());
    f[38..40].copy_from_slice(&24u16.to_be_bytes());
    f
}

/// A little-endian ns pcap of `(timestamp, frame)` records.
fn ns_pcap(records: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [0xa1b2_3c4du32, 0x0004_0002, 0, 0, 65_535, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (ts, f) in records {
        let head = [(ts / 1_000_000_000) as u32, (ts % 1_000_000_000) as u32, f.len() as u32, f.len() as u32];
        head.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        out.extend_from_slice(f);
    }
    out
}

proptest::proptest! {
    /// Seqs spread over lcores and written lcore by lcore, from seq 1 or across the wrap:
    /// the runs found start exactly where an lcore's first seq lies below the last one
    /// before it, and every run read on its own is increasing on the seq ring.
    #[test]
    fn the_runs_of_a_dumper_file_are_its_lcores(
        lcore_of in proptest::collection::vec(0usize..6, 1..300),
        start in proptest::prop_oneof![proptest::strategy::Just(1u32), 0x7fff_ff00u32..=0x7fff_ffff],
    ) {
        use control::input::{dump_runs, is_lumina_dump};
        use control::pcap::PcapRecords;
        let cfg = wire::frame::ClassifyConfig::default();
        let wire = |i: usize| ((u64::from(start) - 1 + i as u64) % 0x7fff_ffff + 1) as u32;
        let mut lcores: Vec<Vec<u32>> = vec![Vec::new(); 6];
        lcore_of.iter().enumerate().for_each(|(i, &l)| lcores[l].push(wire(i)));
        let ts = |seq: u32| 1_000_000 + u64::from(seq);
        let records: Vec<(u64, Vec<u8>)> =
            lcores.iter().flatten().map(|&seq| (ts(seq), dumped_frame(seq, ts(seq)))).collect();
        let bytes = ns_pcap(&records);
        let r = PcapRecords::new(&bytes).unwrap();
        proptest::prop_assert!(is_lumina_dump(r.clone(), &cfg));
        // Records not stamped with their dst MAC's time are no dumper's (a plain capture).
        let off: Vec<(u64, Vec<u8>)> = records.iter().map(|(t, f)| (t + 1, f.clone())).collect();
        let plain = ns_pcap(&off);
        proptest::prop_assert!(!is_lumina_dump(PcapRecords::new(&plain).unwrap(), &cfg));
        let starts = dump_runs(r.clone(), &cfg);

        let before = |a: u32, b: u32| wire::mirror::seq_distance(a, b) < 0x7fff_ffff / 2 && a != b;
        // Far before: more than the local disorder a run may hold.
        let far_before = |a: u32, b: u32| before(a, b) && wire::mirror::seq_distance(a, b) > control::input::LOCAL_DISORDER;
        let mut want = vec![24u64];
        let mut at = 24u64;
        let mut last: Option<u32> = None;
        for seqs in lcores.iter().filter(|l| !l.is_empty()) {
            if last.is_some_and(|l| far_before(seqs[0], l)) {
                want.push(at);
            }
            at += seqs.len() as u64 * (16 + records[0].1.len() as u64);
            last = seqs.last().copied();
        }
        proptest::prop_assert_eq!(&starts, &want);
        let ends = starts.iter().skip(1).copied().chain([bytes.len() as u64]);
        for (&from, end) in starts.iter().zip(ends) {
            let seqs: Vec<u32> = r.clone().span(from, end).map(|p| u32::from_be_bytes(p.unwrap().data[8..12].try_into().unwrap())).collect();
            proptest::prop_assert!(seqs.windows(2).all(|w| !far_before(w[1], w[0])), "{:?}", seqs);
        }
    }

    /// Review (session 23): local disorder inside the lcores' streams (a swap every few
    /// dozen copies) made a run at every swap, and past 1,024 runs the file was read whole,
    /// every lcore after the first far behind the merge's window (83,616 `late` copies of
    /// 200 k). A swap is disorder within a run; only the lcores start runs.
    #[test]
    fn local_swaps_start_no_run(lcores in 2usize..5, every in 3usize..60, per in 200usize..2000) {
        use control::input::dump_runs;
        use control::pcap::PcapRecords;
        let cfg = wire::frame::ClassifyConfig::default();
        let ts = |seq: u32| 1_000_000 + u64::from(seq);
        let mut records = Vec::new();
        for l in 0..lcores {
            let mut seqs: Vec<u32> = (0..per).map(|i| (i * lcores + l + 1) as u32).collect();
            (0..per.saturating_sub(1)).step_by(every).for_each(|i| seqs.swap(i, i + 1));
            records.extend(seqs.into_iter().map(|seq| (ts(seq), dumped_frame(seq, ts(seq)))));
        }
        let bytes = ns_pcap(&records);
        let starts = dump_runs(PcapRecords::new(&bytes).unwrap(), &cfg);
        proptest::prop_assert_eq!(starts.len(), lcores);
    }

    /// Any bytes after a pcap header: telling, splitting and reading spans end without a
    /// panic, and the runs start in file order inside it.
    #[test]
    fn dumper_detection_survives_any_bytes(
        body in proptest::collection::vec(proptest::arbitrary::any::<u8>(), 0..3000),
        from in proptest::arbitrary::any::<u64>(),
        end in proptest::arbitrary::any::<u64>(),
    ) {
        use control::input::{dump_runs, is_lumina_dump};
        use control::pcap::PcapRecords;
        let cfg = wire::frame::ClassifyConfig::default();
        let mut bytes = ns_pcap(&[]);
        bytes.extend_from_slice(&body);
        let r = PcapRecords::new(&bytes).unwrap();
        let _ = is_lumina_dump(r.clone(), &cfg);
        let starts = dump_runs(r.clone(), &cfg);
        proptest::prop_assert!(starts.windows(2).all(|w| w[0] < w[1]) && starts.iter().all(|&s| s as usize <= bytes.len()));
        for p in r.span(from, end).take(5000).flatten() {
            proptest::prop_assert!((p.offset as usize) < bytes.len());
        }
    }
}
