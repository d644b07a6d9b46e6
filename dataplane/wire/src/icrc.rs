//! The RoCE invariant CRC (ICRC).
//!
//! DESIGN "RoCEv2": IEEE CRC-32 (not CRC-32C) over 8 × 0xFF ‖ IP/UDP/BTH headers with the
//! fields a network may change masked to 1s ‖ the rest of the packet up to the ICRC.
//! Masked: IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow label, hop limit;
//! UDP checksum; BTH byte 4 (resv8a, which holds FECN/BECN). The 8 × 0xFF stand in for
//! the InfiniBand LRH, whose fields are all variant. RoCEv1 is the same over the GRH
//! (IPv6 layout) with no UDP header.
//!
//! Because every field a Lumina mirror rewrites except the UDP ports and (for bit errors)
//! the IPv4 identification is masked or outside the ICRC, a correctly restored copy
//! verifies again (DESIGN "Test data and oracles").
//!
//! **Value convention**: functions return the CRC as a `u32` whose big-endian bytes are
//! the wire bytes — the form tshark (`infiniband.invariant.crc`) and scapy print. The CRC
//! register itself is transmitted least-significant byte first, hence the byte swap.

use crc32fast::Hasher;

use crate::roce::ICRC_LEN;
use crate::{bth, ipv4, ipv6, udp, Error, Result};

const LRH_STANDIN: [u8; 8] = [0xff; 8];
const MAX_IPV4_HEADER: usize = 60;

/// Where the RoCE packet lies inside an IP datagram: (IP version, IP header length, end
/// of the UDP datagram — which is where the ICRC ends).
fn v2_bounds(ip: &[u8]) -> Result<(u8, usize, usize)> {
    match ip.first().map(|b| b >> 4) {
        Some(4) => {
            let p = ipv4::Packet::new_checked(ip)?;
            if p.protocol() != ipv4::PROTOCOL_UDP || p.is_fragment() {
                return Err(Error::NotUdp);
            }
            let u = udp::Packet::new_checked(p.payload())?;
            Ok((4, p.header_len(), p.header_len() + usize::from(u.len())))
        }
        Some(6) => {
            let p = ipv6::Packet::new_checked(ip)?;
            if p.next_header() != ipv6::NEXT_HEADER_UDP {
                return Err(Error::NotUdp);
            }
            let u = udp::Packet::new_checked(p.payload())?;
            Ok((6, ipv6::HEADER_LEN, ipv6::HEADER_LEN + usize::from(u.len())))
        }
        Some(version) => Err(Error::BadIpv4Version { version }),
        None => Err(Error::TruncatedIpv4),
    }
}

/// Checks that a BTH and an ICRC fit between `start` and `end`.
fn check_bth_room(start: usize, end: usize) -> Result<()> {
    let len = end.saturating_sub(start);
    if len < bth::HEADER_LEN {
        Err(Error::TruncatedBth)
    } else if len < bth::HEADER_LEN + ICRC_LEN {
        Err(Error::TruncatedIcrc)
    } else {
        Ok(())
    }
}

/// Feeds a BTH with resv8a masked.
fn update_bth(h: &mut Hasher, b: &[u8]) {
    let mut bth = [0u8; bth::HEADER_LEN];
    bth.copy_from_slice(&b[..bth::HEADER_LEN]);
    bth[bth::field::RESV8A] = 0xff;
    h.update(&bth);
}

/// Feeds an IPv6 header / GRH with traffic class, flow label and hop limit masked.
fn update_ipv6_masked(h: &mut Hasher, b: &[u8]) {
    let mut hdr = [0u8; ipv6::HEADER_LEN];
    hdr.copy_from_slice(&b[..ipv6::HEADER_LEN]);
    hdr[0] |= 0x0f;
    hdr[1] = 0xff;
    hdr[2] = 0xff;
    hdr[3] = 0xff;
    hdr[ipv6::field::HOP_LIMIT] = 0xff;
    h.update(&hdr);
}

fn finish(h: Hasher) -> u32 {
    h.finalize().swap_bytes()
}

