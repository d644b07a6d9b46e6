//! When a frame the switch forwards reaches its host: the CNP analyzer's NP clock,
//! goodput's completions at the requester and the Go-back-N replay's order of what the
//! requester heard (and, toward a slower responder, when a request left) all need it, and
//! the switch timestamp is only the frame's ingress.
//!
//! The switch port toward a host is a FIFO fed with every frame forwarded to that host and
//! drained at the link rate of the host's NIC (Lumina §6: CX4 Lx 40 GbE, the others
//! 100 GbE). A frame arrives at ingress + queueing + serialization; the pipeline and cable
//! delays are constant and left out (they cancel in every difference of two arrivals).
//! Switch timestamps are whole nanoseconds: an arrival takes the middle of its ingress
//! nanosecond, so a difference of arrivals is known to [`TOLERANCE_PS`]. A frame whose
//! copy is missing may have queued ahead unseen: until the port would have drained,
//! arrivals may be later than modelled by up to one frame per missing copy, as large as
//! the largest the trace shows forwarded to that host, and each arrival says by how much.

use rustc_hash::FxHashMap;
use trace::record::{flag, Kind, Record};
use wire::mirror::Event;

use super::conn::{Connection, End, Role};
use super::context::HostConfig;
use super::transport::SwitchClock;
use super::unseen::{Since, Unseen};
use super::Input;

/// How far a difference of two estimated arrivals may be from the true one: each switch
/// timestamp truncates up to 1 ns, and an estimate takes the middle of that nanosecond.
pub const TOLERANCE_PS: u64 = 1_000;
/// Ethernet bytes on the wire besides the frame: FCS, preamble + SFD, inter-frame gap.
const WIRE_OVERHEAD: u64 = 24;

/// A host's link rate, Gb/s: the configuration's, else its NIC's port speed; None when
/// neither is known.
pub fn host_link_gbps(host: Option<&HostConfig>) -> Option<f64> {
    host.and_then(|h| h.link_gbps).or_else(|| link_gbps(host.and_then(|h| h.nic.as_deref())))
}

/// The port speed of a host's NIC (Lumina §6), Gb/s; None when the NIC is not known.
pub fn link_gbps(nic: Option<&str>) -> Option<f64> {
    match nic {
        Some("cx4") => Some(40.0),
        Some("cx5" | "cx6" | "e810") => Some(100.0),
        _ => None,
    }
}

/// One frame of the trace on a known connection, in trace order.
pub struct Frame<'a> {
    pub idx: u32,
    pub r: &'a Record,
    pub conn: &'a Connection,
    /// The end it is forwarded to.
    pub to: Role,
    pub ts_ns: u64,
}

/// The mirrored frames of known connections in trace order (copies later than their seq,
/// which the connections leave out, are left out too): what the switch forwarded to each
/// host, with its drops (an event's) still in.
pub fn frames<'a>(input: &'a Input<'a>) -> impl Iterator<Item = Frame<'a>> + 'a {
    let conns = &input.conns.list;
    let ends: FxHashMap<End, (u32, Role)> = conns
        .iter()
        .flat_map(|c| [(c.requester, (c.id, Role::Requester)), (c.responder, (c.id, Role::Responder))])
        .collect();
    let clock = SwitchClock::of(input.view.records);
    input.view.records.iter().enumerate().filter_map(move |(i, r)| {
        if matches!(r.kind(), Kind::NotRoce) || input.conns.is_late(i as u32) {
            return None;
        }
        let f = input.view.flow(r)?;
        let &(conn, to) = ends.get(&End { ip: f.dst_ip(), qpn: r.dest_qp() })?;
        let conn = conns.get(conn as usize)?;
        // Without a mirror header there is no switch time to place it by.
        let mirrored = r.has(flag::MIRRORED);
        mirrored.then(|| Frame { idx: i as u32, r, conn, to, ts_ns: clock.ns(r) })
    })
}

