//! BTH header interoperability (Lumina §6.2.3): per connection, the header fields each
//! end sets, compared between the two ends and across each end's own packets. Lumina found
//! CX5 discarding packets from an E810 whose only visible difference was MigReq (E810 0,
//! CX5 1); rocescope reports every such difference.
//!
//! Fields and what counts as a problem:
//! - MigReq: the two ends differ → problem (the §6.2.3 interop risk); one end changing
//!   it → problem (RoCE has no path migration that would justify it); both ends 0 → a note
//!   (IBA's initial, migrated state sends 1; equal ends have shown no harm).
//! - P_Key: the ends' keys differ in their low 15 bits, or neither is a full member
//!   (bit 15) → problem (IBA 10.9.3: the receiver drops such packets); one end using
//!   several keys → problem (a QP has one P_Key).
//! - TVer: anything but 0 → problem (IBA 9.2: transport version 0); ends differing too.
//! - PadCnt: the padded payload must be a multiple of 4, pad bytes at most the payload,
//!   and only the last or only packet of a message may carry pad bytes (first and middle
//!   packets are full MTU) → each violation is a problem.
//! - Reserved BTH bits (resv7, resv8a): not kept in the record file, not checked.
//!
//! CNPs (opcode 0x81) are left out: their BTH is the notification point's own (MigReq 0
//! on every NIC), not the connection's.

use trace::record::Record;

use super::conn::{Connection, Role};
use super::transport::is_transport;
use super::{plural, render_capped, Input};

/// Example seqs kept per finding.
const EXAMPLES: usize = 3;

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    pub connections: Vec<ConnInterop>,
    pub not_checked: Vec<String>,
}

#[derive(Debug, serde::Serialize)]
pub struct ConnInterop {
    pub conn: u32,
    /// Packets sent by the requester, then by the responder.
    pub requester: EndFields,
    pub responder: EndFields,
    pub findings: Vec<Finding>,
}

/// What one end put in the BTH of the packets it sent on this connection.
#[derive(Debug, Default, serde::Serialize)]
pub struct EndFields {
    pub packets: u64,
    pub mig_req: Vec<Value>,
    pub pkey: Vec<Value>,
    pub tver: Vec<Value>,
    /// Packets whose pad count does not fit their payload or position in the message.
    pub bad_pad: u64,
    pub bad_pad_examples: Vec<u32>,
}

/// One value a field took, how often, and the first packets (wire mirror seqs) with it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Value {
    pub value: u32,
    pub packets: u64,
    pub examples: Vec<u32>,
}

#[derive(Debug, serde::Serialize)]
pub struct Finding {
    pub field: &'static str,
    pub kind: FindingKind,
    pub problem: bool,
    pub message: String,
    /// Wire mirror seqs of packets showing it.
    pub examples: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// The two ends set the field differently.
    EndsDiffer,
    /// One end set it differently on different packets.
    SenderInconsistent,
    /// A value the specification does not allow.
    Invalid,
    /// Allowed, but not what the specification starts from (a note, never a problem).
    Unusual,
}

pub fn analyze(input: &Input<'_>) -> Report {
    let connections = input.conns.list.iter().map(|c| connection(input, c)).collect();
    let not_checked = vec!["BTH reserved bits (resv7, resv8a): not kept in the record file".to_string()];
    Report { connections, not_checked }
}

fn connection(input: &Input<'_>, c: &Connection) -> ConnInterop {
    let mut tallies = [Tally::default(), Tally::default()];
    for &(i, to) in &c.packets {
        let r = &input.view.records[i as usize];
        if is_transport(r) {
            // The receiving end is `to`: the sender is the other one.
            tallies[to.other().index()].add(r);
        }
    }
    let [req, resp] = tallies;
    let mut findings = Vec::new();
    for (role, t) in [(Role::Requester, &req), (Role::Responder, &resp)] {
        t.within(role, &mut findings);
    }
    between(&req, &resp, &mut findings);
    ConnInterop { conn: c.id, requester: req.fields(), responder: resp.fields(), findings }
}

