//! Lumina mirror metadata, header restoration, and the switch-side rewrite and Lumina's
//! dumper's rewrite (for tests and the testbed emulator).
//!
//! Lumina §3.4 ("Embedding metadata in mirrored packets"): the switch rewrites header
//! fields the analysis does not need — TTL := event type, src MAC := mirror sequence
//! number, dst MAC := ingress timestamp — and (§3.4 "Per-packet load balancing") moves
//! the UDP port so that RSS spreads copies over cores. DESIGN "Lumina mirror format" fixes
//! the exact layout this crate implements:
//!
//! | field            | mirrored copy                                   |
//! |------------------|--------------------------------------------------|
//! | dst MAC          | 48-bit big-endian switch ingress timestamp, ns   |
//! | src MAC          | seq (1..=0x7fffffff) zero-extended to 48 bits    |
//! | IPv4 TTL         | event: 0 none, 1 drop, 2 ECN, 3 bit error        |
//! | IPv6 hop limit   | event (our IPv6 analog of the TTL; Lumina is IPv4-only) |
//! | IPv4 ident       | XOR 0xffff for a bit-error event                 |
//! | UDP dst port     | mirror port (9741) instead of 4791               |
//! | UDP checksum     | the original UDP src port                        |
//! | UDP src port     | random                                           |
//!
//! The copy is taken at ingress before the event, so an ECN event's CE mark is not on it;
//! the dumper re-applies it.

use crate::ethernet::{self, Address};
use crate::frame::{ClassifyConfig, FrameClass, FrameInfo};
use crate::{be, ipv4, ipv6, udp, Error, Result};

/// Largest mirror sequence number; the counter runs 1..=SEQ_MAX and wraps to 1.
pub const SEQ_MAX: u32 = 0x7fff_ffff;
/// Largest timestamp a 48-bit MAC can hold (≈ 78 hours of nanoseconds).
pub const TIMESTAMP_MAX: u64 = (1 << 48) - 1;
/// A bit-error event flips the IPv4 identification of the copy with this mask.
pub const CORRUPT_IDENT_XOR: u16 = 0xffff;

/// The event the switch injected into the original packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Event {
    None = 0,
    Drop = 1,
    Ecn = 2,
    Corrupt = 3,
}

impl Event {
    pub const ALL: [Event; 4] = [Event::None, Event::Drop, Event::Ecn, Event::Corrupt];
    pub const COUNT: usize = Self::ALL.len();

    pub const fn name(self) -> &'static str {
        match self {
            Event::None => "none",
            Event::Drop => "drop",
            Event::Ecn => "ecn",
            Event::Corrupt => "corrupt",
        }
    }
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl TryFrom<u8> for Event {
    type Error = Error;
    fn try_from(v: u8) -> Result<Event> {
        match v {
            0 => Ok(Event::None),
            1 => Ok(Event::Drop),
            2 => Ok(Event::Ecn),
            3 => Ok(Event::Corrupt),
            value => Err(Error::BadMirrorEvent { value }),
        }
    }
}

/// The metadata a mirrored copy carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MirrorMeta {
    /// 1..=[`SEQ_MAX`].
    pub seq: u32,
    /// Switch ingress timestamp, ns, 48 bits.
    pub timestamp_ns: u64,
    pub event: Event,
}

impl MirrorMeta {
    /// Decodes the metadata from the dst MAC, src MAC and TTL / hop limit of a copy.
    /// Inlined: returned through memory, its 48-bit timestamp was read back before the
    /// stores had landed (a store-forwarding stall on every copy).
    #[inline(always)]
    pub fn from_fields(dst_mac: Address, src_mac: Address, ttl: u8) -> Result<MirrorMeta> {
        let seq = seq_from_mac(src_mac)?;
        let event = Event::try_from(ttl)?;
        Ok(MirrorMeta { seq, timestamp_ns: timestamp_from_mac(dst_mac), event })
    }

    /// Whether the metadata can be carried (seq in range, timestamp within 48 bits).
    pub fn check(&self) -> Result<()> {
        if self.seq == 0 || self.seq > SEQ_MAX {
            return Err(Error::BadMirrorSeq { raw: u64::from(self.seq) });
        }
        if self.timestamp_ns > TIMESTAMP_MAX {
            return Err(Error::BadRepr { reason: "mirror timestamp exceeds 48 bits" });
        }
        Ok(())
    }

    /// The dst MAC that carries the timestamp.
    pub fn timestamp_mac(&self) -> Address {
        let b = self.timestamp_ns.to_be_bytes();
        [b[2], b[3], b[4], b[5], b[6], b[7]]
    }

    /// The src MAC that carries the sequence number.
    pub fn seq_mac(&self) -> Address {
        let b = self.seq.to_be_bytes();
        [0, 0, b[0], b[1], b[2], b[3]]
    }
}

