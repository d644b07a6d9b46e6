//! Reading shards back: a zero-copy pcapng block walker over a shard's bytes, and the
//! block-CRC verification against the manifest. Only what rocescope writes is required
//! (little-endian sections, one Ethernet interface). Other tools' Simple and Obsolete
//! Packet Blocks are read too; blocks that hold no packet (statistics, name resolution,
//! custom) are skipped.

use crate::annotation::Annotation;
use crate::manifest::BlockRecord;
use crate::pcapng::*;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("offset {offset}: truncated block (need {need} bytes, {have} left)")]
    Truncated { offset: u64, need: u64, have: u64 },
    #[error("offset {offset}: block length {len} is not a multiple of 4 or below 12")]
    BadBlockLength { offset: u64, len: u32 },
    #[error("offset {offset}: trailing block length {trailing} differs from leading {len}")]
    LengthMismatch { offset: u64, len: u32, trailing: u32 },
    #[error(
        "offset {offset}: section byte order is big-endian or unknown ({magic:#010x}); rocescope writes little-endian"
    )]
    ByteOrder { offset: u64, magic: u32 },
    #[error("offset {offset}: packet block before any section header")]
    NoSection { offset: u64 },
    #[error("offset {offset}: packet data length {caplen} overruns its block")]
    BadCaptureLength { offset: u64, caplen: u32 },
    #[error("offset {offset}: packet on interface {interface} which was never described")]
    UnknownInterface { offset: u64, interface: u32 },
    #[error("offset {offset}: packet on interface {interface} of link type {link_type}, not Ethernet (1)")]
    NotEthernet { offset: u64, interface: u32, link_type: u16 },
}

/// One packet of a shard, borrowed from the shard's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardPacket<'a> {
    /// Byte offset of the packet's block in the shard.
    pub offset: u64,
    pub interface_id: u32,
    pub timestamp_ns: u64,
    pub original_len: u32,
    pub data: &'a [u8],
    pub packet_id: Option<u64>,
    pub comment: Option<&'a [u8]>,
}

impl ShardPacket<'_> {
    pub fn annotation(&self) -> Option<Annotation> {
        Annotation::of_block(self.packet_id, self.comment)
    }
}

type RawBlock<'a> = (u32, &'a [u8], u64);

#[derive(Debug, Clone, Copy)]
struct Interface {
    ns_per_unit: u64,
    snaplen: u32,
    link_type: u16,
}

/// Iterates the packets of a pcapng byte buffer. Stops after the first error.
pub struct ShardReader<'a> {
    /// What is read now: all of `all`, or up to where [`ShardReader::stop_at`] stops it.
    bytes: &'a [u8],
    all: &'a [u8],
    pos: usize,
    in_section: bool,
    /// Per interface: multiplier from timestamp units to ns, snap length, link type.
    interfaces: Vec<Interface>,
    failed: bool,
}

