//! Reconstruction against the testbed emulator's ground truth: the merged trace of a
//! run's dump hosts is the emulator's single ordered stream, copy for copy.

mod support;

use support::*;
use trace::record::flag;

#[test]
fn two_dump_hosts_merge_into_the_switch_order() {
    let knobs = Knobs { conns: 2, msgs: 6, dump_hosts: vec![1, 2], ..Knobs::default() };
    let run = rig_run("two-hosts", &knobs);
    let a = reconstructed(&run);
    let view = a.view();
    let truth: Vec<_> = run.result.packets.iter().filter(|p| p.dump_host.is_some()).collect();
    assert_eq!(view.records.len(), truth.len());
    for (r, t) in view.records.iter().zip(&truth) {
        assert_eq!((r.wire_seq(), r.switch_ts_ns, r.opcode()), (t.seq, t.switch_ts_ns, t.opcode), "{t:?}");
        assert_eq!(r.source as usize, t.dump_host.unwrap());
        assert!(r.has(flag::ICRC_OK), "restored copy seq {} must verify its ICRC", t.seq);
    }
    assert_eq!(a.summary.missing_total, 0);
    assert!(a.summary.issues.is_empty());
}

/// Which thread loads a batch's frames (the merge thread does when the main thread falls
/// behind) changes nothing: the output is the same byte for byte whichever does.
#[test]
fn the_output_does_not_depend_on_which_thread_loads_a_batch() {
    use control::reconstruct::{reconstruct_to, Options};
    let knobs = Knobs { conns: 8, msgs: 32, msg_pkts: 16, dump_hosts: vec![1, 1], ..Knobs::default() };
    let run = rig_run("load-either-thread", &knobs);
    let files = |name: &str, queued: usize| {
        let out = run.dir.parent().unwrap().join(name);
        let opts = Options { merge_loads_when_queued: queued, ..Options::default() };
        let summary = reconstruct_to(std::slice::from_ref(&run.dir), &out, &opts).unwrap();
        let read = |f: &str| std::fs::read(out.join(f)).unwrap();
        (summary.packets, read("trace.pcapng"), read(trace::record::FILE_NAME))
    };
    let by_merge = files("merge-loads", 0);
    let by_main = files("main-loads", usize::MAX);
    assert!(by_merge.0 > 3 * 1024, "several batches of 1024: {} packets", by_merge.0);
    assert!(by_merge == by_main, "trace.pcapng or records.rsr differ");
}

/// A copy whose mirror metadata is intact but whose headers beyond UDP are malformed (here
/// an IPv4 total length past the frame's end) keeps its place by seq: it is a copy the
/// switch made, so it is no gap in the trace, and it is recorded as malformed, unrestored.
/// Frames that are not copies are counted per source as other or malformed.
#[test]
fn a_copy_with_malformed_headers_keeps_its_seq_and_frames_are_counted_by_kind() {
    use rocescope_tests::scenario::Scenario;
    use trace::annotation::Annotation;
    let s = Scenario::lumina();
    let copies: Vec<usize> =
        (0..s.frames.len()).filter(|&i| matches!(s.expected[i].annotation, Annotation::Mirrored { .. })).collect();
    let bad = copies[copies.len() / 2..].iter().copied().find(|&i| s.frames[i][12..14] == [0x08, 0x00]).unwrap();
    let Annotation::Mirrored { seq: bad_seq, .. } = s.expected[bad].annotation else { unreachable!() };
    let mut frames = s.frames.clone();
    frames[bad][16..18].copy_from_slice(&[0xff, 0xff]);
    let malformed = s.expected.iter().filter(|e| matches!(e.annotation, Annotation::Malformed(_))).count() + 1;
    let other = frames.len() + 1 - copies.len() - malformed;
    frames.push(vec![0u8; 10]);

    let dir = scratch("malformed-copy");
    rocescope_tests::pcap::write(&dir.join("dump-0.pcap"), &frames).unwrap();
    let out = dir.join("out");
    control::reconstruct::reconstruct_to(&[dir.join("dump-0.pcap")], &out, &Default::default()).unwrap();
    let a = control::reconstruct::Reconstruction::load(&out).unwrap();

    assert_eq!((a.summary.mirrored, a.summary.missing_total), (copies.len() as u64, 0));
    assert!(a.summary.issues.is_empty(), "{:?}", a.summary.issues);
    let src = &a.summary.sources[0].stats;
    assert_eq!((src.mirrored, src.other, src.malformed), (copies.len() as u64, other as u64, malformed as u64));
    let view = a.view();
    let r = view.records.iter().find(|r| r.has(flag::MIRRORED) && r.wire_seq() == bad_seq).unwrap();
    assert_eq!(r.class(), trace::record::CLASS_MALFORMED);
    let seqs: Vec<u32> = view.records.iter().filter(|r| r.has(flag::MIRRORED)).map(|r| r.wire_seq()).collect();
    assert_eq!(seqs, s.seqs(), "copies in switch order, the malformed one in its place");
}