/// Values of one field in arrival order of first use.
#[derive(Debug, Default)]
struct Field {
    values: Vec<Value>,
}

impl Field {
    fn add(&mut self, value: u32, seq: u32) {
        let i = match self.values.iter().position(|v| v.value == value) {
            Some(i) => i,
            None => {
                self.values.push(Value { value, packets: 0, examples: Vec::new() });
                self.values.len() - 1
            }
        };
        let v = &mut self.values[i];
        v.packets += 1;
        if v.examples.len() < EXAMPLES {
            v.examples.push(seq);
        }
    }

    /// The value most packets carry.
    fn main(&self) -> Option<&Value> {
        self.values.iter().max_by_key(|v| v.packets)
    }
}

#[derive(Debug, Default)]
struct Tally {
    packets: u64,
    mig_req: Field,
    pkey: Field,
    tver: Field,
    bad_pad: u64,
    bad_pad_examples: Vec<u32>,
}

impl Tally {
    fn add(&mut self, r: &Record) {
        // A copy whose ICRC fails may have had its BTH bits flipped on the way: it says
        // nothing of what the sender set.
        if super::transport::corrupt(r) {
            return;
        }
        let seq = r.wire_seq();
        self.packets += 1;
        self.mig_req.add(u32::from(r.mig_req()), seq);
        self.pkey.add(u32::from(r.pkey), seq);
        self.tver.add(u32::from(r.bth_flags & 0x0f), seq);
        if !pad_ok(r) {
            self.bad_pad += 1;
            if self.bad_pad_examples.len() < EXAMPLES {
                self.bad_pad_examples.push(seq);
            }
        }
    }

    fn fields(self) -> EndFields {
        EndFields {
            packets: self.packets,
            mig_req: self.mig_req.values,
            pkey: self.pkey.values,
            tver: self.tver.values,
            bad_pad: self.bad_pad,
            bad_pad_examples: self.bad_pad_examples,
        }
    }

    /// Findings about one end's own packets.
    fn within(&self, role: Role, out: &mut Vec<Finding>) {
        let who = role.name();
        for (field, f) in [("MigReq", &self.mig_req), ("P_Key", &self.pkey), ("TVer", &self.tver)] {
            if f.values.len() > 1 {
                let list: Vec<String> =
                    f.values.iter().map(|v| format!("{} on {} packets", show(field, v.value), v.packets)).collect();
                out.push(Finding {
                    field,
                    kind: FindingKind::SenderInconsistent,
                    problem: true,
                    message: format!("the {who} sets {field} inconsistently: {}", list.join(", ")),
                    examples: f.values.iter().filter_map(|v| v.examples.first().copied()).collect(),
                });
            }
        }
        if let Some(v) = self.tver.values.iter().find(|v| v.value != 0) {
            out.push(Finding {
                field: "TVer",
                kind: FindingKind::Invalid,
                problem: true,
                message: format!("the {who} sends TVer {} on {} packets (IBA requires 0)", v.value, v.packets),
                examples: v.examples.clone(),
            });
        }
        if self.bad_pad > 0 {
            out.push(Finding {
                field: "PadCnt",
                kind: FindingKind::Invalid,
                problem: true,
                message: format!("the {who} sends {} packets whose pad count does not fit the payload", self.bad_pad),
                examples: self.bad_pad_examples.clone(),
            });
        }
    }
}

