//! What a record means to an RC transport, shared by every analyzer: whether its packet
//! reached the receiver's transport, which AETH it carries, where messages start and
//! end, how many PSNs a READ request covers, the IBA retransmission timeout, the
//! switch's 48-bit clock unwrapped over a trace, and the Go-back-N receiver's rule
//! ([`GbnReceiver`]).

use trace::record::{flag, Kind, Record};
use wire::mirror::Event;
use wire::psn;

use super::conn::is_data;
use super::context::{TestConfig, Verb};

/// AETH syndrome of a NAK with code 0, PSN sequence error: the Go-back-N NAK.
pub const NAK_SEQ_ERR: u8 = 0x60;

/// A packet of the RC transport (a request or a response): what Go-back-N, the
/// retransmission tracker and goodput replay. A CNP (or unplaced RoCE) between two of them
/// is no step of theirs: counted as "the previous packet in this direction" it would hide
/// a transport copy missing before it (review, session 22).
pub fn is_transport(r: &Record) -> bool {
    matches!(r.kind(), Kind::Request | Kind::Response)
}

/// Arrives with a bad ICRC: a bit-error event, or a copy whose ICRC already failed.
pub fn corrupt(r: &Record) -> bool {
    r.event() == Event::Corrupt || r.has(flag::ICRC_BAD)
}

/// Arrives CE-marked: an ECN event (the restored copy is re-marked too) or marked upstream.
pub fn ce_marked(r: &Record) -> bool {
    r.event() == Event::Ecn || r.has(flag::CE)
}

/// Whether the copy's packet reached its destination's transport: not dropped by an event,
/// not discarded by the ICRC check.
pub fn delivered(r: &Record) -> bool {
    r.event() != Event::Drop && !corrupt(r)
}

pub fn is_read_request(r: &Record) -> bool {
    r.kind() == Kind::Request && r.opcode() & 0x1f == 0x0c
}

/// An RC Acknowledge packet (ACK or NAK).
pub fn is_acknowledge(r: &Record) -> bool {
    r.kind() == Kind::Response && r.opcode() & 0x1f == 0x11 && r.has(flag::AETH)
}

/// A positive ACK (syndrome bits 6..5 = 00).
pub fn is_ack(r: &Record) -> bool {
    is_acknowledge(r) && r.syndrome() >> 5 == 0
}

/// A NAK-PSN-sequence-error, the Go-back-N NAK (other NAK codes are not loss recovery).
pub fn is_seq_nak(r: &Record) -> bool {
    is_acknowledge(r) && r.syndrome() == NAK_SEQ_ERR
}

/// An RNR NAK (syndrome bits 6..5 = 01): the responder had no receive WQE for the PSN and
/// did not accept it; the requester resends from that PSN when the RNR timer expires
/// (IBA 9.7.5.2.8). Not loss recovery: neither a NAK's go-back nor a timeout.
pub fn is_rnr_nak(r: &Record) -> bool {
    is_acknowledge(r) && r.syndrome() >> 5 == 0b01
}

/// First or Only opcodes of RC SEND and WRITE: a message starts.
pub fn starts_message(opcode: u8) -> bool {
    matches!(opcode & 0x1f, 0x00 | 0x04 | 0x05 | 0x17 | 0x06 | 0x0a | 0x0b)
}

/// First or Only opcodes of RC READ response: the answer to one request starts (at the PSN
/// that request asked from).
pub fn starts_read_answer(opcode: u8) -> bool {
    matches!(opcode & 0x1f, 0x0d | 0x10)
}

/// Last or Only opcodes of RC SEND, WRITE and READ response: a message ends.
pub fn ends_message(opcode: u8) -> bool {
    matches!(opcode & 0x1f, 0x02..=0x05 | 0x08..=0x0b | 0x0f | 0x10 | 0x16 | 0x17)
}

/// PSNs a READ request covers: ⌈DMA length ÷ MTU⌉, at least 1 (IBA 9.7.2).
pub fn read_span(r: &Record, mtu: u32) -> u32 {
    if r.has(flag::RETH) {
        r.dma_len().div_ceil(mtu.max(1)).max(1)
    } else {
        1
    }
}

