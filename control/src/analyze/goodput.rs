//! Goodput and message completion times per connection, from the trace alone (Lumina
//! §3.2: the traffic generator reports both; here they are re-derived from the packets).
//!
//! A message is what the requester's first transmissions say: WRITE/SEND from a First or
//! Only opcode to the Last or Only one (bytes: the RETH DMA length, else the payloads
//! without pad), READ one request (its PSN span and DMA length). It completes when the
//! requester has everything up to its last PSN acknowledged: an ACK naming it, a NAK
//! naming a later PSN, or — READ — its last response arriving in order.
//!
//! The traffic generator measures at the hosts (docs/formats.md §4.8): a message's
//! completion time runs from its post to its completion, goodput is completed bytes × 8
//! ÷ (last completion − first post). The trace sees switch timestamps, at ingress:
//! - completion = when the completing ACK/response reached the requester. A slower
//!   requester (a 40 Gb/s CX4 Lx reading from a 100 Gb/s NIC), or two QPs' responses
//!   meeting at its switch port, queue there, µs at a time: the arrival is modelled as the
//!   CNP analyzer's NP clock is ([`egress`]: the port a FIFO drained at the requester
//!   NIC's link rate, Lumina §6), less the switch pipeline and the cable, constant;
//!   without the requester's NIC in the configuration, at ingress. A frame whose copy is
//!   missing may have queued ahead unseen: the arrival may be later than modelled by up
//!   to `completed_late_ns`, and by more than [`LATE_TOLERANCE_PS`] (1 µs) the completion
//!   is `completion_uncertain`.
//! - post is not on the wire. It is estimated as the generator posts: the first
//!   `tx-depth` messages at the start of the run (≈ the run's first packet at the switch
//!   less its serialization at the requester's link rate),
//!   each later one when the message `tx-depth` before it completes — on its own QP, or
//!   with barrier sync when the whole round completed on every QP. Barrier sync is taken
//!   from the configuration (`barrier-sync`); without one it is inferred: every QP's round
//!   r starts after every QP's round r − 1.
//!   The estimate is never later than the message's first packet.
//!
//! So a message posted on a completion has the host's MCT to the timestamps' resolution
//! (but for the lateness missing copies allow): both ends are arrivals at the requester,
//! and the constant delays cancel. The first `tx-depth` ones are short by the NIC's delay
//! in sending the run's first packet and the cable it crossed, plus the pipeline and cable
//! the arrival leaves out: under half a µs (Lumina §5: the pipeline is under 0.4 µs), and
//! goodput's span is as much shorter.

use std::cmp::Reverse;

use trace::record::{flag, Kind, Record};
use wire::psn;

use super::conn::{is_data, unknown_verb_note, Connection, Role};
use super::context::Verb;
use super::egress::{self, Arrival, Arrivals};
use super::transport::{
    delivered, ends_message, is_transport, later, path_mtu, read_span, starts_message, starts_read_answer, SwitchClock,
};
use super::unseen::{Since, Unseen};
use super::{render_capped, Input, RENDER_LINES};

/// How much later than modelled a completion may have reached the requester (frames whose
/// copies are missing may have queued ahead of it) for its MCT, and the next post's, to
/// be reported: the bound goodput's MCTs are held to, as the first `tx-depth` ones of each
/// QP, short by the NIC's send delay, the pipeline and cables, are (module documentation).
pub const LATE_TOLERANCE_PS: u64 = 1_000_000;

