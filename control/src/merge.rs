//! The streaming k-way merge of sources by mirror sequence number (Lumina §3.5: "the
//! orchestrator simply sorts all the packets based on their mirror sequence numbers") —
//! without the sort: each source is already in seq order but for a little local disorder
//! (reordering inside a dump host), so a bounded window per source suffices.
//!
//! Memory: at most `window` pending packets per source (each a few dozen bytes pointing
//! into the source's memory map). A packet further out of order than the window is still
//! emitted, late, and reported — never dropped. The window is filled only at a hole in
//! the seqs ([`Merger::next_source`]): the next seq in line leaves at once.
//!
//! Cost: a source's pending packets are a queue of those that arrived in order plus a heap
//! of the few that did not, so an in-order source costs O(1) per packet and a disordered
//! one O(log window); the sources' heads meet in a tournament of one leaf per source.
//!
//! Sequence numbers run 1..=0x7fffffff and wrap to 1; the merge orders by an *unwrapped*
//! seq (each source follows its own laps; all sources start from a common reference).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use crate::tournament::{Tournament, EMPTY};

use wire::frame::{peek_mirror, ClassifyConfig};
use wire::mirror::{CopyForm, Event, SEQ_MAX};

use crate::input::{Damage, OpenSource, Packets, RawPacket};

/// Merge order: unwrapped seq, then (for frames without a seq, which follow the copy
/// before them in their file) arrival order within the source, then source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub seq: u64,
    pub sub: u32,
    pub source: u16,
}

impl Key {
    /// The key as one integer in the same order (the tournament's keys).
    fn packed(self) -> u128 {
        u128::from(self.seq) << 64 | u128::from(self.sub) << 16 | u128::from(self.source)
    }
}

/// One packet ready to be emitted, with what its mirror metadata says. The merge reads a
/// frame only as far as its metadata ([`peek_mirror`]); classifying the whole frame is left
/// to the consumer, on the other core, so the merge — one thread for every source — does
/// as little per packet as ordering needs, and its reorder window holds small entries.
#[derive(Debug, Clone, Copy)]
pub struct Merged<'a> {
    pub key: Key,
    pub raw: Captured<'a>,
    /// A mirrored copy: seq, switch timestamp and event are the switch's.
    pub mirrored: bool,
    /// The form the frame is still in, to restore before use (`None`: restored already,
    /// or not a copy).
    pub restore: Option<CopyForm>,
    /// A copy whose seq lay below the trace's start (`before-start`), placed as its wire
    /// seq says.
    pub before_start: bool,
    pub switch_ts_ns: u64,
    pub event: Event,
}

/// What a [`Merged`] keeps of its [`RawPacket`]: the file's timestamp is its
/// `switch_ts_ns` when it is not a copy, and the annotation has been read. Each byte less
/// is a byte less per packet in the reorder window, which outgrows the cache.
#[derive(Debug, Clone, Copy)]
pub struct Captured<'a> {
    /// Byte offset of the packet's record/block in its file.
    pub offset: u64,
    pub orig_len: u32,
    pub data: &'a [u8],
}

impl Merged<'_> {
    /// The unwrapped seq, 0 when not a mirrored copy.
    pub fn seq(&self) -> u64 {
        if self.mirrored {
            self.key.seq
        } else {
            0
        }
    }
}

/// A packet that arrived out of order, ordered by key and then file position (so equal
/// keys, i.e. duplicate seqs, leave in the order they were read).
struct Straggler<'a>(Merged<'a>);

impl Straggler<'_> {
    fn order(&self) -> (Key, u64) {
        (self.0.key, self.0.raw.offset)
    }
}
impl PartialEq for Straggler<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.order() == o.order()
    }
}
impl Eq for Straggler<'_> {}
impl PartialOrd for Straggler<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Straggler<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.order().cmp(&o.order())
    }
}

/// A source's packets read but not yet emitted.
#[derive(Default)]
struct Pending<'a> {
    /// Packets that arrived in key order, each above the one before.
    in_order: VecDeque<Merged<'a>>,
    /// Packets that arrived below `in_order`'s last.
    stragglers: BinaryHeap<Reverse<Straggler<'a>>>,
}

