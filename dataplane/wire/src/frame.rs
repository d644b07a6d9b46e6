//! The one-call classifier the dataplane runs on every received frame.
//!
//! O(header) work, no allocation: walk Ethernet (+ up to two VLAN tags), then IPv4/IPv6,
//! UDP and the RoCE headers, or the MAC-control opcode. DESIGN "Lumina mirror format":
//! "Frames that are not mirrored copies (plain RoCE on 4791, PFC, telemetry, anything
//! else) are recorded and classified, never dropped silently" — so anything well formed
//! is `Ok` (possibly [`FrameClass::Other`]) and only malformed frames are `Err`.
//!
//! Not RoCE here: RoCEv1 (ethertype 0x8915; Lumina mirrors RoCEv2 only — its ICRC is
//! still checkable with [`crate::icrc::verify_frame`]), IPv4 fragments, IPv6 with
//! extension headers before UDP, more than two VLAN tags: all classify as `Other`.

use crate::ethernet::{self, ethertype};
use crate::mirror::MirrorMeta;
use crate::{ipv4, ipv6, pfc, roce, udp, Error, Result};

/// What a frame is, for per-class counters and for what the worker does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FrameClass {
    /// A Lumina mirrored copy of a RoCEv2 packet (UDP dst = mirror port, valid metadata).
    MirroredRoce = 0,
    /// Plain RoCEv2 (UDP dst = RoCE port).
    Roce = 1,
    /// 802.1Qbb priority flow control (MAC control opcode 0x0101).
    Pfc = 2,
    /// 802.3x PAUSE (MAC control opcode 0x0001).
    Pause = 3,
    /// Anything else that is well formed.
    Other = 4,
}

impl FrameClass {
    pub const ALL: [FrameClass; 5] =
        [FrameClass::MirroredRoce, FrameClass::Roce, FrameClass::Pfc, FrameClass::Pause, FrameClass::Other];
    pub const COUNT: usize = Self::ALL.len();

    pub const fn index(self) -> usize {
        self as usize
    }
    /// Stable snake_case name for manifests and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            FrameClass::MirroredRoce => "mirrored_roce",
            FrameClass::Roce => "roce",
            FrameClass::Pfc => "pfc",
            FrameClass::Pause => "pause",
            FrameClass::Other => "other",
        }
    }
}

/// Which UDP ports mean what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassifyConfig {
    /// UDP dst port of mirrored copies (Lumina: 9741). Checked before `roce_port`.
    pub mirror_port: u16,
    /// UDP dst port of RoCEv2 (4791).
    pub roce_port: u16,
}

impl Default for ClassifyConfig {
    fn default() -> Self {
        ClassifyConfig { mirror_port: udp::LUMINA_MIRROR_PORT, roce_port: udp::ROCE_PORT }
    }
}

/// Where the layers of a frame are and what the BTH says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    pub class: FrameClass,
    /// Offset of what follows the Ethernet header and tags (the IP header, or the MAC
    /// control opcode); set for every `Ok` frame.
    pub l3_offset: u16,
    /// Offset of the IP payload (UDP header for RoCE); 0 when not IP or a non-first fragment.
    pub l4_offset: u16,
    /// Offset of the BTH; 0 unless RoCE.
    pub bth_offset: u16,
    /// 0, 4 or 6.
    pub ip_version: u8,
    /// Some for [`FrameClass::MirroredRoce`].
    pub mirror: Option<MirrorMeta>,
    /// From the BTH, when present.
    pub opcode: Option<u8>,
    /// From the BTH (24 bits); 0 when absent.
    pub dest_qp: u32,
    /// From the BTH (24 bits); 0 when absent.
    pub psn: u32,
}

impl FrameInfo {
    const fn other(l3_offset: u16) -> FrameInfo {
        FrameInfo {
            class: FrameClass::Other,
            l3_offset,
            l4_offset: 0,
            bth_offset: 0,
            ip_version: 0,
            mirror: None,
            opcode: None,
            dest_qp: 0,
            psn: 0,
        }
    }
}

/// Header offsets are below 100 (14 + 2 × 4 + 60 + 8), so narrowing to the `u16`
/// fields of [`FrameInfo`] never truncates.
#[inline]
fn off(v: usize) -> u16 {
    v as u16
}