/// ICRC of the RoCEv2 packet in the IP datagram `ip` (IPv4 or IPv6 header first, any
/// trailing Ethernet padding ignored; the packet ends at the UDP length).
pub fn compute(ip: &[u8]) -> Result<u32> {
    let (version, ip_hl, end) = v2_bounds(ip)?;
    let udp_start = ip_hl;
    let bth_start = udp_start + udp::HEADER_LEN;
    check_bth_room(bth_start, end)?;
    let mut h = Hasher::new();
    h.update(&LRH_STANDIN);
    if version == 6 {
        update_ipv6_masked(&mut h, ip);
    } else {
        let mut hdr = [0u8; MAX_IPV4_HEADER];
        let hdr = &mut hdr[..ip_hl];
        hdr.copy_from_slice(&ip[..ip_hl]);
        hdr[ipv4::field::DSCP_ECN] = 0xff;
        hdr[ipv4::field::TTL] = 0xff;
        hdr[ipv4::field::CHECKSUM].fill(0xff);
        h.update(hdr);
    }
    let mut udp_hdr = [0u8; udp::HEADER_LEN];
    udp_hdr.copy_from_slice(&ip[udp_start..bth_start]);
    udp_hdr[udp::field::CHECKSUM].fill(0xff);
    h.update(&udp_hdr);
    update_bth(&mut h, &ip[bth_start..]);
    h.update(&ip[bth_start + bth::HEADER_LEN..end - ICRC_LEN]);
    Ok(finish(h))
}