fn mac_u48(m: Address) -> u64 {
    u64::from_be_bytes([0, 0, m[0], m[1], m[2], m[3], m[4], m[5]])
}

/// The 48-bit timestamp in a dst MAC.
pub fn timestamp_from_mac(dst_mac: Address) -> u64 {
    mac_u48(dst_mac)
}

/// The sequence number in a src MAC: the upper two bytes must be 0 and the value in
/// 1..=[`SEQ_MAX`]; anything else is not a Lumina copy (or is corrupt).
pub fn seq_from_mac(src_mac: Address) -> Result<u32> {
    let raw = mac_u48(src_mac);
    if raw == 0 || raw > u64::from(SEQ_MAX) {
        return Err(Error::BadMirrorSeq { raw });
    }
    Ok(raw as u32)
}

/// The sequence number after `seq` (SEQ_MAX wraps to 1).
pub const fn next_seq(seq: u32) -> u32 {
    if seq >= SEQ_MAX {
        1
    } else {
        seq + 1
    }
}

/// Steps forward from `from` to `to` on the 1..=SEQ_MAX ring (0 when equal). Reconstruction
/// uses it to size gaps across the wrap.
pub const fn seq_distance(from: u32, to: u32) -> u32 {
    let (a, b) = ((from.wrapping_sub(1)) % SEQ_MAX, (to.wrapping_sub(1)) % SEQ_MAX);
    if b >= a {
        b - a
    } else {
        SEQ_MAX - a + b
    }
}

/// The form in which a mirrored copy reaches a capture file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyForm {
    /// As the switch mirrored it (the table above): what the dataplane receives and what a
    /// raw capture of the mirror traffic holds.
    #[default]
    Mirrored,
    /// As Lumina's own dumper writes it to its pcap (§3.4, its `is_roce_pkt`): UDP src
    /// port := the stashed original, dst := the RoCE port, a UDP checksum computed over the
    /// bytes it kept, CE re-applied for an ECN event, the IPv4 checksum recomputed; MACs
    /// and TTL still carry the metadata.
    Dumped,
}

impl CopyForm {
    /// The configuration under which [`crate::frame::classify`] and
    /// [`crate::frame::peek_mirror`] see copies of this form as mirrored copies: a dumped
    /// copy goes to the RoCE port.
    pub fn classify_config(self, cfg: &ClassifyConfig) -> ClassifyConfig {
        match self {
            CopyForm::Mirrored => *cfg,
            CopyForm::Dumped => ClassifyConfig { mirror_port: cfg.roce_port, roce_port: cfg.roce_port },
        }
    }
}

/// Restores a copy in the switch's form: [`restore_form`] with [`CopyForm::Mirrored`].
pub fn restore(buf: &mut [u8], info: &FrameInfo, cfg: &ClassifyConfig) {
    restore_form(buf, info, cfg, CopyForm::Mirrored);
}

/// Restores a (possibly trimmed) copy of a mirrored frame in place (DESIGN "Lumina mirror
/// format", "Restoration"): UDP dst port := `cfg.roce_port`; UDP src port := the value
/// stashed in the UDP checksum; UDP checksum := 0 (RoCEv2 senders send 0, and a trimmed
/// payload rules out recomputing one); ECN := CE when the event was an ECN mark (the copy
/// predates the mark); IPv4 header checksum recomputed.
///
/// Kept on purpose: TTL / hop limit (event) and the MACs (timestamp, seq), which Lumina's
/// analyzers read there; the IPv4 identification (a bit-error copy carries ident ^ 0xffff
/// — that *is* the corruption, so its ICRC will not verify).
///
/// A [`CopyForm::Dumped`] copy has its ports restored already (its checksum field holds a
/// checksum, no port): only the rest is done, so that it ends as the same frame as the
/// switch's form of the same copy restored.
///
/// Does nothing unless `info.class` is [`FrameClass::MirroredRoce`] (`info` classified
/// under `form.classify_config(cfg)`). Writes each field only if it lies inside `buf`,
/// and the IPv4 checksum only if the whole header is inside. Not idempotent for the
/// switch's form: run it once per copy.
pub fn restore_form(buf: &mut [u8], info: &FrameInfo, cfg: &ClassifyConfig, form: CopyForm) {
    let Some(meta) = info.mirror else { return };
    if info.class != FrameClass::MirroredRoce {
        return;
    }
    let (l3, l4) = (usize::from(info.l3_offset), usize::from(info.l4_offset));
    let csum_at = l4 + udp::field::CHECKSUM.start;
    if form == CopyForm::Mirrored {
        if let Some(src_port) = be::get_u16(buf, csum_at) {
            be::put_u16(buf, l4 + udp::field::SRC_PORT.start, src_port);
        }
        be::put_u16(buf, l4 + udp::field::DST_PORT.start, cfg.roce_port);
    }
    be::put_u16(buf, csum_at, 0);
    let Some(ip) = buf.get_mut(l3..) else { return };
    let ecn_mark = meta.event == Event::Ecn;
    match info.ip_version {
        4 => {
            if ecn_mark {
                if let Some(tos) = ip.get_mut(ipv4::field::DSCP_ECN) {
                    *tos |= ipv4::ecn::CE;
                }
            }
            ipv4::fill_checksum_if_complete(ip);
        }
        6 if ecn_mark => ipv6::set_ecn_if_present(ip, ipv4::ecn::CE),
        _ => {}
    }
}

