//! The switch's side of Lumina's integrity check (§3.5 conditions 2 and 3): its counter
//! dump (`switch_state_snapshot.yml`), which of its ports face the traffic hosts and which
//! the dump hosts, and the two conditions those counters decide.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use wire::mirror::SEQ_MAX;

use super::{CheckContext, CheckError, Condition};

/// Lumina's switch dump (`switch_state_snapshot.yml`): per-port RoCE counters, plus the
/// emulator's `rocescope:` detail when present.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct SwitchSnapshot {
    pub counter: PortCounters,
    #[serde(default)]
    pub rocescope: Option<RigPorts>,
}

/// A section the dump lacks is `None`: the conditions it decides cannot be checked (read
/// as zeros it would fail them for nothing).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct PortCounters {
    #[serde(default)]
    pub ingress: Option<BTreeMap<u32, u64>>,
    #[serde(default)]
    pub egress: Option<BTreeMap<u32, u64>>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct RigPorts {
    pub requester: Option<PortDetail>,
    pub responder: Option<PortDetail>,
    #[serde(default)]
    pub mirrors: Vec<PortDetail>,
    /// The first and last mirror seq the switch gave (its seq register), which names the
    /// copies lost at either end of a trace; Lumina's own dump lacks it.
    #[serde(default)]
    pub mirror_seq: Option<SeqSpan>,
}

#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct SeqSpan {
    pub first: u32,
    pub last: u32,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct PortDetail {
    pub switch_port: u32,
    #[serde(default)]
    pub buffer_drops: u64,
}

pub const SNAPSHOT_FILE: &str = "switch_state_snapshot.yml";

/// Lumina's switch counts each port in a 32-bit register that goes from 0x7fffffff back
/// to 1 (`inject_switch.p4`), as the mirror seq does: a port's count is known only modulo
/// this.
pub(super) const LUMINA_COUNTER_WRAP: u128 = SEQ_MAX as u128;

impl PortCounters {
    /// One counter summed over `ports` (absent: 0), wide enough for any values a file holds.
    fn sum(counter: &BTreeMap<u32, u64>, ports: &[u32]) -> u128 {
        ports.iter().map(|p| u128::from(counter.get(p).copied().unwrap_or(0))).sum()
    }
}

impl SwitchSnapshot {
    /// Copies the switch sent out of the mirror ports (Lumina §3.5 condition 2); `None`
    /// without `counter.egress`.
    pub(super) fn sent(&self, roles: &PortRoles) -> Option<u128> {
        Some(PortCounters::sum(self.counter.egress.as_ref()?, &roles.mirror_ports))
    }

    /// RoCE packets the switch received on the host ports (Lumina §3.5 condition 3);
    /// `None` without `counter.ingress`.
    fn received(&self, roles: &PortRoles) -> Option<u128> {
        Some(PortCounters::sum(self.counter.ingress.as_ref()?, &roles.host_ports))
    }

    /// Copies full mirror buffers dropped (the emulator's detail; 0 without it).
    pub(super) fn buffer_drops(&self) -> u128 {
        self.rocescope.as_ref().map_or(0, |r| r.mirrors.iter().map(|m| u128::from(m.buffer_drops)).sum())
    }

    /// Lumina's own counters (no `rocescope` section) wrap per port; the emulator's do not.
    pub(super) fn counters_wrap(&self) -> bool {
        self.rocescope.is_none()
    }

    /// Whether a counter sum equals a count from the trace: exactly, or for Lumina's own
    /// counters modulo their wrap (all a wrapped count can tell once it may have wrapped).
    fn agrees(&self, counted: u128, in_trace: u64) -> bool {
        let in_trace = u128::from(in_trace);
        match self.counters_wrap() {
            true => counted % LUMINA_COUNTER_WRAP == in_trace % LUMINA_COUNTER_WRAP,
            false => counted == in_trace,
        }
    }

    /// What the evidence adds when the comparison was modular.
    fn modulo_note(&self, counted: u128, in_trace: u64) -> &'static str {
        let wrapped = counted >= LUMINA_COUNTER_WRAP || u128::from(in_trace) >= LUMINA_COUNTER_WRAP;
        match self.counters_wrap() && wrapped {
            true => " (Lumina's port counters wrap at 0x7fffffff: compared modulo 0x7fffffff)",
            false => "",
        }
    }

    pub fn load(path: &Path) -> Result<SwitchSnapshot, CheckError> {
        let err = |what: String| CheckError::Snapshot { path: path.to_path_buf(), what };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        serde_yaml_ng::from_str(&text).map_err(|e| err(e.to_string()))
    }
}

/// Which switch ports face the traffic hosts and which the dump hosts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PortRoles {
    pub host_ports: Vec<u32>,
    pub mirror_ports: Vec<u32>,
    /// How the roles were found.
    pub from: String,
}

impl PortRoles {
    /// From the snapshot's own detail, else the configuration (Lumina's `nic.switch-port`
    /// of requester, responder and the `*-mirror` hosts), else "ports that received
    /// RoCE are host ports"; `None` when nothing tells (no configuration, no
    /// `counter.ingress` to guess from).
    pub fn find(snap: &SwitchSnapshot, config: Option<&serde_yaml_ng::Value>) -> Option<PortRoles> {
        let mut roles = PortRoles::found(snap, config)?;
        // A port named twice (both mirror hosts on one port) is counted once.
        for ports in [&mut roles.host_ports, &mut roles.mirror_ports] {
            ports.sort_unstable();
            ports.dedup();
        }
        Some(roles)
    }

