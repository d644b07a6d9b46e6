//! `rocescope check`: Lumina's integrity check (§3.5) with evidence. A trace is
//! *complete* only when
//! 1. its mirror sequence numbers are consecutive (each missing range listed, with the
//!    dump host / core that should have received it where the load-balancing pattern
//!    shows it),
//! 2. the switch's mirrored-packet count equals the copies in the trace, and
//! 3. the switch's received-RoCE count equals the copies in the trace;
//!
//! and, beyond Lumina, switch timestamps never go backwards within a direction, no input
//! was damaged (reconstruction issues), and no capture core dropped or failed to write
//! a packet (dataplane manifests).
//!
//! The per-record work is a streaming pass ([`Checker::push`]) over the mapped record file,
//! cut into parts on as many threads as there are cores for a long trace ([`check_records`]).
//! `switch.rs` reads the switch's counters and decides conditions 2 and 3; `balance.rs`
//! learns the round robin over dump hosts that names who should have had a missing copy.

use std::path::{Path, PathBuf};

use serde::Serialize;
use trace::record::{flag, Record, RecordView};
use wire::mirror::SEQ_MAX;

use crate::reconstruct::{Gaps, SeqRange, Summary, MISSING_LISTED};

mod balance;
mod switch;

#[cfg(test)]
use balance::LEARN;
pub use balance::NOT_AN_INPUT;
use balance::{expected_at, BalanceInference};
use switch::{switch_conditions, LUMINA_COUNTER_WRAP};
pub use switch::{PortCounters, PortDetail, PortRoles, RigPorts, SeqSpan, SwitchSnapshot, SNAPSHOT_FILE};

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{path}: {what}")]
    Snapshot { path: PathBuf, what: String },
    #[error(transparent)]
    Load(#[from] crate::reconstruct::LoadError),
}

/// One integrity condition and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Condition {
    pub name: String,
    /// `None` when it could not be evaluated (e.g. no switch counters).
    pub holds: Option<bool>,
    pub evidence: String,
}

/// A missing range and who should have had it.
#[derive(Debug, Clone, Serialize)]
pub struct Missing {
    #[serde(flatten)]
    pub range: SeqRange,
    /// The first seq unwrapped as the records' seqs are (0 or below for copies lost
    /// before the first lap): what [`Balance::pattern`] is indexed by.
    pub first_unwrapped: i64,
    /// Source names that should have received these seqs (from the load-balancing
    /// pattern); empty when the pattern is not inferable.
    pub expected_at: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TimestampRegression {
    pub src: String,
    pub dst: String,
    pub seq: u32,
    pub switch_ts_ns: u64,
    pub previous_seq: u32,
    pub previous_ts_ns: u64,
}

/// `rocescope check`'s findings; [`CheckReport::complete`] is the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub complete: bool,
    pub conditions: Vec<Condition>,
    pub packets: u64,
    pub mirrored: u64,
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// Missing ranges in seq order, with those before the first and after the last copy
    /// when the switch's seq range is known: the first [`MISSING_LISTED`].
    pub missing: Vec<Missing>,
    /// How many missing ranges there are in all.
    pub missing_ranges: u64,
    pub missing_total: u64,
    /// Copies the switch counters say it sent beyond the seqs the trace spans, lost before
    /// its first copy or after its last; where exactly is unknown without the switch's seq
    /// range (Lumina's dump has only counters). At least this many: a copy a full mirror
    /// buffer dropped took a seq but is not counted as sent.
    pub missing_at_ends: u64,
    /// The load-balancing pattern: period and, per seq residue, the source.
    pub balance: Option<Balance>,
    pub timestamp_regressions: Vec<TimestampRegression>,
    pub port_roles: Option<PortRoles>,
    /// Capture-side drops and failures from dataplane manifests.
    pub capture_problems: Vec<String>,
    /// Damaged inputs, duplicates, late copies, from reconstruction (the first of each
    /// kind), and how many in all.
    pub reconstruction_issues: Vec<serde_json::Value>,
    pub reconstruction_issue_total: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Balance {
    /// Seqs repeat their destination every `period` copies.
    pub period: u64,
    /// `pattern[u.rem_euclid(period)]` = source index, for `u` the *unwrapped* seq (as
    /// [`Missing::first_unwrapped`]): across the wrap the wire seq's phase moves by
    /// 0x7fffffff mod `period` each lap. `None`: no input holds that residue's seqs (a dump
    /// host or core whose capture was left out).
    pub pattern: Vec<Option<u16>>,
    /// Whether the pattern is per source (dump host / core) or only per capture host.
    pub level: String,
}

/// The streaming pass over records in trace order. A long trace is cut into parts, each
/// checked on its own thread by a [`Checker::fork`] and the results [`Checker::join`]ed:
/// the pass reads memory as fast as a core can, so two cores halve its time.
pub struct Checker {
    packets: u64,
    mirrored: u64,
    gaps: Gaps,
    /// Per direction: last (switch ts, seq) seen.
    last_ts: Vec<Option<(u64, u64)>>,
    /// Per direction: the first record seen and its index in the pass, which a join compares
    /// with the last timestamp of the pass before.
    first: Vec<Option<(u64, Record)>>,
    /// The first [`MAX_LISTED_REGRESSIONS`], in trace order.
    regressions: Vec<Regression>,
    balance: BalanceInference,
    /// Flow id → direction id (its source and destination address), whose timestamps the
    /// pass compares ([`Checker::per_direction`]); `None`: each flow on its own.
    directions: Option<std::sync::Arc<[u32]>>,
}

/// A copy whose switch timestamp is below that of the copy before it in its direction.
#[derive(Clone, Copy)]
struct Regression {
    /// Index of the record in the pass.
    at: u64,
    record: Record,
    previous_ts: u64,
    previous_seq: u64,
}

const MAX_LISTED_REGRESSIONS: usize = 1000;

impl Checker {
    /// `hosts[source]`: the capture host of each source.
    pub fn new(hosts: &[usize]) -> Checker {
        Checker::with_balance(BalanceInference::new(hosts))
    }

    fn with_balance(balance: BalanceInference) -> Checker {
        Checker {
            packets: 0,
            mirrored: 0,
            gaps: Gaps::default(),
            last_ts: Vec::new(),
            first: Vec::new(),
            regressions: Vec::new(),
            balance,
            directions: None,
        }
    }

    /// Compares timestamps per direction (source → destination address) rather than per
    /// flow: every packet one way crosses the same switch ingress in seq order, whichever
    /// QP it belongs to.
    pub fn per_direction(mut self, flows: &[trace::record::Flow]) -> Checker {
        let mut ids = rustc_hash::FxHashMap::default();
        self.directions = Some(
            flows
                .iter()
                .map(|f| {
                    let next = ids.len() as u32;
                    *ids.entry((f.src_ip(), f.dst_ip())).or_insert(next)
                })
                .collect(),
        );
        self
    }

    #[inline]
    pub fn push(&mut self, r: &Record) {
        let at = self.packets;
        self.packets += 1;
        if !r.has(flag::MIRRORED) {
            return;
        }
        self.mirrored += 1;
        self.gaps.observe(r.seq());
        self.timestamps(at, r);
        self.balance.observe(r.seq(), r.source);
    }