/// Bytes of each copy Lumina's dumper keeps.
pub const DUMPER_CAPLEN: usize = 128;
/// The Ethernet header the dumper counts in a copy's length, whatever tags it has.
const ETH_HEADER: usize = 14;

/// Lumina's dumper's rewrite of a copy as it writes it to its pcap (its `is_roce_pkt` and
/// `dump_to_file`; for tests and the testbed emulator): ECN := CE for an ECN event when the
/// packet was ECN-capable; UDP src port := the stashed original, dst := `cfg.roce_port`;
/// IPv4 checksum recomputed; the copy cut to [`DUMPER_CAPLEN`] bytes and a UDP checksum
/// computed over what is kept. MACs and TTL / hop limit stay.
///
/// `frame` is a whole copy in the switch's form. Returns the bytes kept and the length
/// the dumper records as the original: the IP length + 14 (no VLAN tag, no padding).
pub fn dumper_rewrite(frame: &mut [u8], cfg: &ClassifyConfig) -> Result<(usize, u32)> {
    let l = crate::frame::locate_udp(frame)?.ok_or(Error::NotUdp)?;
    let (l3, l4) = (l.l3, l.l4);
    let ttl = match l.ip_version {
        4 => ipv4::Packet::new_unchecked(&frame[l3..]).ttl(),
        _ => ipv6::Packet::new_unchecked(&frame[l3..]).hop_limit(),
    };
    let ecn_event = Event::try_from(ttl)? == Event::Ecn;
    let wire_len = if l.ip_version == 4 {
        let mut ip = ipv4::Packet::new_unchecked(&mut frame[l3..]);
        if ecn_event && matches!(ip.ecn(), ipv4::ecn::ECT0 | ipv4::ecn::ECT1) {
            ip.set_ecn(ipv4::ecn::CE);
        }
        ip.fill_checksum();
        usize::from(ip.total_len()) + ETH_HEADER
    } else {
        let mut ip = ipv6::Packet::new_unchecked(&mut frame[l3..]);
        if ecn_event && matches!(ip.ecn(), ipv4::ecn::ECT0 | ipv4::ecn::ECT1) {
            ip.set_ecn(ipv4::ecn::CE);
        }
        usize::from(ip.payload_len()) + ipv6::HEADER_LEN + ETH_HEADER
    };
    {
        let mut u = udp::Packet::new_unchecked(&mut frame[l4..]);
        let orig_src = u.checksum();
        u.set_src_port(orig_src);
        u.set_dst_port(cfg.roce_port);
        u.set_checksum(0);
    }
    let kept = frame.len().min(DUMPER_CAPLEN);
    let sum = dumper_udp_checksum(&frame[..kept], l3, l4, l.ip_version);
    be::put_u16(frame, l4 + udp::field::CHECKSUM.start, sum);
    Ok((kept, wire_len as u32))
}

/// The dumper's UDP checksum: pseudo header (addresses, protocol, the UDP length field)
/// and the UDP bytes kept — not the whole datagram, which it no longer has.
fn dumper_udp_checksum(kept: &[u8], l3: usize, l4: usize, ip_version: u8) -> u16 {
    let udp_len = be::u16_at(kept, l4 + udp::field::LENGTH.start);
    let addrs = match ip_version {
        4 => &kept[l3 + ipv4::field::SRC_ADDR.start..l3 + ipv4::field::DST_ADDR.end],
        _ => &kept[l3 + ipv6::field::SRC_ADDR.start..l3 + ipv6::field::DST_ADDR.end],
    };
    let mut acc = crate::checksum::sum_u32(addrs, 0);
    acc = crate::checksum::sum_u32(&[0, 17], acc);
    acc = crate::checksum::sum_u32(&udp_len.to_be_bytes(), acc);
    acc = crate::checksum::sum_u32(kept.get(l4..).unwrap_or(&[]), acc);
    !crate::checksum::fold(acc)
}

/// The switch's rewrite of one packet into its mirrored copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MirrorRepr {
    pub meta: MirrorMeta,
    /// UDP dst port of the copy (Lumina: 9741).
    pub mirror_port: u16,
    /// The random UDP src port the switch picks to spread copies over RSS queues.
    pub udp_src_port: u16,
}