impl<'a> ShardReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        ShardReader { bytes, all: bytes, pos: 0, in_section: false, interfaces: Vec::new(), failed: false }
    }

    /// Reads no block that starts at or past `end` (a damaged block the manifest locates)
    /// until [`ShardReader::resume_at`]: the packets end there. Without it, one `next`
    /// would step over a block's trailing filler into the damaged block after it.
    pub fn stop_at(&mut self, end: usize) {
        self.bytes = &self.all[..end.clamp(self.pos, self.all.len())];
    }

    /// Goes on reading at `pos`, a block boundary past the current one (over a damaged
    /// block the manifest locates), in the same section with the same interfaces, to the
    /// end of the bytes.
    pub fn resume_at(&mut self, pos: usize) {
        self.bytes = self.all;
        self.pos = pos.clamp(self.pos, self.all.len());
    }

    /// Takes the section and interfaces that the blocks from here up to `end` describe,
    /// reading none of their packets, and goes on at `end`. Used over a block whose CRC
    /// fails: its packets cannot be trusted, but the intact blocks after it are still in
    /// its section. What it describes is kept only when it leaves a section whose every
    /// interface is Ethernet with nanosecond timestamps — what every rocescope shard
    /// describes, so a damaged byte there cannot change how a later packet reads;
    /// otherwise the section and interfaces stay as they were. Returns whether a section
    /// header of those blocks was kept.
    pub fn take_headers(&mut self, end: usize) -> bool {
        let saved = (self.in_section, self.interfaces.clone());
        self.stop_at(end);
        let mut section = false;
        while let Ok(Some((block_type, body, _))) = self.next_block() {
            match block_type {
                BT_SECTION_HEADER => {
                    section = true;
                    self.in_section = true;
                    self.interfaces.clear();
                }
                BT_INTERFACE_DESCRIPTION => self.interface(body),
                _ => {}
            }
        }
        let plain = |i: &Interface| i.link_type == LINKTYPE_ETHERNET && i.ns_per_unit == 1;
        if !(self.in_section && !self.interfaces.is_empty() && self.interfaces.iter().all(plain)) {
            (self.in_section, self.interfaces) = saved;
            section = false;
        }
        self.resume_at(end);
        section
    }

    /// The next block as (type, body between length fields, offset).
    fn next_block(&mut self) -> Result<Option<RawBlock<'a>>, ReadError> {
        let offset = self.pos as u64;
        let rest = &self.bytes[self.pos..];
        if rest.is_empty() {
            return Ok(None);
        }
        if rest.len() < 12 {
            return Err(ReadError::Truncated { offset, need: 12, have: rest.len() as u64 });
        }
        let block_type = le32(rest, 0);
        if block_type == BT_SECTION_HEADER {
            let magic = le32(rest, 8);
            if magic != BYTE_ORDER_MAGIC {
                return Err(ReadError::ByteOrder { offset, magic });
            }
        }
        let len = le32(rest, 4);
        if len < 12 || len % 4 != 0 {
            return Err(ReadError::BadBlockLength { offset, len });
        }
        if rest.len() < len as usize {
            return Err(ReadError::Truncated { offset, need: len as u64, have: rest.len() as u64 });
        }
        let trailing = le32(rest, len as usize - 4);
        if trailing != len {
            return Err(ReadError::LengthMismatch { offset, len, trailing });
        }
        self.pos += len as usize;
        Ok(Some((block_type, &rest[8..len as usize - 4], offset)))
    }

    /// An Enhanced Packet Block, or an Obsolete one (`obsolete`: a 16-bit interface id
    /// and a drop count where the EPB has its 32-bit interface id; the rest alike).
    fn packet(&self, body: &'a [u8], offset: u64, obsolete: bool) -> Result<ShardPacket<'a>, ReadError> {
        if !self.in_section {
            return Err(ReadError::NoSection { offset });
        }
        if body.len() < 20 {
            return Err(ReadError::BadBlockLength { offset, len: body.len() as u32 + 12 });
        }
        let interface_id = if obsolete { le32(body, 0) & 0xffff } else { le32(body, 0) };
        let units = ((le32(body, 4) as u64) << 32) | le32(body, 8) as u64;
        let caplen = le32(body, 12);
        let original_len = le32(body, 16);
        let scale = self.ethernet(interface_id, offset)?.ns_per_unit;
        let data_end = 20usize.checked_add(caplen as usize).filter(|&e| e <= body.len());
        let data_end = data_end.ok_or(ReadError::BadCaptureLength { offset, caplen })?;
        let mut packet = ShardPacket {
            offset,
            interface_id,
            timestamp_ns: units.saturating_mul(scale),
            original_len,
            data: &body[20..data_end],
            packet_id: None,
            comment: None,
        };
        for (code, value) in Options::new(body.get(pad4(data_end)..).unwrap_or(&[])) {
            match code {
                EPB_PACKETID if value.len() == 8 => packet.packet_id = Some(le64(value)),
                OPT_COMMENT => packet.comment = Some(value),
                _ => {}
            }
        }
        Ok(packet)
    }

    /// A Simple Packet Block: interface 0, the original length, the data (as much as the
    /// interface's snap length kept), no timestamp (0) and no options.
    fn simple_packet(&self, body: &'a [u8], offset: u64) -> Result<ShardPacket<'a>, ReadError> {
        if !self.in_section {
            return Err(ReadError::NoSection { offset });
        }
        if body.len() < 4 {
            return Err(ReadError::BadBlockLength { offset, len: body.len() as u32 + 12 });
        }
        let snaplen = self.ethernet(0, offset)?.snaplen;
        let original_len = le32(body, 0);
        let kept = if snaplen == 0 { original_len } else { original_len.min(snaplen) };
        let data = body[4..].get(..kept as usize).ok_or(ReadError::BadCaptureLength { offset, caplen: kept })?;
        Ok(ShardPacket { offset, interface_id: 0, timestamp_ns: 0, original_len, data, packet_id: None, comment: None })
    }

    fn interface(&mut self, body: &[u8]) {
        // Default resolution is microseconds (pcapng §4.2); rocescope writes if_tsresol=9.
        let mut scale = 1_000u64;
        for (code, value) in Options::new(body.get(8..).unwrap_or(&[])) {
            if code == IF_TSRESOL && value.len() == 1 {
                scale = tsresol_to_ns(value[0]);
            }
        }
        let snaplen = if body.len() >= 8 { le32(body, 4) } else { 0 };
        let link_type = if body.len() >= 2 { u16::from_le_bytes([body[0], body[1]]) } else { 0 };
        self.interfaces.push(Interface { ns_per_unit: scale, snaplen, link_type });
    }

    /// The interface a packet was captured on, which must be described and Ethernet:
    /// mirrored copies are Ethernet frames.
    fn ethernet(&self, interface: u32, offset: u64) -> Result<Interface, ReadError> {
        let i = *self.interfaces.get(interface as usize).ok_or(ReadError::UnknownInterface { offset, interface })?;
        if i.link_type != LINKTYPE_ETHERNET {
            return Err(ReadError::NotEthernet { offset, interface, link_type: i.link_type });
        }
        Ok(i)
    }
}

impl<'a> Iterator for ShardReader<'a> {
    type Item = Result<ShardPacket<'a>, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            let block = match self.next_block() {
                Ok(Some(b)) => b,
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            };
            match block {
                (BT_SECTION_HEADER, _, _) => {
                    self.in_section = true;
                    self.interfaces.clear();
                }
                (BT_INTERFACE_DESCRIPTION, body, _) => self.interface(body),
                (BT_ENHANCED_PACKET | BT_OBSOLETE_PACKET, body, offset) => {
                    let p = self.packet(body, offset, block.0 == BT_OBSOLETE_PACKET);
                    self.failed = p.is_err();
                    return Some(p);
                }
                (BT_SIMPLE_PACKET, body, offset) => {
                    let p = self.simple_packet(body, offset);
                    self.failed = p.is_err();
                    return Some(p);
                }
                _ => {}
            }
        }
        None
    }
}

