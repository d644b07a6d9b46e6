//! `rocescope verify` on run directories built with the shard encoder, intact and damaged
//! in each way it must detect, and the capture drops their manifests report to `check`.
//! No DPDK needed.

use control::verify::verify_run;
use std::path::{Path, PathBuf};
use tempfile::TempDir;
use trace::annotation::Annotation;
use trace::manifest::{BlockRecord, CaptureConfig, CoreRecord, Manifest, PortRecord, RunStatus};
use trace::pcapng::{shard_header, Epb, MAX_COMMENT};

/// A run of one core: the scenario's frames written as the dataplane writes them, in
/// blocks of `per_block` packets, in a directory removed when the `TempDir` drops (on a
/// panic too).
fn make_run(name: &str, per_block: usize) -> (TempDir, Manifest) {
    let dir = tempfile::Builder::new().prefix(&format!("rs-verify-{name}-")).tempdir().unwrap();
    let s = rocescope_tests::scenario::Scenario::lumina();
    let mut file = shard_header(128, "port0", "test", "rocescope-dataplane test");
    filler(&mut file);
    let mut blocks =
        vec![BlockRecord { offset: 0, len: file.len() as u64, crc32c: trace::manifest::block_crc(&file), packets: 0 }];
    let mut core = CoreRecord { shard: "shard-000.pcapng".into(), ..Default::default() };
    for chunk in s.expected.chunks(per_block) {
        let start = file.len();
        for e in chunk {
            let mut comment = [0u8; MAX_COMMENT];
            let data = &e.recorded[..e.recorded.len().min(128)];
            let epb = Epb {
                interface_id: 0,
                timestamp_ns: e.switch_ts_ns.unwrap_or(1),
                original_len: e.recorded.len() as u32,
                data,
                packet_id: match e.annotation {
                    Annotation::Mirrored { seq, .. } => seq as u64,
                    _ => 0,
                },
                comment: e.annotation.comment(&mut comment),
            };
            epb.append_to(&mut file);
            count(&mut core, e.annotation);
        }
        filler(&mut file);
        let bytes = &file[start..];
        blocks.push(BlockRecord {
            offset: start as u64,
            len: bytes.len() as u64,
            crc32c: trace::manifest::block_crc(bytes),
            packets: chunk.len() as u64,
        });
    }
    core.rx = s.expected.len() as u64;
    core.written = core.rx;
    core.shard_bytes = file.len() as u64;
    core.blocks = blocks;
    std::fs::write(dir.path().join(&core.shard), &file).unwrap();
    let m = Manifest {
        format: trace::manifest::FORMAT.into(),
        version: trace::manifest::VERSION,
        writer: "test".into(),
        status: RunStatus::Complete,
        started_unix_ns: 0,
        finished_unix_ns: Some(1),
        stop_reason: Some("idle".into()),
        config: CaptureConfig {
            snaplen: 128,
            balance: "rss".into(),
            workers: 1,
            mirror_port: 9741,
            roce_port: 4791,
            buffer_bytes_per_core: 0,
            max_packets: None,
            writer_cpus: vec![],
            eal_args: vec![],
        },
        port: PortRecord { ipackets: core.rx, ..Default::default() },
        dispatcher: None,
        cores: vec![core],
    };
    m.store(dir.path()).unwrap();
    (dir, m)
}

/// Ends a block as the dataplane does: padded to a multiple of 4 KiB with a padding
/// block, which readers step over.
fn filler(file: &mut Vec<u8>) {
    let mut gap = (4096 - file.len() % 4096) % 4096;
    if gap == 0 {
        return;
    }
    if gap < trace::pcapng::PADDING_BARE {
        gap += 4096;
    }
    trace::pcapng::put_padding(file, gap);
}

fn count(core: &mut CoreRecord, a: Annotation) {
    if let Annotation::Mirrored { event, .. } = a {
        *core.events.entry(event.name().into()).or_default() += 1;
    }
    *core.classes.entry(a.class_name().into()).or_default() += 1;
}

fn problems(dir: &Path) -> Vec<String> {
    let r = verify_run(dir).unwrap();
    let mut all = r.problems.clone();
    for s in &r.shards {
        all.extend(s.problems.iter().cloned());
    }
    assert_eq!(r.intact(), all.is_empty());
    all
}

fn shard(dir: &Path) -> PathBuf {
    dir.join("shard-000.pcapng")
}