/// The switch port towards one host: a FIFO drained at the host's link rate. Arrivals are
/// ingress time + queueing + serialization; the pipeline and cable delays are left out.
/// A frame whose copy is missing may have queued ahead of the next ones: how much later
/// than modelled they may arrive is kept until the port would have drained anyway.
#[derive(Debug)]
pub struct Egress {
    /// Femtoseconds per byte (as the emulator keeps rates); None: no queueing modelled.
    fs_per_byte: Option<u64>,
    busy_ps: u64,
    /// How much later than `busy_ps` the port may be busy until.
    late_ps: u64,
    /// The wire time of the largest frame forwarded to the host: what one unseen frame may add.
    unseen_wire_ps: u64,
    /// Femtoseconds per byte of the one link that feeds the port (the other host's, in
    /// Lumina's two-host rig), when known and no slower than the port drains. Frames come
    /// in over it one after another, each taking at least as long to come in as to go
    /// out, so a backlog never outgrows one frame: however many copies are missing, an
    /// arrival is at most one largest frame, less its own time coming in, later.
    feed_fs_per_byte: Option<u64>,
    /// The previous frame forwarded to the host: which copies are missing since.
    since: Since,
    /// Copies taken as missing before the trace's first that are not: left out of those
    /// missing before the first frame to the host.
    not_missing_before_first: u64,
}

impl Egress {
    /// The port draining at `gbps`, fed by one link at `feed_gbps` (None: not known, or
    /// several links may feed it), `max_frame_len` the largest frame forwarded to the host.
    pub fn new(gbps: Option<f64>, feed_gbps: Option<f64>, max_frame_len: u16) -> Egress {
        let fs_per_byte = gbps.map(fs_per_byte);
        let unseen_wire_ps = fs_per_byte.map_or(0, |fs| wire_ps(fs, max_frame_len));
        let feed = feed_gbps.map(self::fs_per_byte);
        Egress {
            fs_per_byte,
            busy_ps: 0,
            late_ps: 0,
            unseen_wire_ps,
            feed_fs_per_byte: feed.filter(|&f| fs_per_byte.is_some_and(|d| d <= f)),
            since: Since::default(),
            not_missing_before_first: 0,
        }
    }

    /// At most `lost` copies are missing before the trace's first (the switch's count of
    /// copies lost at the trace's ends), not every seq before it ([`Unseen`] counts those
    /// when copies may be lost there: a bound on which connections lost some, but as a
    /// count of frames that may have queued, hours of them).
    pub fn lost_before_first(&mut self, unseen: &Unseen, first_seq: u64, lost: u64) {
        let counted = unseen.count_between(None, first_seq);
        self.not_missing_before_first = counted.saturating_sub(lost);
    }

    /// The arrival of frame `r` (switch time `ts_ns`), ps, and how much later it may be.
    /// Fed every frame forwarded to the host, in trace order.
    pub fn arrive(&mut self, ts_ns: u64, r: &Record, unseen: &Unseen) -> (u64, u64) {
        let ready = ready_ps(ts_ns);
        let missing = self.since.step(unseen, r).saturating_sub(std::mem::take(&mut self.not_missing_before_first));
        let Some(fs) = self.fs_per_byte else { return (ready, 0) };
        let start = ready.max(self.busy_ps);
        self.late_ps = match self.feed_fs_per_byte {
            Some(feed) => self.one_frame_behind(missing, ready, feed, r),
            None => {
                // Unseen frames came in before this one (mirror order is ingress order): at
                // worst right before it, each as large as the largest.
                let worst_busy = self.busy_ps.saturating_add(self.late_ps);
                let worst_start = ready.max(worst_busy).saturating_add(missing.saturating_mul(self.unseen_wire_ps));
                worst_start - start
            }
        };
        self.busy_ps = start.saturating_add(wire_ps(fs, r.frame_len));
        (self.busy_ps, self.late_ps)
    }

    /// Fed by one link no faster than the port drains, a frame waits at most for the one
    /// before it to go out, which began coming in before it did: the largest frame's time
    /// going out less `r`'s coming in. An unseen frame may make it wait that long, while
    /// the port has not drained since a copy was missing; else the model is exact.
    fn one_frame_behind(&self, missing: u64, ready: u64, feed: u64, r: &Record) -> u64 {
        let busy_unseen = self.late_ps > 0 && ready < self.busy_ps.saturating_add(self.late_ps);
        if missing == 0 && !busy_unseen {
            return 0;
        }
        self.unseen_wire_ps.saturating_sub(wire_ps(feed, r.frame_len))
    }
}

