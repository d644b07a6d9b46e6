//! Property tests: the shard reader and the annotation parser take untrusted bytes (a
//! damaged or foreign file) and must never panic; what the encoder writes reads back.

use proptest::prelude::*;
use trace::annotation::Annotation;
use trace::pcapng::{shard_header, Epb, MAX_COMMENT};
use trace::reader::{section_application, verify_blocks, ShardReader};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let n = ShardReader::new(&bytes).count();
        prop_assert!(n <= bytes.len() / 12 + 1);
        let _ = section_application(&bytes);
        let _ = Annotation::parse(&bytes);
    }

    #[test]
    fn corrupted_shards_never_panic(
        packets in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 1..8),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = shard(&packets);
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x | 1;
        }
        for p in ShardReader::new(&bytes).flatten() {
            let _ = p.annotation();
        }
        let _ = section_application(&bytes);
    }

    #[test]
    fn what_is_written_reads_back(
        packets in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..20),
        ts in any::<u64>(),
        id in any::<u64>(),
    ) {
        let bytes = shard_with(&packets, ts, id);
        let got: Vec<_> = ShardReader::new(&bytes).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(got.len(), packets.len());
        for (p, data) in got.iter().zip(&packets) {
            prop_assert_eq!(p.data, &data[..]);
            prop_assert_eq!(p.timestamp_ns, ts);
            prop_assert_eq!(p.packet_id, Some(id));
            prop_assert_eq!(p.original_len as usize, data.len() + 1);
        }
        let whole = [trace::manifest::BlockRecord { offset: 0, len: bytes.len() as u64, crc32c: trace::manifest::block_crc(&bytes), packets: 0 }];
        prop_assert!(verify_blocks(&bytes, &whole).is_empty());
    }
}

fn shard(packets: &[Vec<u8>]) -> Vec<u8> {
    shard_with(packets, 1_000, 7)
}

fn shard_with(packets: &[Vec<u8>], ts: u64, id: u64) -> Vec<u8> {
    let mut out = shard_header(65535, "p", "d", "a");
    let mut comment = [0u8; MAX_COMMENT];
    let comment = Annotation::Mirrored { seq: 5, event: wire::mirror::Event::Drop }.render(&mut comment).to_vec();
    for data in packets {
        Epb {
            interface_id: 0,
            timestamp_ns: ts,
            original_len: data.len() as u32 + 1,
            data,
            packet_id: id,
            comment: &comment,
        }
        .append_to(&mut out);
    }
    out
}
