//! Shared by the rig's integration tests: configurations built from a few knobs, and
//! runs kept in memory.

#![allow(dead_code)]

use rig::config::{DataPktEvent, EventKind, RigConfig, Verb};
use rig::profile::NicKind;
use rig::{Capture, Rig, RunResult};

#[derive(Debug, Clone)]
pub struct Knobs {
    pub seed: u64,
    pub verb: Verb,
    pub nic: NicKind,
    pub conns: u32,
    pub msgs: u32,
    pub msg_pkts: u32,
    pub tx_depth: u32,
    pub barrier: bool,
    pub min_time_between_cnps: u32,
    pub slow_restart: bool,
    pub adaptive: bool,
    /// DCQCN's reaction point on both hosts (written only when on: off is the default).
    pub rp_enable: bool,
    pub timeout: u8,
    pub multi_gid: bool,
    pub dump_hosts: Vec<u32>,
    pub events: Vec<DataPktEvent>,
    pub faults: String,
    pub extra_rig: String,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            seed: 1,
            verb: Verb::Write,
            nic: NicKind::Cx5,
            conns: 1,
            msgs: 4,
            msg_pkts: 8,
            tx_depth: 1,
            barrier: false,
            min_time_between_cnps: 0,
            slow_restart: false,
            adaptive: false,
            rp_enable: false,
            timeout: 14,
            multi_gid: false,
            dump_hosts: vec![1],
            events: Vec::new(),
            faults: String::new(),
            extra_rig: String::new(),
        }
    }
}

pub fn ev(qpn: u32, psn: u32, kind: EventKind, iter: u32) -> DataPktEvent {
    DataPktEvent { qpn, psn, kind, iter }
}

impl Knobs {
    pub fn yaml(&self) -> String {
        let host = |port: u16, ips: &str| {
            format!(
                "  nic: {{type: {}, switch-port: {port}, ip-list: [{ips}]}}\n  roce-parameters: {{{}dcqcn-np-enable: true, min-time-between-cnps: {}, slow-restart: {}, adaptive-retrans: {}}}\n",
                self.nic.name(),
                if self.rp_enable { "dcqcn-rp-enable: true, " } else { "" },
                self.min_time_between_cnps,
                self.slow_restart,
                self.adaptive
            )
        };
        let events: String = self
            .events
            .iter()
            .map(|e| format!("  - {{qpn: {}, psn: {}, type: {}, iter: {}}}\n", e.qpn, e.psn, e.kind.name(), e.iter))
            .collect();
        let dumps: String = self.dump_hosts.iter().map(|w| format!("  - {{weight: {w}}}\n")).collect();
        format!(
            "requester:\n{}responder:\n{}traffic:\n  num-connections: {}\n  rdma-verb: {}\n  num-msgs-per-qp: {}\n  mtu: 1024\n  message-size: {}\n  multi-gid: {}\n  barrier-sync: {}\n  tx-depth: {}\n  min-retransmit-timeout: {}\n  max-retransmit-retry: 7\n  data-pkt-events:{}rig:\n  seed: {}\n  dump-hosts:\n{}{}{}",
            host(1, "192.0.2.1/24, 192.0.2.11/24"),
            host(2, "192.0.2.2/24, 192.0.2.12/24"),
            self.conns,
            self.verb.name(),
            self.msgs,
            self.msg_pkts * 1024,
            self.multi_gid,
            self.barrier,
            self.tx_depth,
            self.timeout,
            if events.is_empty() { " []\n".to_string() } else { format!("\n{events}") },
            self.seed,
            dumps,
            if self.faults.is_empty() { String::new() } else { format!("  faults:\n{}", self.faults) },
            self.extra_rig,
        )
    }

    pub fn config(&self) -> RigConfig {
        let text = self.yaml();
        RigConfig::from_yaml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }
}

pub fn run(cfg: &RigConfig) -> RunResult {
    Rig::new(cfg, Capture::Memory, true).expect("memory capture").run().expect("memory capture")
}