#[test]
fn an_intact_run_verifies() {
    let (dir, m) = make_run("intact", 7);
    assert_eq!(problems(dir.path()), Vec::<String>::new());
    let r = verify_run(dir.path()).unwrap();
    assert_eq!(r.shards[0].packets, m.cores[0].written);
    assert!(r.to_string().contains("intact"));
}

#[test]
fn a_flipped_byte_is_located_to_its_block() {
    let (dir, m) = make_run("flip", 7);
    let victim = m.cores[0].blocks[2];
    let mut bytes = std::fs::read(shard(dir.path())).unwrap();
    bytes[victim.offset as usize + 40] ^= 0x01; // inside packet data: still parses
    std::fs::write(shard(dir.path()), &bytes).unwrap();
    let p = problems(dir.path());
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with(&format!("block 2 (bytes {}..{}) is damaged", victim.offset, victim.offset + victim.len)),
        "{p:?}"
    );
    assert!(p[0].ends_with(&format!("its {} packets are not read", victim.packets)), "{p:?}");
}

/// A block whose CRC fails cannot say what it held: its packets are counted as the
/// manifest lists them, unread (as `reconstruct` leaves them), and nothing read from its
/// bytes is reported as if it were the capture's.
#[test]
fn a_damaged_blocks_packets_are_not_counted_or_read() {
    let (dir, m) = make_run("flip-id", 7);
    let core = &m.cores[0];
    let victim = core.blocks[2];
    let mut bytes = std::fs::read(shard(dir.path())).unwrap();
    // The first packet's block: its first option, after the padded data, is its packet
    // id. Changed into an unknown option, the packet reads as a frame with no id and no
    // annotation: a packet id problem and two class counts off, were it read.
    let at = victim.offset as usize;
    let caplen = u32::from_le_bytes(bytes[at + 20..at + 24].try_into().unwrap()) as usize;
    let option = at + 28 + caplen.next_multiple_of(4);
    assert_eq!(u16::from_le_bytes([bytes[option], bytes[option + 1]]), 5, "epb_packetid");
    bytes[option] ^= 0x40;
    std::fs::write(shard(dir.path()), &bytes).unwrap();
    let p = problems(dir.path());
    assert_eq!(p.len(), 1, "only the CRC, nothing its damaged bytes now say: {p:?}");
    assert!(p[0].contains("is damaged") && p[0].contains(&format!("its {} packets", victim.packets)), "{p:?}");
    let r = verify_run(dir.path()).unwrap();
    assert_eq!((r.shards[0].packets, r.shards[0].unread_packets), (core.written - victim.packets, victim.packets));
    let text = r.to_string();
    assert!(text.contains(&format!("(and {} in damaged blocks, not read)", victim.packets)), "{text}");
}

#[test]
fn reconstruct_skips_a_damaged_block_and_reads_the_intact_ones_after_it() {
    let (dir, m) = make_run("flip-reconstruct", 7);
    let blocks = &m.cores[0].blocks;
    let victim = blocks[2];
    let mut bytes = std::fs::read(shard(dir.path())).unwrap();
    bytes[victim.offset as usize + 40] ^= 0x01;
    std::fs::write(shard(dir.path()), &bytes).unwrap();
    let out = dir.path().join("out");
    let s = control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &Default::default()).unwrap();
    // Block 0 is the section header: every packet but block 2's, and that one named.
    let all: u64 = blocks.iter().map(|b| b.packets).sum();
    assert_eq!(s.packets, all - victim.packets, "{:?}", s.issues);
    assert_eq!(s.issues.len(), 1, "{:?}", s.issues);
    assert_eq!((&s.issues[0]["kind"], &s.issues[0]["offset"]), (&"damaged".into(), &victim.offset.into()));
    let what = s.issues[0]["what"].as_str().unwrap();
    assert!(what.contains(&format!("{} packets", victim.packets)) && what.ends_with("not read"), "{what}");
    assert_eq!(s.missing_total, victim.packets, "its copies are the trace's only gap");
    let r = control::check::check_dir(&out, None).unwrap();
    assert!(!r.complete, "{}", r.render());
}