    /// Lumina checks that switch timestamps never decrease per direction.
    #[inline]
    fn timestamps(&mut self, at: u64, r: &Record) {
        if r.flow == u32::MAX {
            return;
        }
        // A flow id past the flow table (a damaged record file) has no direction.
        let f = match &self.directions {
            Some(table) => match table.get(r.flow as usize) {
                Some(&d) => d as usize,
                None => return,
            },
            None => r.flow as usize,
        };
        if f >= self.last_ts.len() {
            self.last_ts.resize(f + 1, None);
            self.first.resize(f + 1, None);
        }
        match self.last_ts[f] {
            Some((ts, seq)) => {
                if steps_back(r.switch_ts_ns, ts) && self.regressions.len() < MAX_LISTED_REGRESSIONS {
                    self.regressions.push(Regression { at, record: *r, previous_ts: ts, previous_seq: seq });
                }
            }
            None => self.first[f] = Some((at, *r)),
        }
        self.last_ts[f] = Some((r.switch_ts_ns, r.seq()));
    }

    /// Whether the load-balancing pattern is still being learned: until then the pass
    /// cannot be split, since every part verifies the pattern learned on the first copies.
    pub fn learning(&self) -> bool {
        self.balance.learning()
    }

    /// A checker for the records that follow this one's, to be [`join`](Self::join)ed.
    /// Fork once [`learning`](Self::learning) is over: each part verifies the pattern
    /// learned before it, and a join does not merge two learning phases.
    pub fn fork(&self) -> Checker {
        let c = Checker::with_balance(self.balance.fork());
        Checker { directions: self.directions.clone(), ..c }
    }

    /// The pass over this checker's records followed by `later`'s.
    pub fn join(mut self, later: Checker) -> Checker {
        let offset = self.packets;
        self.packets += later.packets;
        self.mirrored += later.mirrored;
        self.gaps = self.gaps.join(later.gaps);
        let mut boundary = Vec::new();
        for (f, first) in later.first.iter().enumerate() {
            let Some((at, r)) = *first else { continue };
            match self.last_ts.get(f).copied().flatten() {
                Some((ts, seq)) if steps_back(r.switch_ts_ns, ts) => {
                    boundary.push(Regression { at: offset + at, record: r, previous_ts: ts, previous_seq: seq })
                }
                Some(_) => {}
                None => {
                    self.last_ts.resize(self.last_ts.len().max(f + 1), None);
                    self.first.resize(self.first.len().max(f + 1), None);
                    self.first[f] = Some((offset + at, r));
                }
            }
        }
        boundary.extend(later.regressions.iter().map(|g| Regression { at: offset + g.at, ..*g }));
        boundary.sort_by_key(|g| g.at);
        self.regressions.extend(boundary);
        self.regressions.truncate(MAX_LISTED_REGRESSIONS);
        for (f, last) in later.last_ts.into_iter().enumerate() {
            if last.is_some() {
                self.last_ts[f] = last;
            }
        }
        self.balance.join(later.balance);
        self
    }

    /// Judges the pass against the switch counters and the reconstruction.
    pub fn finish(mut self, records: &[Record], view_flows: &[trace::record::Flow], ctx: &CheckContext) -> CheckReport {
        // A seq-outlier of the reconstruction (a corrupted seq, formats §6.3) is set aside
        // here as in analyze: reported once, as itself, not again as the timestamp
        // regression its place at the end makes it.
        let outlier = self.gaps.last.filter(|_| self.gaps.set_aside_outlier());
        let corrupted = set_aside_at_ends(&mut self.gaps, records, view_flows, ctx);
        let aside: Vec<u64> = outlier.into_iter().chain(corrupted.iter().map(|&(u, _)| u)).collect();
        // Nor a regression of the copy after a set-aside first copy, whose time it is.
        self.regressions.retain(|g| !aside.contains(&g.record.seq()) && !aside.contains(&g.previous_seq));
        let balance = self.balance.result(aside.first().copied());
        let missing = self.missing(ctx, balance.as_ref());
        let regressions = self.regressions(view_flows);
        let conditions = self.conditions(&missing, regressions.len(), &corrupted, ctx);
        CheckReport {
            complete: verdict(&conditions),
            conditions,
            packets: self.packets,
            mirrored: self.mirrored,
            first_seq: self.gaps.first.map(crate::merge::wire_of),
            last_seq: self.gaps.last.map(crate::merge::wire_of),
            missing: missing.listed,
            missing_ranges: missing.ranges,
            missing_total: missing.total,
            missing_at_ends: missing.at_ends,
            balance,
            timestamp_regressions: regressions,
            port_roles: ctx.roles.clone(),
            capture_problems: ctx.capture_problems.clone(),
            reconstruction_issues: ctx.reconstruction_issues.clone(),
            reconstruction_issue_total: ctx.reconstruction_issue_total,
        }
    }

    /// The gaps between copies, and those at either end when the switch says which seqs it
    /// sent; the first [`MISSING_LISTED`] ranges with the host/core that should have had them.
    fn missing(&self, ctx: &CheckContext, balance: Option<&Balance>) -> MissingCopies {
        let span = ctx.snapshot.as_ref().and_then(|s| s.rocescope.as_ref()?.mirror_seq);
        let ends = span.and_then(|s| ends_lost(&self.gaps, s));
        let (head, tail) = ends.unwrap_or_default();
        let unwrapped = |(a, b): (u64, u64)| (i128::from(a), i128::from(b));
        let listed = head
            .into_iter()
            .chain(self.gaps.missing_unwrapped().map(unwrapped))
            .chain(tail)
            .take(MISSING_LISTED)
            .map(|(first, last)| Missing {
                range: seq_range(first, last),
                first_unwrapped: first as i64,
                expected_at: expected_at(first, last, balance, &ctx.source_names, &ctx.host_names),
            })
            .collect();
        let at_ends = |r: Option<(i128, i128)>| r.map_or(0, |(a, b)| (b - a + 1) as u64);
        MissingCopies {
            listed,
            ranges: self.gaps.ranges() + u64::from(head.is_some()) + u64::from(tail.is_some()),
            total: self.gaps.total + at_ends(head) + at_ends(tail),
            // Without the switch's span, copies lost at the ends are only counted.
            at_ends: if ends.is_some() { 0 } else { unplaced(&self.gaps, ctx) },
        }
    }

    fn regressions(&self, view_flows: &[trace::record::Flow]) -> Vec<TimestampRegression> {
        let ip = |f: Option<&trace::record::Flow>, dst: bool| {
            f.map_or("?".into(), |f| if dst { f.dst_ip() } else { f.src_ip() }.to_string())
        };
        self.regressions
            .iter()
            .map(|g| {
                let f = view_flows.get(g.record.flow as usize);
                TimestampRegression {
                    src: ip(f, false),
                    dst: ip(f, true),
                    seq: g.record.wire_seq(),
                    switch_ts_ns: g.record.switch_ts_ns,
                    previous_seq: crate::merge::wire_of(g.previous_seq),
                    previous_ts_ns: g.previous_ts,
                }
            })
            .collect()
    }

