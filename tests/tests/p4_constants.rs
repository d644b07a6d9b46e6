//! The P4 programs and the Rust code must agree on every shared constant (DESIGN.md).

use std::collections::BTreeMap;
use wire::mirror::{Event, CORRUPT_IDENT_XOR, SEQ_MAX, TIMESTAMP_MAX};
use wire::udp::{LUMINA_MIRROR_PORT, ROCE_PORT};

/// `const bit<N> NAME = VALUE;` lines of a P4 file.
fn p4_constants(file: &str) -> BTreeMap<String, u64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("const bit<"))
        .map(|l| {
            let (_, rest) = l.split_once("> ").expect("const bit<N> NAME");
            let (name, value) = rest.split_once(" = ").expect("NAME = VALUE");
            let value = value.trim_end_matches(';');
            let v = match value.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => value.parse(),
            };
            (name.to_string(), v.unwrap_or_else(|_| panic!("{name}: bad value {value}")))
        })
        .collect()
}

#[test]
fn lumina_mirror_constants_match_the_wire_crate() {
    let p4 = p4_constants("include/lumina_mirror.p4");
    let rust: BTreeMap<String, u64> = [
        ("ROCE_UDP_PORT", ROCE_PORT as u64),
        ("LUMINA_MIRROR_UDP_PORT", LUMINA_MIRROR_PORT as u64),
        ("LUMINA_EVENT_NONE", Event::None as u64),
        ("LUMINA_EVENT_DROP", Event::Drop as u64),
        ("LUMINA_EVENT_ECN", Event::Ecn as u64),
        ("LUMINA_EVENT_CORRUPT", Event::Corrupt as u64),
        ("LUMINA_MIRROR_SEQ_MAX", SEQ_MAX as u64),
        ("LUMINA_TIMESTAMP_MAX", TIMESTAMP_MAX),
        ("LUMINA_CORRUPT_IDENT_XOR", CORRUPT_IDENT_XOR as u64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(p4, rust);
}