#[test]
fn a_shard_or_a_trace_given_as_a_file_is_read_by_its_annotations() {
    let (dir, m) = make_run("shard-file", 7);
    let copies = m.cores[0].classes["mirrored_roce"];
    let reconstruct = |input: PathBuf, out: &str| {
        let out = dir.path().join(out);
        let s = control::reconstruct::reconstruct_to(&[input], &out, &Default::default()).unwrap();
        (s, out)
    };
    let (whole, out) = reconstruct(dir.path().to_path_buf(), "out-run");
    assert_eq!(whole.mirrored, copies);
    // The shard alone (no manifest, so no block check), then the reconstruction's own
    // trace.pcapng: the same copies, in the same order, none missing.
    let (shard, _) = reconstruct(shard(dir.path()), "out-shard");
    let (again, _) = reconstruct(out.join(control::reconstruct::TRACE_FILE), "out-trace");
    for s in [&shard, &again] {
        assert_eq!(s.sources[0].format, control::input::Format::Shard);
        assert_eq!((s.packets, s.mirrored, s.missing_total), (whole.packets, copies, 0), "{:?}", s.issues);
        assert_eq!((s.first_seq, s.last_seq), (whole.first_seq, whole.last_seq));
    }
}

#[test]
fn a_reconstruction_refuses_to_overwrite_its_own_input() {
    let (dir, _) = make_run("own-input", 7);
    let out = dir.path().join("out");
    let opts = Default::default();
    control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &opts).unwrap();
    let trace = out.join(control::reconstruct::TRACE_FILE);
    let before = std::fs::read(&trace).unwrap();
    let err = control::reconstruct::reconstruct_to(std::slice::from_ref(&trace), &out, &opts).unwrap_err();
    assert!(matches!(err, control::reconstruct::ReconstructError::InputIsOutput(_)), "{err}");
    assert_eq!(std::fs::read(&trace).unwrap(), before, "the trace is untouched");
    // A shard the manifest lists but that is gone: nothing of the last run is truncated.
    std::fs::remove_file(shard(dir.path())).unwrap();
    assert!(control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &opts).is_err());
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    // Once a run has begun writing, the last run's summary is gone: a run that fails
    // then leaves none beside its unfinished outputs.
    assert!(out.join(control::reconstruct::SUMMARY_FILE).exists());
    let _sink = control::reconstruct::FileSink::create(&out, &Default::default(), true).unwrap();
    assert!(!out.join(control::reconstruct::SUMMARY_FILE).exists());
    assert!(control::check::check_dir(&out, None).is_err(), "no summary: nothing to check");
}

#[test]
fn a_gap_between_blocks_is_reported_where_reading_stops() {
    let (dir, mut m) = make_run("gap-offset", 7);
    let blocks = m.cores[0].blocks.clone();
    // The manifest puts block 2 eight bytes later than block 1 ends.
    m.cores[0].blocks[2].offset += 8;
    m.store(dir.path()).unwrap();
    let out = dir.path().join("out");
    let s = control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &Default::default()).unwrap();
    let stop = blocks[1].offset + blocks[1].len;
    assert_eq!(s.packets, blocks[1].packets, "{:?}", s.issues);
    let offsets: Vec<_> = s.issues.iter().map(|i| i["offset"].as_u64()).collect();
    assert!(offsets.contains(&Some(stop)), "{:?}", s.issues);
}

#[test]
fn truncation_and_appended_bytes_are_found() {
    let (dir, m) = make_run("truncate", 7);
    let bytes = std::fs::read(shard(dir.path())).unwrap();
    let last = *m.cores[0].blocks.last().unwrap();
    // Cut inside the last block's first packet (a cut in its padding: below).
    std::fs::write(shard(dir.path()), &bytes[..last.offset as usize + 40]).unwrap();
    let p = problems(dir.path());
    let lost = last.packets.to_string();
    let cut = format!("block {}", m.cores[0].blocks.len() - 1);
    let unread = format!("its {lost} packets are not read");
    assert!(p.iter().any(|x| x.contains(&cut) && x.contains("beyond the end") && x.contains(&unread)), "{p:?}");
    assert!(p.iter().any(|x| x.contains(&format!("the manifest says {}", last.offset + last.len))), "{p:?}");
    // What is left of the cut block is not read: the packets before it are all there is.
    assert_eq!(p.len(), 2, "{p:?}");
    let r = verify_run(dir.path()).unwrap();
    assert_eq!((r.shards[0].packets, r.shards[0].unread_packets), (m.cores[0].written - last.packets, last.packets));

    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0u8; 12]);
    std::fs::write(shard(dir.path()), &longer).unwrap();
    let p = problems(dir.path());
    assert!(p.iter().any(|x| x.contains(&format!("12 bytes from offset {}", bytes.len()))), "{p:?}");
}