    /// Lumina's three integrity conditions (§3.5) first, then this tool's own.
    fn conditions(
        &self,
        missing: &MissingCopies,
        regressions: usize,
        corrupted: &[(u64, Corrupted)],
        ctx: &CheckContext,
    ) -> Vec<Condition> {
        let (first, last) = (wire_or(self.gaps.first), wire_or(self.gaps.last));
        let mut evidence = if missing.total == 0 {
            format!("{} copies, seq {first} to {last}", self.mirrored)
        } else {
            format!("{} seqs missing in {} ranges", missing.total, missing.ranges)
        };
        if missing.at_ends > 0 {
            evidence.push_str(&format!(
                "; {} more copies the switch sent lie before seq {first} or after seq {last}",
                missing.at_ends
            ));
        }
        // A trace without a copy shows nothing consecutive: it is no capture of the mirror.
        if self.mirrored == 0 {
            evidence = ctx.no_copies.clone().unwrap_or_else(|| "no mirrored copy in the trace".into());
        }
        let mut conditions = vec![Condition {
            name: "1. consecutive mirror sequence numbers".into(),
            holds: Some(self.mirrored > 0 && missing.total == 0 && missing.at_ends == 0),
            evidence,
        }];
        conditions.extend(switch_conditions(ctx, self.mirrored));
        conditions.push(Condition {
            name: "switch timestamps monotonic per direction".into(),
            holds: Some(regressions == 0),
            evidence: format!("{regressions} regressions"),
        });
        let mut evidence = format!("{} reconstruction issues", ctx.reconstruction_issue_total);
        for (why, seqs) in Corrupted::by_reason(corrupted) {
            evidence += &format!("; {why}, corrupted, set aside: seq {seqs}");
        }
        conditions.push(Condition {
            name: "every input read whole, no duplicate or late copy".into(),
            holds: Some(ctx.reconstruction_issues.is_empty() && corrupted.is_empty()),
            evidence,
        });
        conditions.push(capture_condition(ctx));
        conditions
    }
}

/// No capture drop: what the manifests of the run directories say — not evaluable when
/// some directory is gone (moved or deleted since the reconstruction), as its manifest
/// could not be read, unless the others already report a drop.
fn capture_condition(ctx: &CheckContext) -> Condition {
    let name = "no capture drops".into();
    if !ctx.capture_problems.is_empty() {
        return Condition { name, holds: Some(false), evidence: ctx.capture_problems.join("; ") };
    }
    if !ctx.gone_dirs.is_empty() {
        return Condition { name, holds: None, evidence: gone_evidence(&ctx.gone_dirs) };
    }
    Condition { name, holds: Some(true), evidence: "no dataplane manifest reports a drop".into() }
}

/// Why what the run directories hold could not be read.
pub(crate) fn gone_evidence(gone: &[PathBuf]) -> String {
    let names: Vec<String> = gone.iter().map(|d| d.display().to_string()).collect();
    format!(
        "the run directories {} named in reconstruct.json (dirs) are gone: their manifests, switch counters and \
         configuration could not be read (reconstruct again from where they are now)",
        names.join(", ")
    )
}

/// The copies a trace lacks, as `finish` found them.
struct MissingCopies {
    listed: Vec<Missing>,
    ranges: u64,
    total: u64,
    at_ends: u64,
}

/// Every condition must be shown to hold: one that could not be evaluated (a condition
/// the switch counters would decide, without them; capture drops, with the run
/// directories' manifests gone) leaves the trace not complete, though nothing failed.
fn verdict(conditions: &[Condition]) -> bool {
    conditions.iter().all(|c| c.holds == Some(true))
}

/// Copies the switch gave that a trace lacks at either end, which no gap between its
/// copies shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LostAtEnds {
    pub before_first: u64,
    pub after_last: u64,
    /// Beyond the trace's span, at one end or the other: the counters say how many, not where.
    pub unplaced: u64,
    /// The switch's snapshot gave its mirror seq range: the counts are exact, zero lost is
    /// known (the counters alone may say nothing, across their wrap).
    pub known: bool,
}

impl LostAtEnds {
    pub fn total(&self) -> u64 {
        self.before_first + self.after_last + self.unplaced
    }

    /// Whether copies may be missing before the trace's first.
    pub fn maybe_before_first(&self) -> bool {
        self.before_first + self.unplaced > 0
    }
}

/// The copies lost at the ends of a trace spanning unwrapped seqs `first..=last`: exactly
/// from the snapshot's seq range when it has one, else from its counters; none without a
/// snapshot.
pub fn lost_at_ends(first: Option<u64>, last: Option<u64>, ctx: &CheckContext) -> LostAtEnds {
    let mut gaps = Gaps::default();
    (gaps.first, gaps.last) = (first, last);
    let span = ctx.snapshot.as_ref().and_then(|s| s.rocescope.as_ref()?.mirror_seq);
    let count = |r: Option<Unwrapped>| r.map_or(0, |(a, b)| (b - a + 1) as u64);
    match span.and_then(|s| ends_lost(&gaps, s)) {
        Some((head, tail)) => {
            LostAtEnds { before_first: count(head), after_last: count(tail), unplaced: 0, known: true }
        }
        None => LostAtEnds { unplaced: unplaced(&gaps, ctx), ..LostAtEnds::default() },
    }
}

/// How many copies the switch counters say were sent beyond the seqs a trace spans.
fn unplaced(gaps: &Gaps, ctx: &CheckContext) -> u64 {
    let (Some(snap), Some(roles)) = (&ctx.snapshot, &ctx.roles) else { return 0 };
    let Some(sent) = snap.sent(roles) else { return 0 };
    let given = sent + snap.buffer_drops();
    // Every seq from the first copy to the last was given once: those copies or gaps.
    let spanned = u128::from(gaps.first.zip(gaps.last).map_or(0, |(f, l)| l - f + 1));
    let beyond = match snap.counters_wrap() && (given >= LUMINA_COUNTER_WRAP || spanned >= LUMINA_COUNTER_WRAP) {
        // Known only modulo the wrap: the fewest the counters allow. More than half a wrap
        // is rather fewer copies counted than spanned (counters of another run, wrong
        // ports), which says nothing of the ends.
        true => match (given % LUMINA_COUNTER_WRAP + LUMINA_COUNTER_WRAP - spanned % LUMINA_COUNTER_WRAP)
            % LUMINA_COUNTER_WRAP
        {
            d if d > LUMINA_COUNTER_WRAP / 2 => 0,
            d => d,
        },
        false => given.saturating_sub(spanned),
    };
    u64::try_from(beyond).unwrap_or(u64::MAX)
}

/// An unwrapped seq range, first..=last, which may reach below the first lap.
type Unwrapped = (i128, i128);

