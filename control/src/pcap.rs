//! Classic pcap files (as Lumina's dumpers and tcpdump write them) read in place from a
//! memory map: a 24-byte file header, then per packet a 16-byte record header and the
//! captured bytes.
//!
//! Ours rather than `pcap_file`'s parser: reading records is the merge thread's inner loop,
//! and the crate's goes through a generic byte-order reader and a `Duration` per record. It
//! also refuses a record whose original length exceeds the file's snap length, which is
//! exactly what a trimmed capture (`tcpdump -s 128`) holds.

use thiserror::Error;

/// Record header bytes.
const RECORD_HEADER: usize = 16;
/// A captured length beyond this is a damaged record header, not a frame (Wireshark's
/// limit for Ethernet captures, 256 KiB).
pub const MAX_CAPTURED: u32 = 262_144;
/// The smallest Ethernet frame without its FCS: a shorter one is padded to it.
const MIN_FRAME: u32 = 60;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PcapError {
    #[error("{0} bytes: too short for a pcap file header (24 bytes)")]
    ShortFile(usize),
    #[error("magic number {0:#010x}: not a pcap file")]
    BadMagic(u32),
    #[error("record header cut short: {0} bytes left (16 needed): truncated")]
    TruncatedHeader(usize),
    #[error("record of {captured} captured bytes, {left} left in the file: truncated")]
    TruncatedData { captured: u32, left: usize },
    #[error("captured length {0} is beyond any frame ({MAX_CAPTURED}): damaged record header")]
    HugeCapture(u32),
    #[error("captured length {captured} exceeds the original length {original}")]
    CapturedBeyondOriginal { captured: u32, original: u32 },
    #[error("timestamp fraction {0} is not below one second")]
    BadFraction(u32),
    #[error("link type {0} is not Ethernet (1): mirrored copies cannot be read from it")]
    LinkType(u32),
}

/// One record, borrowed from the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcapRecord<'a> {
    /// Byte offset of the record header in the file.
    pub offset: u64,
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    pub orig_len: u32,
    pub data: &'a [u8],
}

/// The records of a pcap file, in file order; after the first error, none.
#[derive(Debug, Clone)]
pub struct PcapRecords<'a> {
    bytes: &'a [u8],
    at: usize,
    big_endian: bool,
    /// Nanoseconds per unit of the timestamp fraction: 1000 (µs files) or 1 (ns files).
    frac_ns: u32,
    failed: bool,
}

impl<'a> PcapRecords<'a> {
    /// Reads the file header: either byte order, microsecond or nanosecond timestamps.
    pub fn new(bytes: &'a [u8]) -> Result<PcapRecords<'a>, PcapError> {
        if bytes.len() < 24 {
            return Err(PcapError::ShortFile(bytes.len()));
        }
        let (big_endian, frac_ns) = match u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) {
            0xa1b2_c3d4 => (false, 1000),
            0xa1b2_3c4d => (false, 1),
            0xd4c3_b2a1 => (true, 1000),
            0x4d3c_b2a1 => (true, 1),
            other => return Err(PcapError::BadMagic(other)),
        };
        let records = PcapRecords { bytes, at: 24, big_endian, frac_ns, failed: false };
        // Mirrored copies are Ethernet frames; a capture of another link type (`tcpdump -i
        // any` writes Linux cooked headers) would be read as garbage, every copy lost.
        match records.u32_at(20) & 0xffff {
            link if link == u32::from(trace::pcapng::LINKTYPE_ETHERNET) => Ok(records),
            other => Err(PcapError::LinkType(other)),
        }
    }

    /// Only the records from byte offset `from` (a record's start) up to `end`: one lcore's
    /// run of a Lumina-dumper file. The file header was read by [`PcapRecords::new`].
    pub fn span(mut self, from: u64, end: u64) -> PcapRecords<'a> {
        let end = usize::try_from(end).unwrap_or(usize::MAX).min(self.bytes.len());
        self.bytes = &self.bytes[..end];
        self.at = usize::try_from(from).unwrap_or(usize::MAX).clamp(24, end.max(24));
        self
    }

    /// Nanoseconds per unit of the file's timestamps: 1000 (µs files) or 1 (ns files).
    pub fn ts_unit_ns(&self) -> u32 {
        self.frac_ns
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.at as u64
    }

    #[inline]
    fn u32_at(&self, i: usize) -> u32 {
        let b = [self.bytes[i], self.bytes[i + 1], self.bytes[i + 2], self.bytes[i + 3]];
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn record(&self) -> Result<PcapRecord<'a>, PcapError> {
        let left = self.bytes.len() - self.at;
        if left < RECORD_HEADER {
            return Err(PcapError::TruncatedHeader(left));
        }
        let h = self.at;
        let (secs, frac, captured, original) =
            (self.u32_at(h), self.u32_at(h + 4), self.u32_at(h + 8), self.u32_at(h + 12));
        if captured > MAX_CAPTURED {
            return Err(PcapError::HugeCapture(captured));
        }
        // Lumina's dumper records a frame's length as its IP length + 14, short of the
        // Ethernet padding it captured when the frame was under the 60-byte minimum (a
        // zero-length SEND Only): up to that minimum the bytes are the frame as received.
        let original = match original {
            o if captured <= o => o,
            _ if captured <= MIN_FRAME => captured,
            _ => return Err(PcapError::CapturedBeyondOriginal { captured, original }),
        };
        if u64::from(frac) * u64::from(self.frac_ns) >= 1_000_000_000 {
            return Err(PcapError::BadFraction(frac));
        }
        let start = h + RECORD_HEADER;
        let data = self
            .bytes
            .get(start..start + captured as usize)
            .ok_or(PcapError::TruncatedData { captured, left: left - RECORD_HEADER })?;
        let ts_ns = u64::from(secs) * 1_000_000_000 + u64::from(frac) * u64::from(self.frac_ns);
        Ok(PcapRecord { offset: h as u64, ts_ns, orig_len: original, data })
    }
}