/// The path MTU: what First and Middle READ responses of `records` carry (exactly one MTU
/// each: the MTU in effect, whatever a configuration asked for), else the configured one,
/// else the largest READ response payload; `None` when nothing tells.
pub fn path_mtu<'r>(config: Option<&TestConfig>, records: impl IntoIterator<Item = &'r Record>) -> Option<u32> {
    let (mut full, mut largest) = (0, 0);
    for r in records.into_iter().filter(|r| is_data(r, Verb::Read)) {
        let len = u32::from(r.payload_len);
        if matches!(r.opcode() & 0x1f, 0x0d | 0x0e) {
            full = full.max(len);
        }
        largest = largest.max(len);
    }
    let configured = config.and_then(|c| c.mtu).filter(|&m| m > 0);
    Some(full).filter(|&m| m > 0).or(configured).or(Some(largest).filter(|&m| m > 0))
}

/// IBA local ACK timeout for exponent `t`: 4.096 µs × 2^t (IBA vol. 1 §9.7.6.1.3); `None`
/// for 0, an infinite timeout: the requester's transport timer is disabled.
pub fn iba_timeout_ns(t: u8) -> Option<u64> {
    (t > 0).then(|| 4_096u64 << t.min(40))
}

/// Whether the configuration disables the requester's transport timer (IBA vol. 1
/// §9.7.6.1.3, ibv_modify_qp(3): a Local ACK Timeout of 0 is infinite). NVIDIA's adaptive
/// retransmission varies the timer's value, not whether it runs: no timeout then either.
pub fn timer_disabled(config: Option<&TestConfig>) -> bool {
    config.and_then(|c| c.min_retransmit_timeout) == Some(0)
}

/// Whether the requester runs NVIDIA's adaptive retransmission (Lumina §6.3): as
/// configured, but never on an E810, which has no adaptive mode (its `adaptive-retrans`
/// setting does nothing); `None` when not configured.
pub fn adaptive_retrans(config: Option<&TestConfig>) -> Option<bool> {
    let r = &config?.requester;
    r.adaptive_retrans.map(|a| a && r.nic.as_deref() != Some("e810"))
}

/// The requester's retransmission timeout when it is fixed; `None` when it is not
/// configured, or when adaptive retransmission makes it vary ([`adaptive_retrans`]).
pub fn fixed_timeout_ns(config: Option<&TestConfig>) -> Option<u64> {
    let adaptive = adaptive_retrans(config) == Some(true);
    config?.min_retransmit_timeout.filter(|_| !adaptive).and_then(iba_timeout_ns)
}

/// The shortest adaptive retransmission timeout Lumina §6.3 saw (CX6 Dx, `timeout` 14:
/// 5.6, 4.1, 8.4, ... ms, below the configured 67 ms): with adaptive retransmission on, the
/// timer is taken to run at least this long, whatever is configured (the only figure there
/// is; the emulator's adaptive timeouts are the paper's).
pub const ADAPTIVE_SHORTEST_NS: u64 = 4_100_000;

/// The shortest the requester's timer may run: the fixed timeout, or with NVIDIA's
/// adaptive retransmission [`ADAPTIVE_SHORTEST_NS`]; `None` when no timeout is configured
/// or the timer is disabled ([`timer_disabled`]).
pub fn shortest_timeout_ns(config: Option<&TestConfig>) -> Option<u64> {
    let adaptive = config?.min_retransmit_timeout.filter(|&t| t > 0).map(|_| ADAPTIVE_SHORTEST_NS);
    fixed_timeout_ns(config).or(adaptive)
}

/// READ: the longest a requester NIC takes from an out-of-sequence response to its
/// repeated request (the READ "NAK", Lumina §6.1, Figure 8): twice the paper's figures for
/// CX4 Lx (≈150 µs) and E810 (≈83 ms). CX5 and CX6 Dx: §6.1 gives them a NACK generation of
/// ≈2 µs and a whole retransmission of 4–8 µs, READ slower than WRITE without a figure, so
/// ten times the 2 µs. The way between the switch and the requester comes on top
/// ([`read_nak_overdue`]).
const READ_NAK_NS: [(&str, u64); 4] = [("cx4", 300_000), ("cx5", 20_000), ("cx6", 20_000), ("e810", 166_000_000)];

/// The requester NIC's READ NAK bound ([`READ_NAK_NS`]), when the configuration names a
/// NIC Lumina measured. One definition for `gbn` and `retrans`.
pub fn read_nak_ns(config: Option<&TestConfig>) -> Option<u64> {
    let nic = config?.requester.nic.as_deref()?;
    READ_NAK_NS.iter().find(|(n, _)| *n == nic).map(|&(_, ns)| ns)
}

