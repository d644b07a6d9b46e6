//! The record file: one fixed-size [`Record`] per packet of a reconstructed trace, in
//! trace order, plus the table of 5-tuples the records point into. Every analyzer reads
//! it memory-mapped, as a `&[Record]`, so a pass over 50 M packets touches 2 GB of
//! sequential memory and no parser. Layout (little-endian; docs/formats.md §6):
//!
//! ```text
//! [Header 64 B][Record 40 B] × count [Flow 40 B] × flows
//! ```
//!
//! Records are built from restored frames by [`RecordBuilder`], which also assigns flow
//! ids; the same builder can later run in the dataplane to stream records live.

use std::io::{Seek, SeekFrom, Write};
use std::net::IpAddr;

use wire::bth::{ExtHeaders, Opcode};
use wire::frame::FrameInfo;
use wire::mirror::Event;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

pub const MAGIC: [u8; 8] = *b"RSCPREC\0";
/// 3: 40-byte records, narrow fields packed (version 2 had 48 bytes; version 1 had 64,
/// with a host timestamp, the IPv4 ID, and separate MSN and DMA-length fields).
pub const VERSION: u32 = 3;
pub const HEADER_LEN: usize = 64;
pub const RECORD_LEN: usize = std::mem::size_of::<Record>();
pub const FLOW_LEN: usize = std::mem::size_of::<Flow>();
/// Conventional file name inside a reconstruction's output directory.
pub const FILE_NAME: &str = "records.rsr";

/// What a packet is, from its opcode alone: which way it travels on its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Requester → responder: SEND, WRITE, READ request, atomics (RC/UC/RD/UD/XRC).
    Request = 0,
    /// Responder → requester: ACK/NAK, READ response, atomic ACK.
    Response = 1,
    /// Congestion notification (opcode 0x81), NP → RP.
    Cnp = 2,
    /// RoCE with an opcode we do not place (vendor-specific, reserved).
    OtherRoce = 3,
    /// Not RoCE: PFC, PAUSE, anything else, or malformed (see [`Record::class`]).
    NotRoce = 4,
}

impl Kind {
    pub fn of(opcode: Option<u8>) -> Kind {
        let Some(op) = opcode else { return Kind::NotRoce };
        let op = Opcode(op);
        if op.is_cnp() {
            return Kind::Cnp;
        }
        if !op.is_known() {
            return Kind::OtherRoce;
        }
        // Within each transport's block: 0x0d..=0x12 are the responder's (READ responses,
        // ACK, atomic ACK); RD's sit at the same offsets.
        match op.0 & 0x1f {
            0x0d..=0x12 => Kind::Response,
            _ => Kind::Request,
        }
    }

    pub fn from_u8(v: u8) -> Kind {
        match v {
            0 => Kind::Request,
            1 => Kind::Response,
            2 => Kind::Cnp,
            3 => Kind::OtherRoce,
            _ => Kind::NotRoce,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::Cnp => "cnp",
            Kind::OtherRoce => "other_roce",
            Kind::NotRoce => "not_roce",
        }
    }
}

/// [`Record::class`] of a frame that failed to parse (the others are `FrameClass as u8`).
pub const CLASS_MALFORMED: u8 = 0xff;

/// Bits of [`Record::flags`].
pub mod flag {
    /// BTH AckReq.
    pub const ACK_REQ: u16 = 1 << 0;
    /// BTH FECN / BECN.
    pub const FECN: u16 = 1 << 1;
    pub const BECN: u16 = 1 << 2;
    /// IP ECN field is CE (after restoration: an ECN event's copy is re-marked).
    pub const CE: u16 = 1 << 3;
    /// IP ECN field is ECT(0) or ECT(1).
    pub const ECT: u16 = 1 << 4;
    /// The ICRC was checked (whole frame captured) and matched / did not match.
    pub const ICRC_OK: u16 = 1 << 5;
    pub const ICRC_BAD: u16 = 1 << 6;
    /// The frame was a Lumina mirrored copy (seq and switch timestamp are the switch's).
    pub const MIRRORED: u16 = 1 << 7;
    /// The captured bytes are shorter than the frame (snap length).
    pub const TRIMMED: u16 = 1 << 8;
    /// BTH carries a RETH (`dma_len` is valid) / an AETH (`syndrome`, `msn` are valid).
    pub const RETH: u16 = 1 << 9;
    pub const AETH: u16 = 1 << 10;
    /// The capture ends inside the extension headers the opcode carries (a snap length
    /// below the headers: RETH at 64 bytes): the BTH fields are known, what the cut headers
    /// hold (RETH DMA length, AETH syndrome and MSN, ...) is not, and [`RETH`] / [`AETH`]
    /// are set only for a header captured whole.
    pub const HEADERS_CUT: u16 = 1 << 11;
}