/// Nanoseconds per timestamp unit for an `if_tsresol` byte (power of 10 or of 2).
fn tsresol_to_ns(resol: u8) -> u64 {
    let exp = (resol & 0x7f) as u32;
    if resol & 0x80 == 0 {
        10u64.checked_pow(9u32.saturating_sub(exp)).unwrap_or(1).max(1)
    } else {
        // 2^-exp seconds; only exact for exp <= 0 in ns, rocescope never writes these.
        (1_000_000_000u64 >> exp.min(63)).max(1)
    }
}

struct Options<'a> {
    bytes: &'a [u8],
}

impl<'a> Options<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Options { bytes }
    }
}

impl<'a> Iterator for Options<'a> {
    type Item = (u16, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.bytes.len() < 4 {
            return None;
        }
        let code = u16::from_le_bytes([self.bytes[0], self.bytes[1]]);
        let len = u16::from_le_bytes([self.bytes[2], self.bytes[3]]) as usize;
        if code == OPT_END || self.bytes.len() < 4 + len {
            return None;
        }
        let value = &self.bytes[4..4 + len];
        self.bytes = self.bytes.get(4 + pad4(len)..).unwrap_or(&[]);
        Some((code, value))
    }
}

/// The `shb_userappl` of the little-endian section header that `bytes` start with: which
/// program wrote the file (`rocescope-dataplane …` for a shard).
pub fn section_application(bytes: &[u8]) -> Option<&[u8]> {
    let word = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    if word(0)? != BT_SECTION_HEADER || word(8)? != BYTE_ORDER_MAGIC {
        return None;
    }
    let len = word(4)? as usize;
    // Type, length, byte order, version and section length come before the options; the
    // trailing length after them.
    let options = bytes.get(24..len.checked_sub(4)?)?;
    Options::new(options).find(|&(code, _)| code == SHB_USERAPPL).map(|(_, value)| value)
}