/// READ: whether a repeated request whose copy passed the switch at `ts` is too late to
/// be the NAK of a gap whose first out-of-sequence response passed at `cause_ts`: later
/// than the NIC's `bound` plus `path_ns`, the way from the switch to the requester and
/// back. Whatever the timer: a NAK bound does not depend on it. A request that passed
/// before the response (they cross the switch in opposite directions) is not late: its
/// time difference would wrap around the clock.
pub fn read_nak_overdue(cause_ts: u64, ts: u64, bound: u64, path_ns: u64) -> bool {
    later(ts, cause_ts) && elapsed(cause_ts, ts) > bound.saturating_add(path_ns)
}

/// Nanoseconds from switch time `from` to `to` on the 48-bit clock (it wraps every 78 h).
pub fn elapsed(from: u64, to: u64) -> u64 {
    to.wrapping_sub(from) & wire::mirror::TIMESTAMP_MAX
}

/// Whether switch time `a` is after `b` (within half the clock's range).
pub fn later(a: u64, b: u64) -> bool {
    let d = elapsed(b, a);
    d != 0 && d < 1 << 47
}

/// Whether switch time `ts` is less than `window` ns before `now`, or after it.
pub fn within(ts: u64, now: u64, window: u64) -> bool {
    later(ts, now) || elapsed(ts, now) < window
}

/// Switch time `ts` plus `ns`, on the 48-bit clock.
pub fn ts_add(ts: u64, ns: u64) -> u64 {
    ts.wrapping_add(ns) & wire::mirror::TIMESTAMP_MAX
}

/// Switch time `ts` less `ns`, on the 48-bit clock.
pub fn ts_sub(ts: u64, ns: u64) -> u64 {
    ts.wrapping_sub(ns) & wire::mirror::TIMESTAMP_MAX
}

/// The switch clock unwrapped over one trace: nanoseconds since the clock's zero, counted
/// from the first mirrored copy (exact for traces shorter than 2^48 ns, 78 hours).
#[derive(Debug, Clone, Copy, Default)]
pub struct SwitchClock {
    base: u64,
}

impl SwitchClock {
    pub fn of(records: &[Record]) -> SwitchClock {
        let first = records.iter().find(|r| r.has(flag::MIRRORED)).map_or(0, |r| r.switch_ts_ns);
        SwitchClock { base: first & wire::mirror::TIMESTAMP_MAX }
    }

    /// `r`'s switch time; a record that is not a mirrored copy carries a capture time,
    /// returned as is. A copy may be stamped a little before the first one (the stamp is
    /// not in seq order across ports): within half the clock's range it is before, not
    /// one wrap later.
    pub fn ns(&self, r: &Record) -> u64 {
        if !r.has(flag::MIRRORED) {
            return r.switch_ts_ns;
        }
        let ts = r.switch_ts_ns & wire::mirror::TIMESTAMP_MAX;
        if later(self.base, ts) {
            self.base.saturating_sub(elapsed(ts, self.base))
        } else {
            self.base + elapsed(self.base, ts)
        }
    }
}

/// A PSN as a Go-back-N receiver compares them: a wire PSN (`u32`, 24 bits, wrapping) or a
/// position with the wrap already undone (`u64`).
pub trait Psn: Copy + Eq {
    fn next(self) -> Self;
    /// Whether `self` comes after `other`.
    fn after(self, other: Self) -> bool;
}

impl Psn for u32 {
    fn next(self) -> u32 {
        psn::add(self, 1)
    }
    fn after(self, other: u32) -> bool {
        psn::gt(self, other)
    }
}

impl Psn for u64 {
    fn next(self) -> u64 {
        self + 1
    }
    fn after(self, other: u64) -> bool {
        self > other
    }
}

/// The Go-back-N data receiver (IBA; Lumina §4, "the Go-back-N receiver generates a NACK
/// packet ... when it observes out of order arriving packets"): it accepts only the PSN it
/// expects; the first arrival past it reveals a gap and makes it NAK; later ones are
/// ignored until the expected PSN arrives. Fed the delivered data packets of one
/// connection in order; the analyzers add what each outcome means to them.
#[derive(Debug, Clone, Copy)]
pub struct GbnReceiver<P> {
    expected: Option<P>,
    /// A NAK (READ: a repeated request) for the gap at `expected` is on its way.
    nak_outstanding: bool,
}