/// One packet. 40 bytes, naturally aligned, no implicit padding. Fields narrower than
/// their type share a word (seq and destination QP, PSN and opcode, event, class and
/// kind): every byte of the file is written once per reconstruction and read by every
/// `check` and `analyze`, so their accessors unpack them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Record {
    /// Bits 0..40: the mirror sequence number, unwrapped ([`Record::seq`]); bits 40..64:
    /// the BTH destination QP.
    seq_qp: u64,
    /// Switch ingress timestamp, ns (48-bit switch clock) for mirrored copies; capture
    /// time for anything else.
    pub switch_ts_ns: u64,
    /// Index into the flow table (the 5-tuple); `u32::MAX` when not IP/UDP.
    pub flow: u32,
    /// Bits 0..24: BTH PSN; bits 24..32: BTH opcode.
    psn_opcode: u32,
    /// The RETH DMA length (with [`flag::RETH`]), or the AETH syndrome (bits 0..8) and
    /// MSN (bits 8..32) (with [`flag::AETH`]): no opcode carries both headers.
    ext: u32,
    /// Frame length on the wire (saturating at 65535).
    pub frame_len: u16,
    /// RoCE payload bytes (after headers, before ICRC), from the frame length.
    pub payload_len: u16,
    /// Which input (shard / pcap file) it came from: index into the reconstruction's
    /// source list.
    pub source: u16,
    pub flags: u16,
    pub pkey: u16,
    /// BTH byte 1 as sent: SE (bit 7), MigReq (6), pad count (5..4), TVer (3..0).
    pub bth_flags: u8,
    /// Bits 0..2: Lumina event (`wire::mirror::Event` index: 0 none, 1 drop, 2 ecn, 3
    /// corrupt); bits 2..5: `FrameClass as u8`, 7 = malformed; bits 5..8: [`Kind`].
    event_class_kind: u8,
}

const _: () = assert!(RECORD_LEN == 40);

/// Unwrapped seqs are below this (512 laps of the wire's 31-bit seq): 40 bits of a
/// record hold them.
pub const SEQ_LIMIT: u64 = 1 << 40;
/// A BTH's 24-bit fields (QPN, PSN) and the AETH MSN.
const MASK_24: u32 = 0xff_ffff;
const CLASS_BITS_MALFORMED: u8 = 7;

impl Record {
    /// The record of a restored frame — its captured bytes, which may be shorter than
    /// `meta.wire_len`; `info` is its classification — or of a malformed one (`None`), all
    /// but its flow id (`u32::MAX` here), which needs the trace's flows in order
    /// ([`RecordBuilder::flow_id`]); everything else depends on the frame alone.
    /// `meta.seq` must be below [`SEQ_LIMIT`] (higher bits are dropped).
    pub fn of(frame: &[u8], info: Option<&FrameInfo>, meta: &FrameMeta) -> Record {
        let mut r = Record {
            switch_ts_ns: meta.switch_ts_ns,
            flow: u32::MAX,
            frame_len: meta.wire_len.min(u32::from(u16::MAX)) as u16,
            source: meta.source,
            ..Record::default()
        }
        .with_seq(meta.seq)
        .with_event(meta.event)
        .with_class(CLASS_MALFORMED)
        .with_kind(Kind::NotRoce);
        if meta.mirrored {
            r.flags |= flag::MIRRORED;
        }
        if meta.trimmed {
            r.flags |= flag::TRIMMED;
        }
        let Some(info) = info else { return r };
        r = r.with_class(info.class as u8);
        if info.l4_offset != 0 {
            r.flags |= ecn_flags(frame, info);
        }
        if info.bth_offset != 0 {
            roce_fields(frame, info, meta, &mut r);
        }
        r
    }