#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Every connection's messages together.
    pub overall: Totals,
    pub connections: Vec<ConnGoodput>,
    /// How posts were estimated: `per-qp` or `barrier`.
    pub posting: Posting,
    /// `posting` came from the configuration's `barrier-sync`, not inferred from the trace.
    pub posting_configured: bool,
    /// Messages outstanding per QP (configuration `tx-depth`, else 1).
    pub tx_depth: u32,
    pub notes: Vec<String>,
    /// The run's first post, ps: where goodput's span starts.
    #[serde(skip)]
    run_start: Option<u64>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Posting {
    #[default]
    PerQp,
    Barrier,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct ConnGoodput {
    pub conn: u32,
    #[serde(flatten)]
    pub totals: Totals,
    /// Every message; `None` once [`Report::leave_out_per_message`] dropped them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_message: Option<Vec<Message>>,
}

/// A set of messages (a connection's, or all of them) summed up.
#[derive(Debug, Default, serde::Serialize)]
pub struct Totals {
    /// Messages whose first transmission is in the trace.
    pub messages: u64,
    pub completed: u64,
    /// Messages not completed whose completion may be in a mirror copy missing from the
    /// trace (one is missing after their first packet).
    pub completion_unseen: u64,
    /// Completed messages with no completion time: where they started or completed is known
    /// only within missing copies (`bounds_unseen`, `completion_uncertain`, or a post not
    /// known: estimated from such a completion, after a merge, or at a start the trace may
    /// have missed).
    pub mct_unknown: u64,
    /// Completed messages that may not have completed: their QP may have failed before
    /// what completed them reached it ([`Message::qp_may_have_failed`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub qp_may_have_failed: u64,
    /// Bytes of the completed messages whose size the trace proves ([`Message::bytes_unproven`]).
    pub bytes: u64,
    /// Completed messages whose size the trace does not prove: not in `bytes`.
    pub unproven_messages: u64,
    /// What those messages' packets counted, one path MTU for each whose copy is missing:
    /// at most what they carried from their first PSN (with the path MTU known).
    pub unproven_bytes: u64,
    /// Completed bytes × 8 ÷ (last completion − the run's first post, estimated), Gb/s, of
    /// the messages begun after that post (the trace saw them or an earlier one begin),
    /// counting proven bytes only: a lower bound when some are unproven.
    pub goodput_gbps: Option<f64>,
    /// The same with the unproven bytes counted too: an upper bound. Present when some of
    /// those messages' bytes are unproven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput_gbps_max: Option<f64>,
    pub mct_ns: Summary,
}

impl Totals {
    fn of<'m>(msgs: impl Iterator<Item = &'m Message> + Clone, run_start: Option<u64>) -> Totals {
        let done = msgs.clone().filter(|m| m.completed_ns.is_some());
        let (bytes, unproven_bytes) = split_bytes(done.clone());
        // Only messages begun after `run_start`: bytes sent before it would be counted over
        // a span that leaves their time out.
        let timed = done.clone().filter(|m| m.begun_in_trace);
        let last = timed.clone().filter_map(|m| Some(m.completed?.ps)).max();
        let (proven, unproven) = split_bytes(timed);
        let gbps = |bytes: u64| match (run_start, last) {
            (Some(a), Some(b)) if b > a => Some(bytes as f64 * 8_000.0 / (b - a) as f64),
            _ => None,
        };
        Totals {
            messages: msgs.clone().count() as u64,
            completed: done.clone().count() as u64,
            completion_unseen: msgs.filter(|m| m.completion_unseen).count() as u64,
            mct_unknown: done.clone().filter(|m| m.mct_ns.is_none()).count() as u64,
            qp_may_have_failed: done.clone().filter(|m| m.qp_may_have_failed).count() as u64,
            bytes,
            unproven_messages: done.clone().filter(|m| m.bytes_unproven).count() as u64,
            unproven_bytes,
            goodput_gbps: gbps(proven),
            goodput_gbps_max: gbps(proven + unproven).filter(|_| unproven > 0),
            mct_ns: Summary::of(done.filter_map(|m| m.mct_ns).collect()),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The messages' bytes: (proven, unproven).
fn split_bytes<'m>(msgs: impl Iterator<Item = &'m Message>) -> (u64, u64) {
    msgs.fold((0, 0), |(p, u), m| if m.bytes_unproven { (p, u + m.bytes) } else { (p + m.bytes, u) })
}

/// The completed messages' completion times, ns. Median and 99th percentile by nearest
/// rank (the lower median of an even count), so each is an observed time.
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    pub min: Option<u64>,
    pub median: Option<u64>,
    pub p99: Option<u64>,
    pub mean: Option<f64>,
    pub max: Option<u64>,
}

impl Summary {
    fn of(mut mcts: Vec<u64>) -> Summary {
        mcts.sort_unstable();
        let n = mcts.len();
        let rank = |q: usize| mcts.get((n * q).div_ceil(100).max(1) - 1).copied();
        Summary {
            min: mcts.first().copied(),
            median: mcts.get(n.saturating_sub(1) / 2).copied(),
            p99: rank(99),
            mean: (n > 0).then(|| mcts.iter().sum::<u64>() as f64 / n as f64),
            max: mcts.last().copied(),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Message {
    pub first_psn: u32,
    /// Unknown until the Last/Only packet's first transmission is seen.
    pub last_psn: Option<u32>,
    /// The message's size: exact unless `bytes_unproven`.
    pub bytes: u64,
    /// The trace does not prove the size: no DMA length (a READ request's, a WRITE's RETH)
    /// nor the Last/Only packet's payload is seen, or where the message ends is not known
    /// exactly (`bounds_unseen`, or counted from a PSN gap or an MSN). Every packet whose
    /// copy is missing counts one path MTU (a First or Middle carries exactly that, a Last
    /// at most), so `bytes` is an upper bound of what it carried from `first_psn` on (a
    /// message the trace joined mid-way, at the start of a capture begun mid-run, may have
    /// carried more before); totals keep these bytes apart.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bytes_unproven: bool,
    /// Switch timestamp of the message's first packet (first transmission); every time
    /// here is the 48-bit switch clock unwrapped over the trace.
    pub first_packet_ns: u64,
    /// Estimated post time on the switch clock (see the module documentation).
    pub posted_ns: u64,
    /// When the packet that completed it reached the requester, modelled (its switch
    /// timestamp plus queueing and serialization toward the requester), on the switch clock.
    pub completed_ns: Option<u64>,
    pub mct_ns: Option<u64>,
    /// Not completed, and a copy is missing from the trace after its first packet: the
    /// completion may be in it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub completion_unseen: bool,
    /// Its first packet's copy is missing from the trace (later packets prove the message):
    /// `first_packet_ns` is the first packet seen, later than the real start.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub start_unseen: bool,
    /// Where it starts or ends was inferred across two or more PSNs whose copies are
    /// missing: a whole message may hide there, so this may be more than one. Counted as
    /// one (the trace never counts more messages than were sent); its completion time is
    /// not known and `mct_ns` is left out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bounds_unseen: bool,
    /// Completed, but missing copies leave when unproven, so `completed_ns` is not the time
    /// and `mct_ns` is left out: a copy toward the requester is missing just before the
    /// packet that completed it (an earlier ACK or response may have completed it); frames
    /// whose copies are missing may have queued ahead of that packet at the switch port
    /// toward the requester, so it may have arrived more than [`LATE_TOLERANCE_PS`] later
    /// than modelled; or — READ — it completed on responses whose copies are missing, taken
    /// as delivered (one may have been dropped, and the requester waited for it to come
    /// again).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub completion_uncertain: bool,
    /// Completed by what reached the requester after its QP may have failed (`gbn`
    /// `retries_maybe_exhausted_by_ns`): completed only if the QP was still alive to take
    /// it, which the trace cannot tell; `mct_ns` is left out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub qp_may_have_failed: bool,
    /// How much later than `completed_ns` the completing packet may have reached the
    /// requester: frames whose copies are missing may have queued ahead of it (at most
    /// [`LATE_TOLERANCE_PS`], else `completion_uncertain`). `mct_ns` may be that much
    /// longer, the MCT of the message it let go that much shorter.
    #[serde(skip_serializing_if = "is_zero")]
    pub completed_late_ns: u64,
    /// `completed_ns` to the picosecond, with how much later it may be.
    #[serde(skip)]
    completed: Option<Arrival>,
    /// Trace order of its first packet.
    #[serde(skip)]
    first_order: u64,
    /// Its first packet's frame length: how long the requester took to send it.
    #[serde(skip)]
    first_frame_len: u16,
    /// Began within the trace: all but the messages inferred ([`Message::inferred`]) or
    /// joined mid-way ([`Message::start_guessed`]) before the first message of its
    /// connection whose first packet the trace has. Those (a QP's messages since its
    /// setup, counted by a PSN gap or an ACK's MSN; the one a capture begun mid-run joins)
    /// may have begun long before the trace did, and their bytes would inflate goodput
    /// over the trace's span.
    #[serde(skip)]
    begun_in_trace: bool,
    /// No packet of its own is in the trace: counted from a gap in the PSNs or an MSN.
    #[serde(skip)]
    inferred: bool,
    /// Its size is known: from a DMA length, or its Last/Only packet's payload was seen.
    #[serde(skip)]
    size_known: bool,
    /// A packet whose copy is missing was counted with the path MTU unknown: not a bound.
    #[serde(skip)]
    mtu_guessed: bool,
    /// `first_psn` is only where the trace starts following the connection: the message
    /// may have begun before (its bytes before are not counted).
    #[serde(skip)]
    start_guessed: bool,
}

impl Message {
    /// It completed when `at` reached the requester (`None`: not, after all).
    fn complete_at(&mut self, at: Option<Arrival>) {
        self.completed = at;
        self.completed_ns = at.map(|at| at.ps / 1_000);
        self.completed_late_ns = at.map_or(0, |at| at.late_ps.div_ceil(1_000));
    }
}

pub fn analyze(input: &Input<'_>) -> Report {
    analyze_with(input, &Arrivals::toward_requester(input))
}

/// [`analyze`] with the arrivals at the requester already modelled
/// ([`Arrivals::toward_requester`], which `gbn` uses too).
pub fn analyze_with(input: &Input<'_>, arrivals: &Arrivals) -> Report {
    let config = input.ctx.config.as_ref();
    let mtu = path_mtu(config, input.view.records);
    let known = input.conns.list.iter().filter_map(|c| Some((c, c.verb?)));
    // Lumina §6: the requester's NIC sets the rate its switch port drains at.
    let gbps = egress::host_link_gbps(config.map(|c| &c.requester));
    let mut per_conn: Vec<(u32, Vec<Message>)> =
        known.map(|(c, verb)| (c.id, Tracker::run(input, c, verb, mtu, arrivals))).collect();
    let unknown = input.conns.list.len() - per_conn.len();
    let depth = config.and_then(|c| c.tx_depth).unwrap_or(1).max(1);
    let lists = lists_of(&per_conn);
    let configured = config.and_then(|c| c.barrier_sync);
    let barrier = configured.unwrap_or_else(|| is_barrier(&lists, depth as usize));
    let posting = if barrier { Posting::Barrier } else { Posting::PerQp };
    let posts = estimate_posts(&lists, depth as usize, posting, &input.conns.unseen, gbps);
    for ((_, msgs), posts) in per_conn.iter_mut().zip(posts) {
        set_times(msgs, &posts);
    }
    let run_start = run_start(&lists_of(&per_conn), gbps);
    let overall = Totals::of(per_conn.iter().flat_map(|(_, msgs)| msgs), run_start);
    let connections = per_conn
        .into_iter()
        .map(|(conn, msgs)| ConnGoodput { conn, totals: Totals::of(msgs.iter(), run_start), per_message: Some(msgs) })
        .collect();
    let mut notes = Vec::new();
    if unknown > 0 {
        notes.push(unknown_verb_note(unknown, "no messages"));
    }
    Report {
        overall,
        connections,
        posting,
        posting_configured: configured.is_some(),
        tx_depth: depth,
        notes,
        run_start,
    }
}

/// Each message's post time and MCT (to the nanosecond) from its estimated post.
fn set_times(msgs: &mut [Message], posts: &[Post]) {
    for (m, post) in msgs.iter_mut().zip(posts) {
        m.posted_ns = post.ps / 1_000;
        let known = post.known && completion(m).is_some_and(|c| c.known);
        m.mct_ns = m.completed.filter(|_| known).map(|c| (c.ps.saturating_sub(post.ps) + 500) / 1_000);
    }
}

fn lists_of(per_conn: &[(u32, Vec<Message>)]) -> Vec<&[Message]> {
    per_conn.iter().map(|(_, m)| m.as_slice()).collect()
}

/// The first post of the run, ps: its first message's first packet at the switch less its
/// serialization on the requester's link (at `gbps`), of the messages the trace saw begin
/// (one whose first copy is missing may have begun before it).
fn run_start(lists: &[&[Message]], gbps: Option<f64>) -> Option<u64> {
    let sent = |m: &Message| first_packet_ps(m).saturating_sub(egress::wire_time_ps(gbps, m.first_frame_len));
    // Any message's: after out-of-order data a QP's second message may go out first.
    lists.iter().flat_map(|m| m.iter().filter(|m| m.begun_in_trace)).map(sent).min()
}

/// A message's first packet at the switch, ps (the middle of its timestamp's nanosecond).
fn first_packet_ps(m: &Message) -> u64 {
    egress::ready_ps(m.first_packet_ns)
}

/// Barrier sync: with two or more QPs, every round (after the first) starts on every QP
/// only after the previous round completed on every QP.
fn is_barrier(lists: &[&[Message]], depth: usize) -> bool {
    if lists.iter().filter(|m| !m.is_empty()).count() < 2 {
        return false;
    }
    let rounds = lists.iter().map(|m| m.len().div_ceil(depth)).max().unwrap_or(0);
    let mut boundaries = 0;
    for r in 1..rounds {
        let (Some(done), Some(start)) = (round_done(lists, depth, r - 1), round_start(lists, depth, r)) else {
            continue;
        };
        if start < done {
            return false;
        }
        boundaries += 1;
    }
    boundaries > 0
}

/// When round `r` had completed on every QP, ps (messages never completed are skipped: a
/// failed QP leaves the round).
fn round_done(lists: &[&[Message]], depth: usize, r: usize) -> Option<u64> {
    lists.iter().flat_map(|m| m.iter().skip(r * depth).take(depth)).filter_map(|m| Some(m.completed?.ps)).max()
}

fn round_start(lists: &[&[Message]], depth: usize, r: usize) -> Option<u64> {
    lists.iter().flat_map(|m| m.iter().skip(r * depth).take(depth)).map(first_packet_ps).min()
}

/// A message's estimated post time, and whether it is as good as the trace allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Post {
    /// On the switch clock, ps.
    ps: u64,
    /// False when it comes from a completion known only as a bound, from the message's
    /// first packet (the completion before it unknown), from an ordinal a merge shifted, or
    /// from a run start the capture may have missed.
    known: bool,
}

/// Estimated post time of every message (module documentation).
fn estimate_posts(
    lists: &[&[Message]],
    depth: usize,
    posting: Posting,
    unseen: &Unseen,
    gbps: Option<f64>,
) -> Vec<Vec<Post>> {
    let start = run_start(lists, gbps);
    let merged = first_merges(lists);
    let all_merged = merged.iter().copied().min().unwrap_or(0);
    let mut posts = Vec::with_capacity(lists.len());
    for (msgs, &own_merged) in lists.iter().zip(&merged) {
        let post_of = |k: usize| {
            let post = if k < depth {
                // The run's start only if the trace saw it: with a copy missing before this
                // message, the capture may have begun after the run did.
                // None seen begun: no start known.
                let known = start.is_some() && !unseen.between(None, msgs[k].first_order);
                Some(Post { ps: start.unwrap_or(0), known })
            } else {
                match posting {
                    Posting::PerQp => completion(&msgs[k - depth]),
                    Posting::Barrier => round_done_known(lists, depth, k / depth - 1),
                }
            };
            // Messages are counted by ordinal: a merge (`bounds_unseen`, maybe two counted as
            // one) before `k` shifts it, and the post would come from the wrong message.
            let counted = match posting {
                Posting::PerQp => k <= own_merged,
                Posting::Barrier => k <= own_merged && (k / depth) * depth <= all_merged,
            };
            post.map(|p| Post { known: p.known && counted, ..p })
        };
        posts.push(msgs.iter().enumerate().map(|(k, m)| or_first_packet(post_of(k), m)).collect());
    }
    posts
}

/// Per list, the index of its first `bounds_unseen` message (its length if none): the
/// messages up to it are counted exactly, their ordinals true.
fn first_merges(lists: &[&[Message]]) -> Vec<usize> {
    lists.iter().map(|msgs| msgs.iter().position(|m| m.bounds_unseen).unwrap_or(msgs.len())).collect()
}

/// Without the completion that let it go, a message's first packet: later than the post by
/// the NIC's own delay, so no MCT is reported from it.
fn or_first_packet(post: Option<Post>, m: &Message) -> Post {
    match post {
        Some(p) if p.ps <= first_packet_ps(m) || m.start_unseen => p,
        _ => Post { ps: first_packet_ps(m), known: false },
    }
}

/// When a message completed at the requester, as a post time for the one its completion
/// let go.
fn completion(m: &Message) -> Option<Post> {
    let known = !m.completion_uncertain && !m.bounds_unseen;
    m.completed.map(|at| Post { ps: at.ps, known })
}

/// [`round_done`], known when every message in the round completed, each completion
/// known. One that never did (its QP failed: the barrier waited for the error completion,
/// which the trace does not show) leaves the round's end unknown.
fn round_done_known(lists: &[&[Message]], depth: usize, r: usize) -> Option<Post> {
    let round = || lists.iter().flat_map(|m| m.iter().skip(r * depth).take(depth));
    let known = round().all(|m| completion(m).is_some_and(|p| p.known));
    round_done(lists, depth, r).map(|ps| Post { ps, known })
}

/// Finds one connection's messages and when each completed.
///
/// What counts as one message follows IBA's message sequence: the requester's PSNs are one
/// contiguous sequence, each message the run of it right after the previous one, and the
/// responder's MSN (in every AETH) counts the messages it completed. A message is seen at
/// its first transmission (a READ request, a SEND/WRITE First or Only). When that copy is
/// missing from the trace (a capture loss: the packet crossed the network) the message
/// still happened, and the first later packet only it explains counts it, once, flagged
/// `start_unseen`, from the PSN after the previous message:
/// - a SEND/WRITE Middle or Last first transmission while no message is open;
/// - a READ response past every request seen;
/// - a message start past that PSN: the PSNs between were a message none of whose copies
///   the trace has;
/// - an ACK for PSNs never seen sent whose MSN counts more messages than the trace holds.
///
/// Each but the last needs a copy missing since the connection's previous request-direction
/// packet, so a trace that starts mid-message still counts nothing there. Only first transmissions
/// start messages, and a READ response moves the first-transmission mark as its request
/// would have: a READ request repeated from a gap in the responses is a retransmission
/// even when the original request's copy is missing, never a second message.
///
/// Under heavy capture loss a message's end is taken from what proves it — a seen Last,
/// a WRITE's RETH length, an ACK whose MSN counts it, a READ First/Only response — and
/// cut at the next start only when nothing else tells. An open message's unseen tail is
/// its own, never a message of its own (that counted ~9 % more messages than were sent,
/// on a run missing half its copies). Where a boundary had to be guessed across two or
/// more unseen PSNs the message may be two: counted once, `bounds_unseen`, no MCT (a
/// merged pair reported one MCT spanning both).
struct Tracker<'u> {
    verb: Verb,
    mtu: u32,
    /// The first PSN followed: the QP's initial one, or where the trace starts.
    start: u32,
    /// `start` is where the QP's first message starts (its initial PSN, in the trace);
    /// else a message pushed from `start` before any other may have begun before it.
    ipsn_seen: bool,
    /// `mtu` is the path's (else 1, and a RETH's length tells no PSN span).
    mtu_known: bool,
    /// Next PSN never seen sent: first transmissions start here.
    hi: u32,
    msgs: Vec<Message>,
    /// The last message's end is not known yet: a WRITE/SEND whose Last has not been
    /// seen, a READ known from its responses only.
    open: bool,
    /// Its bytes come from the RETH rather than from the payloads.
    bytes_from_reth: bool,
    /// The open message's last PSN when its first packet said (a WRITE's RETH length).
    open_end: Option<u32>,
    una: u32,
    read_expect: u32,
    /// READ: the PSNs (ranges from, to exclusive, in PSN order) whose responses the trace
    /// took as delivered though their copies are missing. A missing copy may be a drop:
    /// the requester then discards every later response until it asks again, and the
    /// trace, having moved on, cannot tell. Every completion from the first on is unproven,
    /// until a repeated request shows what the requester had ([`Self::read_go_back`]).
    assumed: Vec<(u32, u32)>,
    next_incomplete: usize,
    /// The messages before it are counted exactly, an MSN says ([`Self::confirm_by_msn`]).
    confirmed: usize,
    /// Acknowledgement points (una, time) reached while the oldest incomplete message's
    /// end is unknown (its LAST copy missing): once its end is known, it completed at the
    /// first of them past it.
    held: Vec<(u32, Arrival, Proof)>,
    clock: SwitchClock,
    /// When each packet reached the requester.
    arrivals: &'u Arrivals,
    /// Record index of the packet at hand: where its arrival is kept.
    idx: u32,
    /// READ: the PSN of the previous response copy.
    read_last: u32,
    unseen: &'u Unseen,
    /// The connection's previous packet toward each end.
    toward_requester: Since,
    toward_responder: Since,
    /// A copy is missing since the connection's previous request-direction packet (set
    /// for each packet): a message's first packet may be among them.
    missed: bool,
    /// The responder's MSN less the messages complete when an ACK first told it: MSN −
    /// base is how many messages the responder has completed.
    msn_base: Option<u32>,
    /// The response at hand, as proof of when what it completes completed.
    proof: Proof,
    /// A message before the MSN was calibrated may be two: it cannot be.
    uncounted: bool,
    /// WRITE/SEND: a first transmission one PSN past `hi` with no copy missing before it,
    /// held back: the packet at `hi` may follow it (sent out of order, both first
    /// transmissions); it is taken first then, else this one is taken as it came.
    ooo: Option<Record>,
    /// WRITE/SEND: PSNs `hi` passed whose first-transmission copies are missing, with the
    /// bytes counted for each (`None`: the message's bytes are its RETH length). A
    /// retransmission's copy of one (a go-back) tells its payload and whether it starts or
    /// ends a message.
    holes: Vec<(u32, Option<u64>)>,
    /// Holes were left out past [`HOLES_CAP`]: a PSN not listed may be unseen too.
    holes_dropped: bool,
    /// READ requests past `hi` seen while a message known only from its responses is open
    /// (with `missed` as they came), held until a response reaches their PSN: the
    /// responses below it (the open message's rest, maybe a further message whose request
    /// copy is missing too) are still to come, and taken first.
    reads_held: Vec<(Record, bool)>,
    /// The previous request-direction packet before the first of `reads_held`.
    reads_held_since: Option<u64>,
    /// The previous request-direction packet before the one at hand.
    toward_responder_before: Option<u64>,
}

/// Whether the trace shows the connection's first message: a packet at its initial PSN
/// `ipsn` (a request, an ACK or READ response naming it), or a response whose MSN says at
/// most that message is complete (IBA 9.7.7.2: MSN 0 on a new QP) — before any packet
/// behind `ipsn` (a later lap of the 24-bit PSN space: the capture began after a wrap).
fn shows_first_psn(records: &[Record], c: &Connection, ipsn: u32) -> bool {
    for &(i, _) in &c.packets {
        let r = &records[i as usize];
        if !is_transport(r) {
            continue;
        }
        let first_msn = r.kind() == Kind::Response && r.has(flag::AETH) && r.msn() <= 1;
        if r.psn() == ipsn || first_msn {
            return true;
        }
        if psn::lt(r.psn(), ipsn) {
            return false;
        }
    }
    false
}

/// A completing packet (an ACK/NAK, READ: a response): how far it proves when the messages
/// it completes completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proof {
    /// Trace order of the connection's previous packet toward the requester.
    after: Option<u64>,
    /// Its own trace order.
    at: u64,
    /// A NAK (or RNR NAK): it names the PSN it did not take, not the last it did.
    nak: bool,
}

impl Proof {
    fn of(r: &Record, after: Option<u64>) -> Proof {
        Proof { after, at: r.seq(), nak: r.has(flag::AETH) && r.syndrome() >> 5 != 0 }
    }

    /// Whether the message ending at `last`, whose first packet seen is at trace order
    /// `first`, may have completed before this packet acknowledging up to `una`: only if a
    /// copy is missing after both its first packet and the connection's previous packet
    /// toward the requester (an unseen ACK may hide there), and this packet does not name
    /// `last` itself (ACKs never go back, so an earlier one naming `last` or beyond cannot
    /// be; only a repeat could).
    fn may_be_late(self, unseen: &Unseen, first: u64, una: u32, last: u32) -> bool {
        let from = self.after.max(Some(first));
        unseen.between(from, self.at) && (self.nak || psn::sub(una, 1) != last)
    }
}

/// At most this many ranges of READ responses taken as delivered are told apart.
const ASSUMED_CAP: usize = 64;

/// At most this many acknowledgement points are held for a message whose end is unknown.
const HELD_CAP: usize = 64;

/// At most this many unseen first-transmission PSNs are remembered ([`Tracker::holes`]).
const HOLES_CAP: usize = 1024;

impl<'u> Tracker<'u> {
    fn run(input: &Input<'u>, c: &Connection, verb: Verb, mtu: Option<u32>, arrivals: &'u Arrivals) -> Vec<Message> {
        let records = input.view.records;
        let first = c.packets.iter().find(|&&(_, to)| to == Role::Responder).map(|&(i, _)| records[i as usize].psn());
        // The QP's first PSN (from its setup) only if the trace shows it, or began before
        // the switch mirrored anything (Lumina sets the mirror up before the traffic): a
        // capture begun mid-run starts where the trace does, as without QP info.
        let shown = |i| input.conns.unseen.from_start() || shows_first_psn(records, c, i);
        let seen = c.from_qp_info && c.ipsn.is_some_and(shown);
        let start = if seen || !c.from_qp_info { c.ipsn.or(first) } else { first };
        let Some(ipsn) = start else { return Vec::new() };
        let clock = SwitchClock::of(records);
        let mut t = Tracker::new(verb, mtu.unwrap_or(1), ipsn, clock, &input.conns.unseen, arrivals);
        t.mtu_known = mtu.is_some();
        t.ipsn_seen = seen;
        // A new QP's responder starts its MSN at 0 (IBA 9.7.7.2): with its first PSN in the
        // trace, MSN counts the connection's messages from there, whatever copies the trace
        // lacks. Else MSN is calibrated at the first ACK seen past the trace's start.
        t.msn_base = seen.then_some(0);
        for &(i, to) in &c.packets {
            t.idx = i;
            t.packet(&records[i as usize], to);
        }
        t.finish()
    }

    fn new(
        verb: Verb,
        mtu: u32,
        ipsn: u32,
        clock: SwitchClock,
        unseen: &'u Unseen,
        arrivals: &'u Arrivals,
    ) -> Tracker<'u> {
        Tracker {
            verb,
            mtu,
            start: ipsn,
            ipsn_seen: true,
            mtu_known: true,
            hi: ipsn,
            msgs: Vec::new(),
            open: false,
            bytes_from_reth: false,
            open_end: None,
            una: ipsn,
            read_expect: ipsn,
            assumed: Vec::new(),
            next_incomplete: 0,
            confirmed: 0,
            held: Vec::new(),
            clock,
            arrivals,
            idx: 0,
            read_last: psn::sub(ipsn, 1),
            unseen,
            toward_requester: Since::default(),
            toward_responder: Since::default(),
            missed: false,
            msn_base: None,
            proof: Proof { after: None, at: 0, nak: false },
            uncounted: false,
            ooo: None,
            holes: Vec::new(),
            holes_dropped: false,
            reads_held: Vec::new(),
            reads_held_since: None,
            toward_responder_before: None,
        }
    }

    /// One packet of the connection, on its way to `to`.
    fn packet(&mut self, r: &Record, to: Role) {
        if !is_transport(r) {
            return;
        }
        // A message's unseen start is a request-direction copy, missing since the previous
        // request-direction packet seen.
        let since = if self.reads_held.is_empty() { self.toward_responder.last() } else { self.reads_held_since };
        self.missed = self.unseen.between(since, r.seq());
        match to {
            Role::Responder => {
                self.toward_responder_before = self.toward_responder.last();
                self.toward_responder.step(self.unseen, r);
                if r.kind() == Kind::Request {
                    self.request_in_order(r);
                }
            }
            Role::Requester => {
                // A response covering the packet held back: take it now.
                if let Some(h) = self.ooo.filter(|h| psn::ge(r.psn(), h.psn())) {
                    self.ooo = None;
                    self.take_held(&h);
                }
                self.release_reads(Some(r.psn()));
                let after = self.toward_requester.last();
                let gap = self.toward_requester.step(self.unseen, r);
                if r.kind() == Kind::Response {
                    self.on_response(r, gap, after);
                }
            }
        }
    }

    /// The messages; those not completed say whether their completion may be unseen.
    fn finish(mut self) -> Vec<Message> {
        if let Some(h) = self.ooo.take() {
            self.take_held(&h);
        }
        self.release_reads(None);
        let first_own = self.msgs.iter().position(|m| !m.inferred && !m.start_guessed).unwrap_or(self.msgs.len());
        for m in &mut self.msgs[..first_own] {
            m.begun_in_trace = false;
        }
        if let Some(end) = self.open_end {
            self.close(end); // the RETH said where it ends
        }
        for m in &mut self.msgs {
            // Frames whose copies are missing may have queued ahead of the completing
            // packet toward the requester: it may have arrived that much later.
            m.completion_uncertain |= m.completed.is_some_and(|at| at.late_ps > LATE_TOLERANCE_PS);
        }
        for m in self.msgs.iter_mut().filter(|m| m.completed.is_none()) {
            m.completion_unseen = self.unseen.between(Some(m.first_order), u64::MAX);
        }
        for m in &mut self.msgs {
            let guessed = m.inferred || m.start_guessed || m.mtu_guessed;
            let exact = m.size_known && m.last_psn.is_some() && !m.bounds_unseen && !guessed;
            m.bytes_unproven = !exact;
        }
        self.msgs
    }

    /// A request-direction packet, first transmissions put back in PSN order: a NIC may
    /// send a message's second packet before its first (both first transmissions; gbn's
    /// `ooo-data`). Taken as it came, the second would pass the message's start (no copy
    /// missing: the trace began mid-message) and the first, behind `hi`, would be a
    /// retransmission: the message lost, every later one counted one place early.
    fn request_in_order(&mut self, r: &Record) {
        let data = matches!(self.verb, Verb::Write | Verb::Send) && r.opcode() < 0x20 && is_data(r, self.verb);
        if let Some(h) = self.ooo.take() {
            if data && r.psn() == self.hi {
                self.on_request(r);
                self.missed = false; // as when it came
                self.take_held(&h);
                // The message's first packet on the wire is the one held back.
                if let Some(m) = self.msgs.last_mut().filter(|m| psn::ge(h.psn(), m.first_psn)) {
                    if self.clock.ns(&h) < m.first_packet_ns {
                        (m.first_packet_ns, m.first_frame_len) = (self.clock.ns(&h), h.frame_len);
                    }
                    m.first_order = m.first_order.min(h.seq());
                }
                return;
            }
            let missed = std::mem::replace(&mut self.missed, false);
            self.on_request(&h);
            self.missed = missed;
        }
        // Not at the trace's start, unless it starts at the QP's first PSN (the swap's PSN p
        // may be that one).
        let followed = !self.msgs.is_empty() || self.ipsn_seen;
        if data && !self.missed && followed && psn::distance(self.hi, r.psn()) == 1 {
            self.ooo = Some(*r);
            return;
        }
        self.on_request(r);
    }

    /// Takes the READ requests held ([`Self::reads_held`]) up to PSN `upto` (all: `None`),
    /// each with `missed` as it came.
    fn release_reads(&mut self, upto: Option<u32>) {
        let now = self.missed;
        while let Some(&(r, missed)) = self.reads_held.first() {
            if upto.is_some_and(|p| psn::lt(p, r.psn())) {
                break;
            }
            self.reads_held.remove(0);
            self.missed = missed;
            if psn::ge(r.psn(), self.hi) {
                self.on_read_request(&r);
            }
        }
        self.missed = now;
    }

    /// Takes the packet held back ([`Self::ooo`]) as it came: no copy missing before it.
    fn take_held(&mut self, h: &Record) {
        let missed = std::mem::replace(&mut self.missed, false);
        self.on_request(h);
        self.missed = missed;
    }

    fn on_request(&mut self, r: &Record) {
        if psn::lt(r.psn(), self.hi) {
            // A retransmission, or a request repeated from inside a message: it may tell
            // what a missing first copy did not.
            if matches!(self.verb, Verb::Write | Verb::Send) && r.opcode() < 0x20 && is_data(r, self.verb) {
                self.fill_hole(r);
            }
            if self.verb == Verb::Read && r.opcode() == 0x0c {
                self.read_go_back(r.psn());
            }
            return;
        }
        let op = r.opcode();
        match self.verb {
            Verb::Read if op == 0x0c && (self.open || !self.reads_held.is_empty()) && psn::gt(r.psn(), self.hi) => {
                // The open message is known from its responses only: those still to come
                // below this request are taken first.
                if self.reads_held.is_empty() {
                    self.reads_held_since = self.toward_responder_before;
                }
                self.reads_held.push((*r, self.missed));
            }
            Verb::Read if op == 0x0c => self.on_read_request(r),
            Verb::Write | Verb::Send if op < 0x20 && is_data(r, self.verb) => self.on_data(r),
            _ => {}
        }
    }

    fn on_read_request(&mut self, r: &Record) {
        let end = psn::add(r.psn(), read_span(r, self.mtu) - 1);
        let bytes = u64::from(r.dma_len());
        if self.open && r.psn() == self.hi {
            // The open message's responses stopped short of its Last and the requester asks
            // from there (a new request would start after its Last): a repeat of its unseen
            // request, for the rest of the message.
            if let Some(m) = self.msgs.last_mut() {
                m.bytes += bytes;
                m.size_known = true; // the rest's DMA length
            }
            self.close(end);
        } else if r.reth_cut() {
            // The snap length cut its DMA length and no response told it
            // (`cut::infer_read_lengths`: a copy is missing between its First and Last):
            // its responses tell its span, as for a request whose copy is missing.
            self.end_before(r.psn());
            self.unseen_before(r);
            self.push(r, None, 0);
            self.open = true;
            self.bytes_from_reth = false;
            self.hi = r.psn();
            return;
        } else {
            self.end_before(r.psn());
            self.unseen_before(r);
            self.push(r, Some(end), bytes);
            self.size_known();
        }
        self.hi = psn::add(end, 1);
    }

    fn on_data(&mut self, r: &Record) {
        let op = r.opcode();
        self.end_at_known(r.psn());
        if starts_message(op) {
            self.end_before(r.psn());
            self.unseen_before(r);
            self.push(r, None, u64::from(r.dma_len()));
            self.open = true;
            self.bytes_from_reth = r.has(flag::RETH);
            if self.bytes_from_reth {
                self.size_known(); // a WRITE's DMA length
            }
            // A WRITE's RETH gives the whole message's DMA length: its PSNs (as a READ's).
            let spans = self.verb == Verb::Write && r.has(flag::RETH) && self.mtu_known;
            self.open_end = spans.then(|| psn::add(r.psn(), read_span(r, self.mtu) - 1));
        } else if !self.open && self.missed {
            // Its First copy is missing: the message began right after the previous one.
            self.push_first_unseen(r);
            self.bytes_from_reth = false;
        } else if self.open && self.open_end.is_none() && psn::distance(self.hi, r.psn()) >= 2 {
            // A Last and the next First may be among the PSNs unseen: two messages as one.
            self.mark_bounds_unseen();
        }
        // Not open: the trace starts mid-message.
        if self.open && !self.bytes_from_reth {
            self.add_payload(r);
        }
        if self.open && ends_message(op) {
            self.size_known(); // its Last's payload just counted
            self.close(r.psn());
        }
        self.hi = psn::add(r.psn(), 1);
    }

    /// A READ response's copy. Past every request seen, it proves a request whose copy is
    /// missing (if a request-direction copy is missing since the last request seen); a
    /// Last or Only one ends the message known from responses only.
    fn on_read_data(&mut self, r: &Record) {
        if psn::ge(r.psn(), self.hi) {
            // The first answer to the open message's request (one of unknown length).
            let answers_open =
                self.open && r.psn() == self.hi && self.msgs.last().is_some_and(|m| m.first_psn == r.psn());
            if starts_read_answer(r.opcode()) && (self.open || self.missed) && !answers_open {
                self.response_starts(r);
            } else if !self.open && self.missed {
                self.push_first_unseen(r);
            } else if self.open && psn::distance(self.hi, r.psn()) >= 2 {
                self.mark_bounds_unseen(); // as for SEND/WRITE: maybe two messages
            }
            if !self.open {
                return;
            }
            self.add_payload(r);
            self.hi = psn::add(r.psn(), 1);
        }
        // A repeated request's responses end where the message does, too.
        let inside = self.msgs.last().is_some_and(|m| psn::ge(r.psn(), m.first_psn));
        if ends_message(r.opcode()) && inside {
            if self.open {
                self.size_known(); // its Last's payload, or a repeated request's DMA length
            }
            self.close(r.psn());
        }
    }

    /// A First or Only READ response past every request seen starts a message whose
    /// request copy is missing (a READ's responses are First … Last, or one Only):
    /// the open message ended before it.
    fn response_starts(&mut self, r: &Record) {
        self.end_before(r.psn());
        self.unseen_before(r);
        self.push_unseen(r, r.psn(), None, 0);
        self.hi = r.psn();
        self.open = true;
    }

    /// Adds `r`'s payload (without pad) to the last message; the packets from `hi` before
    /// it, whose copies are missing, are First or Middle ones: one MTU each.
    fn add_payload(&mut self, r: &Record) {
        if self.verb != Verb::Read {
            let counted = Some(u64::from(self.mtu));
            self.add_holes(r.psn(), counted);
        }
        let skipped = u64::from(psn::distance(self.hi, r.psn())) * u64::from(self.mtu);
        let pad = u64::from((r.bth_flags >> 4) & 0x3);
        let guessed = skipped > 0 && !self.mtu_known;
        if let Some(m) = self.msgs.last_mut() {
            m.bytes += skipped + u64::from(r.payload_len).saturating_sub(pad);
            m.mtu_guessed |= guessed;
        }
    }

    /// The open message runs on to `until` (exclusive) over PSNs whose copies are missing,
    /// its Last among them: each counts one path MTU, at least what it carried (its
    /// RETH's length, if it has one, counts them already).
    fn unseen_tail(&mut self, until: u32) {
        let n = u64::from(psn::distance(self.hi, until));
        let counted = (!self.bytes_from_reth).then_some(u64::from(self.mtu));
        if self.verb != Verb::Read {
            self.add_holes(until, counted);
        }
        let guessed = n > 0 && !self.mtu_known;
        if let (Some(mtu), Some(m)) = (counted, self.msgs.last_mut()) {
            m.bytes += n * mtu;
            m.mtu_guessed |= guessed;
        }
    }

    /// The last message's size is known (a DMA length, its Last's payload).
    fn size_known(&mut self) {
        if let Some(m) = self.msgs.last_mut() {
            m.size_known = true;
        }
    }

    /// The PSNs from `hi` to `until` (exclusive) are passed unseen: each counted as
    /// `counted` bytes in its message.
    fn add_holes(&mut self, until: u32, counted: Option<u64>) {
        if psn::distance(self.hi, until) as usize > HOLES_CAP {
            self.holes_dropped = true;
            return;
        }
        let mut p = self.hi;
        while psn::lt(p, until) {
            if self.holes.len() >= HOLES_CAP {
                self.holes.remove(0);
                self.holes_dropped = true;
            }
            self.holes.push((p, counted));
            p = psn::add(p, 1);
        }
    }

    /// A retransmission's copy (a go-back) of a PSN whose first-transmission copy is
    /// missing: its payload replaces the bytes counted for it, and a Last or First says
    /// where its message ends or starts — a message counted as two merged
    /// (`bounds_unseen`) is split there.
    fn fill_hole(&mut self, r: &Record) {
        let q = r.psn();
        let una = self.una;
        self.holes.retain(|&(p, _)| psn::ge(p, una));
        let Some(h) = self.holes.iter().position(|&(p, _)| p == q) else { return };
        let (_, counted) = self.holes.remove(h);
        let Some(i) = self.msgs.iter().rposition(|m| psn::ge(q, m.first_psn)) else { return };
        let m = &self.msgs[i];
        let within = m.last_psn.is_none_or(|l| psn::le(q, l));
        let shared = self.msgs.get(i + 1).is_some_and(|n| m.last_psn.is_none_or(|l| psn::le(n.first_psn, l)));
        if !within || shared || m.inferred {
            return;
        }
        let pad = u64::from((r.bth_flags >> 4) & 0x3);
        let payload = u64::from(r.payload_len).saturating_sub(pad);
        let op = r.opcode();
        if let Some(c) = counted {
            let m = &mut self.msgs[i];
            m.bytes = (m.bytes + payload).saturating_sub(c);
            // Its own Last: the size is known now.
            m.size_known |= ends_message(op) && m.last_psn == Some(q);
        }
        if ends_message(op) && self.msgs[i].last_psn != Some(q) {
            self.split(i, psn::add(q, 1), counted.map(|_| payload));
        } else if starts_message(op) && self.msgs[i].first_psn != q {
            self.split(i, q, None);
        }
    }

    /// Splits message `i` before PSN `at`: a boundary its unseen copies hid. `last_bytes`:
    /// the payload of the first part's Last, just seen.
    fn split(&mut self, i: usize, at: u32, last_bytes: Option<u64>) {
        let mtu = u64::from(self.mtu);
        let m = self.msgs[i].clone();
        let last = psn::sub(at, 1);
        // The first part's bytes: every PSN a whole MTU but its holes and its Last.
        let inside = |p: u32| psn::ge(p, m.first_psn) && psn::lt(p, at);
        let mut first_bytes = u64::from(psn::distance(m.first_psn, at)) * mtu;
        for &(_, c) in self.holes.iter().filter(|&&(h, _)| inside(h)) {
            first_bytes = (first_bytes + c.unwrap_or(mtu)).saturating_sub(mtu);
        }
        if let Some(b) = last_bytes {
            first_bytes = (first_bytes + b).saturating_sub(mtu);
        }
        let first_bytes = first_bytes.min(m.bytes);
        let mut second = Message { first_psn: at, start_unseen: true, bytes: m.bytes - first_bytes, ..m.clone() };
        let known = !self.holes_dropped;
        let first_run = self.unseen_run(m.first_psn, Some(last));
        second.bounds_unseen &= !known || self.unseen_run(at, second.last_psn);
        let first = &mut self.msgs[i];
        (first.last_psn, first.bytes) = (Some(last), first_bytes);
        // Its Last is the go-back copy just seen, or (split at a First) still unseen.
        first.size_known = last_bytes.is_some();
        first.bounds_unseen &= !known || first_run;
        // Completed together, the first part may have completed earlier.
        first.completion_uncertain |= first.completed.is_some();
        self.msgs.insert(i + 1, second);
        if self.confirmed > i {
            self.confirmed += 1;
        }
        if self.next_incomplete > i {
            self.next_incomplete += 1;
        } else if self.next_incomplete == i {
            // The first part's end is known now: the acknowledgements held may complete it.
            for (una, at, proof) in std::mem::take(&mut self.held) {
                self.complete(una, at, proof);
            }
        }
    }

    /// Whether two PSNs in a row from `first` to `last` (to `hi` when open) are holes:
    /// a boundary may still hide there.
    fn unseen_run(&self, first: u32, last: Option<u32>) -> bool {
        let end = last.map_or(self.hi, |l| psn::add(l, 1));
        let inside = |p: u32| psn::ge(p, first) && psn::lt(p, end);
        // Holes are listed in PSN order.
        self.holes.windows(2).any(|w| inside(w[0].0) && inside(w[1].0) && w[1].0 == psn::add(w[0].0, 1))
    }

    /// The open message's end is known and `p` is past it: it ended there, its Last copy
    /// missing, and `p` belongs to a later message.
    fn end_at_known(&mut self, p: u32) {
        match self.open_end {
            Some(end) if self.open && psn::gt(p, end) => {
                let counted = (!self.bytes_from_reth).then_some(0);
                self.add_holes(psn::add(end, 1), counted);
                self.close(end);
                self.hi = psn::add(end, 1);
            }
            _ => {}
        }
    }

    /// A message starts at `p` while one is open whose end is not known: that one ran up
    /// to `p`, its Last copy missing. With two or more PSNs unseen before `p` a whole
    /// message may be among them, as well: the trace cannot tell, so it counts one (never
    /// more messages than were sent) and leaves its MCT out.
    fn end_before(&mut self, p: u32) {
        if !self.open {
            return;
        }
        let unseen = psn::distance(self.hi, p);
        self.unseen_tail(p);
        self.close(psn::sub(p, 1));
        self.hi = p;
        if unseen >= 2 {
            self.mark_bounds_unseen();
        }
    }

    /// A packet past the first PSN of a message whose first copy is missing: the message
    /// began at `hi`. With two or more PSNs unseen before it, one of them may have ended
    /// another message: as in [`Self::end_before`], one is counted, its MCT left out.
    fn push_first_unseen(&mut self, r: &Record) {
        let guessed = self.msgs.is_empty() && !self.ipsn_seen;
        self.push_unseen(r, self.hi, None, 0);
        if let Some(m) = self.msgs.last_mut() {
            // The trace's first PSN of the connection, maybe not the message's first.
            m.start_guessed = guessed;
        }
        self.open = true;
        if psn::distance(self.hi, r.psn()) >= 2 {
            self.mark_bounds_unseen();
        }
    }

    fn mark_bounds_unseen(&mut self) {
        self.uncounted |= self.msn_base.is_none();
        if let Some(m) = self.msgs.last_mut() {
            m.bounds_unseen = true;
        }
    }

    /// The open message ends at `last`: the acknowledgements held for it may complete it.
    fn close(&mut self, last: u32) {
        self.open_end = None;
        if !std::mem::take(&mut self.open) {
            return;
        }
        if let Some(m) = self.msgs.last_mut() {
            m.last_psn = Some(last);
        }
        for (una, at, proof) in std::mem::take(&mut self.held) {
            self.complete(una, at, proof);
        }
    }

    /// `r` starts a message past the PSN after the previous one: the PSNs between were a
    /// message none of whose copies the trace has (one at least; an ACK's MSN counts any
    /// more, [`Self::count_by_msn`]). Its bytes are whole MTUs: its last packet's size is
    /// not known.
    fn unseen_before(&mut self, r: &Record) {
        if psn::gt(r.psn(), self.hi) && self.missed {
            let span = psn::distance(self.hi, r.psn());
            if self.verb != Verb::Read {
                self.add_holes(r.psn(), Some(u64::from(self.mtu)));
            }
            self.push_unseen(r, self.hi, Some(psn::sub(r.psn(), 1)), u64::from(span) * u64::from(self.mtu));
            if span >= 2 {
                self.mark_bounds_unseen(); // may be several messages
            }
            if let Some(m) = self.msgs.last_mut() {
                m.inferred = true;
            }
            self.hi = r.psn();
        }
    }

    fn push(&mut self, r: &Record, last_psn: Option<u32>, bytes: u64) {
        let ts = self.clock.ns(r);
        self.msgs.push(Message {
            first_psn: r.psn(),
            last_psn,
            bytes,
            first_packet_ns: ts,
            posted_ns: ts,
            completed_ns: None,
            completed_late_ns: 0,
            completed: None,
            mct_ns: None,
            completion_unseen: false,
            start_unseen: false,
            bounds_unseen: false,
            completion_uncertain: false,
            qp_may_have_failed: false,
            first_order: r.seq(),
            first_frame_len: r.frame_len,
            begun_in_trace: true,
            inferred: false,
            bytes_unproven: false,
            size_known: false,
            mtu_guessed: false,
            start_guessed: false,
        });
    }

    /// A message from `first_psn` whose first packet the trace lacks; `r` is the first
    /// packet seen that proves it.
    fn push_unseen(&mut self, r: &Record, first_psn: u32, last_psn: Option<u32>, bytes: u64) {
        self.push(r, last_psn, bytes);
        if let Some(m) = self.msgs.last_mut() {
            (m.first_psn, m.start_unseen) = (first_psn, true);
        }
    }

    /// A response; `gap` copies are missing since the previous one.
    fn on_response(&mut self, r: &Record, gap: u64, after: Option<u64>) {
        // The requester completes on it when it arrives, queued behind what the switch
        // forwarded to the requester before it.
        let at = self.arrivals.of(self.idx, self.clock.ns(r));
        self.proof = Proof::of(r, after);
        let read_data = is_data(r, Verb::Read);
        // READ responses from the one the requester awaits, where as many copies are
        // missing: they arrived unseen, if they followed the previous response seen, or
        // if `r` is resent (a go-back resends from what the requester awaits).
        let skipped = psn::distance(self.read_expect, r.psn()) as u64;
        let follows = self.read_expect == psn::add(self.read_last, 1) || psn::le(r.psn(), self.read_last);
        let unseen = read_data && follows && psn::gt(r.psn(), self.read_expect) && skipped <= gap;
        if read_data && self.verb == Verb::Read {
            self.read_last = r.psn();
            // Sent, delivered or not: it tells which messages there were.
            self.on_read_data(r);
        }
        if !delivered(r) {
            return;
        }
        if r.opcode() == wire::bth::Opcode::RC_ACK.0 && r.has(flag::AETH) {
            let una = match r.syndrome() >> 5 {
                0b00 => psn::add(r.psn(), 1),
                // A responder NAKs PSN p, for a sequence error, an error or with RNR, only
                // having executed every packet before it: the NAK acknowledges them (IBA
                // 9.7.5.1; a requester completes those work requests on it).
                0b01 | 0b11 => r.psn(),
                _ => return,
            };
            self.close_by_msn(r, una);
            self.progress(una, at);
            self.count_by_msn(r, una, at);
            self.confirm_by_msn(r, una);
        } else if read_data && (r.psn() == self.read_expect || unseen) {
            if unseen {
                self.assume(self.read_expect, r.psn());
            }
            self.read_expect = psn::add(r.psn(), 1);
            self.progress(self.read_expect, at);
        }
    }

    /// The responder's MSN counts the messages it completed (IBA 9.7.7.2): an ACK whose MSN
    /// counts every message the trace holds, the open one too, proves that one ended
    /// before `una` (its Last copy missing). It ends at `una` − 1, the PSN the responder
    /// acknowledges; a trace that waited for the next message's start would let it
    /// swallow that message when its First copy is missing too. An MSN counting `n` more
    /// proves `n` messages none of whose starts the trace has, among the open one's PSNs
    /// or an earlier message's: they are counted here, sharing its PSNs and bytes, and
    /// none of them has a known MCT.
    fn close_by_msn(&mut self, r: &Record, una: u32) {
        let Some(base) = self.msn_base.filter(|_| self.open && self.verb != Verb::Read) else { return };
        let done = psn::distance(base, r.msn()) as usize;
        if done < self.msgs.len() || psn::lt(una, self.hi) {
            return;
        }
        self.unseen_tail(una);
        self.close(psn::sub(una, 1));
        self.hi = una;
        let n = done - self.msgs.len();
        if n == 0 {
            return;
        }
        self.mark_bounds_unseen();
        let Some(open) = self.msgs.last_mut() else { return };
        // Shared so that together they count what the open one did.
        let (share, rest) = (open.bytes / (n as u64 + 1), open.bytes % (n as u64 + 1));
        open.bytes = share + rest;
        // Known from the MSN alone, they may have begun before the trace did.
        let mut more = Message { start_unseen: true, inferred: true, bytes: share, ..open.clone() };
        more.first_psn = more.last_psn.unwrap_or(more.first_psn);
        self.msgs.extend(std::iter::repeat_n(more, n));
        self.count_forced();
    }

    /// The responder's MSN counts the messages it completed (IBA 9.7.7.2): an ACK for PSNs
    /// never seen sent whose MSN counts more messages than the trace holds proves messages
    /// none of whose copies the trace has. They are counted, ending before its `una`, as
    /// whole MTUs. READ is left out: its responses prove its messages.
    fn count_by_msn(&mut self, r: &Record, una: u32, at: Arrival) {
        if self.verb == Verb::Read {
            return;
        }
        let Some(base) = self.msn_base else {
            // Calibrated only while every message before the oldest incomplete one is known
            // and counted exactly (none may be two), at an ACK past the trace's start (an
            // earlier one counts messages before it, not followed).
            if self.held.is_empty() && !self.uncounted && psn::gt(una, self.start) {
                self.msn_base = Some(psn::sub(r.msn(), self.next_incomplete as u32));
            }
            return;
        };
        let done = psn::distance(base, r.msn()) as usize;
        if self.open || done <= self.msgs.len() || psn::le(una, self.hi) {
            return;
        }
        let bytes = u64::from(psn::distance(self.hi, una)) * u64::from(self.mtu);
        let n = done - self.msgs.len();
        for i in 0..n {
            // More than one: where each ends is not known; they share the PSNs and bytes.
            let share = bytes / n as u64 + if i == 0 { bytes % n as u64 } else { 0 };
            self.push_unseen(r, self.hi, Some(psn::sub(una, 1)), share);
            if n > 1 {
                self.mark_bounds_unseen();
            }
            if let Some(m) = self.msgs.last_mut() {
                m.inferred = true;
            }
        }
        self.hi = una;
        self.count_forced();
        self.complete(self.una, at, self.proof);
    }

    /// Messages were added for the MSN to count right: they may stand for messages an
    /// earlier merge hides, so the MSN confirms none of the messages counted so far.
    fn count_forced(&mut self) {
        self.confirmed = self.msgs.len();
    }

    /// READ: the responses from `from` to `to` (exclusive) are taken as delivered, their
    /// copies missing.
    fn assume(&mut self, from: u32, to: u32) {
        let full = self.assumed.len() >= ASSUMED_CAP;
        match self.assumed.last_mut() {
            // Past the cap, the last range runs on over those between: a go-back there then
            // rewinds as if at a response taken as delivered.
            Some(last) if last.1 == from || full => last.1 = to,
            _ => self.assumed.push((from, to)),
        }
    }

    /// READ: a request repeated from PSN `q` below every request seen — a go-back (the
    /// requester's "NAK" for READ, Lumina §6.1) or a timeout's retry — asks from the first
    /// response the requester lacks: it had every one before `q`, and takes those from `q`
    /// on as they come again. A response at `q` taken as delivered was not (dropped, its
    /// copy missing with its drop event): the messages completed on it and after complete
    /// again, on the responses to come. Either way, completions from here on no longer
    /// rest on the responses taken as delivered before `q`.
    fn read_go_back(&mut self, q: u32) {
        if psn::gt(q, self.read_expect) {
            return; // responses before it are missing: when they came is not known
        }
        let dropped = self.assumed.iter().any(|&(a, b)| psn::ge(q, a) && psn::lt(q, b));
        if !dropped {
            // Behind a response seen delivered (one in flight when the request left): those
            // from `q` on may still be taken as they first came.
            self.assumed.retain(|&(a, _)| psn::ge(a, q));
            return;
        }
        self.assumed.clear();
        (self.read_expect, self.una) = (q, q);
        while self.next_incomplete > 0 {
            let m = &mut self.msgs[self.next_incomplete - 1];
            if m.last_psn.is_none_or(|l| psn::lt(l, q)) {
                break;
            }
            m.complete_at(None);
            m.completion_uncertain = false;
            self.next_incomplete -= 1;
        }
    }

    /// The responder's MSN (IBA 9.7.7.2) at `una` counts exactly the messages the trace
    /// completed before it: none of them hides another, so a boundary inferred across
    /// unseen PSNs (`bounds_unseen`) held one message. Messages counted from an MSN, sharing
    /// PSNs, stay as they are: where each ends is still not known.
    fn confirm_by_msn(&mut self, r: &Record, una: u32) {
        let Some(base) = self.msn_base.filter(|_| self.verb != Verb::Read && una == self.una) else { return };
        if psn::distance(base, r.msn()) as usize != self.next_incomplete {
            return;
        }
        for i in self.confirmed..self.next_incomplete {
            if self.msgs[i].bounds_unseen && !self.shares_psns(i) {
                self.msgs[i].bounds_unseen = false;
            }
        }
        self.confirmed = self.confirmed.max(self.next_incomplete);
    }

    /// Whether message `i` shares a PSN with its neighbours (messages an MSN counted).
    fn shares_psns(&self, i: usize) -> bool {
        let m = &self.msgs[i];
        let before = i.checked_sub(1).and_then(|j| self.msgs[j].last_psn).is_some_and(|l| psn::ge(l, m.first_psn));
        let after = self.msgs.get(i + 1).is_some_and(|n| m.last_psn.is_none_or(|l| psn::le(n.first_psn, l)));
        before || after
    }

    /// Everything before `una` is acknowledged: complete the messages it covers.
    fn progress(&mut self, una: u32, at: Arrival) {
        if psn::gt(una, self.una) {
            self.una = una;
        }
        self.complete(self.una, at, self.proof);
    }

    /// Completes, at `at`, the messages that end before `una`, as far as `proof` goes.
    fn complete(&mut self, una: u32, at: Arrival, proof: Proof) {
        let (unseen, assumed) = (self.unseen, self.assumed.first().map(|&(p, _)| p));
        while let Some(m) = self.msgs.get_mut(self.next_incomplete) {
            match m.last_psn {
                Some(last) if psn::gt(una, last) => {
                    m.complete_at(Some(at));
                    let relies_on_assumed = assumed.is_some_and(|p| psn::le(p, last));
                    // A message whose first packet the trace lacks began before the packet
                    // that proved it, so an ACK for it may be missing from before that too.
                    let first = if m.start_unseen { 0 } else { m.first_order };
                    m.completion_uncertain = relies_on_assumed || proof.may_be_late(unseen, first, una, last);
                    self.next_incomplete += 1;
                    self.held.clear();
                }
                Some(_) => break,
                None => {
                    if self.held.len() < HELD_CAP && self.held.last().is_none_or(|&(u, _, _)| psn::gt(una, u)) {
                        self.held.push((una, at, proof));
                    }
                    break;
                }
            }
        }
    }
}