impl MirrorRepr {
    /// Turns an original UDP frame (normally RoCEv2 to 4791) into its mirrored copy, as
    /// the switch egress does: original src port stashed in the UDP checksum, src port :=
    /// `udp_src_port`, dst port := `mirror_port`, TTL / hop limit := event, MACs := meta,
    /// IPv4 ident ^= 0xffff for a bit-error event, IPv4 checksum recomputed. No CE mark:
    /// the copy is the packet before the event.
    pub fn apply(&self, frame: &mut [u8]) -> Result<()> {
        self.meta.check()?;
        let l = crate::frame::locate_udp(frame)?.ok_or(Error::NotUdp)?;
        let mut eth = ethernet::Frame::new_unchecked(&mut *frame);
        eth.set_dst_addr(self.meta.timestamp_mac());
        eth.set_src_addr(self.meta.seq_mac());
        {
            let mut u = udp::Packet::new_unchecked(&mut frame[l.l4..]);
            let orig_src = u.src_port();
            u.set_checksum(orig_src);
            u.set_src_port(self.udp_src_port);
            u.set_dst_port(self.mirror_port);
        }
        let event = self.meta.event as u8;
        if l.ip_version == 4 {
            let mut ip = ipv4::Packet::new_unchecked(&mut frame[l.l3..]);
            ip.set_ttl(event);
            if self.meta.event == Event::Corrupt {
                let ident = ip.ident();
                ip.set_ident(ident ^ CORRUPT_IDENT_XOR);
            }
            ip.fill_checksum();
        } else {
            ipv6::Packet::new_unchecked(&mut frame[l.l3..]).set_hop_limit(event);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_and_conversion() {
        let names: Vec<_> = Event::ALL.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["none", "drop", "ecn", "corrupt"]);
        for e in Event::ALL {
            assert_eq!(Event::try_from(e as u8), Ok(e));
            assert_eq!(e.index(), e as usize);
        }
        assert_eq!(Event::try_from(4), Err(Error::BadMirrorEvent { value: 4 }));
        assert_eq!(Event::try_from(64), Err(Error::BadMirrorEvent { value: 64 }));
    }

    #[test]
    fn meta_from_macs() {
        let dst = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05];
        let src = [0, 0, 0x7f, 0xff, 0xff, 0xff];
        let m = MirrorMeta::from_fields(dst, src, 2).unwrap();
        assert_eq!(m, MirrorMeta { seq: SEQ_MAX, timestamp_ns: 0x0001_0203_0405, event: Event::Ecn });
        assert_eq!(m.timestamp_mac(), dst);
        assert_eq!(m.seq_mac(), src);
        assert_eq!(
            MirrorMeta::from_fields(dst, [0, 0, 0x80, 0, 0, 0], 0),
            Err(Error::BadMirrorSeq { raw: 0x8000_0000 })
        );
        assert_eq!(MirrorMeta::from_fields(dst, [0; 6], 0), Err(Error::BadMirrorSeq { raw: 0 }));
        assert_eq!(
            MirrorMeta::from_fields(dst, [0, 1, 0, 0, 0, 1], 0),
            Err(Error::BadMirrorSeq { raw: 0x0001_0000_0001 })
        );
        assert_eq!(MirrorMeta::from_fields(dst, [0, 0, 0, 0, 0, 1], 4), Err(Error::BadMirrorEvent { value: 4 }));
    }

    #[test]
    fn meta_check() {
        let ok = MirrorMeta { seq: 1, timestamp_ns: TIMESTAMP_MAX, event: Event::None };
        ok.check().unwrap();
        assert!(matches!(MirrorMeta { seq: 0, ..ok }.check(), Err(Error::BadMirrorSeq { .. })));
        assert!(matches!(MirrorMeta { seq: SEQ_MAX + 1, ..ok }.check(), Err(Error::BadMirrorSeq { .. })));
        assert!(matches!(MirrorMeta { timestamp_ns: 1 << 48, ..ok }.check(), Err(Error::BadRepr { .. })));
    }

    #[test]
    fn seq_ring() {
        assert_eq!(next_seq(1), 2);
        assert_eq!(next_seq(SEQ_MAX), 1);
        assert_eq!(seq_distance(5, 5), 0);
        assert_eq!(seq_distance(5, 9), 4);
        assert_eq!(seq_distance(SEQ_MAX, 1), 1);
        assert_eq!(seq_distance(SEQ_MAX - 1, 2), 3);
        assert_eq!(seq_distance(2, 1), SEQ_MAX - 1);
        let mut s = SEQ_MAX - 3;
        for _ in 0..10 {
            let n = next_seq(s);
            assert_eq!(seq_distance(s, n), 1);
            s = n;
        }
    }
}