/// The copies lost before the trace's first copy and after its last, which no gap between
/// copies shows, as unwrapped seq ranges: from the first and last seq the switch gave.
/// None when that range does not hold the trace's (the counters belong to another run).
fn ends_lost(gaps: &Gaps, span: SeqSpan) -> Option<(Option<Unwrapped>, Option<Unwrapped>)> {
    let steps = |a: u32, b: u32| i128::from(wire::mirror::seq_distance(a, b));
    let total = steps(span.first, span.last);
    let (Some(f), Some(l)) = (gaps.first, gaps.last) else {
        let first = i128::from(span.first);
        return Some((None, Some((first, first + total))));
    };
    let (f, l) = (i128::from(f), i128::from(l));
    let head = steps(span.first, crate::merge::wire_of(f as u64));
    let tail = steps(crate::merge::wire_of(l as u64), span.last);
    if head + (l - f) + tail != total {
        return None;
    }
    Some(((head > 0).then_some((f - head, f - 1)), (tail > 0).then_some((l + 1, l + tail))))
}

/// Why a copy at an end of the trace was set aside from the gaps as corrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corrupted {
    /// The switch's snapshot says it never gave that seq ([`set_aside_outside`]).
    BeyondSwitch,
    /// The first copy, past a gap, is later in switch time than the next copy of its
    /// direction ([`first_copy_out_of_time`]).
    OutOfTime,
}

impl Corrupted {
    pub fn describe(self) -> &'static str {
        match self {
            Corrupted::BeyondSwitch => "copies with a seq the switch never gave (its snapshot's mirror_seq)",
            Corrupted::OutOfTime => {
                "a first copy, past a gap, later in switch time than the next copy of its direction"
            }
        }
    }

    /// Per reason with copies set aside for it: its description and their wire seqs, listed.
    pub fn by_reason(corrupted: &[(u64, Corrupted)]) -> impl Iterator<Item = (&'static str, String)> + '_ {
        [Corrupted::BeyondSwitch, Corrupted::OutOfTime].into_iter().filter_map(|why| {
            let seqs: Vec<String> =
                corrupted.iter().filter(|c| c.1 == why).map(|c| crate::merge::wire_of(c.0).to_string()).collect();
            (!seqs.is_empty()).then(|| (why.describe(), seqs.join(", ")))
        })
    }
}

/// The copies at the trace's ends whose seq was corrupted, set aside from `gaps`: the seqs
/// between them and the rest are not missing. `check` and `analyze` both count missing
/// copies without them. With the snapshot's seq range, those the switch never gave; without
/// it, a first copy out of time. Returns their unwrapped seqs and why.
pub fn set_aside_at_ends(
    gaps: &mut Gaps,
    records: &[Record],
    flows: &[trace::record::Flow],
    ctx: &CheckContext,
) -> Vec<(u64, Corrupted)> {
    match ctx.snapshot.as_ref().and_then(|s| s.rocescope.as_ref()?.mirror_seq) {
        Some(span) => set_aside_outside(gaps, span).into_iter().map(|u| (u, Corrupted::BeyondSwitch)).collect(),
        // Only past a gap: the scan then finds the next copy of the direction soon.
        None if gaps.missing_after_first() => {
            let first = gaps.first.filter(|&f| first_copy_out_of_time(records, flows, f));
            first.filter(|_| gaps.set_aside_first()).map(|u| (u, Corrupted::OutOfTime)).into_iter().collect()
        }
        None => Vec::new(),
    }
}

/// Whether the copy of unwrapped seq `first`, the trace's first, has a later switch time
/// than the next copy of its direction (source and destination address) after it
/// (review "hiseq": seq 34 corrupted to 0x7fff0022 became the first copy, 65 501 seqs
/// missing before seq 1, and seq 1 a timestamp regression). A copy from before the wrap
/// would be earlier than every copy after the seqs lost since; one placed there by a
/// corrupted seq is later than the copies that came before its real place. Per direction,
/// as Lumina's timestamps are monotonic only per direction.
fn first_copy_out_of_time(records: &[Record], flows: &[trace::record::Flow], first: u64) -> bool {
    let direction = |r: &Record| flows.get(r.flow as usize).map(|f| (f.src_ip(), f.dst_ip()));
    let mut copies = records.iter().filter(|r| r.has(flag::MIRRORED));
    let Some(head) = copies.find(|r| r.seq() == first) else { return false };
    let Some(dir) = direction(head) else { return false };
    copies.find(|r| direction(r) == Some(dir)).is_some_and(|next| steps_back(next.switch_ts_ns, head.switch_ts_ns))
}

/// The copies at the trace's ends that the switch never gave, set aside from `gaps`
/// (review: seq 21 corrupted to 0x7fff0015 became the first copy, 65 514 seqs missing
/// before seq 1): when the snapshot's seq range does not hold the trace's span but does
/// once a lone first or last copy, past a gap, is left out, that copy's seq was corrupted —
/// the seqs between it and the rest are not missing. Returns their unwrapped seqs.
fn set_aside_outside(gaps: &mut Gaps, span: SeqSpan) -> Vec<u64> {
    if gaps.first.is_none() || ends_lost(gaps, span).is_some() {
        return Vec::new();
    }
    for (head, tail) in [(true, false), (false, true), (true, true)] {
        let mut g = gaps.clone();
        let (first, last) = (g.first, g.last);
        if (head && !g.set_aside_first()) || (tail && !g.set_aside_last()) {
            continue;
        }
        if ends_lost(&g, span).is_some() {
            *gaps = g;
            return first.filter(|_| head).into_iter().chain(last.filter(|_| tail)).collect();
        }
    }
    Vec::new()
}

/// The wire seqs of the unwrapped `first..=last`, which may lie below the trace's
/// reference lap (copies lost before the first one).
fn seq_range(first: i128, last: i128) -> SeqRange {
    let wire = |u: i128| ((u - 1).rem_euclid(i128::from(SEQ_MAX)) + 1) as u32;
    SeqRange { first: wire(first), last: wire(last), count: (last - first + 1) as u64 }
}

fn wire_or(s: Option<u64>) -> String {
    s.map_or("-".into(), |s| crate::merge::wire_of(s).to_string())
}

/// Everything besides the records that the verdict needs.
#[derive(Debug, Clone, Default)]
pub struct CheckContext {
    pub source_names: Vec<String>,
    /// The inputs given (run directories or files), each a capture host.
    pub host_names: Vec<String>,
    pub snapshot: Option<SwitchSnapshot>,
    pub roles: Option<PortRoles>,
    pub capture_problems: Vec<String>,
    /// The first of each kind (`merge::ISSUES_KEPT_PER_KIND`), and how many in all.
    pub reconstruction_issues: Vec<serde_json::Value>,
    pub reconstruction_issue_total: u64,
    /// Why the trace holds no mirrored copy (reconstruct.json `no_copies`), when it holds none.
    pub no_copies: Option<String>,
    /// Run directories the reconstruction names (`dirs`) that are gone: their manifests,
    /// switch counters and configuration could not be read.
    pub gone_dirs: Vec<PathBuf>,
}

