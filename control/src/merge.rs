//! The streaming k-way merge of sources by mirror sequence number (Lumina §3.5: "the
//! orchestrator simply sorts all the packets based on their mirror sequence numbers") —
//! without the sort: each source is already in seq order but for a little local disorder
//! (reordering inside a dump host), so a bounded window per source suffices.
//!
//! Memory: at most `window` pending packets per source (each a few dozen bytes pointing
//! into the source's memory map). A packet further out of order than the window is still
//! emitted, late, and reported — never dropped.
//!
//! Sequence numbers run 1..=0x7fffffff and wrap to 1; the merge orders by an *unwrapped*
//! seq (each source follows its own laps; all sources start from a common reference).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use wire::frame::{ClassifyConfig, FrameClass, FrameInfo};
use wire::mirror::{Event, SEQ_MAX};

use crate::input::{Damage, OpenSource, Packets, RawPacket};

/// Merge order: unwrapped seq, then (for frames without a seq, which follow the copy
/// before them in their file) arrival order within the source, then source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub seq: u64,
    pub sub: u32,
    pub source: u16,
}

/// One packet ready to be emitted, with what its classification found.
#[derive(Debug, Clone, Copy)]
pub struct Merged<'a> {
    pub key: Key,
    pub raw: RawPacket<'a>,
    /// `Err` for a frame that failed to parse (recorded unrestored).
    pub info: Result<FrameInfo, wire::ErrorKind>,
    /// A mirrored copy: seq, switch timestamp and event are the switch's.
    pub mirrored: bool,
    /// The frame is still in the mirror format (restore before use).
    pub needs_restore: bool,
    pub switch_ts_ns: u64,
    pub event: Event,
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

struct Pending<'a>(Merged<'a>);

impl PartialEq for Pending<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.0.key == o.0.key
    }
}
impl Eq for Pending<'_> {}
impl PartialOrd for Pending<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.key.cmp(&o.0.key)
    }
}

/// Classifies frames that may be trimmed: a trimmed frame is padded with zeros to its
/// wire length in a reused buffer, so the wire crate's length checks hold.
pub struct Classifier {
    pub cfg: ClassifyConfig,
    scratch: Vec<u8>,
}

impl Classifier {
    pub fn new(cfg: ClassifyConfig) -> Self {
        Classifier { cfg, scratch: Vec::new() }
    }

    /// The frame at its wire length (padded if trimmed), and whether it was trimmed.
    pub fn full<'s>(&'s mut self, data: &'s [u8], orig_len: u32) -> (&'s [u8], bool) {
        let wire_len = orig_len as usize;
        if data.len() >= wire_len {
            return (data, false);
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(data);
        self.scratch.resize(wire_len, 0);
        (&self.scratch, true)
    }

    pub fn classify(&mut self, data: &[u8], orig_len: u32) -> Result<FrameInfo, wire::ErrorKind> {
        let cfg = self.cfg;
        let (frame, _) = self.full(data, orig_len);
        wire::frame::classify(frame, &cfg).map_err(|e| e.kind())
    }
}

struct SourceState<'a> {
    packets: Packets<'a>,
    pending: usize,
    /// Last (unwrapped, wire) seq read from this source.
    last: Option<(u64, u32)>,
    sub: u32,
    done: bool,
    stats: SourceStats,
}

/// Per-source tallies of what the merge read (the per-source part of `reconstruct.json`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SourceStats {
    pub packets: u64,
    pub mirrored: u64,
    pub other: u64,
    pub malformed: u64,
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// For the progress bar only.
    #[serde(skip)]
    pub bytes_read: u64,
}

/// Problems met while merging, each located.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MergeIssue {
    /// A source could not be read to its end (truncated, bad block, bad record).
    Damaged(Damage),
    /// Two copies with the same seq; the second is left out of the trace.
    DuplicateSeq { seq: u32, kept: Location, dropped: Location },
    /// A copy further out of order in its file than the window: emitted late, out of order.
    Late { seq: u32, at: Location, after_seq: u32 },
    /// A seq that precedes the merge's starting point across a wrap.
    BeforeStart { seq: u32, at: Location },
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    pub source: String,
    pub offset: u64,
}

pub struct Merger<'a> {
    sources: &'a [OpenSource],
    states: Vec<SourceState<'a>>,
    heap: BinaryHeap<Reverse<Pending<'a>>>,
    window: usize,
    classifier: Classifier,
    reference: Option<(u64, u32)>,
    last_emitted: Option<(u64, Location)>,
    pub issues: Vec<MergeIssue>,
}

impl<'a> Merger<'a> {
    /// `window`: packets held per source (at least 1).
    pub fn new(sources: &'a [OpenSource], cfg: ClassifyConfig, window: usize) -> Self {
        let mut issues = Vec::new();
        for s in sources {
            issues.extend(s.block_damage().into_iter().map(MergeIssue::Damaged));
        }
        let states = sources
            .iter()
            .map(|s| SourceState {
                packets: s.packets(),
                pending: 0,
                last: None,
                sub: 0,
                done: false,
                stats: SourceStats::default(),
            })
            .collect();
        let mut m = Merger {
            sources,
            states,
            heap: BinaryHeap::new(),
            window: window.max(1),
            classifier: Classifier::new(cfg),
            reference: None,
            last_emitted: None,
            issues,
        };
        m.reference = m.find_reference();
        for i in 0..m.states.len() {
            while m.states[i].pending < m.window && m.pull(i) {}
        }
        m
    }