/// What one arrival did at a [`GbnReceiver`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival<P> {
    /// The first packet of a receiver that did not know its initial PSN: taken as in order.
    First,
    InOrder,
    /// Ahead of the expected PSN with no NAK outstanding: `missing` (the expected PSN) is
    /// the PSN the receiver NAKs.
    Gap {
        missing: P,
    },
    /// A duplicate (behind the expected PSN), or ahead of it while a NAK is outstanding or
    /// the receiver is [recovering](GbnReceiver::recovering).
    Ignored,
}

impl<P: Psn> GbnReceiver<P> {
    /// A receiver expecting `initial` (the connection's first PSN), or the first PSN it
    /// sees when that is not known.
    pub fn new(initial: Option<P>) -> GbnReceiver<P> {
        GbnReceiver { expected: initial, nak_outstanding: false }
    }

    /// The PSN it expects next (`None` before its first packet when the initial PSN is
    /// not known).
    pub fn expected(&self) -> Option<P> {
        self.expected
    }

    /// The receiver is already recovering from the gap at the expected PSN (a READ
    /// requester repeated its request): until that PSN arrives, an out-of-sequence arrival
    /// calls for no new NAK.
    pub fn recovering(&mut self) {
        self.nak_outstanding = true;
    }

    /// The receiver expects `p` next, with no NAK outstanding: it turned `p` away (RNR
    /// NAK; what arrived after it was not accepted either), or the PSNs before `p` crossed
    /// the switch with their copies missing from the trace and it is taken to have them.
    pub fn expect(&mut self, p: P) {
        (self.expected, self.nak_outstanding) = (Some(p), false);
    }