/// Findings comparing the two ends' usual values.
fn between(req: &Tally, resp: &Tally, out: &mut Vec<Finding>) {
    for (field, a, b) in
        [("MigReq", &req.mig_req, &resp.mig_req), ("P_Key", &req.pkey, &resp.pkey), ("TVer", &req.tver, &resp.tver)]
    {
        let (Some(a), Some(b)) = (a.main(), b.main()) else { continue };
        let problem = match field {
            "P_Key" => !pkeys_match(a.value as u16, b.value as u16),
            _ => a.value != b.value,
        };
        let examples = a.examples.iter().take(1).chain(b.examples.iter().take(1)).copied().collect();
        if a.value == b.value {
            if field == "MigReq" && a.value == 0 {
                out.push(Finding {
                    field,
                    kind: FindingKind::Unusual,
                    problem: false,
                    message: "both ends send MigReq 0, where the IBA's initial (migrated) path state sends 1 \
                              (Lumina §6.2.3): harmless while both ends do"
                        .to_string(),
                    examples,
                });
            } else if problem {
                let message = format!(
                    "both ends send P_Key {} as limited members: two limited members of a partition \
                     may not talk (IBA 10.9.3), the receiver drops the packets",
                    show(field, a.value)
                );
                out.push(Finding { field, kind: FindingKind::Invalid, problem, message, examples });
            }
            continue;
        }
        let mut message = format!(
            "{field} differs between the ends: requester {} ({} packets), responder {} ({} packets)",
            show(field, a.value),
            a.packets,
            show(field, b.value),
            b.packets
        );
        if field == "MigReq" {
            // The NIC that discarded was a CX5 and the sender an E810 (MigReq 0), but what
            // triggers it is not known: any pair that differs is at risk.
            message.push_str(
                " — an interoperability risk: Lumina §6.2.3 found a CX5 discarding an E810's packets \
                 whose only difference was MigReq",
            );
        } else if !problem {
            message.push_str(" — same partition, at least one full member: allowed");
        }
        out.push(Finding { field, kind: FindingKind::EndsDiffer, problem, message, examples });
    }
}

/// IBA 10.9.3: keys match when their low 15 bits agree and at least one is a full member.
fn pkeys_match(a: u16, b: u16) -> bool {
    a & 0x7fff == b & 0x7fff && (a | b) & 0x8000 != 0
}

fn show(field: &str, v: u32) -> String {
    match field {
        "P_Key" => format!("{v:#06x}"),
        _ => v.to_string(),
    }
}

/// The pad count fits: the padded payload is a multiple of 4 and holds the pad bytes,
/// and only a message's last (or only) packet is padded.
pub fn pad_ok(r: &Record) -> bool {
    let pad = (r.bth_flags >> 4) & 0x3;
    let len = r.payload_len;
    if len % 4 != 0 || u16::from(pad) > len {
        return false;
    }
    pad == 0 || !first_or_middle(r.opcode())
}

/// First and middle packets of a multi-packet message (SEND, WRITE, READ response).
fn first_or_middle(opcode: u8) -> bool {
    opcode < 0x20 && matches!(opcode, 0x00 | 0x01 | 0x06 | 0x07 | 0x0d | 0x0e)
}