/// A frame's ingress, ps: the middle of its timestamp's nanosecond.
pub fn ready_ps(ts_ns: u64) -> u64 {
    ts_ns.saturating_mul(1_000).saturating_add(TOLERANCE_PS / 2)
}

/// A frame's time on the wire, ps: its bytes with preamble, FCS and inter-frame gap.
fn wire_ps(fs_per_byte: u64, frame_len: u16) -> u64 {
    ((u64::from(frame_len) + WIRE_OVERHEAD) * fs_per_byte + 500) / 1_000
}

/// A frame's time on a link of `gbps` (0 when the rate is not known), ps.
pub fn wire_time_ps(gbps: Option<f64>, frame_len: u16) -> u64 {
    gbps.map_or(0, |g| wire_ps(fs_per_byte(g), frame_len))
}

/// Femtoseconds per byte at `gbps`, as the emulator keeps rates.
fn fs_per_byte(gbps: f64) -> u64 {
    (8.0e6 / gbps).round().max(1.0) as u64
}

/// A frame's modelled arrival at its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// On the switch clock, ps (pipeline and cable delays left out).
    pub ps: u64,
    /// How much later it may be: frames whose copies are missing may have queued ahead.
    pub late_ps: u64,
}

/// The switch's ports toward both hosts of a connection: when what it forwarded left
/// toward its end.
#[derive(Debug, Default)]
pub struct Ports {
    pub to_requester: Arrivals,
    pub to_responder: Arrivals,
}

impl Ports {
    pub fn of(input: &Input<'_>) -> Ports {
        Ports { to_requester: Arrivals::toward_requester(input), to_responder: Arrivals::toward_responder(input) }
    }

    /// [`Arrivals::queued_ns`] at the port toward `to`.
    pub fn queued_ns(&self, idx: u32, r: &Record, to: Role) -> u64 {
        match to {
            Role::Requester => self.to_requester.queued_ns(idx, r),
            Role::Responder => self.to_responder.queued_ns(idx, r),
        }
    }
}

/// Every frame's arrival at one host, by record index, kept as the delay past its
/// ingress (8 bytes a record: the trace may hold tens of millions).
#[derive(Debug, Default)]
pub struct Arrivals {
    /// (queueing + serialization, lateness), ps, saturated; zero for the frames not
    /// forwarded to the host.
    past_ingress: Vec<[u32; 2]>,
    /// The port's drain rate (femtoseconds per byte), when modelled.
    fs_per_byte: Option<u64>,
}

impl Arrivals {
    /// The arrivals of what the switch forwarded to `host`, whose link runs at `gbps`.
    pub fn at_host(input: &Input<'_>, host: Role, gbps: Option<f64>, feed_gbps: Option<f64>) -> Arrivals {
        let records = input.view.records;
        let mut port = Egress::new(gbps, feed_gbps, input.conns.max_frame_len[host.index()]);
        if let Some(first) = records.iter().map(Record::seq).filter(|&s| s != 0).min() {
            port.lost_before_first(&input.conns.unseen, first, input.ctx.lost_at_ends);
        }
        let mut past_ingress = vec![[0; 2]; records.len()];
        for f in frames(input).filter(|f| f.to == host && f.r.event() != Event::Drop) {
            let (ps, late_ps) = port.arrive(f.ts_ns, f.r, &input.conns.unseen);
            let delay = ps - ready_ps(f.ts_ns);
            past_ingress[f.idx as usize] = [saturated(delay), saturated(late_ps)];
        }
        Arrivals { past_ingress, fs_per_byte: gbps.map(fs_per_byte) }
    }

    /// What the switch forwarded to the requester, its port draining at the requester's link
    /// rate and fed at the responder's (Lumina's rig has two hosts), as the configuration
    /// gives them; without the requester's, nothing is modelled (every arrival at ingress).
    pub fn toward_requester(input: &Input<'_>) -> Arrivals {
        let config = input.ctx.config.as_ref();
        let gbps = host_link_gbps(config.map(|c| &c.requester));
        let feed = host_link_gbps(config.map(|c| &c.responder));
        match gbps {
            Some(_) => Arrivals::at_host(input, Role::Requester, gbps, feed),
            None => Arrivals::default(),
        }
    }