fn reconstruct(dir: &Path) -> (control::reconstruct::Summary, PathBuf) {
    let out = dir.join("out");
    let s = control::reconstruct::reconstruct_to(&[dir.to_path_buf()], &out, &Default::default()).unwrap();
    (s, out)
}

/// One changed byte in the padding of block 0 (the section and interface headers): the
/// block fails its CRC and is reported, but its headers still frame the blocks after it,
/// whose CRCs vouch for their packets (they were all lost as "before any section header").
#[test]
fn a_damaged_header_block_still_frames_the_intact_blocks_after_it() {
    let (dir, m) = make_run("header-pad", 7);
    let header = m.cores[0].blocks[0];
    let mut bytes = std::fs::read(shard(dir.path())).unwrap();
    bytes[header.len as usize - 100] = b'!';
    std::fs::write(shard(dir.path()), &bytes).unwrap();
    let p = problems(dir.path());
    assert!(p.len() == 1 && p[0].starts_with("block 0 (bytes 0..4096) is damaged"), "{p:?}");
    let (s, out) = reconstruct(dir.path());
    assert_eq!(s.packets, m.cores[0].written, "{:?}", s.issues);
    assert_eq!(s.issues.len(), 1, "{:?}", s.issues);
    assert_eq!((&s.issues[0]["kind"], &s.issues[0]["offset"]), (&"damaged".into(), &0.into()));
    let what = s.issues[0]["what"].as_str().unwrap();
    assert!(what.contains("CRC-32C") && what.contains("section and interface headers"), "{what}");
    let r = control::check::check_dir(&out, None).unwrap();
    assert!(!r.complete, "the damage keeps the verdict: {}", r.render());
}

/// Headers a damaged block gives that would change how later packets read (here the
/// timestamp resolution) are not taken: those packets are not read, and that is reported.
#[test]
fn a_damaged_header_block_that_changes_the_interface_frames_nothing() {
    let (dir, m) = make_run("header-tsresol", 7);
    let mut bytes = std::fs::read(shard(dir.path())).unwrap();
    let tsresol = [9u16.to_le_bytes(), 1u16.to_le_bytes()].concat(); // option 9, length 1
    let at = bytes.windows(4).position(|w| w == tsresol).unwrap() + 4;
    bytes[at] = 6; // microseconds
    std::fs::write(shard(dir.path()), &bytes).unwrap();
    let (s, _) = reconstruct(dir.path());
    assert_eq!(s.packets, 0, "{:?}", s.issues);
    let whats: Vec<&str> = s.issues.iter().filter_map(|i| i["what"].as_str()).collect();
    assert!(whats[0].ends_with("; not read") && !whats[0].contains("headers"), "{whats:?}");
    assert!(whats.iter().any(|w| w.contains("before any section header")), "{whats:?}");
    assert!(m.cores[0].written > 0);
}

/// A shard cut inside its last block's trailing padding: the padding's bytes follow from
/// its length, so the block's CRC is checked with it restored and its packets are kept;
/// the cut is reported (the shard is still truncated).
#[test]
fn a_cut_in_the_trailing_padding_keeps_the_intact_packets() {
    let (dir, m) = make_run("pad-cut", 7);
    let bytes = std::fs::read(shard(dir.path())).unwrap();
    let last = *m.cores[0].blocks.last().unwrap();
    let padding = bytes.len() - u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap()) as usize;
    assert!(padding > last.offset as usize, "the last block has packets, then its padding");
    for cut in [bytes.len() - 1, bytes.len() - 56, padding + 9, padding + 4, padding] {
        std::fs::write(shard(dir.path()), &bytes[..cut]).unwrap();
        let p = problems(dir.path());
        assert!(p.iter().any(|x| x.contains("trailing padding") && x.contains("intact")), "{cut}: {p:?}");
        assert!(!p.iter().any(|x| x.contains("unreadable") || x.contains("packets, the manifest")), "{cut}: {p:?}");
        let (s, out) = reconstruct(dir.path());
        assert_eq!(s.packets, m.cores[0].written, "{cut}: {:?}", s.issues);
        assert_eq!(s.issues.len(), 1, "{cut}: {:?}", s.issues);
        assert_eq!(s.issues[0]["offset"], serde_json::json!(padding), "{cut}");
        assert!(s.issues[0]["what"].as_str().unwrap().contains("truncated"), "{cut}");
        assert!(!control::check::check_dir(&out, None).unwrap().complete, "{cut}");
        std::fs::remove_dir_all(&out).unwrap();
    }
    // Padding that is not what the writer puts there proves nothing: the block is lost.
    let mut other = bytes[..bytes.len() - 8].to_vec();
    other[padding + 30] = b'x';
    std::fs::write(shard(dir.path()), &other).unwrap();
    let (s, _) = reconstruct(dir.path());
    assert_eq!(s.packets, m.cores[0].written - last.packets, "{:?}", s.issues);
}