/// Classifies a full (untrimmed) frame. `Ok` for every well-formed frame including
/// non-RoCE ones ([`FrameClass::Other`]); `Err` only for malformed frames (the dataplane
/// still records those, unrestored, and counts `err.kind()`).
///
/// Always inlined: returned through memory, its `FrameInfo` was copied out with wide loads
/// over the callee's narrow stores (a store-forwarding stall, ~13 % of `reconstruct`'s
/// per-batch loop in perf annotate).
#[inline(always)]
pub fn classify(frame: &[u8], cfg: &ClassifyConfig) -> Result<FrameInfo> {
    let eth = ethernet::Frame::new_checked(frame)?;
    let l3 = eth.header_len();
    let mut info = FrameInfo::other(off(l3));
    let rest = &frame[l3..];
    match eth.inner_ethertype() {
        ethertype::IPV4 => {
            let ip = ipv4::Packet::new_checked(rest)?;
            info.ip_version = 4;
            if ip.frag_offset() != 0 {
                return Ok(info);
            }
            let l4 = l3 + ip.header_len();
            info.l4_offset = off(l4);
            if ip.protocol() != ipv4::PROTOCOL_UDP || ip.more_frags() {
                return Ok(info);
            }
            classify_udp(frame, ip.payload(), l4, ip.ttl(), cfg, info)
        }
        ethertype::IPV6 => {
            let ip = ipv6::Packet::new_checked(rest)?;
            info.ip_version = 6;
            let l4 = l3 + ipv6::HEADER_LEN;
            info.l4_offset = off(l4);
            if ip.next_header() != ipv6::NEXT_HEADER_UDP {
                return Ok(info);
            }
            classify_udp(frame, ip.payload(), l4, ip.hop_limit(), cfg, info)
        }
        ethertype::MAC_CONTROL => {
            let p = pfc::Packet::new_checked(rest)?;
            info.class = if p.is_pfc() { FrameClass::Pfc } else { FrameClass::Pause };
            Ok(info)
        }
        _ => Ok(info),
    }
}

/// UDP and above. `ttl` is the IPv4 TTL or IPv6 hop limit: the mirror event field.
#[inline(always)]
fn classify_udp(
    frame: &[u8],
    ip_payload: &[u8],
    l4: usize,
    ttl: u8,
    cfg: &ClassifyConfig,
    info: FrameInfo,
) -> Result<FrameInfo> {
    let u = udp::Packet::new_checked(ip_payload)?;
    let dst = u.dst_port();
    let (class, mirror) = if dst == cfg.mirror_port {
        // Lumina §3.4: metadata in TTL / src MAC / dst MAC.
        let eth = ethernet::Frame::new_unchecked(frame);
        (FrameClass::MirroredRoce, Some(MirrorMeta::from_fields(eth.dst_addr(), eth.src_addr(), ttl)?))
    } else if dst == cfg.roce_port {
        (FrameClass::Roce, None)
    } else {
        return Ok(info);
    };
    let r = roce::Packet::new_checked(u.payload())?;
    let bth = r.bth();
    // One struct literal, no field-by-field update of a by-value copy: that pattern made
    // LLVM store narrow fields then reload them 8 bytes wide (a store-forwarding stall).
    Ok(FrameInfo {
        class,
        l3_offset: info.l3_offset,
        l4_offset: info.l4_offset,
        bth_offset: off(l4 + udp::HEADER_LEN),
        ip_version: info.ip_version,
        mirror,
        opcode: Some(bth.opcode().0),
        dest_qp: bth.dest_qp(),
        psn: bth.psn(),
    })
}