    fn found(snap: &SwitchSnapshot, config: Option<&serde_yaml_ng::Value>) -> Option<PortRoles> {
        let egress_ports = || snap.counter.egress.iter().flat_map(|e| e.keys().copied());
        // A section that leaves out a host or every mirror port names too few ports to
        // sum: the ports are then told as without it.
        let whole = |r: &&RigPorts| r.requester.is_some() && r.responder.is_some() && !r.mirrors.is_empty();
        if let Some(r) = snap.rocescope.as_ref().filter(whole) {
            let host_ports = [&r.requester, &r.responder].into_iter().flatten().map(|p| p.switch_port).collect();
            return Some(PortRoles {
                host_ports,
                mirror_ports: r.mirrors.iter().map(|m| m.switch_port).collect(),
                from: "switch snapshot (rocescope section)".into(),
            });
        }
        if let Some(c) = config {
            let port = |k: &str| c[k]["nic"]["switch-port"].as_u64().map(|p| p as u32);
            let hosts: Vec<u32> = ["requester", "responder"].iter().filter_map(|k| port(k)).collect();
            let mirrors: Vec<u32> = ["requester-mirror", "responder-mirror"].iter().filter_map(|k| port(k)).collect();
            if hosts.len() == 2 {
                let mirror_ports =
                    if mirrors.is_empty() { egress_ports().filter(|p| !hosts.contains(p)).collect() } else { mirrors };
                let from = "configuration switch-port keys".into();
                return Some(PortRoles { host_ports: hosts, mirror_ports, from });
            }
        }
        let ingress = snap.counter.ingress.as_ref()?;
        let host_ports: Vec<u32> = ingress.iter().filter(|(_, &n)| n > 0).map(|(&p, _)| p).collect();
        let mirror_ports = egress_ports().filter(|p| !host_ports.contains(p)).collect();
        Some(PortRoles { host_ports, mirror_ports, from: "guessed: ports that received RoCE are host ports".into() })
    }
}

const CONDITION_2: &str = "2. switch mirrored == copies in trace";
const CONDITION_3: &str = "3. switch RoCE received == copies in trace";

/// Conditions 2 and 3 (Lumina §3.5). Each is unevaluated (not failed) when the counters
/// it needs are not there.
pub(super) fn switch_conditions(ctx: &CheckContext, mirrored: u64) -> Vec<Condition> {
    let unknown = |why: &str| {
        [CONDITION_2, CONDITION_3].map(|name| Condition { name: name.into(), holds: None, evidence: why.into() }).into()
    };
    let Some(snap) = &ctx.snapshot else {
        if !ctx.gone_dirs.is_empty() {
            return unknown(&format!(
                "no switch counters: {}, or give --switch-counters",
                super::gone_evidence(&ctx.gone_dirs)
            ));
        }
        return unknown("no switch counters (switch_state_snapshot.yml, or --switch-counters)");
    };
    let Some(roles) = &ctx.roles else {
        return unknown(
            "the switch counters have no counter.ingress to tell host ports from mirror ports, and no \
             configuration names them (switch-port keys)",
        );
    };
    vec![sent_condition(snap, roles, mirrored), received_condition(snap, roles, mirrored)]
}

fn sent_condition(snap: &SwitchSnapshot, roles: &PortRoles, mirrored: u64) -> Condition {
    let Some(sent) = snap.sent(roles) else {
        let evidence = "the switch counters have no counter.egress: copies sent not known".into();
        return Condition { name: CONDITION_2.into(), holds: None, evidence };
    };
    if roles.mirror_ports.is_empty() {
        let evidence = format!("no mirror port known ({}): copies sent not known", roles.from);
        return Condition { name: CONDITION_2.into(), holds: None, evidence };
    }
    let evidence = format!(
        "switch sent {sent} copies on mirror ports {:?}; trace has {mirrored}{}",
        roles.mirror_ports,
        snap.modulo_note(sent, mirrored)
    );
    Condition { name: CONDITION_2.into(), holds: Some(snap.agrees(sent, mirrored)), evidence }
}

fn received_condition(snap: &SwitchSnapshot, roles: &PortRoles, mirrored: u64) -> Condition {
    let Some(received) = snap.received(roles) else {
        let evidence = "the switch counters have no counter.ingress: RoCE packets received not known".into();
        return Condition { name: CONDITION_3.into(), holds: None, evidence };
    };
    if roles.host_ports.is_empty() {
        let evidence = format!("no host port known ({}): RoCE packets received not known", roles.from);
        return Condition { name: CONDITION_3.into(), holds: None, evidence };
    }
    let mut evidence = format!(
        "switch received {received} RoCE packets on ports {:?}; trace has {mirrored}{}",
        roles.host_ports,
        snap.modulo_note(received, mirrored)
    );
    let buffer_drops = snap.buffer_drops();
    if buffer_drops > 0 {
        evidence.push_str(&format!(" ({buffer_drops} copies dropped by full mirror buffers)"));
    }
    Condition { name: CONDITION_3.into(), holds: Some(snap.agrees(received, mirrored)), evidence }
}
