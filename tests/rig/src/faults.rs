//! Fault knobs: ways the rig can be made to misbehave so that the checkers that read its
//! output have something to find. Every fault that fires is listed in the ground truth.

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, RigConfig};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Faults {
    /// Mirrored copies lost between the switch and a dump host (a dumper drop, a bad
    /// cable): the integrity check must report exactly these.
    #[serde(default)]
    pub lose_mirror_copies: Vec<LoseCopies>,
    /// Extra delay per dump host (index = position in `rig.dump-hosts`), ns: the hosts'
    /// files interleave differently in time, so a merge must go by mirror seq.
    #[serde(default)]
    pub dump_host_delay_ns: Vec<u64>,
    /// Reorder copies inside one dump host (RSS queues, several writer cores).
    #[serde(default)]
    pub reorder: Vec<Reorder>,
    /// RNIC transport bugs (Go-back-N violations).
    #[serde(default)]
    pub gbn_violations: Vec<GbnViolation>,
    /// Counters that lie.
    #[serde(default)]
    pub counter_lies: Vec<CounterLie>,
    /// Turn on the counter bugs Lumina found (§6.2.4): E810 `cnpSent` never counts, CX4 Lx
    /// `implied_nak_seq_err` never counts.
    #[serde(default)]
    pub paper_counter_bugs: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LoseCopies {
    pub dump_host: usize,
    /// These mirror sequence numbers, if they go to that host.
    #[serde(default)]
    pub seqs: Vec<u32>,
    /// Or this many of the host's copies, picked by the seed.
    #[serde(default)]
    pub count: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Reorder {
    pub dump_host: usize,
    /// Chance that a copy swaps places with the next one written.
    pub probability: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct GbnViolation {
    pub kind: GbnViolationKind,
    /// Relative QPN (from 1).
    pub qpn: u32,
    /// Relative PSN (from 1) the violation is about.
    pub psn: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GbnViolationKind {
    /// The receiver's first NAK for expected PSN `psn` names `psn + 1` instead.
    NakWrongPsn,
    /// The data sender transmits `psn + 1` before `psn` the first time round: out-of-order
    /// data that is not a retransmission.
    OooData,
    /// READ: at its first gap expecting response `psn`, the requester does not repeat its
    /// request (its NAK, Lumina §6.1) and leaves the recovery to its retransmission timer.
    ReadNoNak,
    /// READ: at its first gap expecting response `psn`, the requester repeats its request
    /// twice: a second NAK while the first is outstanding.
    ReadDoubleNak,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CounterLie {
    /// `requester` or `responder`.
    pub host: String,
    /// The counter's vendor name (e.g. `np_cnp_sent`, `cnpSent`).
    pub counter: String,
    /// Added to the true value (may be negative; the result is clamped at 0).
    #[serde(default)]
    pub add: i64,
}

impl Faults {
    pub fn validate(&self, cfg: &RigConfig) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(format!("rig.faults: {m}")));
        let hosts = cfg.rig.dump_hosts.len();
        for l in &self.lose_mirror_copies {
            if l.dump_host >= hosts {
                return bad(format!("lose-mirror-copies dump-host {} (there are {hosts})", l.dump_host));
            }
        }
        if self.dump_host_delay_ns.len() > hosts {
            return bad(format!("dump-host-delay-ns has {} entries for {hosts} hosts", self.dump_host_delay_ns.len()));
        }
        for r in &self.reorder {
            if r.dump_host >= hosts || !(0.0..=1.0).contains(&r.probability) {
                return bad(format!("reorder {{dump-host: {}, probability: {}}}", r.dump_host, r.probability));
            }
        }
        for v in &self.gbn_violations {
            if v.qpn == 0 || v.qpn > cfg.traffic.num_connections || v.psn == 0 {
                return bad(format!("gbn-violation qpn {} psn {} is out of range", v.qpn, v.psn));
            }
        }
        for c in &self.counter_lies {
            if c.host != "requester" && c.host != "responder" {
                return bad(format!("counter-lie host {:?} is not requester or responder", c.host));
            }
        }
        Ok(())
    }
}