/// The mirror metadata of a frame that may be trimmed, read from its headers alone (no
/// length checks beyond them): `Some` when the frame is IPv4/IPv6 UDP to the mirror port,
/// not a fragment, with a valid seq and event. Reconstruction orders by it without
/// classifying the whole frame first.
///
/// Agrees with [`classify`] of the frame padded to its wire length (tested): when
/// `classify` finds a [`FrameClass::MirroredRoce`], this finds the same metadata; when this
/// finds metadata, `classify` finds that copy or an `Err` (lengths or RoCE headers that are
/// malformed, which only `classify` checks).
pub fn peek_mirror(frame: &[u8], cfg: &ClassifyConfig) -> Option<MirrorMeta> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    let ip = &frame[eth.header_len()..];
    let (udp_at, ttl) = match eth.inner_ethertype() {
        ethertype::IPV4 if ip.len() >= ipv4::HEADER_LEN => {
            let p = ipv4::Packet::new_unchecked(ip);
            if p.frag_offset() != 0 || p.more_frags() || p.protocol() != ipv4::PROTOCOL_UDP {
                return None;
            }
            (p.header_len(), p.ttl())
        }
        ethertype::IPV6 if ip.len() >= ipv6::HEADER_LEN => {
            let p = ipv6::Packet::new_unchecked(ip);
            if p.next_header() != ipv6::NEXT_HEADER_UDP {
                return None;
            }
            (ipv6::HEADER_LEN, p.hop_limit())
        }
        _ => return None,
    };
    let u = udp::Packet::new_unchecked(ip.get(udp_at..udp_at + udp::field::DST_PORT.end)?);
    if u.dst_port() != cfg.mirror_port {
        return None;
    }
    MirrorMeta::from_fields(eth.dst_addr(), eth.src_addr(), ttl).ok()
}

/// The mirror metadata of a frame read from a pcap record, when the frame is a copy as
/// Lumina's dumper writes it ([`crate::mirror::CopyForm::Dumped`]): UDP to the RoCE port,
/// a valid seq and event in the src MAC and TTL, and a dst MAC that, read as the 48-bit
/// switch timestamp, is the record's own timestamp (the dumper stamps each record with it)
/// within the file's resolution `ts_unit_ns` (1 for ns files, 1000 for µs ones, which
/// truncate or round it). A plain RoCE capture has real MACs there: its dst MAC is not
/// the capture time, so this finds nothing in it.
pub fn peek_dumped(frame: &[u8], record_ts_ns: u64, ts_unit_ns: u32, cfg: &ClassifyConfig) -> Option<MirrorMeta> {
    let meta = peek_mirror(frame, &crate::mirror::CopyForm::Dumped.classify_config(cfg))?;
    (meta.timestamp_ns.abs_diff(record_ts_ns) < u64::from(ts_unit_ns.max(1))).then_some(meta)
}

/// Layer offsets of a UDP-over-IP frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UdpLayers {
    pub l3: usize,
    pub l4: usize,
    pub ip_version: u8,
}

/// Finds the UDP header of a well-formed frame; `Ok(None)` for frames that are not UDP.
pub(crate) fn locate_udp(frame: &[u8]) -> Result<Option<UdpLayers>> {
    let eth = ethernet::Frame::new_checked(frame)?;
    let l3 = eth.header_len();
    let rest = &frame[l3..];
    let (l4, ip_version, payload) = match eth.inner_ethertype() {
        ethertype::IPV4 => {
            let ip = ipv4::Packet::new_checked(rest)?;
            if ip.protocol() != ipv4::PROTOCOL_UDP || ip.is_fragment() {
                return Ok(None);
            }
            (l3 + ip.header_len(), 4, &rest[ip.payload_range()])
        }
        ethertype::IPV6 => {
            let ip = ipv6::Packet::new_checked(rest)?;
            if ip.next_header() != ipv6::NEXT_HEADER_UDP {
                return Ok(None);
            }
            (l3 + ipv6::HEADER_LEN, 6, &rest[ip.payload_range()])
        }
        _ => return Ok(None),
    };
    udp::Packet::new_checked(payload)?;
    Ok(Some(UdpLayers { l3, l4, ip_version }))
}

// The hot path returns `Result<FrameInfo, Error>` by value; keep `Error` small.
const _: () = assert!(core::mem::size_of::<Error>() <= 24);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_and_indices() {
        let names: Vec<_> = FrameClass::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, ["mirrored_roce", "roce", "pfc", "pause", "other"]);
        for (i, c) in FrameClass::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
        assert_eq!(FrameClass::COUNT, 5);
    }

    #[test]
    fn default_ports() {
        assert_eq!(ClassifyConfig::default(), ClassifyConfig { mirror_port: 9741, roce_port: 4791 });
    }

    #[test]
    fn non_ip_is_other() {
        let mut arp = [0u8; 60];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let i = classify(&arp, &ClassifyConfig::default()).unwrap();
        assert_eq!(i.class, FrameClass::Other);
        assert_eq!((i.l3_offset, i.l4_offset, i.bth_offset, i.ip_version), (14, 0, 0, 0));
        assert_eq!(classify(&arp[..13], &ClassifyConfig::default()), Err(Error::Runt { len: 13 }));
    }
}