impl Totals {
    /// One terminal line: counts, goodput and completion times.
    fn line(&self) -> String {
        let gbps = match (self.goodput_gbps, self.goodput_gbps_max) {
            (Some(g), Some(max)) => format!("{g:.3}–{max:.3} Gb/s"),
            (Some(g), None) => format!("{g:.3} Gb/s"),
            _ => "-".to_string(),
        };
        let unproven = match self.unproven_messages {
            0 => String::new(),
            1 => format!(" (+ at most {} in 1 message of unproven size)", self.unproven_bytes),
            n => format!(" (+ at most {} in {n} messages of unproven size)", self.unproven_bytes),
        };
        let mct = &self.mct_ns;
        let us = |v: Option<u64>| v.map_or("-".to_string(), |v| format!("{:.2}", v as f64 / 1e3));
        let mean = mct.mean.map_or("-".to_string(), |v| format!("{:.2}", v / 1e3));
        let unseen = match self.completion_unseen {
            0 => String::new(),
            n => format!(" ({n} more may have: their completion may be in a missing copy)"),
        };
        let unseen = match self.qp_may_have_failed {
            0 => unseen,
            n => format!("{unseen} ({n} of them may not have: their QP may have failed first)"),
        };
        let known = match self.mct_unknown {
            0 => String::new(),
            n => format!(" ({} known; {n} not: the trace does not fix their post or completion)", self.completed - n),
        };
        format!(
            "{}/{} messages completed{unseen}, {} bytes{unproven}, {gbps}, MCT{known} µs min {} median {} p99 {} max {} mean {mean}",
            self.completed,
            self.messages,
            self.bytes,
            us(mct.min),
            us(mct.median),
            us(mct.p99),
            us(mct.max),
        )
    }
}