/// The ICRC carried in the datagram (last 4 bytes of the UDP payload).
pub fn read(ip: &[u8]) -> Result<u32> {
    let (_, ip_hl, end) = v2_bounds(ip)?;
    check_bth_room(ip_hl + udp::HEADER_LEN, end)?;
    let b = &ip[end - ICRC_LEN..end];
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether the carried ICRC matches the computed one.
pub fn verify(ip: &[u8]) -> Result<bool> {
    Ok(compute(ip)? == read(ip)?)
}

/// Computes and writes the ICRC of the datagram.
pub fn fill(ip: &mut [u8]) -> Result<()> {
    let crc = compute(ip)?;
    let (_, _, end) = v2_bounds(ip)?;
    ip[end - ICRC_LEN..end].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// GRH length check and the end of the packet it announces (RoCEv1).
fn v1_end(grh: &[u8]) -> Result<usize> {
    let p = ipv6::Packet::new_checked(grh)?;
    let end = ipv6::HEADER_LEN + usize::from(p.payload_len());
    check_bth_room(ipv6::HEADER_LEN, end)?;
    Ok(end)
}

/// ICRC of a RoCEv1 packet: `grh` starts at the GRH (after ethertype 0x8915); the packet
/// ends at the GRH payload length, which covers BTH through ICRC.
pub fn compute_roce_v1(grh: &[u8]) -> Result<u32> {
    let end = v1_end(grh)?;
    let mut h = Hasher::new();
    h.update(&LRH_STANDIN);
    update_ipv6_masked(&mut h, grh);
    update_bth(&mut h, &grh[ipv6::HEADER_LEN..]);
    h.update(&grh[ipv6::HEADER_LEN + bth::HEADER_LEN..end - ICRC_LEN]);
    Ok(finish(h))
}

/// The ICRC carried by a RoCEv1 packet.
pub fn read_roce_v1(grh: &[u8]) -> Result<u32> {
    let end = v1_end(grh)?;
    let b = &grh[end - ICRC_LEN..end];
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether a RoCEv1 packet's ICRC matches.
pub fn verify_roce_v1(grh: &[u8]) -> Result<bool> {
    Ok(compute_roce_v1(grh)? == read_roce_v1(grh)?)
}

/// Verifies the ICRC of a whole Ethernet frame carrying RoCEv2 (IPv4/IPv6, any VLAN
/// tags) or RoCEv1 (ethertype 0x8915). Errors for frames that carry neither.
pub fn verify_frame(frame: &[u8]) -> Result<bool> {
    let eth = crate::ethernet::Frame::new_checked(frame)?;
    let l3 = &frame[eth.header_len()..];
    match eth.inner_ethertype() {
        crate::ethernet::ethertype::ROCE_V1 => verify_roce_v1(l3),
        crate::ethernet::ethertype::IPV4 | crate::ethernet::ethertype::IPV6 => verify(l3),
        _ => Err(Error::NotUdp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // IP datagram of the scapy UC SEND Only IPv4 vector: expected ICRC 0x78f353f3.
    const SCAPY_V4: &str = "450100400478400040 11b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf1710\
                            4630818be28935d90e9a955054 01be885e50000078f353f3";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn scapy_ipv4_vector() {
        let ip = hex(SCAPY_V4);
        assert_eq!(compute(&ip).unwrap(), 0x78f3_53f3);
        assert_eq!(read(&ip).unwrap(), 0x78f3_53f3);
        assert!(verify(&ip).unwrap());
    }

    #[test]
    fn masked_fields_do_not_matter_and_others_do() {
        let ip = hex(SCAPY_V4);
        let good = compute(&ip).unwrap();
        for (at, v) in [(1usize, 0xe3u8), (8, 0), (10, 0x12), (11, 0x34), (26, 0x55), (27, 0x66), (32, 0xc0)] {
            let mut m = ip.clone();
            m[at] = v;
            assert_eq!(compute(&m).unwrap(), good, "byte {at} is masked");
        }
        // Identification, UDP ports, opcode and payload are covered.
        for at in [4usize, 20, 22, 28, 40] {
            let mut m = ip.clone();
            m[at] ^= 0x01;
            assert_ne!(compute(&m).unwrap(), good, "byte {at} is covered");
        }
    }

    #[test]
    fn fill_writes_verifiable_icrc_and_padding_is_ignored() {
        let mut ip = hex(SCAPY_V4);
        let n = ip.len();
        ip[n - 4..].fill(0);
        ip.extend_from_slice(&[0xaa; 6]);
        assert!(!verify(&ip).unwrap());
        fill(&mut ip).unwrap();
        assert_eq!(read(&ip).unwrap(), 0x78f3_53f3);
        assert_eq!(&ip[n..], &[0xaa; 6]);
    }

    #[test]
    fn ipv4_options_are_covered() {
        // The scapy datagram with 20 bytes of options (IHL 10 = 40 bytes, the IPv6 header
        // length: the version, not the length, must pick the masking).
        let base = hex(SCAPY_V4);
        let mut ip = base[..20].to_vec();
        ip.extend_from_slice(&[0x01; 20]); // NOP options
        ip.extend_from_slice(&base[20..]);
        ip[0] = 0x4a;
        ip[2..4].copy_from_slice(&84u16.to_be_bytes());
        let c = compute(&ip).unwrap();
        assert_ne!(c, 0x78f3_53f3);
        let mut m = ip.clone();
        m[8] = 1; // TTL: masked
        assert_eq!(compute(&m).unwrap(), c);
        let mut m = ip.clone();
        m[30] = 0x00; // an option byte: covered
        assert_ne!(compute(&m).unwrap(), c);
    }

    #[test]
    fn errors() {
        let ip = hex(SCAPY_V4);
        assert_eq!(compute(&[]).unwrap_err(), Error::TruncatedIpv4);
        assert_eq!(compute(&ip[..19]).unwrap_err(), Error::TruncatedIpv4);
        let mut m = ip.clone();
        m[9] = 6;
        assert_eq!(compute(&m).unwrap_err(), Error::NotUdp);
        // UDP length 8 + 14: a BTH but no room for the ICRC.
        let mut m = ip.clone();
        m[2..4].copy_from_slice(&[0, 42]);
        m[24..26].copy_from_slice(&[0, 22]);
        assert_eq!(compute(&m).unwrap_err(), Error::TruncatedIcrc);
        m[24..26].copy_from_slice(&[0, 18]);
        assert_eq!(compute(&m).unwrap_err(), Error::TruncatedBth);
        assert!(matches!(verify_frame(&[0u8; 10]), Err(Error::Runt { .. })));
    }
}