impl<'a> Pending<'a> {
    fn len(&self) -> usize {
        self.in_order.len() + self.stragglers.len()
    }

    fn push(&mut self, m: Merged<'a>) {
        match self.in_order.back() {
            Some(last) if m.key <= last.key => self.stragglers.push(Reverse(Straggler(m))),
            _ => self.in_order.push_back(m),
        }
    }

    /// The lowest key.
    fn head(&self) -> Option<Key> {
        match (self.in_order.front(), self.stragglers.peek()) {
            (Some(a), Some(Reverse(b))) => Some(a.key.min(b.0.key)),
            (a, b) => a.map(|m| m.key).or(b.map(|Reverse(s)| s.0.key)),
        }
    }

    /// The lowest key; equal keys in the order they were read (file offset), wherever
    /// they wait: a straggler can have been read before the in-order packet it ties with
    /// (the queue had emptied meanwhile).
    fn pop(&mut self) -> Option<Merged<'a>> {
        let straggler_first = match (self.in_order.front(), self.stragglers.peek()) {
            (Some(a), Some(Reverse(b))) => b.order() < (a.key, a.raw.offset),
            (None, _) => true,
            (Some(_), None) => false,
        };
        if straggler_first {
            self.stragglers.pop().map(|Reverse(s)| s.0)
        } else {
            self.in_order.pop_front()
        }
    }
}

impl SourceState<'_> {
    /// The last copy read lies below one read before it (a frame read next would be keyed
    /// by it, below packets already pending).
    fn behind(&self) -> bool {
        let back = self.pending.in_order.back().map(|m| m.key.seq);
        self.last.zip(back).is_some_and(|((seq, _), back)| seq < back)
    }
}

struct SourceState<'a> {
    packets: Packets<'a>,
    /// What the source's copies look like (its copies' form, [`CopyForm::classify_config`]).
    peek: Peek,
    pending: Pending<'a>,
    /// Last (unwrapped, wire) seq read from this source.
    last: Option<(u64, u32)>,
    sub: u32,
    done: bool,
    stats: SourceStats,
}

/// Per-source tallies of what the merge read (the per-source part of `reconstruct.json`).
/// `other` and `malformed` are the consumer's to count: only it classifies frames.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SourceStats {
    pub packets: u64,
    pub mirrored: u64,
    /// Frames that are not mirrored copies and are well formed.
    pub other: u64,
    /// Frames that are not mirrored copies and failed to parse.
    pub malformed: u64,
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// For the progress bar only.
    #[serde(skip)]
    pub bytes_read: u64,
}

/// Issues of one kind kept with their locations; all are counted. The same dump given
/// twice makes a duplicate per packet: kept whole, a million of them took 2.8 GB.
pub const ISSUES_KEPT_PER_KIND: u64 = 10_000;

/// Problems met while merging, each located.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MergeIssue {
    /// A source could not be read to its end (truncated, bad block, bad record).
    Damaged(Damage),
    /// Two copies with the same seq; the second is left out of the trace.
    /// `kept` is `None` when the first copy left the window long before (the merge keeps
    /// no location of every seq).
    DuplicateSeq { seq: u32, kept: Option<Location>, dropped: Location },
    /// A copy further out of order in its file than the window: emitted late, out of order.
    Late { seq: u32, at: Location, after_seq: u32 },
    /// A seq further below the trace's first copy than [`LAP_MARGIN`]: a corrupted seq,
    /// placed as its wire seq says.
    BeforeStart { seq: u32, at: Location },
    /// The trace's last copy, with a corrupted seq: more than [`LAP_MARGIN`] seqs past the
    /// copy before it (a real jump would have copies after it), or one bit from a seq
    /// missing before it ([`crate::reconstruct::Gaps::set_aside_outlier`]). It stays in the
    /// trace, last, and the seqs it jumped over are not counted missing.
    SeqOutlier { seq: u32, at: Location, after_seq: u32 },
}