/// Whether `ns` (unwrapped over the trace) is at or after `by_ns`, a time on the switch's
/// 48-bit clock as `gbn` gives it: compared on that clock's ring.
fn at_or_after(ns: u64, by_ns: u64) -> bool {
    !later(by_ns, ns & wire::mirror::TIMESTAMP_MAX)
}

impl Report {
    /// The QPs that failed, each connection's by a switch time (`gbn`: its retries
    /// exhausted before the next acknowledgement reached it): what reached it later
    /// completed nothing. Applied before the per-message lists are left out.
    pub fn qps_failed(&mut self, failed: &rustc_hash::FxHashMap<u32, u64>) {
        self.completed_from(failed, |m| {
            (m.completed, m.completed_ns, m.completed_late_ns, m.mct_ns) = (None, None, 0, None)
        });
    }

    /// The QPs that may have failed, each connection's from a switch time (`gbn`: an
    /// expiry past its last retry may have come before the next acknowledgement reached
    /// it): what reached it later completed its messages only if the QP took it. They stay
    /// completed, flagged `qp_may_have_failed`, without an MCT. Applied after
    /// [`Self::qps_failed`].
    pub fn qps_may_have_failed(&mut self, maybe: &rustc_hash::FxHashMap<u32, u64>) {
        self.completed_from(maybe, |m| (m.qp_may_have_failed, m.mct_ns) = (true, None));
    }