    /// What the switch forwarded to the responder, its port draining at the responder's link
    /// rate and fed at the requester's, when the responder's link is the slower (a CX4 Lx
    /// answering a CX5's WRITEs): its port queues the data for as long as the burst lasts.
    /// A port no slower than the link feeding it holds nothing back beyond a frame's own
    /// serialization: not modelled (every arrival at ingress), nor without both rates.
    pub fn toward_responder(input: &Input<'_>) -> Arrivals {
        let config = input.ctx.config.as_ref();
        let gbps = host_link_gbps(config.map(|c| &c.responder));
        let feed = host_link_gbps(config.map(|c| &c.requester));
        match (gbps, feed) {
            (Some(g), Some(f)) if g < f => Arrivals::at_host(input, Role::Responder, gbps, feed),
            _ => Arrivals::default(),
        }
    }

    /// How long record `idx` (`r`) waited at the port behind frames ahead of it, ns (its
    /// own serialization left out): 0 for a record not forwarded to the host.
    pub fn queued_ns(&self, idx: u32, r: &Record) -> u64 {
        let [delay, _] = self.past_ingress.get(idx as usize).copied().unwrap_or_default();
        let own = self.fs_per_byte.map_or(0, |fs| wire_ps(fs, r.frame_len));
        u64::from(delay).saturating_sub(own) / 1_000
    }

    /// Arrivals of records `0..`, each (queueing + serialization, lateness) past ingress.
    #[cfg(test)]
    pub fn of_delays(past_ingress: Vec<[u32; 2]>) -> Arrivals {
        Arrivals { past_ingress, fs_per_byte: None }
    }

    /// Record `idx`'s arrival, its switch time `ts_ns`; a record not modelled (outside the
    /// trace given, or not forwarded to the host) arrives at its ingress.
    pub fn of(&self, idx: u32, ts_ns: u64) -> Arrival {
        let [delay, late] = self.past_ingress.get(idx as usize).copied().unwrap_or_default();
        // A delay past the u32 range (4.3 ms of queueing) is not known: as late as can be.
        let late_ps = if delay == u32::MAX { u64::MAX } else { u64::from(late) };
        let late_ps = if late == u32::MAX { u64::MAX } else { late_ps };
        Arrival { ps: ready_ps(ts_ns) + u64::from(delay), late_ps }
    }
}

/// How long before its ingress each frame the requester sent may have been decided (a
/// go-back, say, when its timer expired). Behind a busy link the NIC holds a QP's next
/// frame while the others' go out: frames that reach the switch back to back at the link
/// rate waited behind the ones before them, any of them since the back-to-back run began
/// (a go-back the NIC decided before its timer expired may pass the switch after the
/// expiry: sweep case 3307, three QPs on a 1 Gb/s link). But not before the QP's own
/// previous frame went on the wire: decided earlier, that frame would have been it.
#[derive(Debug, Default)]
pub struct Sends {
    /// ns, by record index, saturated; zero for the frames the requester did not send.
    held_ns: Vec<u32>,
}

impl Sends {
    /// The requester's sends, over its link as the configuration gives it; without its
    /// rate, nothing is modelled (every frame decided as it reached the switch).
    pub fn from_requester(input: &Input<'_>) -> Sends {
        let config = input.ctx.config.as_ref();
        let Some(gbps) = host_link_gbps(config.map(|c| &c.requester)) else { return Sends::default() };
        let fs = fs_per_byte(gbps);
        let records = input.view.records;
        // Frames the requester sent are forwarded to the responder.
        let unseen_wire_ps = wire_ps(fs, input.conns.max_frame_len[Role::Responder.index()]);
        let mut link = Uplink::new(fs, unseen_wire_ps);
        let mut held_ns = vec![0; records.len()];
        for f in frames(input).filter(|f| f.to == Role::Responder) {
            held_ns[f.idx as usize] = saturated(link.send(f.ts_ns, f.r, f.conn.id, &input.conns.unseen) / 1_000);
        }
        Sends { held_ns }
    }

    /// How long before its ingress record `idx` may have been decided, ns: 0 when it came
    /// after an idle link, or the requester did not send it.
    pub fn held_ns(&self, idx: u32) -> u64 {
        self.held_ns.get(idx as usize).map_or(0, |&h| u64::from(h))
    }
}

