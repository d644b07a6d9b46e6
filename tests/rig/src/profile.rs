//! RNIC profiles: the behaviours Lumina measured on four NICs (Lumina §6), as numbers the
//! RNIC model draws from.
//!
//! Sources, per field: NACK generation and reaction latencies — §6.1 and Figures 8–9 (CX5
//! and CX6 Dx generate a NACK in ≈2 µs and react in 2–6 µs; CX4 Lx reacts in hundreds of
//! µs and generates READ NACKs in ≈150 µs; E810 generates WRITE NACKs in ≈10 µs and READ
//! NACKs in ≈83 ms). CNP rate limiting — §6.3 (E810 has a hidden 50 µs interval and limits
//! per QP; CX4 Lx limits per destination IP; CX5 and CX6 Dx per port). MigReq — §6.2.3
//! (E810 sends 0, CX5 sends 1). Adaptive retransmission — §6.3 (CX NICs; the CX6 Dx
//! timeout sequence is the paper's; retry_cnt 7 gives 8–13 tries). Counter bugs — §6.2.4.
//!
//! Where the paper gives no figure the value is ours and says so: ACK and CNP generation
//! delays, E810's NACK reaction, and the READ NACK generation of CX5/CX6 Dx (the paper only
//! says READ is slower than WRITE on every NIC).

use serde::{Deserialize, Serialize};

/// The NICs of Lumina §6, under Lumina's config names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NicKind {
    #[serde(rename = "cx4", alias = "cx4lx", alias = "CX4")]
    Cx4Lx,
    #[serde(rename = "cx5", alias = "CX5")]
    Cx5,
    #[serde(rename = "cx6", alias = "cx6dx", alias = "CX6")]
    Cx6Dx,
    #[serde(rename = "e810", alias = "E810")]
    E810,
}

impl NicKind {
    pub const ALL: [NicKind; 4] = [NicKind::Cx4Lx, NicKind::Cx5, NicKind::Cx6Dx, NicKind::E810];

    pub const fn name(self) -> &'static str {
        match self {
            NicKind::Cx4Lx => "cx4",
            NicKind::Cx5 => "cx5",
            NicKind::Cx6Dx => "cx6",
            NicKind::E810 => "e810",
        }
    }

    pub const fn vendor(self) -> Vendor {
        match self {
            NicKind::E810 => Vendor::Intel,
            _ => Vendor::Nvidia,
        }
    }

    pub fn profile(self) -> NicProfile {
        NicProfile::of(self)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Intel,
}

/// A latency drawn uniformly from `min_ns..=max_ns` each time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Latency {
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Latency {
    pub const fn fixed(ns: u64) -> Latency {
        Latency { min_ns: ns, max_ns: ns }
    }
    pub const fn between(min_ns: u64, max_ns: u64) -> Latency {
        Latency { min_ns, max_ns }
    }
    pub fn contains(&self, ns: u64) -> bool {
        (self.min_ns..=self.max_ns).contains(&ns)
    }
}

/// Which CNPs share one rate limiter (Lumina §6.3 "Different CNP rate limiting modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpScope {
    /// One limiter for the NIC port (CX5, CX6 Dx).
    Port,
    /// One per destination IP (CX4 Lx).
    DestIp,
    /// One per QP (E810).
    Qp,
}

/// The minimum interval between two CNPs of one limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpInterval {
    /// `min-time-between-cnps` from the host's roce-parameters (NVIDIA).
    Configured,
    /// Fixed in hardware whatever is configured (E810: a hidden 50 µs).
    Hidden { ns: u64 },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NicProfile {
    pub kind: NicKind,
    pub vendor: Vendor,
    /// Port speed of the model in Lumina's testbed (§6: CX4 Lx 40 GbE, others 100 GbE).
    pub link_gbps: f64,
    /// Responder: out-of-sequence WRITE/SEND packet seen → NAK sent.
    pub nack_gen_write: Latency,
    /// READ requester: out-of-sequence response seen → new READ request sent.
    pub nack_gen_read: Latency,
    /// Requester: NAK received → first retransmitted packet sent.
    pub nack_reaction: Latency,
    /// READ responder: repeated READ request received → first response sent again.
    pub read_reaction: Latency,
    /// Responder: request received → its ACK (or READ response) sent. Ours: 1 µs.
    pub ack_delay: Latency,
    /// NP: ECN-marked packet received → CNP sent. Ours: 1 µs.
    pub cnp_delay: Latency,
    pub cnp_scope: CnpScope,
    pub cnp_interval: CnpInterval,
    /// BTH MigReq on every packet this NIC sends.
    pub mig_req: bool,
    /// With `slow-restart` on, an out-of-sequence arrival sends a CNP along with the NAK
    /// (Lumina §4 "Congestion notification"; Lumina's CNP checker expects it of CX5 and
    /// CX6 Dx only).
    pub cnp_on_nak: bool,
    /// Adaptive retransmission exists (NVIDIA) and these are its timeouts, ns, for the
    /// 1st, 2nd, ... timeout of a message (then doubling).
    pub adaptive_timeouts_ns: &'static [u64],
    /// Extra tries adaptive mode makes beyond retry_cnt: 7 gives 8–13 tries (§6.3).
    pub adaptive_extra_retries: (u8, u8),
}

