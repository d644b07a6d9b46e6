//! The pcapng writer side: section and interface headers written once per shard, and an
//! allocation-free Enhanced Packet Block encoder for the dataplane's hot path.
//!
//! Why not a pcapng crate here: the encoder runs once per packet on a polling core at
//! line rate and must write straight into a preallocated buffer; `pcap-file`'s writer builds
//! option vectors per packet. Reading (tests, control) uses [`crate::reader`] or `pcap-file`.

/// Block type codes (pcapng spec, draft-ietf-opsawg-pcapng §4).
pub const BT_SECTION_HEADER: u32 = 0x0A0D_0D0A;
pub const BT_INTERFACE_DESCRIPTION: u32 = 0x0000_0001;
pub const BT_ENHANCED_PACKET: u32 = 0x0000_0006;
/// Read, never written: other tools' packet blocks (no timestamp / 16-bit interface id).
pub const BT_SIMPLE_PACKET: u32 = 0x0000_0003;
pub const BT_OBSOLETE_PACKET: u32 = 0x0000_0002;
pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;

/// Option codes we write.
pub const OPT_END: u16 = 0;
pub const OPT_COMMENT: u16 = 1;
pub const IF_NAME: u16 = 2;
pub const IF_DESCRIPTION: u16 = 3;
pub const IF_TSRESOL: u16 = 9;
pub const SHB_USERAPPL: u16 = 4;
pub const EPB_PACKETID: u16 = 5;

/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u16 = 1;

/// Interface Statistics Block (pcapng §4.6): the padding that ends every shard block.
pub const BT_INTERFACE_STATISTICS: u32 = 0x0000_0005;
/// A padding block without options: header, interface id, timestamp, end of options, trailer.
pub const PADDING_BARE: usize = 8 + 12 + 4 + 4;
/// A padding block whose comment option is empty; each 4 filler bytes more add 4 to it.
pub const PADDING_WITH_COMMENT: usize = PADDING_BARE + 4;
/// Longest padding block: a gap below [`PADDING_BARE`] is padded 4 KiB further.
pub const PADDING_MAX: usize = 4096 + PADDING_BARE - 4;

/// Appends a padding block of `gap` bytes (a multiple of 4, at least [`PADDING_BARE`]):
/// an Interface Statistics Block for interface 0 with no statistics, whose comment option
/// of spaces is the filler (none when `gap` is [`PADDING_BARE`]). Packet readers skip it
/// and, unlike a Custom Block, Wireshark/tshark do not show it as a frame. Its bytes
/// follow from its length alone: a reader can restore a padding block the end of a file
/// cut (`reader::verify_blocks`).
pub fn put_padding<O: Out + ?Sized>(out: &mut O, gap: usize) {
    debug_assert!(gap % 4 == 0 && gap >= PADDING_BARE, "padding of {gap} bytes");
    let mut head = [0u8; 20];
    for (i, v) in [BT_INTERFACE_STATISTICS, gap as u32, 0, 0, 0].into_iter().enumerate() {
        head[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes()); // interface 0, timestamp 0
    }
    out.put(&head);
    if gap >= PADDING_WITH_COMMENT {
        let filler = gap - PADDING_WITH_COMMENT;
        let mut option = [0u8; 4];
        option[0..2].copy_from_slice(&OPT_COMMENT.to_le_bytes());
        option[2..4].copy_from_slice(&(filler as u16).to_le_bytes());
        out.put(&option);
        const SPACES: [u8; 256] = [b' '; 256];
        for k in (0..filler).step_by(SPACES.len()) {
            out.put(&SPACES[..(filler - k).min(SPACES.len())]);
        }
    }
    let mut tail = [0u8; 8]; // end of options, then the trailing length
    tail[4..8].copy_from_slice(&(gap as u32).to_le_bytes());
    out.put(&tail);
}

/// EPB bytes besides the packet data and the comment option: block header (8), fixed
/// fields (20), packet id option (12), end-of-options (4), trailing length (4).
///
/// No `epb_flags`: its one fact, "inbound", holds for every frame of every shard and trace
/// (the capture port only receives), and 8 bytes a block are 4 % of a trimmed trace.
pub const EPB_OVERHEAD: usize = 8 + 20 + 12 + 4 + 4;

/// Longest comment the dataplane writes; keeps [`epb_len`] bounded.
pub const MAX_COMMENT: usize = 64;

const fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// Exact encoded size of an EPB carrying `caplen` bytes and a `comment_len`-byte comment
/// (no comment option at all when `comment_len` is 0).
pub const fn epb_len(caplen: usize, comment_len: usize) -> usize {
    let comment = if comment_len == 0 { 0 } else { 4 + pad4(comment_len) };
    EPB_OVERHEAD + pad4(caplen) + comment
}

/// Upper bound of [`epb_len`] for a snap length, for sizing buffers.
pub const fn max_epb_len(snaplen: usize) -> usize {
    epb_len(snaplen, MAX_COMMENT)
}

/// Where blocks are encoded: a `Vec<u8>` (the dataplane's shard chunks), or a writer's own
/// buffer such as [`crate::direct::Buffer`] (the control process's spools).
pub trait Out {
    /// Appends `bytes`. The caller has made room: an `Out` that cannot grow may panic.
    fn put(&mut self, bytes: &[u8]);
    /// Bytes held.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
}

/// What one Enhanced Packet Block holds.
#[derive(Debug, Clone, Copy)]
pub struct Epb<'a> {
    pub interface_id: u32,
    /// Nanoseconds since the Unix epoch (the interface has `if_tsresol` = 9).
    pub timestamp_ns: u64,
    /// The frame's length on the wire.
    pub original_len: u32,
    /// The captured (trimmed) bytes.
    pub data: &'a [u8],
    /// Mirror sequence number, or 0 when the frame is not a mirrored copy.
    pub packet_id: u64,
    /// Human-readable annotation, at most [`MAX_COMMENT`] bytes; empty for none.
    pub comment: &'a [u8],
}