    /// Mirror sequence number, unwrapped: the first lap is 1..=0x7fffffff as on the wire,
    /// each wrap adds 0x7fffffff. 0 = not a mirrored copy.
    pub fn seq(&self) -> u64 {
        self.seq_qp & (SEQ_LIMIT - 1)
    }
    pub fn dest_qp(&self) -> u32 {
        (self.seq_qp >> 40) as u32
    }
    pub fn psn(&self) -> u32 {
        self.psn_opcode & MASK_24
    }
    pub fn opcode(&self) -> u8 {
        (self.psn_opcode >> 24) as u8
    }
    pub fn kind(&self) -> Kind {
        Kind::from_u8(self.event_class_kind >> 5)
    }
    pub fn event(&self) -> Event {
        Event::ALL.get(usize::from(self.event_class_kind & 0b11)).copied().unwrap_or(Event::None)
    }
    /// `FrameClass as u8`, or [`CLASS_MALFORMED`].
    pub fn class(&self) -> u8 {
        match (self.event_class_kind >> 2) & 0b111 {
            CLASS_BITS_MALFORMED => CLASS_MALFORMED,
            c => c,
        }
    }
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }
    /// RETH DMA length; 0 without a RETH.
    pub fn dma_len(&self) -> u32 {
        if self.has(flag::RETH) {
            self.ext
        } else {
            0
        }
    }
    /// AETH syndrome; 0 without an AETH.
    pub fn syndrome(&self) -> u8 {
        if self.has(flag::AETH) {
            self.ext as u8
        } else {
            0
        }
    }
    /// AETH MSN (24 bits); 0 without an AETH.
    pub fn msn(&self) -> u32 {
        if self.has(flag::AETH) {
            self.ext >> 8
        } else {
            0
        }
    }
    pub fn mig_req(&self) -> bool {
        self.bth_flags & 0x40 != 0
    }
    /// The mirror sequence number as on the wire (1..=0x7fffffff), 0 if not mirrored.
    pub fn wire_seq(&self) -> u32 {
        match self.seq() {
            0 => 0,
            seq => ((seq - 1) % u64::from(wire::mirror::SEQ_MAX) + 1) as u32,
        }
    }
    /// The opcode carries a RETH the capture cut: the DMA length is unknown.
    pub fn reth_cut(&self) -> bool {
        self.has(flag::HEADERS_CUT)
            && !self.has(flag::RETH)
            && Opcode(self.opcode()).ext_headers().contains(ExtHeaders::RETH)
    }
    /// The opcode carries an AETH the capture cut: syndrome and MSN are unknown.
    pub fn aeth_cut(&self) -> bool {
        self.has(flag::HEADERS_CUT)
            && !self.has(flag::AETH)
            && Opcode(self.opcode()).ext_headers().contains(ExtHeaders::AETH)
    }
    /// AETH syndrome is a NAK (bits 6..5 = 11).
    pub fn is_nak(&self) -> bool {
        self.has(flag::AETH) && self.syndrome() >> 5 == 0b11
    }

    // Builders for the packed fields (the others are public).

    /// Keeps the low 40 bits ([`SEQ_LIMIT`]).
    pub fn with_seq(mut self, seq: u64) -> Record {
        self.seq_qp = self.seq_qp & !(SEQ_LIMIT - 1) | seq & (SEQ_LIMIT - 1);
        self
    }
    /// Keeps the low 24 bits, as a BTH does.
    pub fn with_dest_qp(mut self, qp: u32) -> Record {
        self.seq_qp = self.seq_qp & (SEQ_LIMIT - 1) | u64::from(qp & MASK_24) << 40;
        self
    }
    /// Keeps the low 24 bits, as a BTH does.
    pub fn with_psn(mut self, psn: u32) -> Record {
        self.psn_opcode = self.psn_opcode & !MASK_24 | psn & MASK_24;
        self
    }
    pub fn with_opcode(mut self, opcode: u8) -> Record {
        self.psn_opcode = self.psn_opcode & MASK_24 | u32::from(opcode) << 24;
        self
    }
    pub fn with_kind(mut self, kind: Kind) -> Record {
        self.event_class_kind = self.event_class_kind & 0b1_1111 | (kind as u8) << 5;
        self
    }
    pub fn with_event(mut self, event: Event) -> Record {
        self.event_class_kind = self.event_class_kind & !0b11 | event.index() as u8 & 0b11;
        self
    }
    /// `FrameClass as u8` (0..=4), or [`CLASS_MALFORMED`].
    pub fn with_class(mut self, class: u8) -> Record {
        let bits = if class == CLASS_MALFORMED { CLASS_BITS_MALFORMED } else { class & 0b111 };
        self.event_class_kind = self.event_class_kind & !0b1_1100 | bits << 2;
        self
    }
    /// A RETH: sets [`flag::RETH`].
    pub fn with_reth(mut self, dma_len: u32) -> Record {
        self.ext = dma_len;
        self.flags |= flag::RETH;
        self
    }
    /// An AETH: sets [`flag::AETH`]; the MSN keeps its low 24 bits.
    pub fn with_aeth(mut self, syndrome: u8, msn: u32) -> Record {
        self.ext = (msn & MASK_24) << 8 | u32::from(syndrome);
        self.flags |= flag::AETH;
        self
    }
}

/// A 5-tuple. IPv4 addresses are stored IPv4-mapped (`::ffff:a.b.c.d`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Flow {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub src_port: u16,
    pub dst_port: u16,
    /// 4 or 6.
    pub ip_version: u8,
    /// IP protocol (17 for UDP).
    pub protocol: u8,
    pub _reserved: [u8; 2],
}

impl Flow {
    pub fn src_ip(&self) -> IpAddr {
        ip(self.src, self.ip_version)
    }
    pub fn dst_ip(&self) -> IpAddr {
        ip(self.dst, self.ip_version)
    }
}