/// CX6 Dx, `timeout` 14, tail packet dropped 7 times (Lumina §6.3).
const CX_ADAPTIVE_TIMEOUTS_NS: &[u64] =
    &[5_600_000, 4_100_000, 8_400_000, 16_700_000, 25_100_000, 67_100_000, 134_200_000];

impl NicProfile {
    pub fn of(kind: NicKind) -> NicProfile {
        let cx = |link_gbps, nack_reaction, nack_gen_read, cnp_scope| NicProfile {
            kind,
            vendor: Vendor::Nvidia,
            link_gbps,
            nack_gen_write: Latency::between(1_800, 2_200),
            nack_gen_read,
            nack_reaction,
            read_reaction: nack_reaction,
            ack_delay: Latency::between(900, 1_100),
            cnp_delay: Latency::between(900, 1_100),
            cnp_scope,
            cnp_interval: CnpInterval::Configured,
            mig_req: true,
            cnp_on_nak: !matches!(kind, NicKind::Cx4Lx),
            adaptive_timeouts_ns: CX_ADAPTIVE_TIMEOUTS_NS,
            adaptive_extra_retries: (1, 6),
        };
        match kind {
            NicKind::Cx4Lx => {
                cx(40.0, Latency::between(150_000, 250_000), Latency::between(140_000, 160_000), CnpScope::DestIp)
            }
            NicKind::Cx5 => cx(100.0, Latency::between(2_000, 6_000), Latency::between(3_000, 5_000), CnpScope::Port),
            NicKind::Cx6Dx => cx(100.0, Latency::between(2_000, 6_000), Latency::between(3_000, 5_000), CnpScope::Port),
            NicKind::E810 => NicProfile {
                kind,
                vendor: Vendor::Intel,
                link_gbps: 100.0,
                nack_gen_write: Latency::between(9_000, 11_000),
                nack_gen_read: Latency::between(82_000_000, 84_000_000),
                // Not in the paper: "significantly higher than CX5/CX6 Dx" (§6.1).
                nack_reaction: Latency::between(20_000, 40_000),
                read_reaction: Latency::between(20_000, 40_000),
                ack_delay: Latency::between(900, 1_100),
                cnp_delay: Latency::between(900, 1_100),
                cnp_scope: CnpScope::Qp,
                cnp_interval: CnpInterval::Hidden { ns: 50_000 },
                mig_req: false,
                cnp_on_nak: false,
                adaptive_timeouts_ns: &[],
                adaptive_extra_retries: (0, 0),
            },
        }
    }

    pub fn supports_adaptive_retrans(&self) -> bool {
        !self.adaptive_timeouts_ns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_match_the_papers_figures() {
        let cx5 = NicKind::Cx5.profile();
        assert!(cx5.nack_gen_write.contains(2_000));
        assert_eq!((cx5.nack_reaction.min_ns, cx5.nack_reaction.max_ns), (2_000, 6_000));
        let cx4 = NicKind::Cx4Lx.profile();
        assert!(cx4.nack_reaction.min_ns >= 100_000, "hundreds of µs");
        assert!(cx4.nack_gen_read.contains(150_000));
        assert_eq!(cx4.cnp_scope, CnpScope::DestIp);
        let e810 = NicKind::E810.profile();
        assert!(e810.nack_gen_write.contains(10_000));
        assert!(e810.nack_gen_read.contains(83_000_000));
        assert_eq!(e810.cnp_interval, CnpInterval::Hidden { ns: 50_000 });
        assert_eq!(e810.cnp_scope, CnpScope::Qp);
        assert!(!e810.mig_req && cx5.mig_req);
        assert!(!e810.supports_adaptive_retrans());
        assert_eq!(NicKind::Cx6Dx.profile().cnp_scope, CnpScope::Port);
    }

    #[test]
    fn names_round_trip_through_yaml() {
        for k in NicKind::ALL {
            let back: NicKind = serde_yaml_ng::from_str(k.name()).unwrap();
            assert_eq!(back, k);
        }
        let alias: NicKind = serde_yaml_ng::from_str("cx6dx").unwrap();
        assert_eq!(alias, NicKind::Cx6Dx);
    }
}