impl MergeIssue {
    /// Its `kind` in reconstruct.json.
    pub fn kind(&self) -> &'static str {
        match self {
            MergeIssue::Damaged(_) => "damaged",
            MergeIssue::DuplicateSeq { .. } => "duplicate-seq",
            MergeIssue::Late { .. } => "late",
            MergeIssue::BeforeStart { .. } => "before-start",
            MergeIssue::SeqOutlier { .. } => "seq-outlier",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    pub source: String,
    pub offset: u64,
}

pub struct Merger<'a> {
    sources: &'a [OpenSource],
    states: Vec<SourceState<'a>>,
    /// Each source's lowest pending key (empty for a source with nothing pending).
    heads: Tournament,
    window: usize,
    cfg: ClassifyConfig,
    reference: Option<(u64, u32)>,
    /// From the reference: the lowest unwrapped seq a copy may take (lower is a corrupted
    /// seq), and what the first lap counted adds to a wire seq (0 or 0x7fffffff).
    earliest: u64,
    first_lap: u64,
    /// Unwrapped seq of the last copy emitted in order.
    last_emitted: Option<u64>,
    /// Where the copies of recent seqs came from, to name the copy kept when a seq comes
    /// again.
    emitted: Emitted,
    /// See [`Merger::next_source`]; off, every window is full before each packet leaves.
    eager: bool,
    /// The seqs below the last emitted that no copy has had yet.
    holes: Holes,
    /// The last copy emitted, when seqs are missing between it and the one before, as the
    /// `seq-outlier` it may be, and whether its seq was also below the start.
    outlier: Option<(MergeIssue, bool)>,
    pub issues: Issues,
}

impl<'a> Merger<'a> {
    /// `window`: packets held per source (at least 1).
    pub fn new(sources: &'a [OpenSource], cfg: ClassifyConfig, window: usize) -> Self {
        let mut issues = Issues::default();
        for d in sources.iter().flat_map(|s| s.block_damage()) {
            issues.add(MergeIssue::Damaged(d));
        }
        let states = sources
            .iter()
            .map(|s| SourceState {
                packets: s.packets(),
                peek: Peek::of(s, &cfg),
                pending: Pending::default(),
                last: None,
                sub: 0,
                done: false,
                stats: SourceStats::default(),
            })
            .collect();
        let mut m = Merger {
            sources,
            states,
            heads: Tournament::new(sources.len()),
            window: window.max(1),
            cfg,
            reference: None,
            earliest: 1,
            first_lap: 0,
            last_emitted: None,
            emitted: Emitted::new(window, sources.len()),
            eager: true,
            holes: Holes::new(HOLES_KEPT),
            outlier: None,
            issues,
        };
        m.reference = m.find_reference();
        if let Some((u, w)) = m.reference {
            (m.earliest, m.first_lap) = (u.saturating_sub(u64::from(LAP_MARGIN)).max(1), u - u64::from(w));
        }
        for i in 0..m.states.len() {
            m.refill(i);
        }
        m
    }

    /// Reads every source a full window ahead before each packet leaves: a plain windowed
    /// merge, the same output as the default one (which tests compare it with).
    pub fn filling_windows(mut self) -> Self {
        self.eager = false;
        self
    }

    /// The last copy emitted, as a `seq-outlier`, when seqs are missing just before it;
    /// the merge does not decide whether it is one ([`Issues::add_outlier`]).
    pub fn last_jump(&mut self) -> Option<(MergeIssue, bool)> {
        self.outlier.take()
    }

