//! One RC connection of the test: the requester's and the responder's QP, with the
//! runtime metadata Lumina's traffic generators exchange and share with the switch
//! (§3.2–3.3: IP, QPN and initial PSN, drawn at random).

use std::net::Ipv4Addr;

use crate::config::{parse_ip, RigConfig};
use crate::packet::Side;
use crate::rng::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Endpoint {
    pub ip: Ipv4Addr,
    pub qpn: u32,
    pub ipsn: u32,
    /// RoCEv2 UDP source port of the QP (NICs derive it from the QPN to spread ECMP).
    pub udp_src_port: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Conn {
    pub requester: Endpoint,
    pub responder: Endpoint,
}

impl Conn {
    pub fn end(&self, side: Side) -> &Endpoint {
        match side {
            Side::Requester => &self.requester,
            Side::Responder => &self.responder,
        }
    }

    /// The wire PSN of a PSN offset (every packet of our traffic uses the requester's
    /// PSN space: requests, their ACKs and READ responses).
    pub fn wire_psn(&self, offset: u64) -> u32 {
        wire::psn::add(self.requester.ipsn, (offset & u64::from(wire::psn::MASK)) as u32)
    }
}

/// Draws every connection's QPNs and initial PSNs. QPNs are distinct per host and avoid
/// the reserved QP0/QP1; with `multi-gid`, connection i uses address i of the host's list.
pub fn establish(cfg: &RigConfig, rng: &mut Rng) -> Vec<Conn> {
    let n = cfg.traffic.num_connections as usize;
    let mut used = [std::collections::HashSet::new(), std::collections::HashSet::new()];
    let mut endpoint = |side: Side, i: usize, rng: &mut Rng| {
        let host = match side {
            Side::Requester => &cfg.requester,
            Side::Responder => &cfg.responder,
        };
        let ips = &host.nic.ip_list;
        let ip_text = if cfg.traffic.multi_gid { &ips[i % ips.len()] } else { &ips[0] };
        let ip = parse_ip(ip_text).expect("validated");
        let qpn = loop {
            let q = rng.between(2, 0xff_ffff) as u32;
            if used[side.idx()].insert(q) {
                break q;
            }
        };
        let ipsn = rng.u32() & wire::psn::MASK;
        Endpoint { ip, qpn, ipsn, udp_src_port: 0xc000 | (qpn as u16 & 0x3fff) }
    };
    (0..n)
        .map(|i| {
            let requester = endpoint(Side::Requester, i, rng);
            let responder = endpoint(Side::Responder, i, rng);
            Conn { requester, responder }
        })
        .collect()
}