    pub fn arrive(&mut self, p: P) -> Arrival<P> {
        let Some(e) = self.expected else {
            self.expected = Some(p.next());
            return Arrival::First;
        };
        if p == e {
            self.expected = Some(e.next());
            self.nak_outstanding = false;
            Arrival::InOrder
        } else if p.after(e) && !self.nak_outstanding {
            self.nak_outstanding = true;
            Arrival::Gap { missing: e }
        } else {
            Arrival::Ignored
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ts: u64) -> Record {
        let mut r = Record::default();
        (r.switch_ts_ns, r.flags) = (ts, flag::MIRRORED);
        r
    }

    #[test]
    fn a_gbn_receiver_naks_the_first_arrival_past_a_gap_only() {
        use Arrival::*;
        let mut rx = GbnReceiver::new(Some(psn::MASK - 1));
        let seen: Vec<Arrival<u32>> =
            [psn::MASK - 1, psn::MASK, 2, 3, 0, 1, 1, 2, 5, 3, 4].map(|p| rx.arrive(p)).into();
        let want = [
            InOrder,
            InOrder, // across the 24-bit wrap
            Gap { missing: 0 },
            Ignored, // its NAK is outstanding: no second one
            InOrder,
            InOrder,
            Ignored, // duplicate
            InOrder,
            Gap { missing: 3 },
            InOrder,
            InOrder,
        ];
        assert_eq!(seen, want);
        assert_eq!(rx.expected(), Some(5));
        // Without a known initial PSN the first arrival sets it; positions work the same.
        let mut rx = GbnReceiver::<u64>::new(None);
        assert_eq!([10, 12, 11, 12].map(|p| rx.arrive(p)), [First, Gap { missing: 11 }, InOrder, InOrder]);
        // A receiver already recovering NAKs no new gap until the expected PSN arrives.
        rx.recovering();
        assert_eq!([15, 13, 15].map(|p| rx.arrive(p)), [Ignored, InOrder, Gap { missing: 14 }]);
    }

    #[test]
    fn the_mtu_read_responses_carry_wins_over_the_configured_one() {
        let resp = |op: u8, len: u16| {
            let mut r = Record::default().with_kind(Kind::Response).with_opcode(op);
            r.payload_len = len;
            r
        };
        let cfg = TestConfig { mtu: Some(4096), ..TestConfig::default() };
        let first_last = [resp(0x0d, 1024), resp(0x0f, 100)];
        assert_eq!(path_mtu(Some(&cfg), &first_last), Some(1024));
        assert_eq!(path_mtu(Some(&cfg), &[resp(0x10, 100)]), Some(4096), "an Only response says nothing");
        assert_eq!(path_mtu(None, &[resp(0x10, 100)]), Some(100));
        assert_eq!(path_mtu(None, &[]), None);
    }

    #[test]
    fn the_switch_clock_unwraps_past_its_48_bits() {
        let max = wire::mirror::TIMESTAMP_MAX;
        let recs = [at(max - 10), at(5)];
        let clock = SwitchClock::of(&recs);
        assert_eq!((clock.ns(&recs[0]), clock.ns(&recs[1])), (max - 10, max + 6));
        assert_eq!(elapsed(max - 10, 5), 16);
        // A copy stamped before the first one is before it, also across the wrap.
        let recs = [at(1000), at(990)];
        let clock = SwitchClock::of(&recs);
        assert_eq!(clock.ns(&recs[1]), 990);
        let recs = [at(5), at(max - 10)];
        assert_eq!(SwitchClock::of(&recs).ns(&recs[1]), 0, "16 ns before 5: saturates at the clock's zero");
        assert!(later(5, max - 10) && !later(max - 10, 5) && !later(7, 7));
    }

    /// Code review (session 23): a repeat that passed the switch 1 ns before the response
    /// it answers counted as ~2^48 ns late.
    #[test]
    fn a_request_before_its_cause_is_not_overdue() {
        assert!(!read_nak_overdue(1_000, 999, 20_000, 1_000));
        assert!(!read_nak_overdue(1_000, 22_000, 20_000, 1_000));
        assert!(read_nak_overdue(1_000, 22_001, 20_000, 1_000));
        assert!(read_nak_overdue(wire::mirror::TIMESTAMP_MAX - 10, 30_000, 20_000, 1_000), "across the clock's wrap");
    }

    #[test]
    fn timeouts_follow_iba_and_adaptive_mode() {
        assert_eq!(iba_timeout_ns(14), Some(67_108_864));
        let mut c = TestConfig { min_retransmit_timeout: Some(14), ..TestConfig::default() };
        assert_eq!(fixed_timeout_ns(Some(&c)), Some(67_108_864));
        c.requester.adaptive_retrans = Some(true);
        c.requester.nic = Some("cx6".into());
        assert_eq!(fixed_timeout_ns(Some(&c)), None);
        c.requester.nic = Some("e810".into());
        assert_eq!(fixed_timeout_ns(Some(&c)), Some(67_108_864), "the E810 has no adaptive mode");
    }

    /// IBA vol. 1 §9.7.6.1.3: exponent 0 is an infinite timeout, not 4.096 µs.
    #[test]
    fn exponent_zero_disables_the_timer() {
        assert_eq!((iba_timeout_ns(0), iba_timeout_ns(1)), (None, Some(8_192)));
        for adaptive in [None, Some(false), Some(true)] {
            let mut c = TestConfig { min_retransmit_timeout: Some(0), ..TestConfig::default() };
            (c.requester.adaptive_retrans, c.requester.nic) = (adaptive, Some("cx6".into()));
            assert!(timer_disabled(Some(&c)));
            assert_eq!((fixed_timeout_ns(Some(&c)), shortest_timeout_ns(Some(&c))), (None, None), "{adaptive:?}");
            c.min_retransmit_timeout = Some(1);
            assert!(!timer_disabled(Some(&c)));
        }
        assert!(!timer_disabled(None));
    }

    #[test]
    fn read_requests_cover_their_dma_length() {
        let r = Record::default().with_reth(2049);
        assert_eq!((read_span(&r, 1024), read_span(&r, 4096), read_span(&Record::default(), 1024)), (3, 1, 1));
    }

    #[test]
    fn message_boundaries_by_opcode() {
        // SEND First / Middle / Last / Only, WRITE First / Only, READ response Last.
        let starts: Vec<bool> = [0x00, 0x01, 0x02, 0x04, 0x06, 0x0a, 0x0f].map(starts_message).to_vec();
        let ends: Vec<bool> = [0x00, 0x01, 0x02, 0x04, 0x06, 0x0a, 0x0f].map(ends_message).to_vec();
        assert_eq!(starts, [true, false, false, true, true, true, false]);
        assert_eq!(ends, [false, false, true, true, false, true, true]);
    }
}