/// tshark reads trace.pcapng as the emulated switch sent it: one block per frame in switch
/// order, a copy's seq as its packet id, headers restored (tshark decodes RoCE again), and
/// a comment only where there is more to say than the seq (an event, or what a frame that
/// is not a copy is).
#[test]
fn tshark_reads_the_trace_in_switch_order_with_seqs_events_and_restored_headers() {
    use rocescope_tests::{scenario::Scenario, tshark};
    use trace::annotation::Annotation;
    if !tshark::available() {
        return;
    }
    let s = Scenario::lumina();
    let dir = scratch("tshark-trace");
    rocescope_tests::pcap::write(&dir.join("dump-0.pcap"), &s.frames).unwrap();
    let out = dir.join("out");
    control::reconstruct::reconstruct_to(&[dir.join("dump-0.pcap")], &out, &Default::default()).unwrap();
    let trace = out.join(control::reconstruct::TRACE_FILE);
    let rows = tshark::fields(&trace, &["frame.packet_id", "frame.comment", "frame.len", "infiniband.bth.psn"]);

    assert_eq!(rows.len(), s.expected.len());
    let mut buf = [0u8; trace::pcapng::MAX_COMMENT];
    let (mut plain, mut with_event) = (0, 0);
    for (i, (row, e)) in rows.iter().zip(&s.expected).enumerate() {
        let seq = match e.annotation {
            Annotation::Mirrored { seq, event } => {
                *(if event == wire::mirror::Event::None { &mut plain } else { &mut with_event }) += 1;
                seq
            }
            _ => 0,
        };
        assert_eq!(row[0], seq.to_string(), "frame {i}: packet id");
        assert_eq!(row[1].as_bytes(), e.annotation.comment(&mut buf), "frame {i}: comment");
        assert_eq!(row[2], e.recorded.len().to_string(), "frame {i}: length on the wire");
        if let Some(roce) = &e.roce {
            assert_eq!(row[3], roce.psn.to_string(), "frame {i}: PSN as tshark decodes the restored copy");
        }
    }
    assert!(plain > 0 && with_event > 0, "the scenario has copies with and without events");
}

/// A capture taken with a small snap length (`tcpdump -s 128`) says so in its file header,
/// and every longer frame's original length exceeds it: such a file is read whole (the pcap
/// reader used before refused it as damaged at its first record).
#[test]
fn a_dump_with_a_small_snap_length_is_read_whole() {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use rocescope_tests::scenario::Scenario;
    let s = Scenario::lumina();
    let dir = scratch("snaplen-128");
    let path = dir.join("dump-0.pcap");
    let header = PcapHeader { snaplen: 128, ..Default::default() };
    let mut w = PcapWriter::with_header(std::fs::File::create(&path).unwrap(), header).unwrap();
    for (i, f) in s.frames.iter().enumerate() {
        let t = std::time::Duration::from_micros(i as u64);
        w.write_packet(&PcapPacket::new(t, f.len() as u32, &f[..f.len().min(128)])).unwrap();
    }
    drop(w);
    assert!(s.frames.iter().any(|f| f.len() > 128), "some frames are trimmed");
    let out = dir.join("out");
    let summary = control::reconstruct::reconstruct_to(&[path], &out, &Default::default()).unwrap();
    assert!(summary.issues.is_empty(), "{:?}", summary.issues);
    assert_eq!(summary.packets, s.frames.len() as u64);
    assert_eq!(summary.mirrored as usize, s.seqs().len());
}

/// A pcapng input whose block holds more bytes than any frame (a damaged or hostile file)
/// is damage at that block, like an oversized record in a classic pcap: reading that file
/// stops there, and what came before it is in the trace. (Read on, a block larger than
/// `spool::MAX_APPEND` could overflow a nearly full output chunk.)
#[test]
fn an_oversized_pcapng_block_is_damage_not_a_crash() {
    use trace::pcapng::{shard_header, Epb};
    fn epb(data: &[u8]) -> Epb<'_> {
        Epb { interface_id: 0, timestamp_ns: 1, original_len: data.len() as u32, data, packet_id: 0, comment: &[] }
    }
    let mut file = shard_header(65_535, "eth0", "test", "test");
    let before = 3;
    for _ in 0..before {
        epb(&[0u8; 200]).append_to(&mut file);
    }
    let huge_at = file.len() as u64;
    epb(&vec![0u8; 600_000]).append_to(&mut file);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("capture.pcapng");
    std::fs::write(&input, &file).unwrap();
    let out = dir.path().join("out");
    let s = control::reconstruct::reconstruct_to(&[input], &out, &Default::default()).unwrap();
    assert_eq!(s.packets, before, "the frames before the damage are in the trace");
    assert_eq!(s.issues.len(), 1, "{:?}", s.issues);
    let issue = &s.issues[0];
    assert_eq!((issue["kind"].as_str(), issue["offset"].as_u64()), (Some("damaged"), Some(huge_at)), "{issue}");
    assert!(issue["what"].as_str().unwrap().contains("beyond any frame"), "{issue}");
}