    /// Applies `mark` to each message completed at or after its connection's time in `by`,
    /// and totals again.
    fn completed_from(&mut self, by: &rustc_hash::FxHashMap<u32, u64>, mark: impl Fn(&mut Message)) {
        if by.is_empty() {
            return;
        }
        for c in &mut self.connections {
            let (Some(&by_ns), Some(msgs)) = (by.get(&c.conn), c.per_message.as_mut()) else { continue };
            let late = |m: &Message| m.completed_ns.is_some_and(|ns| at_or_after(ns, by_ns));
            msgs.iter_mut().filter(|m| late(m)).for_each(&mark);
            c.totals = Totals::of(msgs.iter(), self.run_start);
        }
        let all = self.connections.iter().flat_map(|c| c.per_message.iter().flatten());
        self.overall = Totals::of(all, self.run_start);
    }

    /// Drops every connection's per-message list, keeping the totals: on a long trace the
    /// lists are most of report.json (515 of 860 MB for 53 M packets).
    pub fn leave_out_per_message(&mut self) {
        for c in &mut self.connections {
            c.per_message = None;
        }
    }

    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let how = if self.posting_configured { "configured" } else { "inferred" };
        let posting = match self.posting {
            Posting::PerQp => format!("per QP ({how})"),
            Posting::Barrier => format!("barrier sync ({how})"),
        };
        let _ = writeln!(
            out,
            "goodput: {}, posts estimated {posting}, tx-depth {}",
            super::plural(self.connections.len() as u64, "connection", "connections"),
            self.tx_depth
        );
        let _ = writeln!(out, "  all: {}", self.overall.line());
        let mut shown: Vec<&ConnGoodput> = self.connections.iter().collect();
        if shown.len() > RENDER_LINES {
            // Too many to read: the ones to look at first, those that left messages
            // undone, then the slowest.
            let _ = writeln!(out, "  connections with messages not completed first, then by p99 MCT:");
            shown.sort_by_key(|c| {
                (Reverse(c.totals.messages - c.totals.completed), Reverse(c.totals.mct_ns.p99), c.conn)
            });
        }
        render_capped(out, shown, |out, c| {
            let _ = writeln!(out, "  conn {}: {}", c.conn, c.totals.line());
        });
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }

    /// Goodput and completion times are measurements, never problems.
    pub fn problems(&self) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracker of one connection from PSN 10, MTU 1024, with no copy missing.
    fn tracker(verb: Verb, clock: SwitchClock) -> Tracker<'static> {
        Tracker::new(verb, 1024, 10, clock, Box::leak(Box::default()), Box::leak(Box::default()))
    }

    /// A mirrored copy: opcode, PSN, mirror seq (a seq skipped is a copy the trace lacks).
    fn copy(op: u8, p: u32, seq: u64) -> Record {
        let mut r = Record::default().with_opcode(op).with_psn(p).with_kind(Kind::of(Some(op))).with_seq(seq);
        (r.flags, r.switch_ts_ns, r.payload_len) = (r.flags | flag::MIRRORED, seq * 100, 1024);
        r
    }

    type Seen = (u32, Option<u32>, u64, Option<u64>, bool);

    /// The messages of one connection from PSN 10 in `records`, the copies their seqs skip
    /// missing: (first PSN, last PSN, bytes, completed, start unseen).
    fn messages(verb: Verb, records: &[Record]) -> Vec<Seen> {
        let msgs = tracked(verb, records, None);
        msgs.iter().map(|m| (m.first_psn, m.last_psn, m.bytes, m.completed_ns, m.start_unseen)).collect()
    }

    /// One connection from PSN 10 (MSN base `msn_base`) tracked over `records`, the
    /// copies their seqs skip missing: its messages.
    fn tracked(verb: Verb, records: &[Record], msn_base: Option<u32>) -> Vec<Message> {
        tracked_arriving(verb, records, msn_base, &Arrivals::default())
    }

    /// [`tracked`], each record reaching its end as `arrivals` say.
    fn tracked_arriving(verb: Verb, records: &[Record], msn_base: Option<u32>, arrivals: &Arrivals) -> Vec<Message> {
        let unseen = Unseen::of(records);
        let mut t = Tracker::new(verb, 1024, 10, SwitchClock::default(), &unseen, arrivals);
        t.msn_base = msn_base;
        for (i, r) in records.iter().enumerate() {
            t.idx = i as u32;
            t.packet(r, if r.kind() == Kind::Request { Role::Responder } else { Role::Requester });
        }
        t.finish()
    }

    const ACK: u8 = 0x11;

    #[test]
    fn a_message_whose_first_copy_is_missing_counts_once() {
        // WRITE FIRST/MIDDLE/LAST 10–12, then 13–15 whose FIRST copy (seq 5) is missing.
        let first = copy(0x06, 10, 1).with_reth(3072);
        let (mid, last) = (copy(0x07, 11, 2), copy(0x08, 12, 3));
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        let records = [first, mid, last, ack(12, 1, 4), copy(0x07, 14, 6), copy(0x08, 15, 7), ack(15, 2, 8)];
        let got = messages(Verb::Write, &records);
        // The missing FIRST carried one MTU: 3072 bytes, as the RETH said.
        assert_eq!(got, [(10, Some(12), 3072, Some(400), false), (13, Some(15), 3072, Some(800), true)]);
        // SEND (no RETH): bytes from the payloads, the missing FIRST and MIDDLE one MTU each.
        let send = [copy(0x00, 10, 1), copy(0x02, 11, 2), ack(11, 1, 3), copy(0x02, 14, 7), ack(14, 2, 8)];
        let got = messages(Verb::Send, &send);
        assert_eq!(got, [(10, Some(11), 2048, Some(300), false), (12, Some(14), 3072, Some(800), true)]);
        // The trace starting mid-message (no copy missing) counts nothing there.
        let got = messages(Verb::Write, &[copy(0x07, 11, 1), copy(0x08, 12, 2), ack(12, 1, 3)]);
        assert_eq!(got, []);
    }

    #[test]
    fn a_message_none_of_whose_copies_is_in_the_trace_counts_once() {
        let only = |p, seq| copy(0x0a, p, seq).with_reth(1024);
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        // WRITE ONLY at 11 (seq 3) and its ACK (seq 4) are missing: the next message
        // starts past the PSN after the previous one.
        let records = [only(10, 1), ack(10, 1, 2), only(12, 5), ack(12, 3, 6)];
        let got = messages(Verb::Write, &records);
        let unseen = (11, Some(11), 1024, Some(600), true);
        assert_eq!(got, [(10, Some(10), 1024, Some(200), false), unseen, (12, Some(12), 1024, Some(600), false)]);
        // The last message (seq 3) missing: the ACK names PSN 11, never seen sent, and its
        // MSN counts two messages.
        let got = messages(Verb::Write, &[only(10, 1), ack(10, 1, 2), ack(11, 2, 4)]);
        assert_eq!(got, [(10, Some(10), 1024, Some(200), false), (11, Some(11), 1024, Some(400), true)]);
    }

    #[test]
    fn bytes_the_trace_does_not_prove_are_kept_apart() {
        let only = |p, len, seq| copy(0x0a, p, seq).with_reth(len);
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        // WRITE ONLY of 1000 bytes at 10; the one at 11 (seq 3) unseen, its size unknown:
        // one MTU, at most what it carried; then 500 bytes at 12.
        let records = [only(10, 1000, 1), ack(10, 1, 2), only(12, 500, 5), ack(12, 3, 6)];
        let msgs = tracked(Verb::Write, &records, None);
        let got: Vec<(u64, bool)> = msgs.iter().map(|m| (m.bytes, m.bytes_unproven)).collect();
        assert_eq!(got, [(1000, false), (1024, true), (500, false)]);
        let t = Totals::of(msgs.iter(), Some(at(100).ps));
        assert_eq!((t.bytes, t.unproven_messages, t.unproven_bytes), (1500, 1, 1024));
        assert!(
            t.line().starts_with(
                "3/3 messages completed, 1500 bytes (+ at most 1024 in 1 message of unproven size), 24.000–40.384 Gb/s"
            ),
            "{}",
            t.line()
        );
        // Completed at 600: goodput from 100 counts the proven bytes; its maximum all.
        assert_eq!((t.goodput_gbps, t.goodput_gbps_max), (Some(1500.0 * 8.0 / 500.0), Some(2524.0 * 8.0 / 500.0)));
        // SEND 10–11 whose Last's copy (seq 2) is missing, cut at the next First (12): the
        // Last counts one MTU, unproven; the go-back copy of 11 proves its 300 bytes.
        let mut last = copy(0x02, 11, 6);
        last.payload_len = 300;
        let records = [copy(0x00, 10, 1), copy(0x04, 12, 3), ack(12, 2, 4)];
        let got: Vec<(u64, bool)> =
            tracked(Verb::Send, &records, None).iter().map(|m| (m.bytes, m.bytes_unproven)).collect();
        assert_eq!(got, [(2048, true), (1024, false)]);
        let records = [copy(0x00, 10, 1), copy(0x04, 12, 3), copy(0x00, 10, 5), last, copy(0x04, 12, 7), ack(12, 2, 8)];
        let got: Vec<(u64, bool)> =
            tracked(Verb::Send, &records, None).iter().map(|m| (m.bytes, m.bytes_unproven)).collect();
        assert_eq!(got, [(1324, false), (1024, false)]);
    }

    #[test]
    fn an_out_of_order_first_transmission_starts_its_message() {
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        // SEND 10–11; then 12–14 whose Middle (13) went out before its First (12), both
        // first transmissions, no copy missing.
        let records = [
            copy(0x00, 10, 1),
            copy(0x02, 11, 2),
            ack(11, 1, 3),
            copy(0x01, 13, 4),
            copy(0x00, 12, 5),
            copy(0x02, 14, 6),
            ack(14, 2, 7),
        ];
        let got = messages(Verb::Send, &records);
        assert_eq!(got, [(10, Some(11), 2048, Some(300), false), (12, Some(14), 3072, Some(700), false)]);
    }

    #[test]
    fn go_back_copies_split_a_merged_message_and_fill_its_bytes() {
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        let mut last = copy(0x02, 13, 9);
        last.payload_len = 500;
        // SEND 10–13 and 14–17; the first copies of 13 (Last, seq 4) and 14 (First, seq 5)
        // missing: counted as one merged message. The go-back copies of 13 and 14 tell
        // the boundary and the Last's size.
        let records = [
            copy(0x00, 10, 1),
            copy(0x01, 11, 2),
            copy(0x01, 12, 3),
            copy(0x01, 15, 6),
            copy(0x01, 16, 7),
            copy(0x02, 17, 8),
            last,
            copy(0x00, 14, 10),
            ack(17, 2, 11),
        ];
        let got = messages(Verb::Send, &records);
        assert_eq!(got, [(10, Some(13), 3572, Some(1100), false), (14, Some(17), 4096, Some(1100), true)]);
        assert!(tracked(Verb::Send, &records, None).iter().all(|m| !m.bounds_unseen));
    }

    /// Code review (session 23): a READ request whose RETH the snap length cut, its length
    /// told by no response, counted as a proven message of 0 bytes. Review (session 30):
    /// and as a message of one PSN, so that its responses past it made a second message.
    /// Its responses tell its span and size.
    #[test]
    fn a_read_request_of_unknown_length_has_an_unproven_size() {
        let mut cut = copy(0x0c, 10, 1);
        cut.flags |= flag::HEADERS_CUT;
        let sizes = |records: &[Record]| -> Vec<(u32, Option<u32>, u64, bool)> {
            let msgs = tracked(Verb::Read, records, None);
            msgs.iter().map(|m| (m.first_psn, m.last_psn, m.bytes, m.bytes_unproven)).collect()
        };
        let mut next = cut;
        next = next.with_psn(11).with_seq(3);
        assert_eq!(sizes(&[cut, next]), [(10, Some(10), 1024, true), (11, None, 0, true)], "no answer: at most an MTU");
        assert_eq!(sizes(&[cut, copy(0x10, 10, 2)]), [(10, Some(10), 1024, false)], "an Only answer tells");
        let answer = [cut, copy(0x0d, 10, 2), copy(0x0e, 11, 3), copy(0x0f, 12, 4)];
        assert_eq!(sizes(&answer), [(10, Some(12), 3072, false)], "First … Last: one message");
        let whole = [copy(0x0c, 10, 1).with_reth(1024), copy(0x10, 10, 2)];
        let msgs = tracked(Verb::Read, &whole, None);
        assert_eq!(msgs.iter().map(|m| (m.bytes, m.bytes_unproven)).collect::<Vec<_>>(), [(1024, false)]);
    }

    #[test]
    fn a_repeated_read_request_is_not_a_second_message() {
        let read = |p, len, seq| copy(0x0c, p, seq).with_reth(len);
        let resp = |op, p, seq| copy(op, p, seq);
        let one = [read(10, 1024, 1), resp(0x10, 10, 2)];
        // Then a READ of 4 PSNs at 11 (seq 3 missing); responses 11, 12 seen, 13 and 14
        // missing (seqs 6, 7); the requester asks again from 13 and the rest comes back;
        // then a one-PSN READ at 15.
        let records = [
            resp(0x0d, 11, 4),
            resp(0x0e, 12, 5),
            read(13, 2048, 8),
            resp(0x0d, 13, 9),
            resp(0x0f, 14, 10),
            read(15, 1024, 11),
            resp(0x10, 15, 12),
        ];
        let expect = [
            (10, Some(10), 1024, Some(200), false),
            (11, Some(14), 4096, Some(1000), true),
            (15, Some(15), 1024, Some(1200), false),
        ];
        assert_eq!(messages(Verb::Read, &[&one[..], &records].concat()), expect);
        // Response 13 dropped by an event (its copy seen), 14 missing: the repeat from 13
        // is behind every PSN seen, a retransmission.
        let dropped = resp(0x0e, 13, 6).with_event(wire::mirror::Event::Drop);
        let with_drop = [&one[..], &records[..2], &[dropped], &records[2..]].concat();
        assert_eq!(messages(Verb::Read, &with_drop), expect);
        // Two READs sent back to back, the first one's copy missing: the second bounds it.
        let depth2 = [
            read(10, 1024, 1),
            read(15, 1024, 3),
            resp(0x10, 10, 4),
            resp(0x0d, 11, 5),
            resp(0x0f, 14, 8),
            resp(0x10, 15, 9),
        ];
        let got = messages(Verb::Read, &depth2);
        let expect = [
            (10, Some(10), 1024, Some(400), false),
            (11, Some(14), 4096, Some(800), true),
            (15, Some(15), 1024, Some(900), false),
        ];
        assert_eq!(got, expect);
    }

    /// Arrived at the requester at `ns` (queued behind nothing).
    fn at(ns: u64) -> Arrival {
        Arrival { ps: egress::ready_ps(ns), late_ps: 0 }
    }

    fn msg(first_packet_ns: u64, completed_ns: Option<u64>) -> Message {
        Message {
            first_psn: 0,
            last_psn: Some(0),
            bytes: 1,
            first_packet_ns,
            posted_ns: 0,
            completed_ns,
            completed_late_ns: 0,
            completed: completed_ns.map(at),
            mct_ns: None,
            completion_unseen: false,
            start_unseen: false,
            bounds_unseen: false,
            completion_uncertain: false,
            qp_may_have_failed: false,
            first_order: 0,
            first_frame_len: 0,
            begun_in_trace: true,
            inferred: false,
            bytes_unproven: false,
            size_known: true,
            mtu_guessed: false,
            start_guessed: false,
        }
    }

    #[test]
    fn a_completion_is_timed_when_it_reaches_the_requester() {
        // WRITE ONLYs at 10 and 11, each ACKed; tx-depth 1. The ACK of 10 queued 30 ns at
        // the port toward the requester, the ACK of 11 40 ns (past their 200 and 400 ns).
        let only = |p, seq| copy(0x0a, p, seq).with_reth(1024);
        let records =
            [only(10, 1), copy(ACK, 10, 2).with_aeth(0x1f, 1), only(11, 3), copy(ACK, 11, 4).with_aeth(0x1f, 2)];
        let delays = |late| Arrivals::of_delays(vec![[0, 0], [30_000, 0], [0, 0], [40_000, late]]);
        let report = |late| {
            let mut msgs = tracked_arriving(Verb::Write, &records, Some(0), &delays(late));
            let posts = estimate_posts(&[&msgs], 1, Posting::PerQp, &Unseen::default(), None);
            set_times(&mut msgs, &posts[0]);
            msgs.iter().map(|m| (m.completed_ns, m.mct_ns, m.completion_uncertain)).collect::<Vec<_>>()
        };
        // Message 11 is posted when the ACK of 10 arrives (230 ns), completes at 440 ns.
        assert_eq!(report(0), [(Some(230), Some(130), false), (Some(440), Some(210), false)]);
        // Frames whose copies are missing may have queued ahead of the second ACK: it may
        // have arrived later than modelled, by more than MCTs are held to.
        let late = LATE_TOLERANCE_PS as u32;
        assert_eq!(report(late), [(Some(230), Some(130), false), (Some(440), Some(210), false)]);
        assert_eq!(report(late + 1), [(Some(230), Some(130), false), (Some(440), None, true)]);
    }

    #[test]
    fn an_rnr_nak_completes_the_messages_before_its_psn() {
        use wire::bth::Opcode;
        let at = |mut r: Record, ns: u64| {
            r.switch_ts_ns = ns;
            r
        };
        let send = |psn, ns| {
            at(Record::default().with_kind(Kind::Request).with_opcode(Opcode::RC_SEND_ONLY.0).with_psn(psn), ns)
        };
        let ack = |syndrome, psn, ns| {
            at(
                Record::default()
                    .with_kind(Kind::Response)
                    .with_opcode(Opcode::RC_ACK.0)
                    .with_psn(psn)
                    .with_aeth(syndrome, 0),
                ns,
            )
        };
        // Two one-packet SENDs; the second finds no receive WQE (RNR NAK, timer code 1),
        // then is resent and acknowledged.
        let records = [send(10, 0), send(11, 10), ack(0b001_00001, 11, 100), send(11, 400), ack(0, 11, 500)];
        let mut t = tracker(Verb::Send, SwitchClock::of(&records));
        for r in &records {
            match r.kind() {
                Kind::Request => t.on_request(r),
                _ => t.on_response(r, 0, None),
            }
        }
        let done: Vec<Option<u64>> = t.msgs.iter().map(|m| m.completed_ns).collect();
        assert_eq!(done, [Some(100), Some(500)]);
    }

    #[test]
    fn posts_follow_the_generator() {
        // Two QPs, tx-depth 1: QP 0 finishes its first message at 10, QP 1 at 30, and
        // both start their second only after 30.
        let a = [msg(1, Some(10)), msg(31, Some(40))];
        let b = [msg(2, Some(30)), msg(32, Some(45))];
        let lists: Vec<&[Message]> = vec![&a, &b];
        assert!(is_barrier(&lists, 1));
        assert_eq!(post_times(&lists, Posting::PerQp), [[(1, true), (10, true)], [(1, true), (30, true)]]);
        assert_eq!(post_times(&lists, Posting::Barrier), [[(1, true), (30, true)], [(1, true), (30, true)]]);
        // QP 0 starting its second message at 11, before QP 1 is done: no barrier, and a
        // post is never later than the message's first packet.
        let early = [msg(1, Some(10)), msg(11, Some(20))];
        let lists: Vec<&[Message]> = vec![&early, &b];
        assert!(!is_barrier(&lists, 1));
        // The first packet is later than the post by the NIC's delay: no MCT from it.
        assert_eq!(post_times(&lists, Posting::Barrier), [[(1, true), (11, false)], [(1, true), (30, true)]]);
        // A completion that may have been earlier makes the post after it uncertain.
        let mut late = a.clone();
        late[0].completion_uncertain = true;
        let lists: Vec<&[Message]> = vec![&late, &b];
        assert_eq!(post_times(&lists, Posting::PerQp), [[(1, true), (10, false)], [(1, true), (30, true)]]);
        // Messages are counted by ordinal: after a merge (maybe two counted as one) the
        // message `tx-depth` before is maybe not the one whose completion let it go.
        let mut merged = [msg(1, Some(10)), msg(11, Some(20)), msg(21, Some(30))];
        merged[0].bounds_unseen = true;
        let lists: Vec<&[Message]> = vec![&merged];
        assert_eq!(post_times(&lists, Posting::PerQp), [[(1, true), (10, false), (20, false)]]);
        assert_eq!(post_times(&lists, Posting::Barrier), [[(1, true), (10, false), (20, false)]]);
    }

    #[test]
    fn a_capture_begun_mid_run_does_not_know_the_first_posts() {
        // Copies were lost before the trace's first (seq 5): the run may have begun earlier.
        let mut unseen = Unseen::of(&[Record::default().with_seq(5)]);
        unseen.lost_before_first();
        let first = Message { first_order: 5, ..msg(1, Some(10)) };
        let posts = estimate_posts(&[std::slice::from_ref(&first)], 1, Posting::PerQp, &unseen, None);
        assert_eq!(posts, [[Post { ps: at(1).ps, known: false }]]);
        let posts = estimate_posts(&[&[first]], 1, Posting::PerQp, &Unseen::default(), None);
        assert_eq!(posts, [[Post { ps: at(1).ps, known: true }]]);
        // MSN from 0 (the trace shown to span the QP's start), its first copies missing: the
        // first ACK seen (MSN 2, PSN 11) counts two messages before any data packet of the
        // trace; they may have begun long before it. Then a WRITE ONLY at 12, and its ACK.
        let records = [
            copy(ACK, 11, 3).with_aeth(0x1f, 2),
            copy(0x0a, 12, 4).with_reth(1024),
            copy(ACK, 12, 5).with_aeth(0x1f, 3),
        ];
        let msgs = tracked(Verb::Write, &records, Some(0));
        let begun: Vec<(u32, bool)> = msgs.iter().map(|m| (m.first_psn, m.begun_in_trace)).collect();
        assert_eq!(begun, [(10, false), (10, false), (12, true)]);
        // Goodput counts from the first message the trace saw begin, over those.
        let mut msgs = [msg(100, Some(150)), msg(200, Some(300))];
        msgs[0].begun_in_trace = false;
        let start = run_start(&[&msgs], None);
        assert_eq!(start, Some(at(200).ps));
        assert_eq!(Totals::of(msgs.iter(), start).goodput_gbps, Some(8.0 / 100.0));
        assert_eq!(Totals::of(msgs.iter(), start).bytes, 2);
    }

    #[test]
    fn a_connection_followed_from_mid_message_does_not_know_its_first_message() {
        // The trace starts (copies lost before its first) at a WRITE MIDDLE, PSN 10, of a
        // message begun before it; the QP's first PSN is not in the trace. The ACK of 11
        // (MSN 7) calibrates the MSN; then a WRITE ONLY at 12.
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        let records = [copy(0x07, 10, 5), copy(0x08, 11, 6), ack(11, 7, 7), copy(0x0a, 12, 8).with_reth(1024)];
        let records = [&records[..], &[ack(12, 8, 9)]].concat();
        let mut unseen = Unseen::of(&records);
        unseen.lost_before_first();
        let arrivals = Arrivals::default();
        let mut t = Tracker::new(Verb::Write, 1024, 10, SwitchClock::default(), &unseen, &arrivals);
        t.ipsn_seen = false;
        for r in &records {
            t.packet(r, if r.kind() == Kind::Request { Role::Responder } else { Role::Requester });
        }
        let msgs = t.finish();
        let got: Vec<_> = msgs.iter().map(|m| (m.first_psn, m.last_psn, m.bytes_unproven, m.begun_in_trace)).collect();
        // Counted from PSN 10, where the trace starts: maybe more bytes before, and begun
        // before the trace (goodput leaves it out).
        assert_eq!(got, [(10, Some(11), true, false), (12, Some(12), false, true)]);
        assert_eq!(msgs.iter().map(|m| m.completed_ns).collect::<Vec<_>>(), [Some(700), Some(900)]);
    }

    #[test]
    fn a_read_completed_on_responses_taken_as_delivered_is_uncertain() {
        // A READ of 10–13: response 12's copy (seq 4) is missing. Taken as delivered, but it
        // may have been dropped, the requester then waiting for a timeout to ask again:
        // that completion and every later one are unproven. Then a READ at 14.
        let records = [
            copy(0x0c, 10, 1).with_reth(4096),
            copy(0x0d, 10, 2),
            copy(0x0e, 11, 3),
            copy(0x0f, 13, 5),
            copy(0x0c, 14, 6).with_reth(1024),
            copy(0x10, 14, 7),
        ];
        let msgs = tracked(Verb::Read, &records, None);
        let got: Vec<_> = msgs.iter().map(|m| (m.completed_ns, m.completion_uncertain)).collect();
        assert_eq!(got, [(Some(500), true), (Some(700), true)]);
    }

    #[test]
    fn an_msn_counting_one_message_clears_bounds_unseen() {
        let ack = |p, msn, seq| copy(ACK, p, seq).with_aeth(0x1f, msn);
        // SEND 10–13, its Middles' copies (seqs 2, 3) missing: a Last and a First may hide
        // in 11–12. The ACK of 13 counts one message (MSN from 0): there was one.
        let records = [copy(0x00, 10, 1), copy(0x02, 13, 4), ack(13, 1, 5)];
        let flags = |msn_base| -> Vec<(bool, bool)> {
            tracked(Verb::Send, &records, msn_base).iter().map(|m| (m.bounds_unseen, m.bytes_unproven)).collect()
        };
        assert_eq!(flags(Some(0)), [(false, false)]);
        // Without a count from the QP's start the MSN proves nothing.
        assert_eq!(flags(None), [(true, true)]);
        // Counting two, it was two: the flag stays.
        let records = [copy(0x00, 10, 1), copy(0x02, 13, 4), ack(13, 2, 5)];
        let got: Vec<bool> = tracked(Verb::Send, &records, Some(0)).iter().map(|m| m.bounds_unseen).collect();
        assert_eq!(got, [true]);
    }

    #[test]
    fn a_read_go_back_rewinds_what_was_taken_as_delivered() {
        // READ 10–13, response 12's copy (seq 4) missing: taken as delivered when 13 comes,
        // the message completed at 500, unproven. The requester asks again from 12: 12 was
        // dropped. The message completes on the responses resent, proven; so does the READ
        // at 14 after it.
        let records = [
            copy(0x0c, 10, 1).with_reth(4096),
            copy(0x0d, 10, 2),
            copy(0x0e, 11, 3),
            copy(0x0f, 13, 5),
            copy(0x0c, 12, 6).with_reth(2048),
            copy(0x0d, 12, 7),
            copy(0x0f, 13, 8),
            copy(0x0c, 14, 9).with_reth(1024),
            copy(0x10, 14, 10),
        ];
        let msgs = tracked(Verb::Read, &records, None);
        let got: Vec<_> = msgs.iter().map(|m| (m.completed_ns, m.completion_uncertain)).collect();
        assert_eq!(got, [(Some(800), false), (Some(1000), false)]);
        // 12 delivered after all: then a READ of 14–15 whose response 14 is dropped (its
        // copy seen). Without a go-back, the READ at 14 rests on 12 too.
        let drop = copy(0x0d, 14, 7).with_event(wire::mirror::Event::Drop);
        let next = [copy(0x0c, 14, 6).with_reth(2048), drop, copy(0x0f, 15, 8)];
        let upto = |n: usize| [&records[..4], &next[..n]].concat();
        let uncertain = |r: &[Record]| tracked(Verb::Read, r, None).iter().map(|m| m.completion_uncertain).collect();
        let resent = [copy(0x0d, 14, 10), copy(0x0f, 15, 11)];
        let got: Vec<bool> = uncertain(&[upto(3), resent.to_vec()].concat());
        assert_eq!(got, [true, true], "no go-back seen");
        // The requester asks again from 14: it had everything before, 12 too. The READ at 14
        // completes proven on the responses resent.
        let go_back = copy(0x0c, 14, 9).with_reth(2048);
        let got: Vec<bool> = uncertain(&[upto(3), vec![go_back], resent.to_vec()].concat());
        assert_eq!(got, [true, false]);
    }

    fn post_times(lists: &[&[Message]], posting: Posting) -> Vec<Vec<(u64, bool)>> {
        estimate_posts(lists, 1, posting, &Unseen::default(), None)
            .iter()
            .map(|q| q.iter().map(|p| (p.ps / 1_000, p.known)).collect())
            .collect()
    }

    #[test]
    fn percentiles_are_observed_times() {
        let s = Summary::of((1..=200).rev().collect());
        assert_eq!((s.min, s.median, s.p99, s.max), (Some(1), Some(100), Some(198), Some(200)));
        assert_eq!(s.mean, Some(100.5));
        // Nearest rank: with fewer than 100 times the 99th percentile is the largest.
        let s = Summary::of(vec![7, 3]);
        assert_eq!((s.min, s.median, s.p99, s.max), (Some(3), Some(3), Some(7), Some(7)));
        assert_eq!(Summary::of(Vec::new()), Summary::default());
    }

    #[test]
    fn totals_span_every_connection() {
        let done = |first, mct: u64, bytes| Message {
            bytes,
            completed_ns: Some(first + mct),
            completed: Some(at(first + mct)),
            mct_ns: Some(mct),
            ..msg(first, None)
        };
        let a = [done(100, 50, 1000), msg(400, None)];
        let b = [done(110, 90, 3000), done(300, 10, 1000)];
        let o = Totals::of(a.iter().chain(&b), Some(at(100).ps));
        assert_eq!((o.messages, o.completed, o.bytes), (4, 3, 5000));
        // 5000 bytes from the first post (100) to the last completion (310).
        assert_eq!(o.goodput_gbps, Some(5000.0 * 8_000.0 / 210_000.0));
        assert_eq!((o.mct_ns.min, o.mct_ns.median, o.mct_ns.max), (Some(10), Some(50), Some(90)));
    }

    #[test]
    fn a_long_summary_shows_the_worst_connections() {
        let conn = |conn: u32, completed, p99| ConnGoodput {
            conn,
            totals: Totals {
                messages: 10,
                completed,
                mct_ns: Summary { p99: Some(p99), ..Summary::default() },
                ..Totals::default()
            },
            ..ConnGoodput::default()
        };
        let mut connections: Vec<ConnGoodput> = (0..100).map(|c| conn(c, 10, 1000 + u64::from(c))).collect();
        connections[42].totals.completed = 7;
        let report = Report { connections, ..Report::default() };
        let mut out = String::new();
        report.render(&mut out);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("goodput: 100 connections"), "{out}");
        assert!(lines[1].starts_with("  all: "), "{out}");
        assert!(lines[3].starts_with("  conn 42: 7/10 messages completed"), "{out}");
        assert!(lines[4].starts_with("  conn 99: ") && lines[5].starts_with("  conn 98: "), "{out}");
        assert_eq!(lines.len(), 3 + RENDER_LINES + 1, "{out}");
        assert_eq!(lines.last(), Some(&"  ... 80 more in report.json"));
    }

    #[test]
    fn a_missing_last_copy_does_not_hold_up_later_messages() {
        let rec = |op: u8, p: u32, ts: u64| {
            let mut r = Record::default().with_opcode(op).with_psn(p).with_kind(Kind::of(Some(op)));
            (r.flags, r.switch_ts_ns, r.payload_len) = (r.flags | flag::MIRRORED, ts, 1024);
            r
        };
        let mut t = tracker(Verb::Write, SwitchClock::default());
        t.on_request(&rec(0x06, 10, 100).with_reth(2048)); // WRITE FIRST; its LAST (11) has no copy
        t.on_request(&rec(0x0a, 12, 300).with_reth(1024)); // WRITE ONLY
        t.on_response(&rec(0x11, 12, 900).with_aeth(0x1f, 2), 0, None); // ACK up to 12
        let got: Vec<_> = t.msgs.iter().map(|m| (m.first_psn, m.last_psn, m.completed_ns)).collect();
        assert_eq!(got, [(10, Some(11), Some(900)), (12, Some(12), Some(900))]);
        // tx-depth 1: the ACK of 11 comes before the next message starts; the first message
        // completed then, not at the next ACK.
        let mut t = tracker(Verb::Write, SwitchClock::default());
        t.on_request(&rec(0x06, 10, 100).with_reth(2048));
        t.on_response(&rec(0x11, 11, 500).with_aeth(0x1f, 1), 0, None); // ACK up to 11
        t.on_request(&rec(0x0a, 12, 600).with_reth(1024));
        t.on_response(&rec(0x11, 12, 900).with_aeth(0x1f, 2), 0, None);
        let got: Vec<_> = t.msgs.iter().map(|m| (m.first_psn, m.last_psn, m.completed_ns)).collect();
        assert_eq!(got, [(10, Some(11), Some(500)), (12, Some(12), Some(900))]);
    }

    #[test]
    fn opcodes_bound_messages() {
        for op in [0x00, 0x04, 0x06, 0x0a] {
            assert!(starts_message(op));
        }
        for op in [0x02, 0x04, 0x08, 0x0a, 0x16] {
            assert!(ends_message(op));
        }
        assert!(!starts_message(0x01) && !ends_message(0x07));
    }
}