    /// Bytes of all sources read so far (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.states.iter().map(|s| s.stats.bytes_read).sum()
    }

    pub fn stats(&self) -> Vec<SourceStats> {
        self.states.iter().map(|s| s.stats.clone()).collect()
    }

    /// The seq every source's laps count from: the lowest copy of some source from which
    /// every other source's lowest lies less than half the seq space ahead. A source's
    /// lowest is taken over its first `window` copies: local disorder can put an earlier
    /// copy after its first one (0x7fffffff after 1, across the wrap), which must not
    /// unwrap below the start. Frames that are not copies before them (a PFC storm at
    /// the start of a shard) are read past, up to [`REFERENCE_SCAN`] frames: a source
    /// left out here could hold the copies from before the wrap.
    fn find_reference(&mut self) -> Option<(u64, u32)> {
        let (cfg, window) = (self.cfg, self.window);
        let firsts: Vec<u32> = self
            .sources
            .iter()
            .filter_map(|s| {
                let peek = Peek::of(s, &cfg);
                let mut copies = s
                    .packets()
                    .map_while(Result::ok)
                    .take(REFERENCE_SCAN)
                    .filter_map(|p| copy_of(&p, &peek).map(|c| c.seq))
                    .take(window);
                let first = copies.next()?;
                Some(copies.fold(first, |lo, seq| if signed_seq_distance(lo, seq) < 0 { seq } else { lo }))
            })
            .collect();
        let half = SEQ_MAX / 2;
        let r = firsts
            .iter()
            .copied()
            .find(|&c| firsts.iter().all(|&s| wire::mirror::seq_distance(c, s) < half))
            .or(firsts.first().copied())?;
        // A trace that starts from seq 1..=LAP_MARGIN and holds copies from just before
        // the wrap (a capture begun just after it, or at seq 1 itself) counts from the
        // second lap, so that such a copy that comes later than the window unwraps below
        // the start, as a late copy, instead of before the first lap (where it had no place
        // but its wire seq, a lap ahead, and a 2^31 missing range between). Every other
        // trace stays on the first lap, unwrapped = wire seq: one whose first copies are
        // missing (review F4: a dump host left out, seq 1 its) is not a lap ahead of a
        // complete one.
        let wrapped = (1..=LAP_MARGIN).contains(&r) && self.copies_before_a_wrap();
        Some((u64::from(r) + if wrapped { u64::from(SEQ_MAX) } else { 0 }, r))
    }

    /// Whether some source holds, among its first [`REFERENCE_SCAN`] frames, a copy from
    /// the last [`LAP_MARGIN`] seqs before the wrap.
    fn copies_before_a_wrap(&self) -> bool {
        let cfg = self.cfg;
        self.sources.iter().any(|s| {
            let peek = Peek::of(s, &cfg);
            s.packets()
                .map_while(Result::ok)
                .take(REFERENCE_SCAN)
                .filter_map(|p| copy_of(&p, &peek))
                .any(|c| c.seq > SEQ_MAX - LAP_MARGIN)
        })
    }

    /// Reads the next packet of source `i` into the heap; false at its end.
    fn pull(&mut self, i: usize) -> bool {
        let st = &mut self.states[i];
        if st.done {
            return false;
        }
        let raw = match st.packets.next() {
            None => {
                st.done = true;
                return false;
            }
            Some(Err(d)) => {
                st.done = true;
                self.issues.add(MergeIssue::Damaged(d));
                return false;
            }
            Some(Ok(raw)) => raw,
        };
        let merged = self.describe(i, raw);
        self.states[i].pending.push(merged);
        true
    }

    /// Reads the next packet of source `i`, and after a copy that arrived below one already
    /// read, on to the next copy that did not (within the window): the frames that are not
    /// copies in between follow that straggler, and one left unread could belong before
    /// packets about to leave. False at the source's end.
    fn pull_past_stragglers(&mut self, i: usize) -> bool {
        if !self.pull(i) {
            return false;
        }
        while self.states[i].behind() && self.states[i].pending.len() < self.window && self.pull(i) {}
        true
    }

    /// Reads source `i` up to the window and enters its new head.
    fn refill(&mut self, i: usize) {
        while self.states[i].pending.len() < self.window && self.pull(i) {}
        self.enter_head(i);
    }

    fn enter_head(&mut self, i: usize) {
        self.heads.set(i, self.states[i].pending.head().map_or(EMPTY, Key::packed));
    }

    /// The source whose head leaves next, reading only as far ahead as ordering needs.
    ///
    /// A full window on every source is what makes the lowest head safe to emit: a packet
    /// further out of order than that is late whatever happens. But the copy right after
    /// the last one emitted needs no wait: nothing unread can come before it but copies
    /// that are late or repeated either way. So sources are read ahead only at a hole in
    /// the seqs, until the missing copy turns up or every window is full; in between,
    /// each frame is handed on a few packets after the merge read its header, while it is
    /// still in cache (a full window ahead it was some megabytes back).
    fn next_source(&mut self) -> Option<usize> {
        loop {
            let (i, key) = self.heads.min()?;
            if self.leaves_early(key) || !self.read_ahead() {
                return Some(i);
            }
        }
    }

    /// A copy right after the last one emitted, or a frame without a seq that follows
    /// a copy already emitted.
    fn leaves_early(&self, packed: u128) -> bool {
        let (seq, sub) = ((packed >> 64) as u64, (packed >> 16) as u32);
        self.eager && self.last_emitted.is_some_and(|last| seq <= last + u64::from(sub == 0))
    }

    /// Reads one more packet of every source short of its window; false when none could.
    fn read_ahead(&mut self) -> bool {
        let mut read = false;
        for i in 0..self.states.len() {
            if self.states[i].pending.len() < self.window && self.pull_past_stragglers(i) {
                self.enter_head(i);
                read = true;
            }
        }
        read
    }

    fn describe(&mut self, i: usize, raw: RawPacket<'a>) -> Merged<'a> {
        let copy = copy_of(&raw, &self.states[i].peek);
        let mut m = Merged {
            key: Key { seq: 0, sub: 0, source: i as u16 },
            raw: Captured { offset: raw.offset, orig_len: raw.orig_len, data: raw.data },
            mirrored: copy.is_some(),
            restore: copy.and_then(|c| c.restore),
            before_start: false,
            switch_ts_ns: copy.map_or(raw.ts_ns, |c| c.switch_ts_ns),
            event: copy.map_or(Event::None, |c| c.event),
        };
        let st = &mut self.states[i];
        st.stats.packets += 1;
        st.stats.bytes_read = raw.offset.saturating_sub(st.peek.start);
        match copy.map(|c| c.seq) {
            Some(seq) => {
                let base = st.last.or(self.reference).unwrap_or((u64::from(seq), seq));
                let step = i64::from(signed_seq_distance(base.1, seq));
                let unwrapped = base.0 as i64 + step;
                // A copy that would unwrap further below the start than a late copy can
                // (a corrupted seq) is placed as its wire seq says on the first lap
                // counted, but is no base for the copies after it: from it, the next would
                // land a lap off.
                let unwrapped = if unwrapped < self.earliest as i64 {
                    let at = Location { source: self.sources[i].spec.name.clone(), offset: raw.offset };
                    self.issues.add(MergeIssue::BeforeStart { seq, at });
                    m.before_start = true;
                    self.first_lap + u64::from(seq)
                } else {
                    st.last = Some((unwrapped as u64, seq));
                    unwrapped as u64
                };
                st.sub = 0;
                m.key.seq = unwrapped;
                st.stats.mirrored += 1;
                st.stats.first_seq.get_or_insert(seq);
                st.stats.last_seq = Some(seq);
            }
            None => {
                st.sub += 1;
                m.key.seq = st.last.map_or(0, |l| l.0);
                m.key.sub = st.sub;
            }
        }
        m
    }

    fn location(&self, m: &Merged<'_>) -> Location {
        self.location_at(m.key.source, m.raw.offset)
    }

    fn location_at(&self, source: u16, offset: u64) -> Location {
        Location { source: self.sources[usize::from(source)].spec.name.clone(), offset }
    }
}