impl<'a> Iterator for PcapRecords<'a> {
    type Item = Result<PcapRecord<'a>, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        let r = self.record();
        match &r {
            Ok(rec) => self.at += RECORD_HEADER + rec.data.len(),
            Err(_) => self.failed = true,
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::{Endianness, TsResolution};
    use std::time::Duration;

    /// A file written by `pcap_file` (the reference writer) in the given byte order and
    /// resolution.
    fn written(endianness: Endianness, ts: TsResolution, packets: &[(Duration, u32, Vec<u8>)]) -> Vec<u8> {
        let header = PcapHeader { endianness, ts_resolution: ts, snaplen: 65_535, ..Default::default() };
        let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
        for (t, orig, data) in packets {
            w.write_packet(&PcapPacket::new(*t, *orig, data)).unwrap();
        }
        w.into_writer()
    }

    fn sample() -> Vec<(Duration, u32, Vec<u8>)> {
        vec![
            (Duration::new(1_700_000_000, 123_456_000), 1082, vec![0xab; 128]),
            (Duration::new(5, 999_999_000), 60, vec![1; 60]),
            (Duration::new(0, 0), 0, vec![]),
        ]
    }

    #[test]
    fn reads_what_pcap_file_writes_in_every_byte_order_and_resolution() {
        for endianness in [Endianness::Little, Endianness::Big] {
            for ts in [TsResolution::MicroSecond, TsResolution::NanoSecond] {
                let bytes = written(endianness, ts, &sample());
                let got: Vec<_> = PcapRecords::new(&bytes).unwrap().collect::<Result<_, _>>().unwrap();
                assert_eq!(got.len(), 3, "{endianness:?} {ts:?}");
                let mut offset = 24;
                for (r, (t, orig, data)) in got.iter().zip(sample()) {
                    assert_eq!((r.offset, r.ts_ns, r.orig_len, r.data), (offset, t.as_nanos() as u64, orig, &data[..]));
                    offset += 16 + data.len() as u64;
                }
            }
        }
    }

    #[test]
    fn a_trimmed_capture_with_a_small_snap_length_is_read() {
        let mut bytes = written(Endianness::Little, TsResolution::MicroSecond, &sample());
        bytes[16..20].copy_from_slice(&128u32.to_le_bytes()); // snaplen 128, as tcpdump -s 128
        assert_eq!(PcapRecords::new(&bytes).unwrap().filter(Result::is_ok).count(), 3);
    }

    #[test]
    fn damage_is_a_typed_error_and_ends_the_records() {
        let good = written(Endianness::Little, TsResolution::MicroSecond, &sample());
        let second = 24 + 16 + 128;
        let set = |at: usize, v: u32| {
            let mut b = good.clone();
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            b
        };
        let set2 = |a: usize, v: u32, b: usize, w: u32| {
            let mut x = set(a, v);
            x[b..b + 4].copy_from_slice(&w.to_le_bytes());
            x
        };
        let cases: Vec<(Vec<u8>, PcapError)> = vec![
            (good[..second + 10].to_vec(), PcapError::TruncatedHeader(10)),
            (good[..second + 16 + 20].to_vec(), PcapError::TruncatedData { captured: 60, left: 20 }),
            (set(second + 8, MAX_CAPTURED + 1), PcapError::HugeCapture(MAX_CAPTURED + 1)),
            (set2(second + 8, 61, second + 12, 59), PcapError::CapturedBeyondOriginal { captured: 61, original: 59 }),
            (set(second + 4, 1_000_000), PcapError::BadFraction(1_000_000)),
        ];
        for (bytes, want) in cases {
            let got: Vec<_> = PcapRecords::new(&bytes).unwrap().collect();
            assert_eq!(got.len(), 2, "{want}");
            assert!(got[0].is_ok());
            assert_eq!(got[1].as_ref().unwrap_err(), &want);
        }
        assert_eq!(PcapRecords::new(&good[..23]).unwrap_err(), PcapError::ShortFile(23));
        // Code review (session 23): Lumina's dumper counts a padded 58-byte frame as 58 and
        // keeps its 60 bytes; the record was taken for damage and ended the file.
        let bytes = set(second + 12, 58);
        let padded: Vec<_> = PcapRecords::new(&bytes).unwrap().collect();
        assert_eq!(padded.len(), 3);
        assert_eq!(padded[1].as_ref().map(|r| (r.orig_len, r.data.len())), Ok((60, 60)));
        assert_eq!(PcapRecords::new(&set(20, 113)).unwrap_err(), PcapError::LinkType(113), "Linux cooked");
        assert_eq!(PcapRecords::new(&[0u8; 24]).unwrap_err(), PcapError::BadMagic(0));
    }

    proptest::proptest! {
        /// Any bytes after a valid file header: records or one error, never a panic, and
        /// every record lies inside the file.
        #[test]
        fn arbitrary_records_never_panic(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let mut bytes = written(Endianness::Little, TsResolution::NanoSecond, &[]);
            bytes.extend_from_slice(&tail);
            let mut errors = 0;
            for r in PcapRecords::new(&bytes).unwrap() {
                match r {
                    Ok(r) => proptest::prop_assert!(r.offset as usize + 16 + r.data.len() <= bytes.len()),
                    Err(_) => errors += 1,
                }
            }
            proptest::prop_assert!(errors <= 1);
        }
    }
}
