//! Scale mode: a large run for benchmarks — many QPs of WRITE traffic at line rate, a drop
//! in some of them, copies trimmed to a snap length and split over several dump hosts.

use crate::config::{ConfigError, DataPktEvent, EventKind, RigConfig};

#[derive(Debug, Clone)]
pub struct Scale {
    pub qps: u32,
    /// Data packets in total (rounded up to whole messages on every QP).
    pub packets: u64,
    /// Packets per message (MTU 1024).
    pub msg_pkts: u32,
    /// Drop one data packet in every this many QPs (0: none).
    pub drop_every_qps: u32,
    pub dump_hosts: usize,
    pub snaplen: u32,
    /// NIC model of both hosts (Lumina's config name).
    pub nic: String,
    pub seed: u64,
}

impl Default for Scale {
    fn default() -> Self {
        Scale {
            qps: 4096,
            packets: 10_000_000,
            msg_pkts: 16,
            drop_every_qps: 64,
            dump_hosts: 2,
            snaplen: 128,
            nic: "cx6".into(),
            seed: 1,
        }
    }
}

impl Scale {
    pub fn config(&self) -> Result<RigConfig, ConfigError> {
        if self.qps == 0 || self.msg_pkts == 0 || self.dump_hosts == 0 {
            return Err(ConfigError::Invalid("scale: qps, msg-pkts and dump-hosts must be at least 1".into()));
        }
        let msgs = self.packets.div_ceil(u64::from(self.qps) * u64::from(self.msg_pkts)).max(1);
        let host =
            |port: u16, ip: &str| format!("  nic: {{type: {}, switch-port: {port}, ip-list: [{ip}]}}\n", self.nic);
        let dumps: String = (0..self.dump_hosts).map(|i| format!("  - {{name: dump{i}}}\n")).collect();
        // Timeout 4.096 µs × 2^14 ≈ 67 ms: longer than a round of thousands of QPs
        // sharing the link, so only the injected drops cause retransmissions.
        let text = format!(
            "requester:\n{}responder:\n{}traffic:\n  num-connections: {}\n  rdma-verb: write\n  num-msgs-per-qp: {msgs}\n  mtu: 1024\n  message-size: {}\n  tx-depth: 1\n  min-retransmit-timeout: 14\nrig:\n  seed: {}\n  snaplen: {}\n  mirror-buffer-bytes: 0\n  dump-hosts:\n{dumps}",
            host(1, "192.0.2.1/24"),
            host(2, "192.0.2.2/24"),
            self.qps,
            self.msg_pkts * 1024,
            self.seed,
            self.snaplen,
        );
        let mut cfg = RigConfig::from_yaml(&text)?;
        if self.drop_every_qps > 0 {
            cfg.traffic.data_pkt_events = (1..=self.qps)
                .step_by(self.drop_every_qps as usize)
                .map(|qpn| DataPktEvent { qpn, psn: self.msg_pkts.min(5), kind: EventKind::Drop, iter: 1 })
                .collect();
            cfg.validate()?;
        }
        Ok(cfg)
    }
}