impl<'a> Iterator for Merger<'a> {
    type Item = Merged<'a>;

    fn next(&mut self) -> Option<Merged<'a>> {
        loop {
            let Some(i) = self.next_source() else {
                // `outlier` is the last copy's, if it jumped: whether it is a seq-outlier
                // the reconstruction decides from all the gaps (`Gaps::set_aside_outlier`).
                return None;
            };
            let m = self.states[i].pending.pop().expect("a source with a head has a packet pending");
            // Every source keeps a packet pending while it has any: its next one may be a
            // frame that goes right after the copy just emitted. So too while its last copy
            // read is a straggler: what follows it in the file may go before its pending.
            if self.states[i].pending.len() == 0 || self.states[i].behind() {
                self.pull_past_stragglers(i);
            }
            self.enter_head(i);
            if !m.mirrored {
                return Some(m);
            }
            let seq = m.key.seq;
            match self.last_emitted {
                Some(last) if seq == last || (seq < last && !self.holes.fill(seq)) => {
                    let kept = self.emitted.of(seq).map(|(source, offset)| self.location_at(source, offset));
                    let dropped = self.location(&m);
                    self.issues.add(MergeIssue::DuplicateSeq { seq: wire_of(seq), kept, dropped });
                    continue;
                }
                Some(last) if seq < last => {
                    let at = self.location(&m);
                    self.issues.add(MergeIssue::Late { seq: wire_of(seq), at, after_seq: wire_of(last) });
                    return Some(m);
                }
                Some(last) if seq > last + 1 => self.holes.add(last + 1, seq - 1),
                None if seq > 1 => self.holes.add(1, seq - 1),
                _ => {}
            }
            self.outlier = self.last_emitted.filter(|&last| seq > last + 1).map(|last| {
                let issue =
                    MergeIssue::SeqOutlier { seq: wire_of(seq), at: self.location(&m), after_seq: wire_of(last) };
                (issue, m.before_start)
            });
            self.last_emitted = Some(seq);
            self.emitted.note(&m);
            return Some(m);
        }
    }
}