impl Report {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let findings: usize = self.connections.iter().map(|c| c.findings.len()).sum();
        let _ = writeln!(
            out,
            "header interop: {}, {}, {}",
            plural(self.connections.len() as u64, "connection", "connections"),
            plural(findings as u64, "finding", "findings"),
            plural(self.problems() as u64, "problem", "problems")
        );
        let findings = self.connections.iter().flat_map(|c| c.findings.iter().map(move |f| (c.conn, f)));
        render_capped(out, findings, |out, (conn, f)| {
            let tag = if f.problem { "problem" } else { "note" };
            let _ = writeln!(out, "  conn {conn}: {tag}: {} (e.g. seq {:?})", f.message, f.examples);
        });
    }

    pub fn problems(&self) -> usize {
        self.connections.iter().flat_map(|c| &c.findings).filter(|f| f.problem).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with the header fields interop compares.
    fn header(seq: u64, bth_flags: u8, pkey: u16) -> Record {
        let mut r = Record::default().with_seq(seq);
        (r.bth_flags, r.pkey) = (bth_flags, pkey);
        r
    }

    fn rec(opcode: u8, payload_len: u16, pad: u8) -> Record {
        let mut r = Record::default().with_opcode(opcode);
        (r.payload_len, r.bth_flags) = (payload_len, pad << 4);
        r
    }

    #[test]
    fn pad_counts_must_fit() {
        assert!(pad_ok(&rec(0x0a, 1000, 0)));
        assert!(pad_ok(&rec(0x08, 1000, 2)), "last packet: 998 bytes + 2 pad");
        assert!(!pad_ok(&rec(0x08, 998, 2)), "not a multiple of 4");
        assert!(!pad_ok(&rec(0x06, 1024, 1)), "a first packet is never padded");
        assert!(!pad_ok(&rec(0x11, 0, 3)), "more pad than payload");
        assert!(pad_ok(&rec(0x11, 0, 0)));
    }

    #[test]
    fn pkey_membership() {
        assert!(pkeys_match(0xffff, 0xffff));
        assert!(pkeys_match(0xffff, 0x7fff));
        assert!(!pkeys_match(0x7fff, 0x7fff), "two limited members");
        assert!(!pkeys_match(0xffff, 0x8001));
    }

    #[test]
    fn two_limited_members_of_one_partition_are_a_problem() {
        let (mut a, mut b) = (Tally::default(), Tally::default());
        a.add(&header(1, 0x40, 0x7fff));
        b.add(&header(2, 0x40, 0x7fff));
        let mut out = Vec::new();
        between(&a, &b, &mut out);
        let got: Vec<_> = out.iter().map(|f| (f.field, f.kind, f.problem, f.examples.clone())).collect();
        assert_eq!(got, [("P_Key", FindingKind::Invalid, true, vec![1, 2])]);
        b.add(&header(3, 0x40, 0xffff));
        b.add(&header(4, 0x40, 0xffff));
        out.clear();
        between(&a, &b, &mut out);
        assert!(out.iter().all(|f| !f.problem), "a full member talks to a limited one: {out:?}");
    }

    #[test]
    fn both_ends_sending_mig_req_0_is_a_note() {
        let (mut a, mut b) = (Tally::default(), Tally::default());
        a.add(&header(1, 0x00, 0xffff));
        b.add(&header(2, 0x00, 0xffff));
        let mut out = Vec::new();
        between(&a, &b, &mut out);
        let got: Vec<_> = out.iter().map(|f| (f.field, f.kind, f.problem)).collect();
        assert_eq!(got, [("MigReq", FindingKind::Unusual, false)]);
        let (mut a, mut b) = (Tally::default(), Tally::default());
        a.add(&header(1, 0x40, 0xffff));
        b.add(&header(2, 0x40, 0xffff));
        out.clear();
        between(&a, &b, &mut out);
        assert!(out.is_empty(), "MigReq 1 on both ends is the IBA's initial state: {out:?}");
    }

    #[test]
    fn ends_that_differ_are_found() {
        let mut a = Tally::default();
        let mut b = Tally::default();
        for i in 0..4 {
            a.add(&header(i + 1, 0x40, 0xffff));
            b.add(&header(i + 10, 0x00, 0x7fff));
        }
        let mut out = Vec::new();
        between(&a, &b, &mut out);
        assert_eq!(out.len(), 2);
        assert!(out[0].problem && out[0].field == "MigReq" && out[0].examples == vec![1, 10]);
        assert!(!out[1].problem && out[1].field == "P_Key");
        a.within(Role::Requester, &mut out);
        assert_eq!(out.len(), 2);
        let mut flipped = header(98, 0x01, 0xffff);
        flipped.flags |= trace::record::flag::ICRC_BAD;
        a.add(&flipped);
        a.within(Role::Requester, &mut out);
        assert_eq!(out.len(), 2, "a copy that failed its ICRC is not the sender's doing");
        a.add(&header(99, 0x01, 0xffff));
        a.within(Role::Requester, &mut out);
        let kinds: Vec<_> = out[2..].iter().map(|f| (f.field, f.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("MigReq", FindingKind::SenderInconsistent),
                ("TVer", FindingKind::SenderInconsistent),
                ("TVer", FindingKind::Invalid)
            ]
        );
    }
}