/// A block of the manifest that does not match the shard's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockFault {
    /// The block lies (partly) beyond the end of the file.
    Missing { index: usize, offset: u64, len: u64, file_len: u64 },
    /// The bytes are there but their CRC-32C differs.
    Crc { index: usize, offset: u64, len: u64, expected: u32, actual: u32 },
    /// Blocks must tile the file: a hole or overlap before this block.
    Gap { index: usize, expected_offset: u64, offset: u64 },
    /// Bytes after the last block that no block covers.
    Unaccounted { offset: u64, len: u64 },
    /// The file ends inside the block's trailing padding, and with that padding restored
    /// (its bytes follow from its length, [`put_padding`]) the CRC-32C matches: every
    /// packet before `padding` is intact; the file is still truncated.
    PaddingCut { index: usize, offset: u64, len: u64, file_len: u64, padding: u64 },
}

impl BlockFault {
    /// Where reading over the manifest's blocks skips this fault: a block whose CRC fails
    /// to its end (keeping its headers), a gap to the block after it; nothing after a
    /// truncated block, a cut padding's start or bytes no block accounts for.
    pub fn skip(&self) -> Skip {
        let at = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let to_end = |from: u64| Skip { from: at(from), resume: None, headers: false };
        match *self {
            BlockFault::Crc { offset, len, .. } => {
                Skip { from: at(offset), resume: Some(at(offset.saturating_add(len))), headers: true }
            }
            BlockFault::Gap { expected_offset, offset, .. } => {
                Skip { from: at(expected_offset), resume: Some(at(offset)), headers: false }
            }
            BlockFault::PaddingCut { padding, .. } => to_end(padding),
            BlockFault::Missing { offset, .. } | BlockFault::Unaccounted { offset, .. } => to_end(offset),
        }
    }

    /// The packets the manifest lists in the block that reading skips for this fault: all
    /// of a block whose CRC fails or that the file cuts; none for a cut in the trailing
    /// padding (its packets are read), a gap or bytes after the last block.
    pub fn unread_packets(&self, blocks: &[BlockRecord]) -> u64 {
        match *self {
            BlockFault::Crc { index, .. } | BlockFault::Missing { index, .. } => {
                blocks.get(index).map_or(0, |b| b.packets)
            }
            BlockFault::PaddingCut { .. } | BlockFault::Gap { .. } | BlockFault::Unaccounted { .. } => 0,
        }
    }
}

/// A stretch of a shard not to read: a damaged block, or bytes no block accounts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip {
    pub from: usize,
    /// Where reading resumes; `None`: nothing after it is a block the manifest lists.
    pub resume: Option<usize>,
    /// A block whose CRC fails: its section and interface headers are still taken
    /// ([`ShardReader::take_headers`]), its packets are not.
    pub headers: bool,
}

/// Where reading skips `faults`, in file order.
pub fn skips(faults: &[BlockFault]) -> Vec<Skip> {
    let mut out: Vec<Skip> = faults.iter().map(BlockFault::skip).collect();
    out.sort_by_key(|s| s.from);
    out
}

/// The packets of the blocks that [`verify_blocks`] vouches for: a [`ShardReader`] that
/// steps over every [`Skip`] (docs/formats.md §2.2). What `verify` counts and what
/// `reconstruct` reads are the same packets.
pub struct IntactPackets<'a> {
    reader: ShardReader<'a>,
    /// Damage still ahead, in file order.
    skips: &'a [Skip],
    /// Set once a skip leaves nothing after it to read.
    ended: bool,
}

impl<'a> IntactPackets<'a> {
    pub fn new(bytes: &'a [u8], skips: &'a [Skip]) -> Self {
        let mut packets = IntactPackets { reader: ShardReader::new(bytes), skips, ended: false };
        packets.stop_before_damage();
        packets
    }

    /// Steps over the next damaged stretch: to the next intact block, or to the end.
    #[cold]
    fn step_over_damage(&mut self) -> bool {
        let Some((skip, rest)) = self.skips.split_first() else { return false };
        self.skips = rest;
        match skip.resume {
            Some(at) if skip.headers => _ = self.reader.take_headers(at),
            Some(at) => self.reader.resume_at(at),
            None => self.ended = true,
        }
        self.stop_before_damage();
        !self.ended
    }

    /// Ends the reader's packets where the next damaged stretch starts: no block there
    /// or after it is read (not even the first, which a block's trailing filler would
    /// otherwise lead into) before reading steps over it.
    fn stop_before_damage(&mut self) {
        if let Some(skip) = self.skips.first() {
            self.reader.stop_at(skip.from);
        }
    }
}