/// A host's link toward the switch, seen from the frames' ingress times.
struct Uplink {
    fs_per_byte: u64,
    /// What one frame whose copy is missing may have taken of the link.
    unseen_wire_ps: u64,
    /// The previous frame's ingress, ps.
    last_ps: Option<u64>,
    /// How long the back-to-back run had lasted by the previous frame, ps.
    run_ps: u64,
    since: Since,
    /// Per connection, when its last frame seen began on the wire (ingress less its own
    /// wire time), ps.
    qp_last: FxHashMap<u32, u64>,
}

impl Uplink {
    fn new(fs_per_byte: u64, unseen_wire_ps: u64) -> Uplink {
        let since = Since::default();
        Uplink { fs_per_byte, unseen_wire_ps, last_ps: None, run_ps: 0, since, qp_last: FxHashMap::default() }
    }

    /// How long before its ingress frame `r` (switch time `ts_ns`) of connection `conn` may
    /// have been decided, ps.
    fn send(&mut self, ts_ns: u64, r: &Record, conn: u32, unseen: &Unseen) -> u64 {
        let ready = ready_ps(ts_ns);
        let missing = self.since.step(unseen, r);
        let own = wire_ps(self.fs_per_byte, r.frame_len);
        // Back to back: no longer after the one before than its own wire time and that of
        // every frame whose copy is missing between, give or take the timestamps' nanosecond.
        let slack = own + missing.saturating_mul(self.unseen_wire_ps) + TOLERANCE_PS;
        self.run_ps = match self.last_ps.filter(|&l| ready >= l && ready - l <= slack) {
            Some(l) => self.run_ps + (ready - l),
            None => 0,
        };
        self.last_ps = Some(ready);
        // A frame of its QP whose copy is missing went later than the one seen: the bound holds.
        let since_own = self.qp_last.insert(conn, ready.saturating_sub(own)).map(|s| ready.saturating_sub(s));
        since_own.map_or(self.run_ps, |s| s.min(self.run_ps))
    }
}