/// The merge's issues: every one counted by kind, the first [`ISSUES_KEPT_PER_KIND`] of
/// each kept.
#[derive(Debug, Default)]
pub struct Issues {
    pub kept: Vec<MergeIssue>,
    pub counts: std::collections::BTreeMap<&'static str, u64>,
}

impl Issues {
    fn add(&mut self, i: MergeIssue) {
        let n = self.counts.entry(i.kind()).or_default();
        *n += 1;
        if *n <= ISSUES_KEPT_PER_KIND {
            self.kept.push(i);
        }
    }

    /// The trace's last copy is a seq-outlier: `candidate` as the merge left it
    /// ([`Merger::last_jump`]). One corrupted seq, one report: placed past the end, it is
    /// the outlier, which check and analyze set aside, not also a `before-start` copy.
    pub fn add_outlier(&mut self, (issue, before_start): (MergeIssue, bool)) {
        if let (true, MergeIssue::SeqOutlier { at, .. }) = (before_start, &issue) {
            self.retract_before_start(at);
        }
        self.add(issue);
    }

    /// Takes back the `before-start` issue of the copy at `at` (added, kept or only
    /// counted), reported as another kind.
    fn retract_before_start(&mut self, at: &Location) {
        let is_it = |i: &MergeIssue| matches!(i, MergeIssue::BeforeStart { at: a, .. } if a == at);
        if let Some(k) = self.kept.iter().rposition(is_it) {
            self.kept.remove(k);
        }
        let kind = "before-start";
        match self.counts.get_mut(kind) {
            Some(n) if *n > 1 => *n -= 1,
            _ => drop(self.counts.remove(kind)),
        }
    }
}

/// How far after a wrap a trace may start and still count from the second lap, and how
/// far below the trace's first copy a late copy may lie (about two seconds of copies at
/// 100 Gbit/s): a copy further below is taken for a corrupted seq (`before-start`).
pub const LAP_MARGIN: u32 = 1 << 24;

/// Frames of each source read for its first copies when placing the seq wrap
/// ([`Merger::find_reference`]): about 100 MB of a mapped file at most.
const REFERENCE_SCAN: usize = 1 << 20;

/// Where the copies of recent seqs, emitted in order, came from: one slot per seq modulo
/// a power of two at least a window per source, so a copy repeated within about a window
/// of its file names the first. (A `Location` is built only when an issue names one: its
/// source name would cost an allocation per packet.)
struct Emitted {
    /// (unwrapped seq, source << 48 | offset); seq 0 is an empty slot.
    slots: Vec<(u64, u64)>,
}