impl<'a> Iterator for IntactPackets<'a> {
    type Item = Result<ShardPacket<'a>, ReadError>;

    /// Always inlined: `reconstruct`'s merge reads every shard packet through it.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        while !self.ended {
            if let Some(p) = self.reader.next() {
                return Some(p);
            }
            if !self.step_over_damage() {
                return None;
            }
        }
        None
    }
}

/// Checks a shard's bytes against the blocks its manifest lists.
pub fn verify_blocks(bytes: &[u8], blocks: &[BlockRecord]) -> Vec<BlockFault> {
    let mut faults = Vec::new();
    let mut expected_offset = 0u64;
    let file_len = bytes.len() as u64;
    for (index, b) in blocks.iter().enumerate() {
        if b.offset != expected_offset {
            faults.push(BlockFault::Gap { index, expected_offset, offset: b.offset });
        }
        expected_offset = b.offset.saturating_add(b.len);
        let end = b.offset.checked_add(b.len).filter(|&e| e <= file_len);
        let Some(end) = end else {
            faults.push(cut_block(bytes, index, b));
            continue;
        };
        let actual = crate::manifest::block_crc(&bytes[b.offset as usize..end as usize]);
        if actual != b.crc32c {
            faults.push(BlockFault::Crc { index, offset: b.offset, len: b.len, expected: b.crc32c, actual });
        }
    }
    if expected_offset < file_len {
        faults.push(BlockFault::Unaccounted { offset: expected_offset, len: file_len - expected_offset });
    }
    faults
}

/// A block the end of the file cuts: [`BlockFault::PaddingCut`] when what is missing is
/// only its trailing padding, else [`BlockFault::Missing`].
fn cut_block(bytes: &[u8], index: usize, b: &BlockRecord) -> BlockFault {
    let file_len = bytes.len() as u64;
    let present = usize::try_from(b.offset).ok().and_then(|o| bytes.get(o..)).filter(|p| !p.is_empty());
    match present.and_then(|p| padding_cut_at(p, b.len, b.crc32c)) {
        Some(at) => {
            BlockFault::PaddingCut { index, offset: b.offset, len: b.len, file_len, padding: b.offset + at as u64 }
        }
        None => BlockFault::Missing { index, offset: b.offset, len: b.len, file_len },
    }
}