fn ip(bytes: [u8; 16], version: u8) -> IpAddr {
    let v6 = std::net::Ipv6Addr::from(bytes);
    match (version, v6.to_ipv4_mapped()) {
        (4, Some(v4)) => IpAddr::V4(v4),
        _ => IpAddr::V6(v6),
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Header {
    magic: [u8; 8],
    version: u32,
    record_len: u32,
    count: u64,
    flows: u64,
    flow_len: u32,
    _reserved: [u8; 28],
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER_LEN);

/// Turns classified frames into records, numbering 5-tuples as it meets them.
#[derive(Default)]
pub struct RecordBuilder {
    /// IPv4 5-tuples, packed into 13 bytes: a table a third the size of one keyed by
    /// [`Flow`], so more of it stays in cache across a trace's thousands of flows (the
    /// lookup is a cache miss per packet otherwise). Fx, not SipHash: the keys are packet
    /// headers, hashed once per packet, and an attacker gains nothing from collisions here
    /// but a slower offline merge.
    v4_ids: rustc_hash::FxHashMap<(u64, u64), u32>,
    v6_ids: rustc_hash::FxHashMap<Flow, u32>,
    flows: Vec<Flow>,
}

/// Where a frame came from and what the reconstruction knows about it.
#[derive(Debug, Clone, Copy)]
pub struct FrameMeta {
    pub seq: u64,
    pub switch_ts_ns: u64,
    pub wire_len: u32,
    pub source: u16,
    pub event: Event,
    pub mirrored: bool,
    pub trimmed: bool,
}

impl RecordBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// The record of a restored frame — its captured bytes, which may be shorter than
    /// `meta.wire_len`; `info` is its classification — or of a malformed one (`None`).
    pub fn record(&mut self, frame: &[u8], info: Option<&FrameInfo>, meta: &FrameMeta) -> Record {
        Record { flow: self.flow_id(frame, info), ..Record::of(frame, info, meta) }
    }

    /// The id of a restored frame's 5-tuple, numbering new ones as they come;
    /// `u32::MAX` when it has none (not IP, malformed, a non-first fragment).
    pub fn flow_id(&mut self, frame: &[u8], info: Option<&FrameInfo>) -> u32 {
        let Some(info) = info.filter(|i| i.l4_offset != 0) else { return u32::MAX };
        let next = self.flows.len() as u32;
        let id = if info.ip_version == 4 {
            // Most of any RoCE trace: the key comes straight from the header bytes, and a
            // Flow is built only for a new flow.
            let Some(key) = v4_key(frame, info) else { return u32::MAX };
            *self.v4_ids.entry(key).or_insert(next)
        } else {
            let Some(flow) = flow_of(frame, info) else { return u32::MAX };
            *self.v6_ids.entry(flow).or_insert(next)
        };
        if id == next {
            // `flow_of` reads no byte beyond those `v4_key` found (or it already ran).
            self.flows.push(flow_of(frame, info).unwrap_or_default());
        }
        id
    }
}

/// An IPv4 frame's addresses, ports and protocol, packed as `(src << 32 | dst, src_port << 24
/// | dst_port << 8 | protocol)`, with the ports 0 unless UDP (as [`flow_of`] has them);
/// `None` when the headers are cut short.
fn v4_key(frame: &[u8], info: &FrameInfo) -> Option<(u64, u64)> {
    let l3 = usize::from(info.l3_offset);
    let addrs = u64::from_be_bytes(frame.get(l3 + 12..l3 + 20)?.try_into().ok()?);
    let protocol = *frame.get(l3 + 9)?;
    let ports = match protocol {
        17 => {
            let l4 = usize::from(info.l4_offset);
            u32::from_be_bytes(frame.get(l4..l4 + 4)?.try_into().ok()?)
        }
        _ => 0,
    };
    Some((addrs, u64::from(ports) << 8 | u64::from(protocol)))
}

fn flow_of(frame: &[u8], info: &FrameInfo) -> Option<Flow> {
    let l3 = usize::from(info.l3_offset);
    let l4 = usize::from(info.l4_offset);
    let mut f = Flow { ip_version: info.ip_version, ..Flow::default() };
    match info.ip_version {
        4 => {
            let ip = frame.get(l3..l3 + 20)?;
            f.src = std::net::Ipv4Addr::from(<[u8; 4]>::try_from(&ip[12..16]).ok()?).to_ipv6_mapped().octets();
            f.dst = std::net::Ipv4Addr::from(<[u8; 4]>::try_from(&ip[16..20]).ok()?).to_ipv6_mapped().octets();
            f.protocol = ip[9];
        }
        6 => {
            let ip = frame.get(l3..l3 + 40)?;
            f.src.copy_from_slice(&ip[8..24]);
            f.dst.copy_from_slice(&ip[24..40]);
            f.protocol = ip[6];
        }
        _ => return None,
    }
    if f.protocol == 17 {
        let udp = frame.get(l4..l4 + 4)?;
        f.src_port = u16::from_be_bytes([udp[0], udp[1]]);
        f.dst_port = u16::from_be_bytes([udp[2], udp[3]]);
    }
    Some(f)
}

/// The BTH and extension-header fields of a RoCE frame's record.
fn roce_fields(frame: &[u8], info: &FrameInfo, meta: &FrameMeta, r: &mut Record) {
    let bth_at = usize::from(info.bth_offset);
    let wire_len = (meta.wire_len as usize).saturating_sub(bth_at);
    let Some(bytes) = frame.get(bth_at..) else { return };
    let p = match wire::roce::Packet::new_trimmed(bytes, wire_len) {
        Ok(p) => p,
        // Only on a cut capture: the hot path pays nothing for it.
        Err(wire::Error::TruncatedExtHeaders { .. }) => match wire::roce::Packet::new_headers_cut(bytes, wire_len) {
            Ok(p) => {
                r.flags |= flag::HEADERS_CUT;
                p
            }
            Err(_) => return,
        },
        Err(_) => return,
    };
    let bth = p.bth();
    let opcode = bth.opcode().0;
    *r = r.with_opcode(opcode).with_kind(Kind::of(Some(opcode))).with_dest_qp(bth.dest_qp()).with_psn(bth.psn());
    r.pkey = bth.pkey();
    r.bth_flags = u8::from(bth.solicited()) << 7 | u8::from(bth.mig_req()) << 6 | bth.pad_count() << 4 | bth.tver();
    r.payload_len = p.payload_len().min(usize::from(u16::MAX)) as u16;
    let bit = |on: bool, f: u16| if on { f } else { 0 };
    r.flags |= bit(bth.ack_req(), flag::ACK_REQ) | bit(bth.fecn(), flag::FECN) | bit(bth.becn(), flag::BECN);
    if let Some(reth) = p.reth() {
        *r = r.with_reth(reth.dma_len());
    }
    if let Some(aeth) = p.aeth() {
        *r = r.with_aeth(aeth.syndrome_raw(), aeth.msn());
    }
    if !meta.trimmed {
        r.flags |= match wire::icrc::verify_frame(frame) {
            Ok(true) => flag::ICRC_OK,
            Ok(false) => flag::ICRC_BAD,
            Err(_) => 0,
        };
    }
}

/// The IP header's ECN field as [`flag::CE`] / [`flag::ECT`].
fn ecn_flags(frame: &[u8], info: &FrameInfo) -> u16 {
    let l3 = usize::from(info.l3_offset);
    let ecn = match info.ip_version {
        4 => frame.get(l3 + 1).map(|tos| tos & 0b11),
        6 => frame.get(l3..l3 + 2).map(|b| ((u16::from_be_bytes([b[0], b[1]]) >> 4) & 0b11) as u8),
        _ => None,
    };
    match ecn {
        Some(0b11) => flag::CE,
        Some(0b01 | 0b10) => flag::ECT,
        _ => 0,
    }
}

/// Writes a record file: records streamed in order, the flow table and the header at the
/// end (the header's counts are known only then).
pub struct RecordWriter<W: Write + Seek> {
    out: W,
    count: u64,
}

impl<W: Write + Seek> RecordWriter<W> {
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(Header::default().as_bytes())?;
        Ok(RecordWriter { out, count: 0 })
    }

    #[inline]
    pub fn push(&mut self, r: &Record) -> std::io::Result<()> {
        self.count += 1;
        self.out.write_all(r.as_bytes())
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Appends the flow table, writes the header and returns the inner writer.
    pub fn finish(mut self, flows: &[Flow]) -> std::io::Result<W> {
        self.out.write_all(flows.as_bytes())?;
        let header = Header {
            magic: MAGIC,
            version: VERSION,
            record_len: RECORD_LEN as u32,
            count: self.count,
            flows: flows.len() as u64,
            flow_len: FLOW_LEN as u32,
            _reserved: [0; 28],
        };
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(header.as_bytes())?;
        self.out.seek(SeekFrom::End(0))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecordFileError {
    #[error("{len} bytes is shorter than the {HEADER_LEN}-byte record file header")]
    Short { len: u64 },
    #[error("not a rocescope record file (magic {magic:02x?})")]
    Magic { magic: [u8; 8] },
    #[error("record file version {version}, record size {record_len}, flow size {flow_len}: this build reads version {VERSION} ({RECORD_LEN}, {FLOW_LEN}); run `rocescope reconstruct` again")]
    Version { version: u32, record_len: u32, flow_len: u32 },
    #[error("header says {count} records and {flows} flows ({expected} bytes) but the file has {len} bytes (truncated or unfinished)")]
    Size { count: u64, flows: u64, expected: u64, len: u64 },
    #[error("record file bytes are not 8-byte aligned in memory (read it with a memory map)")]
    Alignment,
}

/// A record file's bytes viewed as records and flows (zero-copy).
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    pub records: &'a [Record],
    pub flows: &'a [Flow],
}

impl<'a> RecordView<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<RecordView<'a>, RecordFileError> {
        let (count, rest) = Self::checked(bytes)?;
        let (recs, flow_bytes) = rest.split_at(count as usize * RECORD_LEN);
        let records = <[Record]>::ref_from_bytes(recs).map_err(|_| RecordFileError::Alignment)?;
        let flows = <[Flow]>::ref_from_bytes(flow_bytes).map_err(|_| RecordFileError::Alignment)?;
        Ok(RecordView { records, flows })
    }

    /// The records of a record file's bytes, writable (a copy-on-write map's, to fill in
    /// what the trace tells of them).
    pub fn records_mut(bytes: &mut [u8]) -> Result<&mut [Record], RecordFileError> {
        let count = Self::checked(bytes)?.0;
        let recs = &mut bytes[HEADER_LEN..HEADER_LEN + count as usize * RECORD_LEN];
        <[Record]>::mut_from_bytes(recs).map_err(|_| RecordFileError::Alignment)
    }

    /// The header's record count and the bytes after the header, once the header and the
    /// file's size agree.
    fn checked(bytes: &[u8]) -> Result<(u64, &[u8]), RecordFileError> {
        let len = bytes.len() as u64;
        let (header, rest) = Header::read_from_prefix(bytes).map_err(|_| RecordFileError::Short { len })?;
        if header.magic != MAGIC {
            return Err(RecordFileError::Magic { magic: header.magic });
        }
        if header.version != VERSION || header.record_len as usize != RECORD_LEN || header.flow_len as usize != FLOW_LEN
        {
            let Header { version, record_len, flow_len, .. } = header;
            return Err(RecordFileError::Version { version, record_len, flow_len });
        }
        let (count, flows) = (header.count, header.flows);
        let expected = count
            .checked_mul(RECORD_LEN as u64)
            .and_then(|r| flows.checked_mul(FLOW_LEN as u64).and_then(|f| r.checked_add(f)))
            .and_then(|b| b.checked_add(HEADER_LEN as u64));
        if expected != Some(len) {
            return Err(RecordFileError::Size { count, flows, expected: expected.unwrap_or(u64::MAX), len });
        }
        Ok((count, rest))
    }

    pub fn flow(&self, r: &Record) -> Option<&'a Flow> {
        self.flows.get(r.flow as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::build::RoceFrameRepr;

    fn repr(opcode: Opcode, dest_qp: u32, psn: u32, payload_len: usize) -> RoceFrameRepr {
        use wire::{ethernet, ipv4, roce, udp};
        let mut r = roce::Repr::new(wire::bth::Repr::new(opcode, dest_qp, psn), payload_len);
        if opcode.ext_headers().contains(wire::bth::ExtHeaders::RETH) {
            r.reth = Some(wire::reth::Repr { va: 0x1000, rkey: 7, dma_len: 4096 });
        }
        RoceFrameRepr {
            eth: ethernet::Repr { dst_addr: [2; 6], src_addr: [4; 6], vlans: ethernet::Vlans::Untagged, ethertype: 0 },
            ip: wire::build::IpRepr::V4(ipv4::Repr {
                src_addr: [192, 0, 2, 1].into(),
                dst_addr: [192, 0, 2, 2].into(),
                protocol: ipv4::PROTOCOL_UDP,
                payload_len: 0,
                dscp: 26,
                ecn: 0b10,
                ident: 9,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
                ttl: 64,
            }),
            udp: udp::Repr { src_port: 50000, dst_port: udp::ROCE_PORT, payload_len: 0 },
            roce: r,
        }
    }

    fn sample_frame(opcode: Opcode) -> Vec<u8> {
        repr(opcode, 0x12345, 0xfffffe, 64).to_vec(wire::build::Payload::Zeros).unwrap()
    }

    /// A frame with every extension header its opcode calls for.
    fn cut_sample_frame(opcode: Opcode) -> Vec<u8> {
        let payload = if matches!(opcode, Opcode::RC_ACK | Opcode::RC_READ_REQUEST) { 0 } else { 100 };
        let mut r = repr(opcode, 0x12345, 0x2468, payload);
        if opcode.ext_headers().contains(ExtHeaders::AETH) {
            r.roce.aeth = Some(wire::aeth::Repr { syndrome: wire::aeth::Syndrome::Ack { credit: 3 }, msn: 0x55 });
        }
        if opcode.ext_headers().contains(ExtHeaders::IMM_DT) {
            r.roce.immdt = Some(wire::immdt::Repr { imm_data: 9 });
        }
        r.to_vec(wire::build::Payload::Zeros).unwrap()
    }

    proptest::proptest! {
        /// Each packed field reads back what was put in it, whatever its neighbours hold.
        #[test]
        fn packed_fields_read_back_and_leave_their_neighbours_alone(
            seq in 0u64..SEQ_LIMIT, qp in 0u32..1 << 24, psn in 0u32..1 << 24, opcode: u8,
            kind in 0u8..5, event in 0usize..4, class in proptest::sample::select(vec![0u8, 1, 2, 3, 4, CLASS_MALFORMED]),
            aeth: bool, ext: u32, syndrome: u8, noise: [u8; RECORD_LEN],
        ) {
            let (kind, event) = (Kind::from_u8(kind), Event::ALL[event]);
            let mut r = Record::read_from_bytes(&noise).unwrap();
            r.flags &= !(flag::RETH | flag::AETH);
            r = r.with_event(event).with_seq(seq).with_class(class).with_psn(psn).with_kind(kind);
            r = r.with_opcode(opcode).with_dest_qp(qp);
            r = if aeth { r.with_aeth(syndrome, ext) } else { r.with_reth(ext) };
            proptest::prop_assert_eq!((r.seq(), r.dest_qp(), r.psn(), r.opcode()), (seq, qp, psn, opcode));
            proptest::prop_assert_eq!((r.kind(), r.event(), r.class()), (kind, event, class));
            if aeth {
                proptest::prop_assert_eq!((r.syndrome(), r.msn(), r.dma_len()), (syndrome, ext & 0xff_ffff, 0));
            } else {
                proptest::prop_assert_eq!((r.syndrome(), r.msn(), r.dma_len()), (0, 0, ext));
            }
            let plain = Record::read_from_bytes(&noise).unwrap();
            proptest::prop_assert_eq!((r.switch_ts_ns, r.flow, r.frame_len, r.payload_len), (plain.switch_ts_ns, plain.flow, plain.frame_len, plain.payload_len));
            proptest::prop_assert_eq!((r.source, r.pkey, r.bth_flags), (plain.source, plain.pkey, plain.bth_flags));
        }

        /// A capture cut anywhere keeps every field it holds whole: the BTH's once it is
        /// captured, each extension header captured whole, and marks the cut ones unknown
        /// (formats §6.2 flag 11) rather than dropping the BTH (review F2: snap length 64).
        #[test]
        fn a_cut_capture_keeps_what_it_holds(op in 0usize..5, cut in 0usize..200) {
            let opcode = [Opcode::RC_WRITE_FIRST, Opcode::RC_READ_REQUEST, Opcode::RC_ACK,
                Opcode::RC_WRITE_ONLY_IMM, Opcode::RC_READ_RESPONSE_FIRST][op];
            let frame = cut_sample_frame(opcode);
            let info = wire::frame::classify(&frame, &Default::default()).unwrap();
            let cut = cut.min(frame.len());
            let meta = |len: usize| FrameMeta {
                seq: 5, switch_ts_ns: 1, wire_len: frame.len() as u32, source: 0,
                event: Event::None, mirrored: true, trimmed: len < frame.len(),
            };
            let whole = Record::of(&frame, Some(&info), &meta(frame.len()));
            let r = Record::of(&frame[..cut], Some(&info), &meta(cut));
            let bth_at = usize::from(info.bth_offset);
            let ext = opcode.ext_headers();
            let ends = bth_at + wire::bth::HEADER_LEN + ext.len();
            let captured = |one: ExtHeaders, len: usize| {
                ext.offset_of(one).is_some_and(|o| cut >= bth_at + wire::bth::HEADER_LEN + o + len)
            };
            if cut < bth_at + wire::bth::HEADER_LEN {
                proptest::prop_assert_eq!((r.kind(), r.opcode(), r.has(flag::HEADERS_CUT)), (Kind::NotRoce, 0, false));
                return Ok(());
            }
            proptest::prop_assert_eq!((r.opcode(), r.psn(), r.dest_qp(), r.kind()), (whole.opcode(), whole.psn(), whole.dest_qp(), whole.kind()));
            proptest::prop_assert_eq!((r.payload_len, r.pkey, r.bth_flags), (whole.payload_len, whole.pkey, whole.bth_flags));
            proptest::prop_assert_eq!(r.has(flag::HEADERS_CUT), cut < ends);
            proptest::prop_assert_eq!(r.has(flag::RETH), captured(ExtHeaders::RETH, wire::reth::HEADER_LEN));
            proptest::prop_assert_eq!(r.has(flag::AETH), captured(ExtHeaders::AETH, wire::aeth::HEADER_LEN));
            proptest::prop_assert_eq!(r.reth_cut(), ext.contains(ExtHeaders::RETH) && !r.has(flag::RETH));
            proptest::prop_assert_eq!(r.aeth_cut(), ext.contains(ExtHeaders::AETH) && !r.has(flag::AETH));
            if r.has(flag::RETH) || r.has(flag::AETH) {
                proptest::prop_assert_eq!((r.dma_len(), r.syndrome(), r.msn()), (whole.dma_len(), whole.syndrome(), whole.msn()));
            }
            let icrc = flag::ICRC_OK | flag::ICRC_BAD | flag::TRIMMED | flag::HEADERS_CUT | flag::RETH | flag::AETH;
            proptest::prop_assert_eq!(r.flags & !icrc, whole.flags & !icrc);
        }

        /// The IPv4 key read straight from the headers is the one packed from the Flow.
        #[test]
        fn the_v4_key_packs_what_flow_of_reads(src: [u8; 4], dst: [u8; 4], sport: u16, tcp: bool) {
            let mut r = repr(Opcode::RC_SEND_ONLY, 1, 2, 8);
            if let wire::build::IpRepr::V4(ip) = &mut r.ip {
                (ip.src_addr, ip.dst_addr) = (src.into(), dst.into());
            }
            r.udp.src_port = sport;
            let mut frame = r.to_vec(wire::build::Payload::Zeros).unwrap();
            let info = wire::frame::classify(&frame, &Default::default()).unwrap();
            if tcp {
                frame[usize::from(info.l3_offset) + 9] = 6;
            }
            let f = flow_of(&frame, &info).unwrap();
            let v4 = |a: [u8; 16]| u64::from(u32::from_be_bytes([a[12], a[13], a[14], a[15]]));
            let ports = u64::from(f.src_port) << 24 | u64::from(f.dst_port) << 8 | u64::from(f.protocol);
            proptest::prop_assert_eq!(v4_key(&frame, &info), Some((v4(f.src) << 32 | v4(f.dst), ports)));
            proptest::prop_assert_eq!(f.src_port, if tcp { 0 } else { sport });
        }
    }

    #[test]
    fn kinds_follow_the_opcode_table() {
        assert_eq!(Kind::of(Some(Opcode::RC_WRITE_FIRST.0)), Kind::Request);
        assert_eq!(Kind::of(Some(Opcode::RC_READ_REQUEST.0)), Kind::Request);
        assert_eq!(Kind::of(Some(Opcode::RC_READ_RESPONSE_ONLY.0)), Kind::Response);
        assert_eq!(Kind::of(Some(Opcode::RC_ACK.0)), Kind::Response);
        assert_eq!(Kind::of(Some(Opcode::RC_ATOMIC_ACK.0)), Kind::Response);
        assert_eq!(Kind::of(Some(Opcode::RD_ACK.0)), Kind::Response);
        assert_eq!(Kind::of(Some(Opcode::UD_SEND_ONLY.0)), Kind::Request);
        assert_eq!(Kind::of(Some(Opcode::CNP.0)), Kind::Cnp);
        assert_eq!(Kind::of(Some(0xe0)), Kind::OtherRoce);
        assert_eq!(Kind::of(None), Kind::NotRoce);
        for k in 0..=5u8 {
            assert_eq!(Kind::from_u8(k) as u8, k.min(4));
        }
    }

    #[test]
    fn a_record_carries_the_headers_fields() {
        let frame = sample_frame(Opcode::RC_WRITE_FIRST);
        let info = wire::frame::classify(&frame, &Default::default()).unwrap();
        let meta = FrameMeta {
            seq: 7,
            switch_ts_ns: 99,
            wire_len: frame.len() as u32,
            source: 3,
            event: Event::Ecn,
            mirrored: true,
            trimmed: false,
        };
        let mut b = RecordBuilder::new();
        let r = b.record(&frame, Some(&info), &meta);
        assert_eq!((r.seq(), r.switch_ts_ns, r.source), (7, 99, 3));
        assert_eq!((r.dma_len(), r.msn()), (4096, 0));
        assert_eq!((r.opcode(), r.dest_qp(), r.psn()), (Opcode::RC_WRITE_FIRST.0, 0x12345, 0xfffffe));
        assert_eq!(r.kind(), Kind::Request);
        assert_eq!(r.event(), Event::Ecn);
        assert!(r.has(flag::RETH) && r.has(flag::ICRC_OK) && r.has(flag::ECT) && r.has(flag::MIRRORED));
        assert!(!r.has(flag::AETH) && !r.has(flag::CE) && !r.has(flag::TRIMMED));
        assert_eq!(r.payload_len, 64);
        assert_eq!(r.flow, 0);
        let f = b.flows()[0];
        assert_eq!(f.dst_port, 4791);
        assert_eq!(f.ip_version, 4);
        assert!(f.src_ip().is_ipv4());
        // Same 5-tuple, same id.
        assert_eq!(b.record(&frame, Some(&info), &meta).flow, 0);
    }

    #[test]
    fn a_nak_is_recognised() {
        let mut repr = repr(Opcode::RC_ACK, 5, 10, 0);
        repr.roce.aeth = Some(wire::aeth::Repr {
            syndrome: wire::aeth::Syndrome::Nak(wire::aeth::NakCode::PsnSequenceError),
            msn: 3,
        });
        let frame = repr.to_vec(wire::build::Payload::Zeros).unwrap();
        let info = wire::frame::classify(&frame, &Default::default()).unwrap();
        let meta = FrameMeta {
            seq: 1,
            switch_ts_ns: 0,
            wire_len: frame.len() as u32,
            source: 0,
            event: Event::None,
            mirrored: false,
            trimmed: false,
        };
        let r = RecordBuilder::new().record(&frame, Some(&info), &meta);
        assert!(r.is_nak());
        assert_eq!((r.msn(), r.dma_len(), r.kind()), (3, 0, Kind::Response));
    }

    #[test]
    fn files_round_trip_and_damage_is_typed() {
        let recs: Vec<Record> = (1..=5u64).map(|i| Record::default().with_seq(i).with_psn(i as u32 * 3)).collect();
        let flows = vec![Flow { src_port: 1, dst_port: 4791, ip_version: 4, protocol: 17, ..Flow::default() }];
        let mut w = RecordWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
        for r in &recs {
            w.push(r).unwrap();
        }
        let bytes = w.finish(&flows).unwrap().into_inner();
        // An aligned copy, as a memory map would be.
        let mut aligned = vec![0u64; bytes.len().div_ceil(8)];
        aligned.as_mut_bytes()[..bytes.len()].copy_from_slice(&bytes);
        let view_bytes = &aligned.as_bytes()[..bytes.len()];
        let v = RecordView::parse(view_bytes).unwrap();
        assert_eq!(v.records, &recs[..]);
        assert_eq!(v.flows, &flows[..]);
        assert!(matches!(RecordView::parse(&view_bytes[..view_bytes.len() - 1]), Err(RecordFileError::Size { .. })));
        assert!(matches!(RecordView::parse(&view_bytes[..10]), Err(RecordFileError::Short { .. })));
        let mut bad = view_bytes.to_vec();
        bad[0] = b'X';
        assert!(matches!(RecordView::parse(&bad), Err(RecordFileError::Magic { .. })));
        // A version-1 file (64-byte records) is refused by name, not misread.
        let mut old = aligned.clone();
        let header = &mut old.as_mut_bytes()[..HEADER_LEN];
        header[8..12].copy_from_slice(&1u32.to_le_bytes());
        header[12..16].copy_from_slice(&64u32.to_le_bytes());
        let err = RecordView::parse(&old.as_bytes()[..bytes.len()]).unwrap_err();
        assert_eq!(err, RecordFileError::Version { version: 1, record_len: 64, flow_len: FLOW_LEN as u32 });
        assert!(err.to_string().contains("reconstruct"), "{err}");
    }

    #[test]
    fn wire_seq_undoes_the_unwrapping() {
        let max = u64::from(wire::mirror::SEQ_MAX);
        for (seq, wire) in [(0, 0), (1, 1), (max, wire::mirror::SEQ_MAX), (max + 1, 1), (2 * max + 5, 5)] {
            assert_eq!(Record::default().with_seq(seq).wire_seq(), wire);
        }
    }
}
