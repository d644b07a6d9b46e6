//! What a run directory says besides its packets, read from Lumina's own files (Lumina
//! Table 1): the QP info the switch was given (`switch_message_snapshot.yml`), the test
//! configuration (`config.yaml` / any Lumina YAML with `requester:` and `traffic:`), and
//! the RNIC counters dumped before and after (`{requester,responder}_counter_{start,finish}.yml`).
//! Every file is optional: analyzers say what they could not check without it.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One entry of `switch_message_snapshot.yml` (Lumina `controller.py` `parse_msg`): `snd` is
/// the data sender (the responder for READ), `psn_snd` the requester's IPSN.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
pub struct QpInfo {
    pub ip_snd: IpAddr,
    pub ip_rcv: IpAddr,
    pub qpn_snd: u32,
    pub qpn_rcv: u32,
    pub psn_snd: u32,
    pub psn_rcv: u32,
    #[serde(default)]
    pub snd_sw_port: Option<u32>,
    #[serde(default)]
    pub rcv_sw_port: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    Write,
    Send,
    Read,
}

/// The RoCE parameters of one host (Lumina YAML `roce-parameters`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HostConfig {
    /// `cx4`, `cx5`, `cx6`, `e810` (Lumina's aliases normalised).
    pub nic: Option<String>,
    pub ips: Vec<IpAddr>,
    pub switch_port: Option<u32>,
    pub np_enable: Option<bool>,
    /// DCQCN's reaction point: whether received CNPs are acted on (counted as handled)
    /// or ignored.
    pub rp_enable: Option<bool>,
    pub min_time_between_cnps_us: Option<u64>,
    pub slow_restart: Option<bool>,
    pub adaptive_retrans: Option<bool>,
    /// The host's link rate, Gb/s, when the run configuration says it (the emulator's
    /// `rig.link-gbps`, a port run below its NIC's speed); else its NIC's port speed.
    pub link_gbps: Option<f64>,
}

/// The test configuration, as far as the analyzers need it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TestConfig {
    pub requester: HostConfig,
    pub responder: HostConfig,
    pub verb: Option<Verb>,
    pub mtu: Option<u32>,
    pub message_size: Option<u64>,
    pub msgs_per_qp: Option<u64>,
    /// IBA local ACK timeout exponent: 4.096 µs × 2^t.
    pub min_retransmit_timeout: Option<u8>,
    pub max_retransmit_retry: Option<u8>,
    pub tx_depth: Option<u32>,
    /// Every QP waits for every QP's round of `tx-depth` messages before the next.
    pub barrier_sync: Option<bool>,
    /// `data-pkt-events`: the events the switch was told to inject (entries it cannot
    /// read are left out, and said in the context problems).
    pub events: Vec<super::events::Intent>,
}

/// Counter deltas of one host: finish − start, by vendor name.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CounterDelta {
    pub counters: BTreeMap<String, u64>,
    /// Counters with no usable delta, and why (never a delta to compare).
    pub unusable: BTreeMap<String, String>,
    /// 32-bit counters that wrapped during the run: their delta is taken modulo 2^32.
    pub wrapped: Vec<String>,
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RunContext {
    pub qp_info: Vec<QpInfo>,
    pub config: Option<TestConfig>,
    /// The host's counter dumps: none found, or found and read, or why they could not be.
    pub requester_counters: Option<Result<CounterDelta, String>>,
    pub responder_counters: Option<Result<CounterDelta, String>>,
    /// Files found but not understood, with why (reported, never fatal).
    pub problems: Vec<String>,
    /// Copies the switch gave that the trace lacks before its first copy or after its
    /// last (`check::lost_at_ends`); the gaps between copies are in the records.
    pub lost_at_ends: u64,
    /// Why the trace holds no mirrored copy (reconstruct.json `no_copies`), when it holds none.
    pub no_copies: Option<String>,
}

impl RunContext {
    /// Reads whatever of Lumina's files the directories hold.
    pub fn load(dirs: &[PathBuf]) -> RunContext {
        let mut ctx = RunContext::default();
        for dir in dirs {
            ctx.load_dir(dir);
        }
        // The same snapshot may sit in several input directories (one per dump host):
        // each QP once.
        let mut seen = rustc_hash::FxHashSet::default();
        ctx.qp_info.retain(|q| seen.insert(q.clone()));
        ctx
    }