#[test]
fn check_fails_on_every_drop_a_manifest_reports() {
    let (dir, mut m) = make_run("drops", 7);
    let check = |m: &Manifest| {
        m.store(dir.path()).unwrap();
        let out = dir.path().join("out");
        control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &Default::default()).unwrap();
        control::check::check_dir(&out, None).unwrap()
    };
    let r = check(&m);
    assert!(r.capture_problems.is_empty(), "{:?}", r.capture_problems);
    m.cores[0].nic_queue_errors = Some(5);
    m.stop_reason = Some("lcore_failed".into());
    let r = check(&m);
    let name = dir.path().display();
    let want =
        [format!("{name}: capture stopped on a failure (lcore_failed)"), format!("{name} core 0: NIC queue errors 5")];
    assert_eq!(r.capture_problems, want);
    assert!(!r.complete, "{}", r.render());
}

#[test]
fn counters_that_do_not_add_up_are_reported() {
    let (dir, mut m) = make_run("accounting", 7);
    m.cores[0].rx += 3;
    m.cores[0].classes.insert("pfc".into(), 99);
    m.store(dir.path()).unwrap();
    let p = problems(dir.path());
    assert!(p.iter().any(|x| x.starts_with("core 0: rx 33 but written 30")), "{p:?}");
    assert!(p.iter().any(|x| x.starts_with("class pfc: 2 packets in the shard, 99 in the manifest")), "{p:?}");
    assert!(p.iter().any(|x| x.starts_with("port delivered 30 packets, fewer than the 33")), "{p:?}");
    // A run that never finished says so (and its port counters were never read).
    m.status = RunStatus::Running;
    m.store(dir.path()).unwrap();
    let p = problems(dir.path());
    assert!(p.iter().any(|x| x.contains("status is `running`")), "{p:?}");
    assert!(!p.iter().any(|x| x.starts_with("port delivered")), "{p:?}");
}

#[test]
fn hostile_manifest_values_give_findings_not_panics() {
    let (dir, mut m) = make_run("hostile", 7);
    m.cores[0].blocks[1].len = u64::MAX;
    m.cores[0].blocks[2].offset = u64::MAX - 3;
    m.cores[0].rx = u64::MAX;
    m.cores[0].buffer_drops = u64::MAX;
    m.cores[0].classes.insert("other".into(), u64::MAX);
    m.cores[0].shard_bytes = 1;
    m.port.ipackets = u64::MAX;
    m.store(dir.path()).unwrap();
    let p = problems(dir.path());
    assert!(p.iter().any(|x| x.starts_with("block 1") && x.contains("beyond the end")), "{p:?}");
    assert!(p.iter().any(|x| x.starts_with("block 2 starts at")), "{p:?}");
    assert!(p.iter().any(|x| x.starts_with("core 0: rx 18446744073709551615")), "{p:?}");
    assert!(p.iter().any(|x| x.contains("the manifest says 1")), "{p:?}");
}

#[test]
fn a_packet_id_that_disagrees_with_its_annotation_is_reported() {
    let (dir, m) = make_run("packet-id", 100);
    let mut bytes = std::fs::read(shard(dir.path())).unwrap();
    // The first copy with an event, so its comment repeats its seq (a copy without one
    // has no comment: its packet id is all there is). The id option sits after the data.
    let first = trace::reader::ShardReader::new(&bytes)
        .map(Result::unwrap)
        .find(|p| p.comment.is_some() && p.packet_id != Some(0))
        .unwrap();
    let seq = first.packet_id.unwrap();
    let id_at =
        first.offset as usize + bytes[first.offset as usize..].windows(8).position(|w| w == seq.to_le_bytes()).unwrap();
    bytes[id_at] ^= 1;
    // Keep the block CRC right so only the identity can catch it.
    let mut m = m;
    let b = &mut m.cores[0].blocks[1];
    b.crc32c = trace::manifest::block_crc(&bytes[b.offset as usize..(b.offset + b.len) as usize]);
    m.store(dir.path()).unwrap();
    std::fs::write(shard(dir.path()), &bytes).unwrap();
    let p = problems(dir.path());
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains(&format!("packet id {} but its annotation says {seq}", seq ^ 1)), "{p:?}");
}

