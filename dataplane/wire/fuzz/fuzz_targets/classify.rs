//! Fuzzes the dataplane's per-frame path: classify, then restore a full and a trimmed
//! copy; the mirror-metadata peek against classify; a copy in Lumina's dumper's form; the
//! ICRC and whole-frame parsers.
//! Any panic is a bug (DESIGN "Quality bar").
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::build::{Payload, RoceFrameRepr};
use wire::frame::{self, classify, peek_mirror, ClassifyConfig, FrameClass};
use wire::mirror;

fuzz_target!(|data: &[u8]| {
    let cfg = ClassifyConfig::default();
    match classify(data, &cfg) {
        Ok(info) => {
            assert!(usize::from(info.l3_offset) <= data.len());
            assert!(usize::from(info.l4_offset) <= data.len());
            assert_eq!(info.mirror.is_some(), info.class == FrameClass::MirroredRoce);
            if let Some(op) = info.opcode {
                assert_eq!(data.get(usize::from(info.bth_offset)), Some(&op));
            }
            let mut full = data.to_vec();
            mirror::restore(&mut full, &info, &cfg);
            // A trimmed copy restores to a prefix of the full restoration, except for the
            // IPv4 checksum, which needs the whole header.
            let snap = data.len() / 2;
            let mut trimmed = data[..snap].to_vec();
            mirror::restore(&mut trimmed, &info, &cfg);
            assert_eq!(trimmed.len(), snap);
        }
        Err(e) => {
            assert!(e.kind().index() < wire::ErrorKind::COUNT);
        }
    }
    // Reconstruction orders by the peek: it must find every copy classify finds, and
    // nothing classify calls well formed and not a copy.
    match (classify(data, &cfg), peek_mirror(data, &cfg)) {
        (Ok(info), peeked) if info.class == FrameClass::MirroredRoce => assert_eq!(peeked, info.mirror),
        (Ok(_), peeked) => assert_eq!(peeked, None),
        (Err(_), _) => {}
    }
    // A dumped copy (Lumina's dumper's form) is the copy classify finds under the RoCE
    // port as mirror port, stamped with its own timestamp; restoring it never panics.
    let dumped = mirror::CopyForm::Dumped.classify_config(&cfg);
    if let Some(meta) = peek_mirror(data, &dumped) {
        assert_eq!(frame::peek_dumped(data, meta.timestamp_ns, 1, &cfg), Some(meta));
        assert_eq!(frame::peek_dumped(data, meta.timestamp_ns.wrapping_add(1), 1, &cfg), None);
    }
    if let Ok(info) = classify(data, &dumped) {
        let mut copy = data.to_vec();
        mirror::restore_form(&mut copy, &info, &cfg, mirror::CopyForm::Dumped);
        assert_eq!(copy.len(), data.len());
    }
    let _ = wire::icrc::verify_frame(data);
    // Whatever parses as a whole RoCEv2 frame can be emitted again.
    if let Ok((repr, range)) = RoceFrameRepr::parse(data) {
        if repr.check().is_ok() {
            let out = repr.to_vec(Payload::Bytes(&data[range])).expect("emit parsed repr");
            assert_eq!(RoceFrameRepr::parse(&out).map(|(r, _)| r), Ok(repr.normalized()));
        }
    }
});