fn saturated(ps: u64) -> u32 {
    u32::try_from(ps).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u64, frame_len: u16) -> Record {
        let mut r = Record::default().with_seq(seq);
        r.frame_len = frame_len;
        r
    }

    #[test]
    fn a_small_frame_queues_behind_a_large_one() {
        let (none, mut port) = (Unseen::default(), Egress::new(Some(100.0), None, 1_082));
        // 1082 B take 88.48 ns at 100 Gb/s (with preamble, FCS and gap); a 74 B frame 7.84 ns.
        let (big, _) = port.arrive(1_000, &frame(1, 1_082), &none);
        let small = port.arrive(1_010, &frame(2, 74), &none);
        assert_eq!(big, 1_000_500 + 88_480);
        assert_eq!(small, (big + 7_840, 0), "it waits for the large frame to leave");
    }

    #[test]
    fn a_frame_whose_copy_is_missing_may_delay_the_next_until_the_port_drains() {
        // Copy 2 is missing: a frame as large as the largest to the host may have queued ahead
        // of copy 3, and of copy 4 behind it, but not of copy 5, after the port drained.
        let frames = [frame(1, 74), frame(3, 74), frame(4, 74), frame(5, 74)];
        let (unseen, mut port) = (Unseen::of(&frames), Egress::new(Some(100.0), None, 1_082));
        let at = |port: &mut Egress, ns: u64, k: usize| port.arrive(ns, &frames[k], &unseen);
        assert_eq!(at(&mut port, 1_000, 0), (1_000_500 + 7_840, 0));
        assert_eq!(at(&mut port, 1_100, 1), (1_100_500 + 7_840, 88_480));
        assert_eq!(at(&mut port, 1_110, 2), (1_110_500 + 7_840, 1_100_500 + 7_840 + 88_480 - 1_110_500));
        assert_eq!(at(&mut port, 2_000, 3), (2_000_500 + 7_840, 0));
    }

    #[test]
    fn fed_by_one_link_as_fast_a_port_is_late_by_one_frame_at_most() {
        // The port drains at 100 Gb/s and one 100 Gb/s link feeds it: however many copies
        // are missing before copy 30 (small frames, as ACKs to a WRITE requester), they came
        // in one after another, each as long coming in as going out; copy 30 waits at most
        // for the largest to go out, less its own time coming in. A larger frame ahead of a
        // smaller one is what makes it wait at all.
        let frames = [frame(1, 74), frame(30, 74), frame(31, 74), frame(40, 74)];
        let unseen = Unseen::of(&frames);
        let mut acks = Egress::new(Some(100.0), Some(100.0), 74);
        let at = |port: &mut Egress, ns: u64, k: usize| port.arrive(ns, &frames[k], &unseen).1;
        assert_eq!([1_000, 1_100, 1_110, 5_000].map(|ns| at(&mut acks, ns, 0)), [0; 4], "74 B behind 74 B: never");
        let mut mixed = Egress::new(Some(100.0), Some(100.0), 1_082);
        assert_eq!(at(&mut mixed, 1_000, 0), 0);
        assert_eq!(at(&mut mixed, 2_000, 1), 88_480 - 7_840, "28 copies missing: one frame at most");
        assert_eq!(at(&mut mixed, 2_010, 2), 88_480 - 7_840, "the port may not have drained");
        assert_eq!(at(&mut mixed, 9_000, 3), 88_480 - 7_840, "8 more missing");
        // A slower port (40 Gb/s fed at 100) keeps the backlog of every missing copy.
        let mut slow = Egress::new(Some(40.0), Some(100.0), 1_082);
        at(&mut slow, 1_000, 0);
        assert!(at(&mut slow, 2_000, 1) > 28 * 200_000, "each large frame goes out 2.5x slower than it came");
    }

    #[test]
    fn copies_lost_before_the_trace_count_as_the_switch_says() {
        // The trace starts at seq 100, copies may be lost before it: the switch counts 2.
        let frames = [frame(100, 74), frame(101, 74)];
        let mut unseen = Unseen::of(&frames);
        unseen.lost_before_first();
        let mut port = Egress::new(Some(100.0), None, 1_082);
        port.lost_before_first(&unseen, 100, 2);
        assert_eq!(port.arrive(1_000, &frames[0], &unseen), (1_000_500 + 7_840, 2 * 88_480));
        assert_eq!(port.arrive(5_000, &frames[1], &unseen), (5_000_500 + 7_840, 0), "drained");
    }

    #[test]
    fn an_arrival_out_of_the_u32_range_is_not_known() {
        let a = Arrivals::of_delays(vec![[7_840, 0], [u32::MAX, 0], [0, u32::MAX]]);
        assert_eq!(a.of(0, 1_000), Arrival { ps: 1_000_500 + 7_840, late_ps: 0 });
        assert_eq!(a.of(1, 1_000).late_ps, u64::MAX);
        assert_eq!(a.of(2, 1_000).late_ps, u64::MAX);
        assert_eq!(a.of(3, 1_000), Arrival { ps: 1_000_500, late_ps: 0 }, "not modelled: its ingress");
    }

    #[test]
    fn a_frame_back_to_back_behind_others_may_have_been_sent_when_the_run_began() {
        // 1 Gb/s: 1082 B take 8,848 ns on the wire. Frames 2 and 3 come straight behind 1,
        // frame 4 after an idle link, frame 6 straight behind 4 but for the missing copy 5.
        let frames = [frame(1, 1_082), frame(2, 1_082), frame(3, 1_082), frame(4, 1_082), frame(6, 1_082)];
        let unseen = Unseen::of(&frames);
        let mut link = Uplink::new(fs_per_byte(1.0), 8_848_000);
        // Frames 1, 2, 3 and 6 are three QPs'; frame 4 is QP 1's again.
        let held: Vec<u64> = [(1_000, 0, 1), (9_848, 1, 2), (18_696, 2, 3), (40_000, 3, 1), (57_696, 4, 2)]
            .map(|(ns, k, qp)| link.send(ns, &frames[k], qp, &unseen) / 1_000)
            .to_vec();
        assert_eq!(held, [0, 8_848, 17_696, 0, 17_696]);
        // QP 2 again, straight behind its frame 6: not before that began on the wire.
        assert_eq!(link.send(66_544, &frame(7, 1_082), 2, &unseen) / 1_000, 8_848 + 8_848);
    }

    #[test]
    fn link_rates_follow_lumina() {
        assert_eq!(
            [Some("cx4"), Some("cx5"), Some("cx6"), Some("e810"), None].map(link_gbps),
            [Some(40.0), Some(100.0), Some(100.0), Some(100.0), None]
        );
    }
}