    /// Bytes of all sources read so far (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.states.iter().map(|s| s.stats.bytes_read).sum()
    }

    pub fn stats(&self) -> Vec<SourceStats> {
        self.states.iter().map(|s| s.stats.clone()).collect()
    }

    /// The seq every source's laps count from: the first copy of some source from which
    /// every other source's first copy lies less than half the seq space ahead.
    fn find_reference(&mut self) -> Option<(u64, u32)> {
        let mut classifier = Classifier::new(self.classifier.cfg);
        let firsts: Vec<u32> = self
            .sources
            .iter()
            .filter_map(|s| s.packets().map_while(Result::ok).take(1 << 16).find_map(|p| peek_seq(&mut classifier, &p)))
            .collect();
        let half = SEQ_MAX / 2;
        let r = firsts
            .iter()
            .copied()
            .find(|&c| firsts.iter().all(|&s| wire::mirror::seq_distance(c, s) < half))
            .or(firsts.first().copied())?;
        Some((u64::from(r), r))
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
                self.issues.push(MergeIssue::Damaged(d));
                return false;
            }
            Some(Ok(raw)) => raw,
        };
        let merged = self.describe(i, raw);
        self.states[i].pending += 1;
        self.heap.push(Reverse(Pending(merged)));
        true
    }

    fn describe(&mut self, i: usize, raw: RawPacket<'a>) -> Merged<'a> {
        let info = self.classifier.classify(raw.data, raw.orig_len);
        let mut m = Merged {
            key: Key { seq: 0, sub: 0, source: i as u16 },
            raw,
            info,
            mirrored: false,
            needs_restore: false,
            switch_ts_ns: raw.ts_ns,
            event: Event::None,
        };
        let wire_seq = match (raw.annotation, &info) {
            (Some(trace::Annotation::Mirrored { seq, event }), _) => {
                m.event = event;
                Some(seq)
            }
            (_, Ok(FrameInfo { class: FrameClass::MirroredRoce, mirror: Some(meta), .. })) => {
                m.event = meta.event;
                m.switch_ts_ns = meta.timestamp_ns;
                m.needs_restore = true;
                Some(meta.seq)
            }
            _ => None,
        };
        let st = &mut self.states[i];
        st.stats.packets += 1;
        st.stats.bytes_read = raw.offset;
        match wire_seq {
            Some(seq) => {
                m.mirrored = true;
                let base = st.last.or(self.reference).unwrap_or((u64::from(seq), seq));
                let step = i64::from(signed_seq_distance(base.1, seq));
                let unwrapped = base.0 as i64 + step;
                let unwrapped = if unwrapped < 1 {
                    let at = Location { source: self.sources[i].spec.name.clone(), offset: raw.offset };
                    self.issues.push(MergeIssue::BeforeStart { seq, at });
                    u64::from(seq)
                } else {
                    unwrapped as u64
                };
                st.last = Some((unwrapped, seq));
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
                if m.info.is_err() {
                    st.stats.malformed += 1;
                } else {
                    st.stats.other += 1;
                }
            }
        }
        m
    }

    fn location(&self, m: &Merged<'_>) -> Location {
        Location { source: self.sources[usize::from(m.key.source)].spec.name.clone(), offset: m.raw.offset }
    }
}

impl<'a> Iterator for Merger<'a> {
    type Item = Merged<'a>;

    fn next(&mut self) -> Option<Merged<'a>> {
        loop {
            let Reverse(Pending(m)) = self.heap.pop()?;
            let i = usize::from(m.key.source);
            self.states[i].pending -= 1;
            while self.states[i].pending < self.window && self.pull(i) {}
            if !m.mirrored {
                return Some(m);
            }
            if let Some((last, kept)) = &self.last_emitted {
                let wire = wire_of(m.key.seq);
                if m.key.seq == *last {
                    let dropped = self.location(&m);
                    self.issues.push(MergeIssue::DuplicateSeq { seq: wire, kept: kept.clone(), dropped });
                    continue;
                }
                if m.key.seq < *last {
                    let at = self.location(&m);
                    self.issues.push(MergeIssue::Late { seq: wire, at, after_seq: wire_of(*last) });
                    return Some(m);
                }
            }
            self.last_emitted = Some((m.key.seq, self.location(&m)));
            return Some(m);
        }
    }
}

fn peek_seq(classifier: &mut Classifier, p: &RawPacket<'_>) -> Option<u32> {
    if let Some(trace::Annotation::Mirrored { seq, .. }) = p.annotation {
        return Some(seq);
    }
    let info = classifier.classify(p.data, p.orig_len).ok()?;
    info.mirror.map(|m| m.seq)
}

/// The wire seq (1..=SEQ_MAX) of an unwrapped one.
pub fn wire_of(unwrapped: u64) -> u32 {
    ((unwrapped.max(1) - 1) % u64::from(SEQ_MAX) + 1) as u32
}

/// Steps from `from` to `to` on the seq ring, negative when `to` is behind (within half).
fn signed_seq_distance(from: u32, to: u32) -> i32 {
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
    fn wire_of_undoes_laps() {
        let max = u64::from(SEQ_MAX);
        assert_eq!(wire_of(1), 1);
        assert_eq!(wire_of(max), SEQ_MAX);
        assert_eq!(wire_of(max + 1), 1);
        assert_eq!(wire_of(3 * max + 7), 7);
    }
}