impl CheckContext {
    /// From a reconstruction's summary and the run directories it names.
    pub fn from_summary(summary: &Summary, switch_counters: Option<&Path>) -> Result<CheckContext, CheckError> {
        let snap_path = match switch_counters {
            Some(p) => Some(p.to_path_buf()),
            None => one_snapshot(&summary.dirs)?,
        };
        let snapshot = snap_path.as_deref().map(SwitchSnapshot::load).transpose()?;
        let config = summary.dirs.iter().find_map(|d| {
            let p = d.join("config.yaml");
            std::fs::read_to_string(p).ok().and_then(|t| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&t).ok())
        });
        let roles = snapshot.as_ref().and_then(|s| PortRoles::find(s, config.as_ref()));
        Ok(CheckContext {
            source_names: summary.sources.iter().map(|s| s.name.clone()).collect(),
            host_names: summary.inputs.iter().map(|p| p.display().to_string()).collect(),
            snapshot,
            roles,
            capture_problems: capture_problems(&summary.dirs),
            reconstruction_issues: summary.issues.clone(),
            reconstruction_issue_total: summary.issues_total(),
            no_copies: summary.no_copies.clone(),
            gone_dirs: summary.dirs.iter().filter(|d| !d.is_dir()).cloned().collect(),
        })
    }
}

/// The switch snapshot among the input directories. Runs merged from several directories
/// (dump hosts of one run) may each hold a copy; copies that differ belong to different
/// runs or moments, and which one the conditions should use is the user's to say.
fn one_snapshot(dirs: &[PathBuf]) -> Result<Option<PathBuf>, CheckError> {
    let found: Vec<PathBuf> = dirs.iter().map(|d| d.join(SNAPSHOT_FILE)).filter(|p| p.exists()).collect();
    let Some(first) = found.first() else { return Ok(None) };
    let read =
        |p: &Path| std::fs::read(p).map_err(|e| CheckError::Snapshot { path: p.to_path_buf(), what: e.to_string() });
    let text = read(first)?;
    for other in &found[1..] {
        if read(other)? != text {
            let what =
                format!("differs from {}: give the one to check against with --switch-counters", other.display());
            return Err(CheckError::Snapshot { path: first.clone(), what });
        }
    }
    Ok(Some(first.clone()))
}

/// Drops and failures dataplane manifests report.
fn capture_problems(dirs: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs.iter().filter(|d| d.join(trace::manifest::FILE_NAME).exists()) {
        let Ok(m) = trace::manifest::Manifest::load(dir) else {
            out.push(format!("{}: unreadable manifest", dir.display()));
            continue;
        };
        let name = dir.display();
        if m.status != trace::manifest::RunStatus::Complete {
            out.push(format!("{name}: capture did not finish (status running)"));
        }
        if let Some(why @ ("write_error" | "lcore_failed")) = m.stop_reason.as_deref() {
            out.push(format!("{name}: capture stopped on a failure ({why})"));
        }
        for (what, n) in
            [("NIC imissed", m.port.imissed), ("NIC rx_nombuf", m.port.rx_nombuf), ("NIC ierrors", m.port.ierrors)]
        {
            if n > 0 {
                out.push(format!("{name}: {what} {n}"));
            }
        }
        if let Some(d) = &m.dispatcher {
            let drops = d.ring_drops.iter().fold(0u64, |a, &n| a.saturating_add(n));
            if drops > 0 {
                out.push(format!("{name}: dispatcher ring drops {drops}"));
            }
            if d.over_limit > 0 {
                out.push(format!("{name}: dispatcher over limit {}", d.over_limit));
            }
        }
        for c in &m.cores {
            for (what, n) in [
                ("NIC queue errors", c.nic_queue_errors.unwrap_or(0)),
                ("buffer drops", c.buffer_drops),
                ("write failures", c.write_failed),
                ("over limit", c.over_limit),
            ] {
                if n > 0 {
                    out.push(format!("{name} core {}: {what} {n}", c.core));
                }
            }
        }
    }
    out
}

/// Whether switch time `ts` lies before `previous`. The switch clock has 48 bits and
/// wraps (every ~78 hours): a step back by more than half its range is the wrap, forward.
fn steps_back(ts: u64, previous: u64) -> bool {
    const HALF: u64 = 1 << 47;
    ts < previous && previous - ts < HALF
}

/// Checks a reconstruction directory.
pub fn check_dir(dir: &Path, switch_counters: Option<&Path>) -> Result<CheckReport, CheckError> {
    let rec = crate::reconstruct::Reconstruction::load(dir)?;
    let ctx = CheckContext::from_summary(&rec.summary, switch_counters)?;
    Ok(check_view(&rec.view(), &rec.summary, &ctx))
}

/// The pass itself, for a mapped or in-memory record view.
pub fn check_view(view: &RecordView<'_>, summary: &Summary, ctx: &CheckContext) -> CheckReport {
    let hosts: Vec<usize> = summary.sources.iter().map(|s| s.host).collect();
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get()).min(view.records.len() / MIN_PART + 1);
    check_records(view.records, view.flows, &hosts, parts).finish(view.records, view.flows, ctx)
}

/// Fewer records than this are not worth a thread.
const MIN_PART: usize = 1 << 20;