impl Epb<'_> {
    pub fn encoded_len(&self) -> usize {
        epb_len(self.data.len(), self.comment.len())
    }

    /// Appends the block to `out` and returns the offset of the packet data inside `out`
    /// (the dataplane restores mirrored headers in place there).
    ///
    /// The caller makes room for `encoded_len()` bytes: a `Vec` with that much spare
    /// capacity never reallocates, which is what keeps the hot path allocation-free.
    pub fn append_to<O: Out + ?Sized>(&self, out: &mut O) -> usize {
        // Three fixed-size pieces assembled on the stack plus two variable copies, instead of
        // ~20 small appends each with its own capacity check (measured in bench/recbench).
        let len = self.encoded_len() as u32;
        let comment = &self.comment[..self.comment.len().min(MAX_COMMENT)];
        let mut head = [0u8; 28];
        for (i, v) in [
            BT_ENHANCED_PACKET,
            len,
            self.interface_id,
            (self.timestamp_ns >> 32) as u32,
            self.timestamp_ns as u32,
            self.data.len() as u32,
            self.original_len,
        ]
        .into_iter()
        .enumerate()
        {
            head[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        out.put(&head);
        let data_at = out.len();
        put_padded(out, self.data);
        let mut packet_id = [0u8; 12];
        packet_id[0..2].copy_from_slice(&EPB_PACKETID.to_le_bytes());
        packet_id[2..4].copy_from_slice(&8u16.to_le_bytes());
        packet_id[4..12].copy_from_slice(&self.packet_id.to_le_bytes());
        out.put(&packet_id);
        if !comment.is_empty() {
            let mut head = [0u8; 4];
            head[0..2].copy_from_slice(&OPT_COMMENT.to_le_bytes());
            head[2..4].copy_from_slice(&(comment.len() as u16).to_le_bytes());
            out.put(&head);
            put_padded(out, comment);
        }
        // End of options, then the trailing length.
        let mut tail = [0u8; 8];
        tail[4..8].copy_from_slice(&len.to_le_bytes());
        out.put(&tail);
        data_at
    }
}

/// The section header and the single interface description every shard starts with.
pub fn shard_header(snaplen: u32, if_name: &str, if_description: &str, application: &str) -> Vec<u8> {
    let mut out = section_header(application);
    out.extend_from_slice(&interface_description(snaplen, if_name, if_description));
    out
}

/// A little-endian section header block of unknown length.
pub fn section_header(application: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    let mut body = Vec::new();
    put_u32(&mut body, BYTE_ORDER_MAGIC);
    put_u16(&mut body, 1);
    put_u16(&mut body, 0);
    body.extend_from_slice(&(-1i64).to_le_bytes()); // section length unknown
    put_option(&mut body, SHB_USERAPPL, application.as_bytes());
    put_option(&mut body, OPT_END, &[]);
    put_block(&mut out, BT_SECTION_HEADER, &body);
    out
}

/// An Ethernet interface description with nanosecond timestamps; interfaces are numbered
/// from 0 in the order their blocks appear in the section.
pub fn interface_description(snaplen: u32, if_name: &str, if_description: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    let mut body = Vec::new();
    put_u16(&mut body, LINKTYPE_ETHERNET);
    put_u16(&mut body, 0);
    put_u32(&mut body, snaplen);
    put_option(&mut body, IF_NAME, if_name.as_bytes());
    put_option(&mut body, IF_DESCRIPTION, if_description.as_bytes());
    put_option(&mut body, IF_TSRESOL, &[9]); // nanoseconds: switch timestamps are ns
    put_option(&mut body, OPT_END, &[]);
    put_block(&mut out, BT_INTERFACE_DESCRIPTION, &body);
    out
}

fn put_block(out: &mut Vec<u8>, block_type: u32, body: &[u8]) {
    let len = (12 + body.len()) as u32;
    put_u32(out, block_type);
    put_u32(out, len);
    out.extend_from_slice(body);
    put_u32(out, len);
}

fn put_option(out: &mut Vec<u8>, code: u16, value: &[u8]) {
    put_u16(out, code);
    put_u16(out, value.len() as u16);
    put_padded(out, value);
}

fn put_padded<O: Out + ?Sized>(out: &mut O, bytes: &[u8]) {
    out.put(bytes);
    let pad = pad4(bytes.len()) - bytes.len();
    out.put(&[0u8; 3][..pad]);
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epb_length_matches_encoding_for_every_padding() {
        for caplen in 0..9 {
            for clen in 0..9 {
                let data = vec![0xAB; caplen];
                let comment = vec![b'c'; clen];
                let epb = Epb {
                    interface_id: 0,
                    timestamp_ns: 1,
                    original_len: 100,
                    data: &data,
                    packet_id: 7,
                    comment: &comment,
                };
                let mut out = Vec::new();
                let at = epb.append_to(&mut out);
                assert_eq!(out.len(), epb.encoded_len());
                assert_eq!(out.len() % 4, 0);
                assert_eq!(&out[at..at + caplen], &data[..]);
                let trailing = u32::from_le_bytes(out[out.len() - 4..].try_into().unwrap());
                assert_eq!(trailing as usize, out.len());
            }
        }
    }

    /// A reused direct buffer holds the last chunk's bytes: every byte of a block, padding
    /// and end-of-options included, must be written over, so that the block equals the one
    /// encoded into a fresh `Vec`.
    #[test]
    fn a_block_overwrites_whatever_a_reused_buffer_held() {
        let mut buf = crate::direct::Buffer::new(4096).unwrap();
        for caplen in 0..9 {
            for clen in [0, 1, 3, 4, 5, MAX_COMMENT] {
                let (data, comment) = (vec![0xAB; caplen], vec![b'c'; clen]);
                let epb = Epb {
                    interface_id: 3,
                    timestamp_ns: 0x0102_0304_0506_0708,
                    original_len: 1000,
                    data: &data,
                    packet_id: 0x7fff_fffe,
                    comment: &comment,
                };
                buf.clear();
                buf.put(&[0xEE; 4096]);
                buf.clear();
                buf.put(b"lead");
                let at = epb.append_to(&mut buf);
                let mut fresh = b"lead".to_vec();
                assert_eq!(epb.append_to(&mut fresh), at);
                assert_eq!(buf.as_slice(), &fresh[..], "caplen {caplen}, comment {clen}");
            }
        }
    }

    #[test]
    fn padding_is_one_well_formed_block_of_every_length() {
        for gap in (PADDING_BARE..=PADDING_MAX).step_by(4) {
            let mut out = Vec::new();
            put_padding(&mut out, gap);
            let word = |at: usize| u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
            assert_eq!((out.len(), word(0), word(4) as usize), (gap, BT_INTERFACE_STATISTICS, gap));
            assert_eq!(word(gap - 4) as usize, gap, "trailing length");
            assert!(out[PADDING_WITH_COMMENT.min(gap) - 8..gap - 8].iter().all(|&b| b == b' '));
        }
    }

    #[test]
    fn append_never_reallocates_within_reserved_capacity() {
        let mut out = Vec::with_capacity(max_epb_len(128) * 3);
        let ptr = out.as_ptr();
        let data = [1u8; 128];
        let comment = [b'x'; MAX_COMMENT];
        for _ in 0..3 {
            Epb { interface_id: 0, timestamp_ns: 0, original_len: 1000, data: &data, packet_id: 0, comment: &comment }
                .append_to(&mut out);
        }
        assert_eq!(out.as_ptr(), ptr);
        assert_eq!(out.len(), max_epb_len(128) * 3);
    }
}