    fn load_dir(&mut self, dir: &Path) {
        let msg = dir.join("switch_message_snapshot.yml");
        if msg.exists() {
            match read_yaml::<Vec<QpInfo>>(&msg) {
                Ok(q) => self.qp_info.extend(q),
                Err(e) => self.problems.push(e),
            }
        }
        if self.config.is_none() {
            for name in ["config.yaml", "config.yml"] {
                let p = dir.join(name);
                if p.exists() {
                    match read_yaml::<serde_yaml_ng::Value>(&p) {
                        Ok(v) => {
                            self.problems.extend(unusable_settings(&p, &v));
                            self.config = Some(TestConfig::from_yaml(&v));
                        }
                        Err(e) => self.problems.push(e),
                    }
                    break;
                }
            }
        }
        for (host, slot) in [("requester", &mut self.requester_counters), ("responder", &mut self.responder_counters)] {
            // The first directory with a readable pair wins; a later one may stand in for
            // one that could not be read.
            if matches!(slot, Some(Ok(_))) {
                continue;
            }
            if let Some(dumps) = counter_dumps(dir, host, &mut self.problems) {
                if slot.is_none() || dumps.is_ok() {
                    *slot = Some(dumps);
                }
            }
        }
    }
}

/// One host's two counter dumps in `dir`, if either is there; a file that cannot be read
/// is also said in `problems`.
fn counter_dumps(dir: &Path, host: &str, problems: &mut Vec<String>) -> Option<Result<CounterDelta, String>> {
    let (start, finish) =
        (dir.join(format!("{host}_counter_start.yml")), dir.join(format!("{host}_counter_finish.yml")));
    let alone = |p: &Path, other: &Path| format!("{}: no {} beside it, so no delta", p.display(), file_name(other));
    let dumps = match (start.exists(), finish.exists()) {
        (false, false) => return None,
        (true, true) => counter_delta(&start, &finish, problems),
        (true, false) => Err(alone(&start, &finish)),
        (false, true) => Err(alone(&finish, &start)),
    };
    if let Err(e) = &dumps {
        problems.push(e.clone());
    }
    Some(dumps)
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn read_yaml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_yaml_ng::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

impl TestConfig {
    pub fn host(&self, role: super::conn::Role) -> &HostConfig {
        match role {
            super::conn::Role::Requester => &self.requester,
            super::conn::Role::Responder => &self.responder,
        }
    }

    /// Reads Lumina's YAML loosely: unknown keys are other tools' business.
    pub fn from_yaml(v: &serde_yaml_ng::Value) -> TestConfig {
        let traffic = &v["traffic"];
        let verb = match traffic["rdma-verb"].as_str().map(str::to_ascii_lowercase).as_deref() {
            Some("write") => Some(Verb::Write),
            Some("send") => Some(Verb::Send),
            Some("read") => Some(Verb::Read),
            _ => None,
        };
        TestConfig {
            requester: host_config(&v["requester"], &v["rig"]),
            responder: host_config(&v["responder"], &v["rig"]),
            verb,
            mtu: traffic["mtu"].as_u64().and_then(|m| u32::try_from(m).ok()),
            message_size: traffic["message-size"].as_u64(),
            msgs_per_qp: traffic["num-msgs-per-qp"].as_u64(),
            // Out of the IBA's range (5-bit timeout, 3-bit retry count): unknown, not
            // truncated into another value.
            min_retransmit_timeout: iba_field(traffic, TIMEOUT_KEY, TIMEOUT_MAX),
            max_retransmit_retry: iba_field(traffic, RETRY_KEY, RETRY_MAX),
            tx_depth: traffic["tx-depth"].as_u64().and_then(|t| u32::try_from(t).ok()),
            barrier_sync: traffic["barrier-sync"].as_bool(),
            events: traffic["data-pkt-events"]
                .as_sequence()
                .map_or(Vec::new(), |s| s.iter().filter_map(intent).collect()),
        }
    }
}

/// One `data-pkt-events` entry (Lumina Listing 2): `qpn`, `psn`, `type`, `iter` (1 unless
/// given); `None` when one of them is not what Lumina's switch would take.
fn intent(v: &serde_yaml_ng::Value) -> Option<super::events::Intent> {
    let number = |key: &str| v[key].as_u64().and_then(|n| u32::try_from(n).ok()).filter(|&n| n >= 1);
    Some(super::events::Intent {
        qpn: number("qpn")?,
        psn: number("psn")?,
        kind: super::events::EventKind::parse(v["type"].as_str()?)?,
        iter: if v["iter"].is_null() { 1 } else { number("iter")? },
    })
}

/// `rig`: the emulator's section, with what a real rig gets from its hardware.
fn host_config(h: &serde_yaml_ng::Value, rig: &serde_yaml_ng::Value) -> HostConfig {
    let nic = &h["nic"];
    let roce = &h["roce-parameters"];
    let ips = nic["ip-list"]
        .as_sequence()
        .map(|s| {
            s.iter()
                .filter_map(|v| v.as_str())
                .filter_map(|s| s.split('/').next().and_then(|ip| ip.trim().parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    // `dcqcn-enable` switches DCQCN as a whole and wins over the NP- and RP-only keys (as
    // the rig).
    let np = roce["dcqcn-enable"].as_bool().or(roce["dcqcn-np-enable"].as_bool());
    let rp = roce["dcqcn-enable"].as_bool().or(roce["dcqcn-rp-enable"].as_bool());
    HostConfig {
        nic: nic["type"].as_str().map(normalise_nic),
        ips,
        switch_port: nic["switch-port"].as_u64().map(|p| p as u32),
        np_enable: np,
        rp_enable: rp,
        min_time_between_cnps_us: roce["min-time-between-cnps"].as_u64(),
        slow_restart: roce["slow-restart"].as_bool(),
        adaptive_retrans: roce["adaptive-retrans"].as_bool(),
        link_gbps: rig["link-gbps"].as_f64().filter(|g| g.is_finite() && *g > 0.0),
    }
}

/// Lumina's NIC names and aliases to `cx4`, `cx5`, `cx6`, `e810`.
pub fn normalise_nic(name: &str) -> String {
    let n = name.to_ascii_lowercase().replace(['-', '_', ' '], "");
    match n.as_str() {
        "cx4" | "cx4lx" | "connectx4" | "connectx4lx" => "cx4",
        "cx5" | "connectx5" => "cx5",
        "cx6" | "cx6dx" | "connectx6" | "connectx6dx" => "cx6",
        "e810" | "intel" | "intele810" => "e810",
        _ => return n,
    }
    .into()
}

/// The local ACK timeout exponent (5 bits) and retry count (3 bits) of the IBA.
const TIMEOUT_KEY: &str = "min-retransmit-timeout";
const TIMEOUT_MAX: u8 = 31;
const RETRY_KEY: &str = "max-retransmit-retry";
const RETRY_MAX: u8 = 7;

/// A traffic setting of at most `max`; unknown beyond it.
fn iba_field(traffic: &serde_yaml_ng::Value, key: &str, max: u8) -> Option<u8> {
    traffic[key].as_u64().filter(|&n| n <= u64::from(max)).map(|n| n as u8)
}

/// The traffic settings [`TestConfig::from_yaml`] leaves unknown, each said once: values
/// outside what the IBA allows, and events it cannot read.
fn unusable_settings(path: &Path, v: &serde_yaml_ng::Value) -> Vec<String> {
    [(TIMEOUT_KEY, TIMEOUT_MAX), (RETRY_KEY, RETRY_MAX)]
        .into_iter()
        .filter_map(|(key, max)| {
            let got = &v["traffic"][key];
            let fits = iba_field(&v["traffic"], key, max).is_some();
            (!got.is_null() && !fits).then(|| {
                let shown = serde_yaml_ng::to_string(got).unwrap_or_default();
                format!("{}: traffic.{key} {} is not in 0..={max} (IBA): ignored", path.display(), shown.trim())
            })
        })
        .chain(unreadable_events(path, v))
        .collect()
}

/// `data-pkt-events` entries [`intent`] cannot read, each said.
fn unreadable_events(path: &Path, v: &serde_yaml_ng::Value) -> Vec<String> {
    let entries = v["traffic"]["data-pkt-events"].as_sequence().map_or(&[][..], |s| s.as_slice());
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| intent(e).is_none())
        .map(|(i, e)| {
            let shown = serde_yaml_ng::to_string(e).unwrap_or_default().replace('\n', " ");
            format!(
                "{}: traffic.data-pkt-events[{i}] {} is not an event (qpn, psn, iter from 1; type drop, ecn or \
                 corrupt): ignored",
                path.display(),
                shown.trim()
            )
        })
        .collect()
}

/// Lumina `counter_dump.py` files: sections of `name: value`; the delta of every counter
/// in both, and for every other name why it has none. What is not a counter at all goes
/// to `problems`.
fn counter_delta(start: &Path, finish: &Path, problems: &mut Vec<String>) -> Result<CounterDelta, String> {
    let (a, b) = (counter_file(start, problems)?, counter_file(finish, problems)?);
    let mut d = CounterDelta { files: vec![start.to_path_buf(), finish.to_path_buf()], ..CounterDelta::default() };
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names {
        let (s, f) = match (a.get(name), b.get(name)) {
            (Some(Ok(s)), Some(Ok(f))) => (*s, *f),
            (Some(Err(why)), _) => {
                d.unusable.insert(name.clone(), format!("{}: {why}", file_name(start)));
                continue;
            }
            (_, Some(Err(why))) => {
                d.unusable.insert(name.clone(), format!("{}: {why}", file_name(finish)));
                continue;
            }
            (Some(_), None) | (None, Some(_)) => {
                let (has, lacks) = if a.contains_key(name) { (start, finish) } else { (finish, start) };
                let why = format!("only in {}, not in {}: no delta", file_name(has), file_name(lacks));
                d.unusable.insert(name.clone(), why);
                continue;
            }
            (None, None) => continue,
        };
        match delta(name, s, f) {
            Delta::Counted(n) => {
                d.counters.insert(name.clone(), n);
            }
            Delta::Wrapped(n) => {
                d.counters.insert(name.clone(), n);
                d.wrapped.push(name.clone());
            }
            Delta::Unusable(why) => {
                d.unusable.insert(name.clone(), why);
            }
        }
    }
    Ok(d)
}

/// The mlx5 Q counters (`hw_counters` read with QUERY_Q_COUNTER): 32 bits wide, so on a
/// busy port they wrap within minutes. Its congestion counters (`np_*`, `rp_*`), the
/// port counters, `rx_icrc_encapsulated` (PPCNT) and ethtool's are 64-bit.
const WIDTH_32: &[&str] = &[
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
];

#[derive(Debug, PartialEq, Eq)]
enum Delta {
    Counted(u64),
    /// A 32-bit counter that passed 2^32 − 1 and went on from 0.
    Wrapped(u64),
    Unusable(String),
}

/// One counter's finish − start. A finish below the start is a 32-bit counter that wrapped
/// (taken modulo 2^32) when the counter is one and the wrap is the short way round — a
/// run does not count 2^31 events of one kind, and a reset near the start would otherwise
/// read as billions — else a reset, whose delta is unknown.
fn delta(name: &str, start: u64, finish: u64) -> Delta {
    if let Some(n) = finish.checked_sub(start) {
        return Delta::Counted(n);
    }
    const WRAP: u64 = 1 << 32;
    let wrap = WIDTH_32.contains(&name) && start < WRAP;
    if let Some(n) = wrap.then(|| finish + WRAP - start).filter(|&n| n < WRAP / 2) {
        return Delta::Wrapped(n);
    }
    let width = if WIDTH_32.contains(&name) {
        "a 32-bit counter's wrap does not explain it"
    } else {
        "not a counter known to wrap"
    };
    Delta::Unusable(format!("finish {finish} is below start {start} ({width}): reset during the run?"))
}

/// One dump: each counter's value, or why it is not a count.
type Values = BTreeMap<String, Result<u64, String>>;

/// Lumina's sections (`port-counters:`, `hw-counters:`, `ethtool-counters:`); an empty
/// one reads as null. A `name: value` outside any section (a dump without headers) is
/// read as a counter too: its meaning is the same.
const SECTIONS: &[&str] = &["port-counters", "hw-counters", "ethtool-counters"];

fn counter_file(path: &Path, problems: &mut Vec<String>) -> Result<Values, String> {
    let v: serde_yaml_ng::Value = read_yaml(path)?;
    let Some(top) = v.as_mapping() else {
        return Err(format!("{}: not a mapping of counter sections or counters", path.display()));
    };
    let mut out = Values::new();
    for (k, v) in top {
        let Some(name) = k.as_str() else {
            problems.push(format!("{}: key {} is not a counter or section name: ignored", path.display(), shown(k)));
            continue;
        };
        match v.as_mapping() {
            Some(section) => read_section(path, section, &mut out, problems),
            None if v.is_null() && SECTIONS.contains(&name) => {}
            None => insert(&mut out, name, count(v)),
        }
    }
    Ok(out)
}

fn read_section(path: &Path, section: &serde_yaml_ng::Mapping, out: &mut Values, problems: &mut Vec<String>) {
    for (k, v) in section {
        match k.as_str() {
            Some(name) => insert(out, name, count(v)),
            None => problems.push(format!("{}: key {} is not a counter name: ignored", path.display(), shown(k))),
        }
    }
}

/// A name twice in one dump (in two sections) has no one value.
fn insert(out: &mut Values, name: &str, value: Result<u64, String>) {
    let value = match out.get(name) {
        Some(first) if *first != value => Err("appears twice, with different values".to_string()),
        _ => value,
    };
    out.insert(name.to_string(), value);
}

/// A counter's value: a whole number, at least 0.
fn count(v: &serde_yaml_ng::Value) -> Result<u64, String> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    use serde_yaml_ng::Value;
    Err(match v {
        Value::Null => "no value is given".to_string(),
        Value::Number(n) if n.is_f64() => format!("{n} is a decimal, not an integer count"),
        Value::Number(n) => format!("{n} is negative"),
        Value::String(s) => format!("the string {s:?} is not a number"),
        Value::Bool(b) => format!("{b} is not a number"),
        Value::Sequence(_) => "a list is not a number".to_string(),
        Value::Mapping(_) => "a mapping is not a number".to_string(),
        Value::Tagged(_) => "a tagged value is not a number".to_string(),
    })
}

/// A YAML value on one line, for messages.
fn shown(v: &serde_yaml_ng::Value) -> String {
    serde_yaml_ng::to_string(v).unwrap_or_default().trim().replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lumina_yaml_loosely() {
        let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            "requester:\n  nic: {type: cx6dx, switch-port: 3, ip-list: [10.0.0.1/24]}\n  roce-parameters: {dcqcn-enable: false, dcqcn-np-enable: true, dcqcn-rp-enable: true, min-time-between-cnps: 4, slow-restart: true}\n  mystery: 1\nresponder:\n  nic: {type: e810}\n  roce-parameters: {dcqcn-enable: true}\ntraffic: {rdma-verb: READ, mtu: 1024, message-size: 102400, num-msgs-per-qp: 3, min-retransmit-timeout: 14, barrier-sync: true}\n",
        )
        .unwrap();
        let c = TestConfig::from_yaml(&v);
        assert_eq!(c.requester.nic.as_deref(), Some("cx6"));
        assert_eq!(c.requester.ips, vec!["10.0.0.1".parse::<IpAddr>().unwrap()]);
        assert_eq!(c.requester.min_time_between_cnps_us, Some(4));
        assert_eq!(c.responder.nic.as_deref(), Some("e810"));
        assert_eq!(c.responder.np_enable, Some(true));
        assert_eq!(c.requester.np_enable, Some(false), "dcqcn-enable wins over dcqcn-np-enable");
        assert_eq!(c.requester.rp_enable, Some(false), "dcqcn-enable wins over dcqcn-rp-enable");
        assert_eq!(c.responder.rp_enable, Some(true));
        let rp_only = serde_yaml_ng::from_str("requester:\n  roce-parameters: {dcqcn-rp-enable: False}").unwrap();
        let c2 = TestConfig::from_yaml(&rp_only);
        assert_eq!((c2.requester.rp_enable, c2.responder.rp_enable), (Some(false), None));
        assert_eq!((c.verb, c.barrier_sync), (Some(Verb::Read), Some(true)));
        assert_eq!(
            (c.mtu, c.message_size, c.msgs_per_qp, c.min_retransmit_timeout),
            (Some(1024), Some(102400), Some(3), Some(14))
        );
        // Out of the IBA's range: unknown, not truncated (300 as u8 is 44), and said.
        let v = serde_yaml_ng::from_str("traffic: {min-retransmit-timeout: 300, max-retransmit-retry: 9}").unwrap();
        let c = TestConfig::from_yaml(&v);
        assert_eq!((c.min_retransmit_timeout, c.max_retransmit_retry), (None, None));
        let said = unusable_settings(Path::new("config.yaml"), &v);
        assert_eq!(said.len(), 2, "{said:?}");
        assert_eq!(said[0], "config.yaml: traffic.min-retransmit-timeout 300 is not in 0..=31 (IBA): ignored");
        let ok = serde_yaml_ng::from_str("traffic: {min-retransmit-timeout: 14}").unwrap();
        assert_eq!(unusable_settings(Path::new("config.yaml"), &ok), Vec::<String>::new());
    }

    #[test]
    fn configured_events_are_read_and_the_unreadable_said() {
        use super::super::events::{EventKind, Intent};
        let v = serde_yaml_ng::from_str(
            "traffic:\n  data-pkt-events:\n  - {qpn: 1, psn: 5, type: drop, iter: 2}\n  - {qpn: 2, psn: 7, type: bit-error}\n  - {qpn: 0, psn: 7, type: ecn}\n  - {qpn: 1, psn: 7, type: reorder}\n",
        )
        .unwrap();
        let c = TestConfig::from_yaml(&v);
        let want = [
            Intent { qpn: 1, psn: 5, kind: EventKind::Drop, iter: 2 },
            Intent { qpn: 2, psn: 7, kind: EventKind::Corrupt, iter: 1 },
        ];
        assert_eq!(c.events, want);
        let said = unusable_settings(Path::new("config.yaml"), &v);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("config.yaml: traffic.data-pkt-events[2] "), "{said:?}");
        assert!(said[1].starts_with("config.yaml: traffic.data-pkt-events[3] "), "{said:?}");
    }

    #[test]
    fn a_finish_below_the_start_is_a_32_bit_wrap_or_a_reset() {
        assert_eq!(delta("rx_write_requests", 7, 9), Delta::Counted(2));
        // The reviewer's case: 96 counts up to 2^32, 114 after.
        assert_eq!(delta("rx_write_requests", 4_294_967_200, 114), Delta::Wrapped(210));
        assert_eq!(delta("out_of_sequence", u64::from(u32::MAX), 0), Delta::Wrapped(1));
        // 64-bit counters do not wrap within a run; a 32-bit one cannot start at 2^32;
        // a "wrap" of billions is a reset.
        for (name, start, finish) in
            [("port_rcv_packets", 4_294_967_200, 114), ("rx_write_requests", 1 << 32, 5), ("packet_seq_err", 1000, 50)]
        {
            let Delta::Unusable(why) = delta(name, start, finish) else { panic!("{name} {start} {finish}") };
            assert!(why.contains(&format!("finish {finish} is below start {start}")), "{why}");
        }
    }

    #[test]
    fn one_snapshot_in_two_directories_is_one_set_of_qps() {
        let root = std::env::temp_dir().join(format!("rocescope-ctx-{}", std::process::id()));
        let dirs = [root.join("a"), root.join("b")];
        let qp = "- {ip_snd: 10.0.0.1, ip_rcv: 10.0.0.2, qpn_snd: 7, qpn_rcv: 9, psn_snd: 1, psn_rcv: 2}\n";
        let counters = |v: i64| format!("port:\n  np_cnp_sent: {v}\n  rp_cnp_handled: 5\n");
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("switch_message_snapshot.yml"), qp).unwrap();
        }
        std::fs::write(dirs[0].join("start.yml"), counters(i64::MIN)).unwrap();
        std::fs::write(dirs[0].join("finish.yml"), counters(i64::MAX)).unwrap();
        let ctx = RunContext::load(&dirs);
        let mut problems = Vec::new();
        let delta = counter_delta(&dirs[0].join("start.yml"), &dirs[0].join("finish.yml"), &mut problems).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(ctx.qp_info.len(), 1);
        assert_eq!(delta.counters.keys().collect::<Vec<_>>(), ["rp_cnp_handled"]);
        assert_eq!(delta.unusable["np_cnp_sent"], "start.yml: -9223372036854775808 is negative");
        assert!(problems.is_empty());
    }

    /// Writes `files` (name, text) into a fresh directory, runs `f` on it, removes it.
    fn in_dir<T>(tag: &str, files: &[(&str, &str)], f: impl FnOnce(&Path) -> T) -> T {
        let dir = std::env::temp_dir().join(format!("rocescope-ctx-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let out = f(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    fn delta_of(tag: &str, start: &str, finish: &str) -> (CounterDelta, Vec<String>) {
        in_dir(tag, &[("s.yml", start), ("f.yml", finish)], |d| {
            let mut problems = Vec::new();
            let delta = counter_delta(&d.join("s.yml"), &d.join("f.yml"), &mut problems).unwrap();
            (delta, problems)
        })
    }

    #[test]
    fn a_dump_without_section_headers_is_read_as_it_is() {
        let (d, problems) =
            delta_of("flat", "port_rcv_packets: 10\nnp_cnp_sent: 2\n", "port_rcv_packets: 15\nnp_cnp_sent: 2\n");
        assert_eq!(
            d.counters.into_iter().collect::<Vec<_>>(),
            [("np_cnp_sent".into(), 0), ("port_rcv_packets".into(), 5)]
        );
        assert!(d.unusable.is_empty() && problems.is_empty());
        // An empty section reads as null: nothing in it, nothing wrong.
        let (d, problems) = delta_of("empty-section", "port-counters:\nhw-counters: {a: 1}\n", "hw-counters: {a: 4}\n");
        assert_eq!((d.counters["a"], d.unusable.len(), problems.len()), (3, 0, 0));
    }

    #[test]
    fn every_counter_a_dump_does_not_give_says_why() {
        let start = "hw-counters:\n  a: 'N/A'\n  b: 1.5\n  c: 3\n  d: 4\n  e:\n  f: -2\n  h: 1\n  1: 5\nport-counters:\n  d: 5\n";
        let finish = "hw-counters:\n  a: 1\n  b: 2\n  d: 9\n  e: 1\n  f: 1\n  g: 7\n  h: [1]\n";
        let (d, problems) = delta_of("unreadable", start, finish);
        assert!(d.counters.is_empty(), "{:?}", d.counters);
        let why: Vec<(&str, &str)> = d.unusable.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            why,
            [
                ("a", "s.yml: the string \"N/A\" is not a number"),
                ("b", "s.yml: 1.5 is a decimal, not an integer count"),
                ("c", "only in s.yml, not in f.yml: no delta"),
                ("d", "s.yml: appears twice, with different values"),
                ("e", "s.yml: no value is given"),
                ("f", "s.yml: -2 is negative"),
                ("g", "only in f.yml, not in s.yml: no delta"),
                ("h", "f.yml: a list is not a number"),
            ]
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].ends_with("s.yml: key 1 is not a counter name: ignored"), "{problems:?}");
    }

    #[test]
    fn counter_files_that_cannot_be_read_are_said_and_skip_the_host() {
        let ctx = in_dir(
            "bad-files",
            &[
                ("requester_counter_start.yml", "- not\n- counters\n"),
                ("requester_counter_finish.yml", "hw-counters: {a: 1}\n"),
                ("responder_counter_start.yml", "hw-counters: {a: 1}\n"),
            ],
            |d| RunContext::load(&[d.to_path_buf()]),
        );
        let req = ctx.requester_counters.as_ref().unwrap().as_ref().unwrap_err();
        assert!(req.ends_with("requester_counter_start.yml: not a mapping of counter sections or counters"), "{req}");
        let resp = ctx.responder_counters.as_ref().unwrap().as_ref().unwrap_err();
        assert!(resp.ends_with("responder_counter_start.yml: no responder_counter_finish.yml beside it, so no delta"));
        assert_eq!(ctx.problems, [req.clone(), resp.clone()]);
    }
}