#[test]
fn a_missing_manifest_is_an_error_not_a_verdict() {
    let dir = tempfile::Builder::new().prefix("rs-verify-none-").tempdir().unwrap();
    let e = verify_run(dir.path()).unwrap_err();
    assert!(e.to_string().contains("manifest.json"), "{e}");
}

/// A run directory whose manifest lists a shard that is gone is refused, naming it, and
/// the message gives the command that merges the shards that are there (review, session 22:
/// it said only "No such file or directory").
#[test]
fn a_missing_shard_is_named_with_the_command_for_the_rest() {
    let (dir, mut m) = make_run("missing-shard", 7);
    let gone = CoreRecord { core: 1, shard: "shard-001.pcapng".into(), ..m.cores[0].clone() };
    m.cores.push(gone);
    m.store(dir.path()).unwrap();
    let out = dir.path().join("out");
    let opts = Default::default();
    let err = control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &opts).unwrap_err();
    let message = err.to_string();
    let there = shard(dir.path()).display().to_string();
    assert!(message.contains("shard-001.pcapng: listed in"), "{message}");
    assert!(message.ends_with(&format!("rocescope reconstruct {there}")), "{message}");
    let s = control::reconstruct::reconstruct_to(&[shard(dir.path())], &out, &opts).unwrap();
    assert_eq!(s.mirrored, m.cores[0].classes["mirrored_roce"], "the hinted command merges what remains");
}

/// Review: `verify --json RUN1 RUN2` printed two JSON documents back to back. It prints
/// one: an array of the runs' reports, in the order given (for one run too).
#[test]
fn verify_json_of_several_runs_is_one_array() {
    let (a, _) = make_run("json-a", 100);
    let (b, _) = make_run("json-b", 7);
    for runs in [vec![a.path(), b.path()], vec![a.path()]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope"))
            .arg("verify")
            .arg("--json")
            .args(&runs)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
        assert_eq!(doc.as_array().map(Vec::len), Some(runs.len()), "{doc}");
    }
}

/// Runs `rocescope` with `args`, killed if it has not ended within 20 s (a FIFO used to
/// block it forever): its exit code and standard error.
fn rocescope_within_20s(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    let _ = child.wait();
    (None, "still running after 20 s".into())
}

/// Review: a FIFO given as an input, or as a manifest's shard, blocked reconstruct (and
/// verify) forever. Only regular files are read: the FIFO is named and refused.
#[test]
fn a_fifo_as_input_or_shard_is_refused_not_waited_on() {
    let (dir, mut m) = make_run("fifo", 7);
    let fifo = dir.path().join("shard-001.pcapng");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = dir.path().join("out");
    let (code, err) = rocescope_within_20s(&["reconstruct".as_ref(), fifo.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a FIFO, not a regular file"), "{err}");

    let mut core = m.cores[0].clone();
    core.core = 1;
    core.shard = "shard-001.pcapng".into();
    m.cores.push(core);
    m.store(dir.path()).unwrap();
    let (code, err) =
        rocescope_within_20s(&["reconstruct".as_ref(), dir.path().as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&fifo.display().to_string()) && err.contains("a FIFO"), "{err}");
    let (code, err) = rocescope_within_20s(&["verify".as_ref(), dir.path().as_os_str()]);
    assert_eq!(code, Some(1), "{err}");
}

/// Review: a manifest's shard path may name any file (`../../etc/hostname`, `/dev/zero`):
/// a shard outside the run directory is refused when the manifest is read.
#[test]
fn a_shard_path_outside_the_run_directory_is_refused() {
    for shard in ["../elsewhere.pcapng", "/dev/zero", ""] {
        let (dir, mut m) = make_run("shard-path", 7);
        m.cores[0].shard = shard.into();
        m.store(dir.path()).unwrap();
        let e = verify_run(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is not a file name in the run directory"), "{shard}: {e}");
        let out = dir.path().join("out");
        let e = control::reconstruct::reconstruct_to(&[dir.path().to_path_buf()], &out, &Default::default());
        assert!(e.unwrap_err().to_string().contains("is not a file name in the run directory"), "{shard}");
    }
}