/// Where the padding block starts in a block of `len` bytes of which only `present` is in
/// the file, when the bytes missing are all in it: the first block that does not fit in
/// `present` fills the rest of the block, what of it is there is padding, and with the
/// padding whole the block's CRC-32C is `crc`. The CRC is what proves the packets before
/// it intact: a wrong guess of the missing bytes cannot match it.
fn padding_cut_at(present: &[u8], len: u64, crc: u32) -> Option<usize> {
    let mut at = 0usize;
    while at + 8 <= present.len() {
        let block_len = le32(present, at + 4) as usize;
        if block_len < 12 || block_len % 4 != 0 || at + block_len > present.len() {
            break;
        }
        at += block_len;
    }
    let gap = usize::try_from(len).ok()?.checked_sub(at)?;
    if gap % 4 != 0 || !(PADDING_BARE..=PADDING_MAX).contains(&gap) {
        return None;
    }
    let mut padding = Vec::with_capacity(gap);
    put_padding(&mut padding, gap);
    let (kept, missing) = padding.split_at_checked(present.len() - at)?;
    if kept != &present[at..] {
        return None;
    }
    let mut sum = crate::manifest::BlockCrc::new();
    sum.update(present);
    sum.update(missing);
    (sum.value() == crc).then_some(at)
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_says_which_program_wrote_it() {
        let header = section_header("rocescope reconstruct 1.0");
        assert_eq!(section_application(&header), Some(&b"rocescope reconstruct 1.0"[..]));
        assert_eq!(section_application(&header[..header.len() - 8]), None, "cut short");
        let mut other = header.clone();
        other[8] ^= 0xff;
        assert_eq!(section_application(&other), None, "not little-endian");
        assert_eq!(section_application(&[]), None);
    }

    fn shard(packets: &[(u64, &[u8], u64, &[u8])]) -> Vec<u8> {
        let mut out = shard_header(128, "port0", "test", "rocescope test");
        for &(ts, data, id, comment) in packets {
            Epb { interface_id: 0, timestamp_ns: ts, original_len: 1000, data, packet_id: id, comment }
                .append_to(&mut out);
        }
        out
    }

    #[test]
    fn reads_back_what_the_encoder_wrote() {
        let bytes = shard(&[(1_700_000_000_123_456_789, b"abcde", 7, b"mirror seq=7 event=drop"), (5, b"", 0, b"pfc")]);
        let got: Vec<_> = ShardReader::new(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].timestamp_ns, 1_700_000_000_123_456_789);
        assert_eq!(got[0].data, b"abcde");
        assert_eq!(got[0].original_len, 1000);
        assert_eq!(got[0].packet_id, Some(7));
        assert_eq!(got[0].comment, Some(&b"mirror seq=7 event=drop"[..]));
        assert_eq!(got[1].data, b"");
        assert_eq!(got[1].comment, Some(&b"pfc"[..]));
    }

    /// A block as other tools write it: type, body, trailing length.
    fn block(block_type: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + pad4(body.len())) as u32;
        let mut out = [block_type.to_le_bytes(), len.to_le_bytes()].concat();
        out.extend_from_slice(body);
        out.resize(len as usize - 4, 0);
        out.extend_from_slice(&len.to_le_bytes());
        out
    }

    #[test]
    fn simple_and_obsolete_packet_blocks_are_read_not_skipped() {
        let mut bytes = shard_header(128, "port0", "test", "another tool");
        // Simple: 200 bytes long, 128 kept (the interface's snap length), no timestamp.
        let frame: Vec<u8> = (0..200u8).collect();
        bytes.extend(block(BT_SIMPLE_PACKET, &[&200u32.to_le_bytes()[..], &frame[..128]].concat()));
        // Obsolete: interface 0, 3 drops, ns timestamp split high/low, 5 of 1000 bytes, a comment.
        let ts = 1_700_000_000_123_456_789u64;
        let mut body = [0u16.to_le_bytes(), 3u16.to_le_bytes()].concat();
        for v in [(ts >> 32) as u32, ts as u32, 5, 1000] {
            body.extend_from_slice(&v.to_le_bytes());
        }
        body.extend_from_slice(b"abcde\0\0\0");
        body.extend_from_slice(&[1, 0, 3, 0, b'p', b'f', b'c', 0, 0, 0, 0, 0]);
        bytes.extend(block(BT_OBSOLETE_PACKET, &body));
        let got: Vec<_> = ShardReader::new(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].original_len, got[0].data, got[0].timestamp_ns), (200, &frame[..128], 0));
        assert_eq!((got[1].original_len, got[1].data, got[1].timestamp_ns), (1000, &b"abcde"[..], ts));
        assert_eq!(got[1].comment, Some(&b"pfc"[..]));

        // Not Ethernet (LINKTYPE_LINUX_SLL): no packet of it can be a mirrored copy.
        let mut sll = shard_header(0, "any", "test", "another tool");
        let idb = sll.len() - le32(&sll, sll.len() - 4) as usize; // the interface block
        sll[idb + 8..idb + 10].copy_from_slice(&113u16.to_le_bytes());
        sll.extend(block(BT_SIMPLE_PACKET, &[&16u32.to_le_bytes()[..], &frame[..16]].concat()));
        let err = ShardReader::new(&sll).next().unwrap().unwrap_err();
        assert!(matches!(err, ReadError::NotEthernet { link_type: 113, .. }), "{err}");

        // A simple block claiming more than it holds is an error, not a short read.
        let mut cut = shard_header(0, "port0", "test", "another tool");
        cut.extend(block(BT_SIMPLE_PACKET, &[&64u32.to_le_bytes()[..], &frame[..16]].concat()));
        let err = ShardReader::new(&cut).next().unwrap().unwrap_err();
        assert!(matches!(err, ReadError::BadCaptureLength { caplen: 64, .. }), "{err}");
    }

    #[test]
    fn every_annotation_comes_back_from_its_block() {
        use wire::mirror::Event;
        let mut all: Vec<(Annotation, u64)> = Event::ALL
            .into_iter()
            .flat_map(|event| {
                [1, 77, wire::mirror::SEQ_MAX].map(|seq| (Annotation::Mirrored { seq, event }, u64::from(seq)))
            })
            .collect();
        all.extend(wire::frame::FrameClass::ALL.into_iter().skip(1).map(|c| (Annotation::Class(c), 0)));
        all.extend(wire::ErrorKind::ALL.into_iter().map(|k| (Annotation::Malformed(k), 0)));
        let mut bytes = shard_header(128, "port0", "test", "rocescope test");
        let mut buf = [0u8; crate::pcapng::MAX_COMMENT];
        for &(a, id) in &all {
            Epb {
                interface_id: 0,
                timestamp_ns: 1,
                original_len: 60,
                data: b"abc",
                packet_id: id,
                comment: a.comment(&mut buf),
            }
            .append_to(&mut bytes);
        }
        let got: Vec<_> = ShardReader::new(&bytes).collect::<Result<_, _>>().unwrap();
        for (p, &(a, _)) in got.iter().zip(&all) {
            assert_eq!(p.annotation(), Some(a));
            // A copy without an event has no comment option at all, not an empty one.
            let plain = matches!(a, Annotation::Mirrored { event: Event::None, .. });
            assert_eq!(p.comment.is_none(), plain, "{a:?}");
        }
        assert_eq!(got.len(), all.len());
    }

    #[test]
    fn a_block_without_a_comment_is_a_copy_only_with_a_seq_for_its_packet_id() {
        for (id, want) in [
            (None, None),
            (Some(0), None),
            (Some(u64::from(wire::mirror::SEQ_MAX) + 1), None),
            (Some(5), Some(Annotation::Mirrored { seq: 5, event: wire::mirror::Event::None })),
        ] {
            assert_eq!(Annotation::of_block(id, None), want, "{id:?}");
            assert_eq!(Annotation::of_block(id, Some(b"")), want, "{id:?}");
        }
        assert_eq!(Annotation::of_block(Some(5), Some(b"pfc")), Some(Annotation::Class(wire::frame::FrameClass::Pfc)));
    }

    #[test]
    fn agrees_with_pcap_file_crate() {
        let bytes = shard(&[(123_456_789_012, b"0123456789", 3, b"roce")]);
        let mut r = pcap_file::pcapng::PcapNgReader::new(&bytes[..]).unwrap();
        let mut n = 0;
        while let Some(block) = r.next_block() {
            if let pcap_file::pcapng::Block::EnhancedPacket(epb) = block.unwrap() {
                assert_eq!(epb.data.as_ref(), b"0123456789");
                assert_eq!(epb.timestamp.as_nanos(), 123_456_789_012);
                assert_eq!(epb.original_len, 1000);
                n += 1;
            }
        }
        assert_eq!(n, 1);
    }

    #[test]
    fn every_truncation_is_a_typed_error_never_a_panic() {
        let header = shard(&[]).len();
        let one = shard(&[(1, b"abc", 1, b"x")]).len();
        let bytes = shard(&[(1, b"abc", 1, b"x"), (2, b"defgh", 2, b"y")]);
        let section_header_len = le32(&bytes, 4) as usize;
        let boundaries = [0, section_header_len, header, one, bytes.len()];
        for cut in 0..=bytes.len() {
            let results: Vec<_> = ShardReader::new(&bytes[..cut]).collect();
            let packets_whole = (cut >= one) as usize + (cut == bytes.len()) as usize;
            let oks = results.iter().take_while(|r| r.is_ok()).count();
            assert_eq!(oks, packets_whole, "cut {cut}");
            let errors = results.len() - oks;
            assert_eq!(errors, usize::from(!boundaries.contains(&cut)), "cut {cut}: {results:?}");
        }
    }

    #[test]
    fn block_faults_are_located() {
        let bytes = shard(&[(1, b"abc", 1, b"x")]);
        let half = bytes.len() as u64 / 2;
        let blocks = vec![
            BlockRecord {
                offset: 0,
                len: half,
                crc32c: crate::manifest::block_crc(&bytes[..half as usize]),
                packets: 0,
            },
            BlockRecord { offset: half, len: bytes.len() as u64 - half, crc32c: 0xdead_beef, packets: 1 },
        ];
        let faults = verify_blocks(&bytes, &blocks);
        assert_eq!(faults.len(), 1);
        assert!(matches!(faults[0], BlockFault::Crc { index: 1, .. }));
        assert!(verify_blocks(&bytes[..half as usize + 1], &blocks[..1])
            .contains(&BlockFault::Unaccounted { offset: half, len: 1 }));
        assert!(matches!(verify_blocks(&bytes[..10], &blocks[..1])[0], BlockFault::Missing { index: 0, .. }));
    }
}