/// The pass over `records`, in `parts` parts on as many threads once the load-balancing
/// pattern is learned.
pub fn check_records(records: &[Record], flows: &[trace::record::Flow], hosts: &[usize], parts: usize) -> Checker {
    let mut checker = Checker::new(hosts).per_direction(flows);
    let mut i = 0;
    while i < records.len() && checker.learning() {
        checker.push(&records[i]);
        i += 1;
    }
    let rest = &records[i..];
    if parts <= 1 || rest.is_empty() {
        rest.iter().for_each(|r| checker.push(r));
        return checker;
    }
    let done: Vec<Checker> = std::thread::scope(|s| {
        let threads: Vec<_> = rest
            .chunks(rest.len().div_ceil(parts))
            .map(|part| {
                let mut c = checker.fork();
                s.spawn(move || {
                    part.iter().for_each(|r| c.push(r));
                    c
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    done.into_iter().fold(checker, Checker::join)
}

impl CheckReport {
    /// The terminal rendering.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let verdict = if self.complete { "COMPLETE" } else { "INCOMPLETE" };
        let _ = writeln!(out, "integrity: {verdict} ({} packets, {} mirrored copies)", self.packets, self.mirrored);
        for c in &self.conditions {
            let mark = match c.holds {
                Some(true) => "ok  ",
                Some(false) => "FAIL",
                None => "n/a ",
            };
            let _ = writeln!(out, "  [{mark}] {}: {}", c.name, c.evidence);
        }
        for m in self.missing.iter().take(20) {
            let at = if m.expected_at.is_empty() {
                String::new()
            } else {
                format!(" (should be at {})", m.expected_at.join(", "))
            };
            let _ = writeln!(out, "    missing seq {}..{} ({}){at}", m.range.first, m.range.last, m.range.count);
        }
        more(&mut out, self.missing_ranges as usize, 20, "ranges", self.missing.len());
        if let Some(b) = &self.balance {
            let pattern: Vec<String> = b.pattern.iter().map(|s| s.map_or("-".into(), |s| s.to_string())).collect();
            let absent = if b.pattern.contains(&None) {
                " (-: no input holds these seqs: a dump host or core left out)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  load balancing: period {} by {}, pattern [{}]{absent}",
                b.period,
                b.level,
                pattern.join(", ")
            );
        }
        for t in self.timestamp_regressions.iter().take(10) {
            let _ = writeln!(
                out,
                "    {} -> {}: seq {} at {} ns after seq {} at {} ns",
                t.src, t.dst, t.seq, t.switch_ts_ns, t.previous_seq, t.previous_ts_ns
            );
        }
        let regressions = self.timestamp_regressions.len();
        more(&mut out, regressions, 10, "timestamp regressions", regressions);
        for i in self.reconstruction_issues.iter().take(10) {
            let _ = writeln!(out, "    {i}");
        }
        let total = self.reconstruction_issue_total.max(self.reconstruction_issues.len() as u64);
        if total > 10 {
            use std::fmt::Write as _;
            let kept = crate::merge::ISSUES_KEPT_PER_KIND;
            let _ = writeln!(
                out,
                "    ... {} more reconstruction issues (reconstruct.json keeps the first {kept} of each kind)",
                total - 10
            );
        }
        out
    }
}

/// Says how many of `len` items the summary left out after showing `shown`, and how many
/// the JSON report lists (`listed`).
fn more(out: &mut String, len: usize, shown: usize, what: &str, listed: usize) {
    if len > shown {
        use std::fmt::Write as _;
        let json = if listed >= len { "them all".to_string() } else { format!("the first {listed}") };
        let _ = writeln!(out, "    ... {} more {what} (`check --json` lists {json})", len - shown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(yaml: &str) -> CheckContext {
        let snap: SwitchSnapshot = serde_yaml_ng::from_str(yaml).unwrap();
        let roles = PortRoles::find(&snap, None);
        CheckContext { snapshot: Some(snap), roles, ..CheckContext::default() }
    }

    fn holds(ctx: &CheckContext, mirrored: u64) -> [Option<bool>; 2] {
        let c = switch_conditions(ctx, mirrored);
        [c[0].holds, c[1].holds]
    }

    #[test]
    fn lumina_counters_past_their_wrap_agree_modulo_0x7fffffff() {
        // 0x7fffffff + 10 copies: the mirror port's register went round once (10), and
        // the two host ports' sum is congruent.
        let m = u64::from(SEQ_MAX);
        let wrapped = format!("counter:\n  ingress: {{1: {m}, 2: 10}}\n  egress: {{3: 10}}\n");
        let ctx = context(&wrapped);
        assert_eq!(holds(&ctx, m + 10), [Some(true), Some(true)]);
        assert!(switch_conditions(&ctx, m + 10)[0].evidence.contains("modulo 0x7fffffff"));
        assert_eq!(holds(&ctx, m + 11), [Some(false), Some(false)], "one copy off is still seen");
        // The emulator's counters do not wrap: exact.
        let exact = format!("{wrapped}rocescope:\n  mirrors: [{{switch_port: 3}}]\n  requester: {{switch_port: 1}}\n  responder: {{switch_port: 2}}\n");
        assert_eq!(holds(&context(&exact), m + 10), [Some(false), Some(true)], "10 sent; M + 10 received");
    }

    #[test]
    fn counter_values_near_the_top_of_u64_do_not_wrap_into_agreement() {
        let ctx = context("counter:\n  ingress: {1: 18446744073709551615, 2: 101}\n  egress: {3: 100}\nrocescope:\n  mirrors: [{switch_port: 3}]\n  requester: {switch_port: 1}\n  responder: {switch_port: 2}\n");
        assert_eq!(holds(&ctx, 100), [Some(true), Some(false)]);
    }

    #[test]
    fn a_port_named_for_both_mirror_hosts_counts_once() {
        let snap: SwitchSnapshot =
            serde_yaml_ng::from_str("counter:\n  ingress: {1: 5, 2: 5}\n  egress: {3: 10}\n").unwrap();
        let config: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            "requester: {nic: {switch-port: 1}}\nresponder: {nic: {switch-port: 2}}\nrequester-mirror: {nic: {switch-port: 3}}\nresponder-mirror: {nic: {switch-port: 3}}\n",
        )
        .unwrap();
        let roles = PortRoles::find(&snap, Some(&config)).unwrap();
        assert_eq!((roles.host_ports.as_slice(), roles.mirror_ports.as_slice()), (&[1, 2][..], &[3][..]));
        let ctx = CheckContext { snapshot: Some(snap), roles: Some(roles), ..CheckContext::default() };
        assert_eq!(holds(&ctx, 10), [Some(true), Some(true)]);
    }

    /// Review: counters naming no mirror port (egress only on a host port, no ingress),
    /// or a `rocescope:` section naming only the requester, failed condition 2 as "switch
    /// sent 0 copies on mirror ports []". Ports not known are not evaluable; a partial
    /// section is read as if absent (the configuration and counters tell the ports).
    #[test]
    fn counters_that_name_no_mirror_port_leave_condition_2_unevaluated() {
        let config: serde_yaml_ng::Value =
            serde_yaml_ng::from_str("requester: {nic: {switch-port: 1}}\nresponder: {nic: {switch-port: 2}}\n")
                .unwrap();
        let with = |yaml: &str| {
            let snap: SwitchSnapshot = serde_yaml_ng::from_str(yaml).unwrap();
            let roles = PortRoles::find(&snap, Some(&config));
            CheckContext { snapshot: Some(snap), roles, ..CheckContext::default() }
        };
        assert_eq!(holds(&with("counter:\n  egress: {1: 2}\n"), 10), [None, None]);
        let partial = "counter:\n  egress: {1: 2, 2: 8, 3: 10}\n  ingress: {1: 8, 2: 2, 3: 0}\nrocescope:\n  requester: {switch_port: 1}\n";
        assert_eq!(holds(&with(partial), 10), [Some(true), Some(true)]);
    }

    /// A Lumina dump without `counter.ingress` or `counter.egress` cannot decide the
    /// condition that needs it (read as zeros it failed it); without ingress and with no
    /// configuration, which ports are mirror ports cannot be guessed either.
    #[test]
    fn a_counter_section_the_dump_lacks_leaves_its_condition_unevaluated() {
        let config: serde_yaml_ng::Value =
            serde_yaml_ng::from_str("requester: {nic: {switch-port: 1}}\nresponder: {nic: {switch-port: 2}}\n")
                .unwrap();
        let with = |yaml: &str, config: Option<&serde_yaml_ng::Value>| {
            let snap: SwitchSnapshot = serde_yaml_ng::from_str(yaml).unwrap();
            let roles = PortRoles::find(&snap, config);
            CheckContext { snapshot: Some(snap), roles, ..CheckContext::default() }
        };
        let (no_ingress, no_egress) =
            ("counter:\n  egress: {1: 0, 2: 0, 3: 10}\n", "counter:\n  ingress: {1: 5, 2: 5}\n");
        assert_eq!(holds(&with(no_ingress, Some(&config)), 10), [Some(true), None]);
        assert_eq!(holds(&with(no_egress, Some(&config)), 10), [None, Some(true)]);
        assert_eq!(holds(&with(no_egress, None), 10), [None, Some(true)]);
        let guessless = with(no_ingress, None);
        assert!(guessless.roles.is_none());
        assert_eq!(holds(&guessless, 10), [None, None]);
        for c in switch_conditions(&with(no_egress, None), 10).iter().chain(&switch_conditions(&guessless, 10)) {
            assert!(c.holds.is_some() || c.evidence.contains("no counter."), "{}", c.evidence);
        }
        // Nor are copies lost at the ends counted from counters that are not there.
        assert_eq!(unplaced(&Gaps::default(), &with(no_egress, Some(&config))), 0);
        assert_eq!(unplaced(&Gaps::default(), &guessless), 0);
    }

    #[test]
    fn differing_snapshots_in_the_input_directories_are_refused() {
        let dir = std::env::temp_dir().join(format!("rocescope-snapshots-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        for (d, n) in [(&a, 1), (&b, 1)] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join(SNAPSHOT_FILE), format!("counter:\n  egress: {{3: {n}}}\n")).unwrap();
        }
        assert_eq!(one_snapshot(&[a.clone(), b.clone()]).unwrap(), Some(a.join(SNAPSHOT_FILE)), "identical copies");
        std::fs::write(b.join(SNAPSHOT_FILE), "counter:\n  egress: {3: 2}\n").unwrap();
        let e = one_snapshot(&[a.clone(), b.clone()]).unwrap_err().to_string();
        assert!(e.contains("differs from") && e.contains("--switch-counters"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The reconstruction's seq-outlier, the trace's last copy with a corrupted seq (review
    /// F10), breaks no pattern: check sets it aside, while learning and verifying alike.
    #[test]
    fn a_seq_outlier_breaks_no_balance_pattern() {
        let outlier = (1 << 30) + 7; // source 1 by the seq, but copied to 0
        for copies in [1_000, LEARN as u64 + 1_000] {
            let mut b = BalanceInference::new(&[0, 1]);
            (1..=copies).for_each(|seq| b.observe(seq, (seq % 2) as u16));
            b.observe(outlier, 0);
            let period = |b: &mut BalanceInference, aside| b.result(aside).map(|p| p.period);
            assert_eq!(period(&mut b, Some(outlier)), Some(2), "{copies} copies");
            if copies > LEARN as u64 {
                assert_eq!(period(&mut b, None), None, "not set aside, it breaks the pattern");
            }
        }
    }

    /// Review F4: with a host's capture left out, the pattern's period is the one under
    /// which its residues hold none of the copies, not a shorter one the others fill.
    #[test]
    fn a_left_out_host_gets_its_residues_not_a_shorter_period() {
        // WRR 1:2:1 as sources 0, 1, 2 at residues [1, 1, 0, 2] of 4; source 1 left out,
        // the others renumbered 0 and 1.
        let mut b = BalanceInference::new(&[0, 1]);
        for seq in (1..=4_000u64).filter(|s| s % 4 >= 2) {
            b.observe(seq, (seq % 4 - 2) as u16);
        }
        let p = b.result(None).expect("inferable");
        assert_eq!((p.period, p.pattern), (4, vec![None, None, Some(0), Some(1)]));
        // Losses at random are no absent host: an every-other pattern with a few gaps.
        let mut b = BalanceInference::new(&[0, 1]);
        for seq in (1..=4_000u64).filter(|s| s % 97 != 0 && s % 89 != 0) {
            b.observe(seq, (seq % 2) as u16);
        }
        let p = b.result(None).expect("inferable");
        assert_eq!((p.period, p.pattern), (2, vec![Some(0), Some(1)]));
    }

    #[test]
    fn a_pattern_by_capture_host_names_the_input_path() {
        let b = Balance { period: 2, pattern: vec![Some(0), Some(1)], level: "host".into() };
        let hosts = ["captures/a".to_string(), "captures/b".to_string()];
        assert_eq!(expected_at(3, 3, Some(&b), &[], &hosts), ["host captures/b"]);
        assert_eq!(expected_at(3, 4, Some(&b), &[], &hosts), ["host captures/a", "host captures/b"]);
        assert_eq!(expected_at(3, 3, Some(&b), &[], &[]), ["host 1"], "without names, the input's index");
    }

    #[test]
    fn a_flow_id_past_the_flow_table_has_no_direction() {
        let mut c = Checker::new(&[0]).per_direction(&[trace::record::Flow::default()]);
        let mut r = Record::default().with_seq(1);
        (r.flow, r.flags) = (u32::MAX - 1, flag::MIRRORED);
        c.push(&r);
        assert_eq!(c.mirrored, 1);
        assert!(c.last_ts.is_empty(), "no per-direction state for an unknown flow");
    }

    /// A trace past the learning phase, with what a check looks for: a round-robin
    /// pattern that a few copies break, missing, duplicated and late seqs, and timestamps
    /// that step back within a flow.
    fn trace(seed: u64, len: usize) -> Vec<Record> {
        let mut x = seed | 1;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut seq = 0u64;
        (0..len)
            .map(|i| {
                seq = match rand() % 1000 {
                    0 => seq + 1 + rand() % 5,
                    1 => seq,
                    2 => seq.saturating_sub(rand() % 40).max(1),
                    _ => seq + 1,
                };
                let flow = (rand() % 9) as u32;
                let step_back = rand() % 2000 == 0;
                let mut r = Record::default().with_seq(seq);
                r.switch_ts_ns = if step_back { i as u64 / 2 } else { 10 * i as u64 };
                r.flow = if flow == 8 { u32::MAX } else { flow };
                r.source = if i > LEARN && rand() % 5_000 == 0 { 2 } else { (seq % 3 % 2) as u16 };
                if rand() % 100 != 0 {
                    r.flags |= flag::MIRRORED;
                }
                r
            })
            .collect()
    }

    /// One flow per direction for the flow ids `trace` uses.
    fn one_way_each() -> Vec<trace::record::Flow> {
        let v4 = |a: u8| std::net::Ipv4Addr::new(10, 0, 0, a).to_ipv6_mapped().octets();
        (0..9)
            .map(|i| trace::record::Flow { src: v4(i), dst: v4(100 + i), ip_version: 4, ..Default::default() })
            .collect()
    }

    fn report(records: &[Record], parts: usize) -> String {
        let ctx = CheckContext {
            source_names: vec!["a".into(), "b".into(), "c".into()],
            host_names: Vec::new(),
            snapshot: None,
            roles: None,
            capture_problems: Vec::new(),
            reconstruction_issues: Vec::new(),
            reconstruction_issue_total: 0,
            no_copies: None,
            gone_dirs: Vec::new(),
        };
        let flows = one_way_each();
        let report = check_records(records, &flows, &[0, 1, 1], parts).finish(records, &flows, &ctx);
        serde_json::to_string(&report).unwrap()
    }

    /// Without the switch's seq range, a first copy past a gap is set aside as corrupted
    /// only when the next copy of its own direction is earlier in switch time.
    #[test]
    fn a_first_copy_is_set_aside_only_when_its_direction_says_it_came_later() {
        let flows = one_way_each();
        let copy = |seq: u64, ts: u64, flow: u32| {
            let mut r = Record::default().with_seq(seq);
            (r.switch_ts_ns, r.flow, r.flags) = (ts, flow, flag::MIRRORED);
            r
        };
        let check = |first_ts: u64, other_flow_first: bool| {
            let mut records = vec![copy(100, first_ts, 0)];
            if other_flow_first {
                records.push(copy(200, 1, 1));
            }
            records.extend((201..=210).map(|s| copy(s, 10 * s, 0)));
            let ctx = CheckContext::default();
            let r = check_records(&records, &flows, &[0], 1).finish(&records, &flows, &ctx);
            (r.missing_total, r.timestamp_regressions.len())
        };
        assert_eq!(check(5, false), (100, 0), "earlier: a real gap");
        assert_eq!(check(5_000, false), (0, 0), "later than the copy after: its seq was corrupted");
        assert_eq!(check(5_000, true), (0, 0), "another direction's copy between them changes nothing");
        // An earlier copy of another direction is no evidence: directions are not ordered.
        let mut records = vec![copy(100, 5_000, 0), copy(200, 1, 1)];
        records.extend((201..=210).map(|s| copy(s, 10_000 + s, 0)));
        let r = check_records(&records, &flows, &[0], 1).finish(&records, &flows, &CheckContext::default());
        assert_eq!(r.missing_total, 99);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]
        /// A pass cut into parts on threads reports exactly what one pass reports.
        #[test]
        fn a_pass_in_parts_reports_what_one_pass_does(seed in 0u64.., extra in 0usize..30_000, parts in 2usize..6) {
            let records = trace(seed, LEARN + 1000 + extra);
            let whole = report(&records, 1);
            proptest::prop_assert_eq!(report(&records, parts), whole);
        }
    }

    /// A timestamp that steps back right at a cut is found by the join, in trace order.
    #[test]
    fn a_join_compares_each_flow_across_the_cut() {
        let copy = |seq, ts, flow| {
            let mut r = Record::default().with_seq(seq);
            (r.switch_ts_ns, r.flow, r.flags) = (ts, flow, flag::MIRRORED);
            r
        };
        let mut early = Checker::new(&[0]);
        [copy(1, 100, 0), copy(2, 200, 1), copy(3, 300, 0)].iter().for_each(|r| early.push(r));
        let mut late = early.fork();
        [copy(4, 400, 2), copy(5, 150, 1), copy(6, 250, 0), copy(7, 140, 1)].iter().for_each(|r| late.push(r));
        let joined = early.join(late);
        let found: Vec<(u64, u64, u64)> =
            joined.regressions.iter().map(|g| (g.at, g.record.seq(), g.previous_seq)).collect();
        assert_eq!(found, [(4, 5, 2), (5, 6, 3), (6, 7, 5)]);
        assert_eq!(joined.last_ts[1], Some((140, 7)));
        assert_eq!((joined.packets, joined.mirrored, joined.gaps.total), (7, 7, 0));
    }

    /// Two QPs one way share a direction; the way back is another.
    #[test]
    fn timestamps_are_compared_per_direction_not_per_flow() {
        use trace::record::Flow;
        let v4 = |a: u8| std::net::Ipv4Addr::new(10, 0, 0, a).to_ipv6_mapped().octets();
        let flow =
            |src, dst, port| Flow { src: v4(src), dst: v4(dst), src_port: port, ip_version: 4, ..Flow::default() };
        let flows = [flow(1, 2, 100), flow(1, 2, 200), flow(2, 1, 100)];
        let copy = |seq, ts, flow| {
            let mut r = Record::default().with_seq(seq);
            (r.switch_ts_ns, r.flow, r.flags) = (ts, flow, flag::MIRRORED);
            r
        };
        let records = [copy(1, 100, 0), copy(2, 300, 1), copy(3, 200, 0), copy(4, 150, 2), copy(5, 400, 1)];
        let found = |flows: &[Flow]| -> Vec<u64> {
            check_records(&records, flows, &[0], 1).regressions.iter().map(|g| g.record.seq()).collect()
        };
        assert_eq!(found(&flows), [3], "seq 3 steps back from seq 2, the other QP one way");
        let apart = [flow(1, 2, 100), flow(3, 4, 100), flow(2, 1, 100)];
        assert_eq!(found(&apart), Vec::<u64>::new(), "each QP its own way: nothing steps back");
        assert_eq!(found(&[]), Vec::<u64>::new(), "no flow table: no directions (a damaged record file)");
    }

    /// A gap across the cut between parts 1 and 2, a late copy opening part 3 that fills a
    /// gap of part 2, a direction seen in parts 1 and 3 only whose clock steps back between
    /// them, and a pattern broken in the last part only: three parts find what one pass does.
    #[test]
    fn what_spans_a_cut_between_parts_is_found_as_in_one_pass() {
        let copy = |seq: u64, flow: u32, ts: u64, source: u16| {
            let mut r = Record::default().with_seq(seq);
            (r.flags, r.flow, r.switch_ts_ns, r.source) = (flag::MIRRORED, flow, ts, source);
            r
        };
        let normal = |seq: u64| copy(seq, (seq % 4) as u32, seq * 10, (seq % 3) as u16);
        let mut records: Vec<Record> = (1..=LEARN as u64).map(normal).collect();
        let (mut seq, mut rest) = (LEARN as u64, Vec::new());
        let (mut late, mut regression) = (0, 0);
        for i in 0..3000 {
            seq += u64::from(i != 2000); // the late copy takes no seq of its own
            match i {
                1000 => seq += 4, // seqs missing across the cut
                1500 => {
                    late = seq; // left out here, comes first in part 3
                    seq += 1;
                }
                _ => {}
            }
            rest.push(match i {
                500 => copy(seq, 5, u64::MAX >> 20, (seq % 3) as u16),
                2000 => copy(late, (late % 4) as u32, late * 10, (late % 3) as u16),
                2500 => {
                    regression = seq;
                    copy(seq, 5, seq * 10, (seq % 3) as u16)
                }
                // From the other capture host (sources 1 and 2 are one host's).
                2800 => copy(seq, (seq % 4) as u32, seq * 10, u16::from(seq % 3 == 0)),
                _ => normal(seq),
            });
        }
        let gap_first = records.len() as u64 + 1001;
        records.extend(rest);
        let flows = one_way_each();
        let ctx = CheckContext { source_names: vec!["a".into(), "b".into(), "c".into()], ..CheckContext::default() };
        let run = |parts| check_records(&records, &flows, &[0, 1, 1], parts).finish(&records, &flows, &ctx);
        let (one, three) = (run(1), run(3));
        assert_eq!(serde_json::to_string(&one).unwrap(), serde_json::to_string(&three).unwrap());
        let missing: Vec<(u32, u64)> = three.missing.iter().map(|m| (m.range.first, m.range.count)).collect();
        assert_eq!(missing, [(gap_first as u32, 4)], "the late copy filled its gap");
        let stepped_back: Vec<u32> = three.timestamp_regressions.iter().map(|g| g.seq).collect();
        assert!(stepped_back.contains(&(regression as u32)), "{stepped_back:?}");
        assert!(stepped_back.contains(&(late as u32)), "the late copy is older than its flow's last");
        assert!(three.balance.is_none(), "broken in the last part");
    }

    #[test]
    fn the_generated_trace_has_what_a_join_must_carry_over() {
        let records = trace(7, LEARN + 20_000);
        let c = check_records(&records, &one_way_each(), &[0, 1, 1], 1);
        assert!(c.gaps.total > 0, "no gaps");
        assert!(!c.regressions.is_empty(), "no regressions");
        assert!(c.balance.any_broken(), "no pattern broken");
    }
}