impl Emitted {
    /// At most 2^20 slots (16 MiB).
    fn new(window: usize, sources: usize) -> Emitted {
        let slots = window.max(1).saturating_mul(sources.max(1)).min(1 << 20).next_power_of_two();
        Emitted { slots: vec![(0, 0); slots] }
    }

    fn slot(&self, seq: u64) -> usize {
        seq as usize & (self.slots.len() - 1)
    }

    fn note(&mut self, m: &Merged<'_>) {
        let at = self.slot(m.key.seq);
        self.slots[at] = (m.key.seq, u64::from(m.key.source) << 48 | (m.raw.offset & OFFSET_MASK));
    }

    /// Source and offset of the copy of `seq` emitted, if still remembered.
    fn of(&self, seq: u64) -> Option<(u16, u64)> {
        let (noted, place) = self.slots[self.slot(seq)];
        (noted == seq).then_some(((place >> 48) as u16, place & OFFSET_MASK))
    }
}

/// File offsets below 256 TiB share a slot with their source index.
const OFFSET_MASK: u64 = (1 << 48) - 1;

/// Missing ranges the merge remembers to tell a late copy from a repeated one (~50 MB at
/// most: a dump host that captured nothing leaves a hole at every few seqs).
const HOLES_KEPT: usize = 1 << 20;

/// The seqs below the last one emitted that no copy has had yet, as `first → last`: a
/// late copy fills one of them, or it repeats a seq already emitted. At most `kept`
/// ranges; below `forgotten` (the oldest ones dropped) the merge no longer knows.
struct Holes {
    ranges: BTreeMap<u64, u64>,
    kept: usize,
    forgotten: u64,
}

impl Holes {
    fn new(kept: usize) -> Holes {
        Holes { ranges: BTreeMap::new(), kept: kept.max(1), forgotten: 0 }
    }

    fn add(&mut self, first: u64, last: u64) {
        self.ranges.insert(first, last);
        if self.ranges.len() > self.kept {
            let (_, last) = self.ranges.pop_first().expect("not empty");
            self.forgotten = last;
        }
    }

    /// Takes `seq` out of the holes. False when no hole holds it (it was emitted); true
    /// too when `seq` is older than the holes kept (taken as late, as without this).
    fn fill(&mut self, seq: u64) -> bool {
        if seq <= self.forgotten {
            return true;
        }
        let Some((&first, &last)) = self.ranges.range(..=seq).next_back() else { return false };
        if seq > last {
            return false;
        }
        self.ranges.remove(&first);
        if first < seq {
            self.ranges.insert(first, seq - 1);
        }
        if seq < last {
            self.ranges.insert(seq + 1, last);
        }
        true
    }
}

/// What makes a packet a mirrored copy, wherever its source keeps it.
#[derive(Clone, Copy)]
struct CopyMeta {
    seq: u32,
    event: Event,
    switch_ts_ns: u64,
    /// The form it is still in.
    restore: Option<CopyForm>,
}

/// How the merge reads a source's copies: under which ports, in which form, and from which
/// byte of its file (the progress counts from there).
#[derive(Clone, Copy)]
struct Peek {
    cfg: ClassifyConfig,
    form: CopyForm,
    start: u64,
}

impl Peek {
    fn of(s: &OpenSource, cfg: &ClassifyConfig) -> Peek {
        let form = s.spec.read_as.copy_form();
        Peek { cfg: form.classify_config(cfg), form, start: s.spec.run.as_ref().map_or(0, |r| r.offset) }
    }
}

/// A packet's mirror metadata, `None` when it is not a copy. A dataplane shard's
/// annotation is trusted (the dataplane classified the whole frame and restored it, and the
/// block's timestamp is the switch's); anything else is peeked from the raw mirror format.
#[inline]
fn copy_of(p: &RawPacket<'_>, peek: &Peek) -> Option<CopyMeta> {
    match p.annotation {
        Some(trace::Annotation::Mirrored { seq, event }) => {
            Some(CopyMeta { seq, event, switch_ts_ns: p.ts_ns, restore: None })
        }
        Some(_) => None,
        None => peek_mirror(p.data, &peek.cfg).map(|meta| CopyMeta {
            seq: meta.seq,
            event: meta.event,
            switch_ts_ns: meta.timestamp_ns,
            restore: Some(peek.form),
        }),
    }
}

