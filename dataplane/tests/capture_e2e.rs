//! End to end: the real `rocescope-dataplane` binary captures a Lumina-mirrored scenario
//! replayed through `net_pcap`, with 2 workers in both balancing modes, and everything it
//! wrote is checked frame by frame against the scenario's known answers — with our shard
//! reader, the manifest's counters and block CRCs, and tshark.

mod capture_support;

use capture_support::{capture, capture_fails, Run};
use rocescope_tests::scenario::{Expected, Scenario};
use rocescope_tests::{pcap, tshark};
use std::collections::BTreeMap;
use std::path::Path;
use trace::annotation::Annotation;
use trace::manifest::RunStatus;
use trace::reader::{verify_blocks, ShardReader};

/// The queue a NIC's RSS would pick for a frame, emulated for the two-file pcap device:
/// IPv4/UDP frames by their (random, for mirrored copies) source port, the rest queue 0.
fn rss_queue(frame: &[u8]) -> usize {
    let ipv4_udp = frame.len() >= 38 && frame[12..14] == [0x08, 0x00] && frame[23] == 17;
    if ipv4_udp {
        u16::from_be_bytes([frame[34], frame[35]]) as usize % 2
    } else {
        0
    }
}

/// Checks a run against the scenario, given which core each frame must have reached.
fn check(run: &Run, s: &Scenario, core_of: &[Option<usize>], stop_reason: &str, snaplen: usize) {
    let m = &run.manifest;
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(m.stop_reason.as_deref(), Some(stop_reason));
    assert_eq!(m.cores.len(), 2);
    let mut seen_seqs = Vec::new();
    for (c, core) in m.cores.iter().enumerate() {
        let mine: Vec<&Expected> =
            s.expected.iter().zip(core_of).filter(|(_, k)| **k == Some(c)).map(|(e, _)| e).collect();
        check_counters(core, &mine);
        let bytes = std::fs::read(run.dir.path().join(&core.shard)).expect("shard");
        assert_eq!(verify_blocks(&bytes, &core.blocks), vec![], "core {c} block CRCs");
        assert_eq!(core.shard_bytes, bytes.len() as u64);
        let packets: Vec<_> = ShardReader::new(&bytes).collect::<Result<_, _>>().expect("readable shard");
        assert_eq!(packets.len(), mine.len(), "core {c} packet count");
        for (p, e) in packets.iter().zip(&mine) {
            let caplen = e.recorded.len().min(snaplen);
            assert_eq!(p.annotation(), Some(e.annotation));
            assert_eq!(p.data, &e.recorded[..caplen], "bytes of {:?}", e.annotation);
            assert_eq!(p.original_len as usize, e.recorded.len());
            match e.annotation {
                Annotation::Mirrored { seq, .. } => {
                    assert_eq!(p.packet_id, Some(seq as u64));
                    assert_eq!(Some(p.timestamp_ns), e.switch_ts_ns);
                    seen_seqs.push(seq);
                }
                _ => {
                    assert_eq!(p.packet_id, Some(0));
                    let (start, end) = (m.started_unix_ns, m.finished_unix_ns.unwrap());
                    assert!((start..=end).contains(&p.timestamp_ns), "host time within the run");
                }
            }
        }
        check_with_tshark(&run.dir.path().join(&core.shard), &mine);
    }
    let mut expected_seqs: Vec<u32> = s
        .expected
        .iter()
        .zip(core_of)
        .filter(|(_, k)| k.is_some())
        .filter_map(|(e, _)| match e.annotation {
            Annotation::Mirrored { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    seen_seqs.sort_unstable();
    expected_seqs.sort_unstable();
    assert_eq!(seen_seqs, expected_seqs, "every mirror seq exactly once across the shards");
}

fn check_counters(core: &trace::manifest::CoreRecord, mine: &[&Expected]) {
    let n = mine.len() as u64;
    assert_eq!(core.rx - core.over_limit, n);
    assert_eq!((core.written, core.buffer_drops, core.write_failed), (n, 0, 0));
    let mut classes: BTreeMap<String, u64> = BTreeMap::new();
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for e in mine {
        match e.annotation {
            Annotation::Mirrored { event, .. } => {
                *classes.entry("mirrored_roce".into()).or_default() += 1;
                *events.entry(event.name().into()).or_default() += 1;
            }
            Annotation::Class(c) => *classes.entry(c.name().into()).or_default() += 1,
            Annotation::Malformed(k) => {
                *classes.entry("malformed".into()).or_default() += 1;
                *errors.entry(k.name().into()).or_default() += 1;
            }
        }
    }
    let nonzero = |m: &BTreeMap<String, u64>| {
        m.iter().filter(|(_, v)| **v > 0).map(|(k, v)| (k.clone(), *v)).collect::<BTreeMap<_, _>>()
    };
    assert_eq!(nonzero(&core.classes), classes);
    assert_eq!(nonzero(&core.events), events);
    assert_eq!(core.parse_errors, errors);
    let seqs: Vec<u32> = mine
        .iter()
        .filter_map(|e| match e.annotation {
            Annotation::Mirrored { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!((core.first_seq, core.last_seq), (seqs.first().copied(), seqs.last().copied()));
}

/// tshark must decode the restored headers exactly as the scenario sent them.
fn check_with_tshark(shard: &Path, mine: &[&Expected]) {
    if !tshark::available() {
        return;
    }
    let fields = [
        "frame.packet_id",
        "frame.comment",
        "frame.time_epoch",
        "ip.ttl",
        "ipv6.hlim",
        "ip.dsfield.ecn",
        "ipv6.tclass.ecn",
        "udp.srcport",
        "udp.dstport",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.bth.m",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.msn",
        "infiniband.reth.va",
        "infiniband.reth.r_key",
        "infiniband.reth.dmalen",
        "_ws.malformed",
    ];
    let rows = tshark::fields(shard, &fields);
    assert_eq!(rows.len(), mine.len());
    for (row, e) in rows.iter().zip(mine) {
        let col = |name: &str| row[fields.iter().position(|f| *f == name).unwrap()].as_str();
        let mut comment = [0u8; trace::pcapng::MAX_COMMENT];
        assert_eq!(col("frame.comment").as_bytes(), e.annotation.comment(&mut comment));
        let Some(r) = e.roce else { continue };
        let Annotation::Mirrored { seq, .. } = e.annotation else { unreachable!() };
        let ts = e.switch_ts_ns.unwrap();
        let ctx = format!("seq {seq}: {row:?}");
        assert_eq!(col("frame.packet_id"), seq.to_string(), "{ctx}");
        assert_eq!(col("frame.time_epoch"), format!("{}.{:09}", ts / 1_000_000_000, ts % 1_000_000_000), "{ctx}");
        let ttl = if col("ip.ttl").is_empty() { col("ipv6.hlim") } else { col("ip.ttl") };
        let ecn = if col("ip.dsfield.ecn").is_empty() { col("ipv6.tclass.ecn") } else { col("ip.dsfield.ecn") };
        assert_eq!((num(ttl), num(ecn)), (r.ttl as u64, r.ecn as u64), "{ctx}");
        assert_eq!((num(col("udp.srcport")), num(col("udp.dstport"))), (r.udp_src_port as u64, 4791), "{ctx}");
        assert_eq!(num(col("infiniband.bth.opcode")), r.opcode as u64, "{ctx}");
        assert_eq!(num(col("infiniband.bth.destqp")), r.dest_qp as u64, "{ctx}");
        assert_eq!(num(col("infiniband.bth.psn")), r.psn as u64, "{ctx}");
        assert_eq!(num(col("infiniband.bth.m")), r.mig_req as u64, "{ctx}");
        let aeth = (!col("infiniband.aeth.syndrome").is_empty())
            .then(|| (num(col("infiniband.aeth.syndrome")) as u8, num(col("infiniband.aeth.msn")) as u32));
        assert_eq!(aeth, r.aeth, "{ctx}");
        let reth = (!col("infiniband.reth.va").is_empty()).then(|| {
            (
                num(col("infiniband.reth.va")),
                num(col("infiniband.reth.r_key")) as u32,
                num(col("infiniband.reth.dmalen")) as u32,
            )
        });
        assert_eq!(reth, r.reth, "{ctx}");
        assert_eq!(col("_ws.malformed"), "", "tshark finds a restored copy malformed: {ctx}");
    }
}

/// tshark prints some integers in hex, some in decimal.
fn num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

#[test]
fn captures_a_mirrored_scenario_exactly_in_both_balancing_modes() {
    let s = Scenario::lumina_with_truncations();
    let scratch = tempfile::Builder::new().prefix("rs-e2e-input-").tempdir().unwrap();
    let work = scratch.path();

    // Dispatch: one queue, a dispatcher lcore deals frame i to worker i % 2 (Lumina §3.4).
    let all = work.join("all.pcap");
    pcap::write(&all, &s.frames).unwrap();
    let vdev = format!("net_pcap0,rx_pcap={}", all.display());
    let run = capture("dispatch", 4, &vdev, &["--balance", "dispatch"]);
    let core_of: Vec<_> = (0..s.frames.len()).map(|i| Some(i % 2)).collect();
    check(&run, &s, &core_of, "idle", 128);
    let d = run.manifest.dispatcher.as_ref().expect("dispatcher record");
    assert_eq!((d.rx, d.over_limit, d.ring_drops.clone()), (s.frames.len() as u64, 0, vec![0, 0]));
    assert_eq!(run.manifest.port.ipackets, s.frames.len() as u64);

    // RSS: two queues (one pcap file each, split as a NIC's RSS would), one worker each.
    let queues: Vec<usize> = s.frames.iter().map(|f| rss_queue(f)).collect();
    let mut vdev = String::from("net_pcap0");
    for q in 0..2 {
        let path = work.join(format!("q{q}.pcap"));
        let frames: Vec<Vec<u8>> =
            s.frames.iter().zip(&queues).filter(|(_, k)| **k == q).map(|(f, _)| f.clone()).collect();
        assert!(frames.len() > 10, "both queues carry traffic");
        pcap::write(&path, &frames).unwrap();
        vdev.push_str(&format!(",rx_pcap={}", path.display()));
    }
    let run = capture("rss", 3, &vdev, &["--balance", "rss"]);
    let core_of: Vec<_> = queues.iter().map(|&q| Some(q)).collect();
    check(&run, &s, &core_of, "idle", 128);
    assert_eq!(run.manifest.port.ipackets, s.frames.len() as u64);
    assert_eq!(run.manifest.cores.iter().map(|c| c.rx_queue).collect::<Vec<_>>(), vec![Some(0), Some(1)]);
    // Review (session 23): dispatch read only the first of the vdev's inputs (one per
    // queue), and its manifest said complete; fewer RSS workers than inputs likewise.
    let run = capture("dispatch-2q", 4, &vdev, &["--balance", "dispatch"]);
    assert_eq!((run.manifest.port.rx_queues, run.manifest.port.ipackets), (2, s.frames.len() as u64));
    assert_eq!(run.manifest.total(|c| c.written), s.frames.len() as u64);
    let err = capture_fails("rss-1of2", 2, &vdev, &["--balance", "rss"]);
    assert!(err.contains("has 2 inputs, one per RX queue, and 1 worker would read only 1"), "{err}");

    // --max-packets: exactly the first N frames are recorded, the rest counted over the limit.
    let limit = 21;
    let vdev = format!("net_pcap0,rx_pcap={}", all.display());
    let run = capture("limit", 4, &vdev, &["--balance", "dispatch", "--max-packets", &limit.to_string()]);
    let core_of: Vec<_> = (0..s.frames.len()).map(|i| (i < limit).then_some(i % 2)).collect();
    check(&run, &s, &core_of, "max_packets", 128);
    let d = run.manifest.dispatcher.as_ref().unwrap();
    assert_eq!(d.rx - d.over_limit, limit as u64);
    assert_eq!(run.manifest.total(|c| c.written), limit as u64);

    // Untrimmed: every restored copy must verify its ICRC again unless the switch corrupted
    // it (DESIGN.md: a strong end-to-end check of restoration).
    let run = capture("full", 4, &vdev, &["--balance", "dispatch", "--snaplen", "65535"]);
    let core_of: Vec<_> = (0..s.frames.len()).map(|i| Some(i % 2)).collect();
    check(&run, &s, &core_of, "idle", 65535);
    let mut verified = 0;
    for core in &run.manifest.cores {
        let bytes = std::fs::read(run.dir.path().join(&core.shard)).unwrap();
        for p in ShardReader::new(&bytes).map(Result::unwrap) {
            if let Some(Annotation::Mirrored { event, seq }) = p.annotation() {
                assert_eq!(p.data.len(), p.original_len as usize, "untrimmed");
                let ok = wire::icrc::verify_frame(p.data).expect("a RoCE frame");
                assert_eq!(ok, event != wire::mirror::Event::Corrupt, "ICRC of restored seq {seq} ({event:?})");
                verified += ok as usize;
            }
        }
    }
    assert!(verified > 20);
}