/// The wire seq (1..=SEQ_MAX) of an unwrapped one.
pub fn wire_of(unwrapped: u64) -> u32 {
    ((unwrapped.max(1) - 1) % u64::from(SEQ_MAX) + 1) as u32
}

/// Steps from `from` to `to` on the seq ring, negative when `to` is behind (within half).
pub(crate) fn signed_seq_distance(from: u32, to: u32) -> i32 {
    let d = wire::mirror::seq_distance(from, to);
    if d > SEQ_MAX / 2 {
        -((SEQ_MAX - d) as i32)
    } else {
        d as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_distance_crosses_the_wrap_both_ways() {
        assert_eq!(signed_seq_distance(SEQ_MAX, 1), 1);
        assert_eq!(signed_seq_distance(1, SEQ_MAX), -1);
        assert_eq!(signed_seq_distance(5, 9), 4);
        assert_eq!(signed_seq_distance(9, 5), -4);
        assert_eq!(signed_seq_distance(SEQ_MAX - 2, 3), 5);
    }

    #[test]
    fn holes_tell_a_late_copy_from_a_repeated_one() {
        let mut h = Holes::new(2);
        h.add(3, 5); // 1, 2, 6 emitted, 3..=5 not
        assert!(!h.fill(2) && !h.fill(6));
        assert!(h.fill(4) && !h.fill(4));
        assert!(h.fill(3) && h.fill(5) && !h.fill(5));
        // Beyond `kept` the oldest ranges are forgotten: a copy from there is taken late.
        h.add(10, 10);
        h.add(20, 21);
        h.add(30, 30);
        assert!(h.fill(9) && h.fill(10), "forgotten");
        assert!(!h.fill(22) && h.fill(21) && h.fill(30) && !h.fill(30));
    }

    fn packet(seq: u64, offset: u64) -> Merged<'static> {
        Merged {
            key: Key { seq, sub: 0, source: 0 },
            raw: Captured { offset, orig_len: 0, data: &[] },
            mirrored: true,
            restore: None,
            before_start: false,
            switch_ts_ns: 0,
            event: Event::None,
        }
    }

    proptest::proptest! {
        /// Whatever the arrival order, pending packets leave lowest key first, and equal
        /// keys (duplicate seqs) in the order they arrived.
        #[test]
        fn pending_pops_in_key_then_arrival_order(
            seqs in proptest::collection::vec(0u64..64, 0..200),
            pops_every in 1usize..8,
        ) {
            let mut pending = Pending::default();
            let mut reference: Vec<(u64, u64)> = Vec::new();
            let check_pop = |pending: &mut Pending<'_>, reference: &mut Vec<(u64, u64)>| {
                reference.sort();
                let want = reference.first().copied();
                proptest::prop_assert_eq!(pending.head().map(|k| k.seq), want.map(|w| w.0));
                let got = pending.pop().map(|m| (m.key.seq, m.raw.offset));
                proptest::prop_assert_eq!(got, want);
                if want.is_some() {
                    reference.remove(0);
                }
                Ok(())
            };
            for (offset, &seq) in seqs.iter().enumerate() {
                pending.push(packet(seq, offset as u64));
                reference.push((seq, offset as u64));
                if offset % pops_every == 0 {
                    check_pop(&mut pending, &mut reference)?;
                }
            }
            while !reference.is_empty() {
                check_pop(&mut pending, &mut reference)?;
            }
            proptest::prop_assert_eq!(pending.len(), 0);
        }
    }

    #[test]
    fn wire_of_undoes_laps() {
        let max = u64::from(SEQ_MAX);
        assert_eq!(wire_of(1), 1);
        assert_eq!(wire_of(max), SEQ_MAX);
        assert_eq!(wire_of(max + 1), 1);
        assert_eq!(wire_of(3 * max + 7), 7);
    }
}
