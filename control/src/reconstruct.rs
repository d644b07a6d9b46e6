//! `rocescope reconstruct`: one ordered, restored trace from any number of sources
//! (Lumina §3.5), as `trace.pcapng` for people and `records.rsr` for the analyzers, plus
//! `reconstruct.json` saying what was read and what is missing or damaged.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use serde::{Deserialize, Serialize};
use trace::pcapng::Epb;
use trace::record::{Flow, FrameMeta, Record, RecordBuilder, RecordWriter};
use trace::Annotation;
use wire::frame::{ClassifyConfig, FrameInfo};
use wire::mirror::CopyForm;
use wire::ErrorKind;

use crate::input::{Format, InputError, Inputs, OpenSource, ReadAs, SourceSpec};
use crate::merge::{wire_of, Issues, Merged, Merger, SourceStats, LAP_MARGIN};
use crate::spool::Spool;

pub const SUMMARY_FILE: &str = "reconstruct.json";
pub const TRACE_FILE: &str = "trace.pcapng";
pub const SUMMARY_FORMAT: &str = "rocescope-reconstruction";

#[derive(Debug, thiserror::Error)]
pub enum ReconstructError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("writing {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{path}: {what}")]
    Summary { path: PathBuf, what: String },
    #[error("the mirror seq wrapped 512 times (2^40 unwrapped seqs), more than a record file holds; reconstruct the capture in parts")]
    TooManyLaps,
    #[error("{0}: an input is also an output of this reconstruction; write it elsewhere with -o")]
    InputIsOutput(PathBuf),
    #[error(transparent)]
    NotOurs(#[from] crate::outputs::NotOurs),
    #[error("{0}: the output directory is an input directory (a later reconstruction of it would read its own trace again); write it elsewhere with -o")]
    OutputInInput(PathBuf),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub classify: ClassifyConfig,
    /// Packets held per source for reordering.
    pub window: usize,
    /// Show a progress bar on a terminal.
    pub progress: bool,
    /// Write `trace.pcapng` (the analyzers and the check need only the records).
    pub pcapng: bool,
    /// The merge thread loads a batch's frames itself once this many batches wait for the
    /// main thread (see [`run`]); 0 makes it load every batch, `usize::MAX` none. Either
    /// way the output is the same.
    pub merge_loads_when_queued: usize,
    /// Fill every source's window before each packet leaves the merge
    /// ([`Merger::filling_windows`]); the output is the same either way.
    pub fill_windows: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            classify: ClassifyConfig::default(),
            window: 1 << 14,
            progress: false,
            pcapng: true,
            merge_loads_when_queued: LOAD_HERE_QUEUED,
            fill_windows: false,
        }
    }
}

/// Missing ranges listed in reconstruct.json and check's report (a dump host that captured
/// nothing leaves millions); the counts cover them all.
pub const MISSING_LISTED: usize = 10_000;

/// A run of consecutive seqs absent from the trace (wire values; `first > last` when the
/// range crosses the wrap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqRange {
    pub first: u32,
    pub last: u32,
    pub count: u64,
}

impl SeqRange {
    /// The unwrapped seqs `first..=last`.
    pub fn of_unwrapped(first: u64, last: u64) -> SeqRange {
        SeqRange { first: wire_of(first), last: wire_of(last), count: last - first + 1 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceSummary {
    pub name: String,
    pub path: PathBuf,
    pub format: Format,
    pub host: usize,
    pub core: Option<u32>,
    /// How its copies were read: `mirror-format` or `lumina-dumper`.
    #[serde(default)]
    pub read_as: ReadAs,
    /// A Lumina-dumper file's runs, one per lcore, each merged as a source of its own
    /// (their sum is the file's tallies); empty for any other file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lcore_runs: Vec<RunSummary>,
    #[serde(flatten)]
    pub stats: SourceStats,
}

/// One lcore run of a Lumina-dumper file: its records from byte `offset` up to `end`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    pub name: String,
    pub offset: u64,
    pub end: u64,
    #[serde(flatten)]
    pub stats: SourceStats,
}

/// `reconstruct.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub format: String,
    pub version: u32,
    pub inputs: Vec<PathBuf>,
    /// Input directories (where switch counters, QP info and NIC counters are looked for).
    pub dirs: Vec<PathBuf>,
    pub mirror_port: u16,
    pub roce_port: u16,
    pub window: usize,
    pub sources: Vec<SourceSummary>,
    /// Frames in the trace (mirrored copies and everything else).
    pub packets: u64,
    pub mirrored: u64,
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// Unwrapped seqs of the first and last copy (the wire values on the first lap; see
    /// [`crate::merge::LAP_MARGIN`] for where the laps start).
    pub first_unwrapped: Option<u64>,
    pub last_unwrapped: Option<u64>,
    /// The first [`MISSING_LISTED`] missing ranges.
    pub missing: Vec<SeqRange>,
    /// How many missing ranges there are in all.
    #[serde(default)]
    pub missing_ranges: u64,
    pub missing_total: u64,
    /// Duplicates, late copies and damaged inputs, each located; a trace with any is not
    /// complete. The first `merge::ISSUES_KEPT_PER_KIND` of each kind.
    pub issues: Vec<serde_json::Value>,
    /// How many issues of each kind there were (more than `issues` holds when one kind
    /// passed the cap).
    #[serde(default)]
    pub issue_counts: std::collections::BTreeMap<String, u64>,
    /// Frames whose capture ends inside their extension headers (a snap length below
    /// them): recorded with their BTH, the cut fields marked unknown.
    #[serde(default)]
    pub headers_cut: HeadersCut,
    /// Files of the input directories not read, and why (an alias of a file read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_inputs: Vec<crate::input::Skipped>,
    /// An earlier analysis's outputs (report.json, plots) removed from the output
    /// directory: they described the trace this one replaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_outputs: Vec<String>,
    /// When the trace holds no mirrored copy at all: what its frames are instead, and
    /// what to try ([`crate::mirror_port::NoCopies::advice`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_copies: Option<String>,
}

/// Frames a snap length cut inside their extension headers (`flag::HEADERS_CUT`), and
/// which record fields that left unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadersCut {
    pub frames: u64,
    /// With a RETH cut: the DMA length is unknown.
    pub reth: u64,
    /// With an AETH cut: syndrome and MSN are unknown.
    pub aeth: u64,
}

impl HeadersCut {
    fn add(&mut self, r: &Record) {
        if r.has(trace::record::flag::HEADERS_CUT) {
            self.frames += 1;
            self.reth += u64::from(r.reth_cut());
            self.aeth += u64::from(r.aeth_cut());
        }
    }
}

impl Summary {
    /// Whether the trace is whole and usable: it has copies, none missing, no issue
    /// (`reconstruct`'s exit code 0).
    pub fn whole(&self) -> bool {
        self.mirrored > 0 && self.missing_total == 0 && self.issues.is_empty()
    }

    /// Every issue, kept or only counted.
    pub fn issues_total(&self) -> u64 {
        self.issue_counts.values().sum::<u64>().max(self.issues.len() as u64)
    }
}

impl Summary {
    pub fn load(dir: &Path) -> Result<Summary, ReconstructError> {
        let path = dir.join(SUMMARY_FILE);
        let err = |what: String| ReconstructError::Summary { path: path.clone(), what };
        let text = std::fs::read(&path).map_err(|e| err(e.to_string()))?;
        let s: Summary = serde_json::from_slice(&text).map_err(|e| err(e.to_string()))?;
        if s.format != SUMMARY_FORMAT || s.version != 1 {
            return Err(err(format!("format {} version {} is not {SUMMARY_FORMAT} 1", s.format, s.version)));
        }
        Ok(s)
    }
}

/// What a consumer of the merged stream gets for each packet: its record, its
/// classification (`Err` for a frame that failed to parse, recorded unrestored), and the
/// frame restored (captured bytes only).
pub trait Sink {
    fn packet(
        &mut self,
        record: &Record,
        merged: &Merged<'_>,
        info: &Result<FrameInfo, ErrorKind>,
        restored: &[u8],
    ) -> std::io::Result<()>;
}

/// Packets per hand-over from the merge thread.
const BATCH: usize = 1024;
/// The merge thread copies, classifies and restores a batch's frames itself when this many
/// batches already wait for the main thread (`Options::merge_loads_when_queued`).
const LOAD_HERE_QUEUED: usize = 2;

/// Merges `inputs` and hands every packet to `sink` in trace order. Returns the summary
/// and the flow table the records point into.
///
/// Two stages on two threads: the merge (read, classify, order) runs on its own and hands
/// over batches of ordered packets; this thread restores, builds records and feeds `sink`.
/// Loading a batch's frames (copy, classify, restore: [`Restored`]) is done by whichever
/// thread has time: the merge thread when batches wait for this one, else this one. With
/// the trace written this thread is the slower one, without it the merge thread is.
pub fn run(
    paths: &[PathBuf],
    inputs: &Inputs,
    opts: &Options,
    sink: &mut dyn Sink,
) -> Result<(Summary, Vec<Flow>), ReconstructError> {
    let sources: Vec<OpenSource> = inputs.sources.iter().cloned().map(OpenSource::open).collect::<Result<_, _>>()?;
    let progress = Progress::new(opts.progress, sources.iter().map(OpenSource::extent).sum());
    let merger = Merger::new(&sources, opts.classify, opts.window);
    let merger = if opts.fill_windows { merger.filling_windows() } else { merger };
    let mut builder = RecordBuilder::new();
    let mut tally = Tally::new(sources.len());
    let mut flows = Vec::with_capacity(BATCH);
    let file_of = inputs.file_of();
    let queued = AtomicUsize::new(0);
    let mut merger = std::thread::scope(|scope| -> Result<Merger<'_>, ReconstructError> {
        let (batches, spent, merging) = merge_in_background(scope, merger, opts, &queued);
        for mut batch in batches.iter() {
            queued.fetch_sub(1, Relaxed);
            if !batch.loaded {
                batch.frames.load(&batch.packets);
            }
            let (packets, frames) = (&batch.packets, &batch.frames);
            // In trace order, so flow ids are numbered as `record` would number them, and in
            // a pass of their own, so that the flow table's cache misses overlap.
            flows.clear();
            flows.extend((0..packets.len()).map(|i| builder.flow_id(frames.get(i), frames.info(i).as_ref().ok())));
            for (i, m) in packets.iter().enumerate() {
                let (restored, info) = (frames.get(i), frames.info(i));
                let meta = frame_meta(m, restored.len(), file_of[usize::from(m.key.source)]);
                if meta.seq >= trace::record::SEQ_LIMIT {
                    return Err(ReconstructError::TooManyLaps);
                }
                let mut record = Record::of(restored, info.as_ref().ok(), &meta);
                record.flow = flows[i];
                tally.add(m, info.is_ok());
                tally.headers_cut.add(&record);
                sink.packet(&record, m, info, restored)
                    .map_err(|source| ReconstructError::Write { path: "output".into(), source })?;
            }
            batch.packets.clear();
            progress.set(tally.packets, batch.bytes_read);
            let _ = spent.try_send(batch);
        }
        drop(spent);
        Ok(merging.join().expect("the merge thread does not panic"))
    })?;
    progress.finish();
    let stats = merger.stats();
    let last_jump = merger.last_jump();
    let summary = tally.summary(paths, inputs, opts, &stats, std::mem::take(&mut merger.issues), last_jump);
    Ok((summary, builder.flows().to_vec()))
}

/// A batch's frames, copied out of the sources' memory maps, classified and restored, end
/// to end.
///
/// Each step runs over the whole batch before the next: the copies' loads miss (the merge
/// thread read only the headers, on the other core, and a window's worth of packets
/// before at a hole in the seqs), and independent misses overlap;
/// classification and restoration then read bytes whose wide stores have long completed
/// (reading them right after the copy stalled on store forwarding); and the flow-table
/// lookups that follow overlap their misses too.
struct Restored {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    infos: Vec<Result<FrameInfo, ErrorKind>>,
    classifier: Classifier,
}

impl Restored {
    fn new(cfg: ClassifyConfig) -> Restored {
        Restored { bytes: Vec::new(), ends: Vec::new(), infos: Vec::new(), classifier: Classifier::new(cfg) }
    }

    fn load(&mut self, packets: &[Merged<'_>]) {
        self.bytes.clear();
        self.ends.clear();
        self.infos.clear();
        for m in packets {
            self.bytes.extend_from_slice(m.raw.data);
            self.ends.push(self.bytes.len());
        }
        for (i, m) in packets.iter().enumerate() {
            let range = self.range(i);
            let info = self.classifier.classify(&self.bytes[range], m.raw.orig_len, m.restore);
            self.infos.push(info);
        }
        for (i, m) in packets.iter().enumerate() {
            if let (Some(form), Ok(info)) = (m.restore, &self.infos[i]) {
                let range = self.range(i);
                wire::mirror::restore_form(&mut self.bytes[range], info, &self.classifier.cfg, form);
            }
        }
    }

    fn info(&self, i: usize) -> &Result<FrameInfo, ErrorKind> {
        &self.infos[i]
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        start..self.ends[i]
    }

    fn get(&self, i: usize) -> &[u8] {
        &self.bytes[self.range(i)]
    }
}

/// Classifies frames that may be trimmed: a trimmed frame is padded with zeros to its
/// wire length, so the wire crate's length checks hold. The padding buffer stays zero
/// between calls, so each call copies and clears only the captured bytes.
pub(crate) struct Classifier {
    cfg: ClassifyConfig,
    zeros: Vec<u8>,
}

impl Classifier {
    pub(crate) fn new(cfg: ClassifyConfig) -> Self {
        Classifier { cfg, zeros: Vec::new() }
    }

    /// A copy still in `form` is classified as that form's copies are
    /// ([`CopyForm::classify_config`]).
    pub(crate) fn classify(
        &mut self,
        data: &[u8],
        orig_len: u32,
        form: Option<CopyForm>,
    ) -> Result<FrameInfo, ErrorKind> {
        let cfg = form.map_or(self.cfg, |f| f.classify_config(&self.cfg));
        // No frame's headers describe more than Ethernet + two VLAN tags + an IPv6 header
        // and its 64 KiB payload, so a larger length (a damaged or hostile file) is padded
        // only that far.
        const MAX_WIRE_LEN: usize = 14 + 8 + 40 + 65_535;
        let wire_len = (orig_len as usize).min(MAX_WIRE_LEN.max(data.len()));
        if data.len() >= wire_len {
            return wire::frame::classify(data, &cfg).map_err(|e| e.kind());
        }
        if self.zeros.len() < wire_len {
            self.zeros.resize(wire_len, 0);
        }
        self.zeros[..data.len()].copy_from_slice(data);
        let info = wire::frame::classify(&self.zeros[..wire_len], &cfg).map_err(|e| e.kind());
        self.zeros[..data.len()].fill(0);
        info
    }
}

/// Ordered packets from the merge thread, with how far it has read (for progress) and,
/// when `loaded`, their frames already copied out, classified and restored there.
struct Batch<'a> {
    packets: Vec<Merged<'a>>,
    frames: Restored,
    /// Whether `frames` holds `packets` already (else this thread loads them).
    loaded: bool,
    bytes_read: u64,
}

type Batches<'a> = std::sync::mpsc::Receiver<Batch<'a>>;
type Spent<'a> = std::sync::mpsc::SyncSender<Batch<'a>>;

/// Runs `merger` on a thread of `scope`: batches come out of the first receiver, emptied
/// batches go back through the sender for reuse, and the thread returns the merger (its
/// stats and issues) when the sources are exhausted — or when the receiver is dropped.
fn merge_in_background<'scope, 'a: 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    mut merger: Merger<'a>,
    opts: &Options,
    queued: &'scope AtomicUsize,
) -> (Batches<'a>, Spent<'a>, std::thread::ScopedJoinHandle<'scope, Merger<'a>>) {
    use std::sync::mpsc::sync_channel;
    let (full, batches) = sync_channel::<Batch<'a>>(4);
    let (spent, empty) = sync_channel::<Batch<'a>>(8);
    let (classify, load_when_queued) = (opts.classify, opts.merge_loads_when_queued);
    let thread = std::thread::Builder::new().name("merge".into());
    let handle = thread.spawn_scoped(scope, move || {
        let fresh = || Batch {
            packets: Vec::with_capacity(BATCH),
            frames: Restored::new(classify),
            loaded: false,
            bytes_read: 0,
        };
        // Loads the batch here when the other thread is behind: then this one would
        // otherwise soon wait for room in the channel.
        let send = |mut batch: Batch<'a>| {
            batch.loaded = queued.load(Relaxed) >= load_when_queued;
            if batch.loaded {
                batch.frames.load(&batch.packets);
            }
            queued.fetch_add(1, Relaxed);
            full.send(batch).is_ok()
        };
        let mut batch = fresh();
        while let Some(m) = merger.next() {
            batch.packets.push(m);
            if batch.packets.len() == BATCH {
                batch.bytes_read = merger.bytes_read();
                let next = empty.try_recv().unwrap_or_else(|_| fresh());
                if !send(std::mem::replace(&mut batch, next)) {
                    return merger;
                }
            }
        }
        batch.bytes_read = merger.bytes_read();
        let _ = send(batch);
        merger
    });
    (batches, spent, handle.expect("spawning a thread"))
}

/// `file`: the record's source, the file the packet was read from.
fn frame_meta(m: &Merged<'_>, captured: usize, file: u16) -> FrameMeta {
    FrameMeta {
        seq: m.seq(),
        switch_ts_ns: m.switch_ts_ns,
        wire_len: m.raw.orig_len,
        source: file,
        event: m.event,
        mirrored: m.mirrored,
        trimmed: captured < m.raw.orig_len as usize,
    }
}

struct Tally {
    packets: u64,
    mirrored: u64,
    gaps: Gaps,
    /// Per source: frames that are not copies, well formed and malformed (only this
    /// thread classifies frames).
    not_copies: Vec<NotCopies>,
    headers_cut: HeadersCut,
}

#[derive(Default, Clone, Copy)]
struct NotCopies {
    other: u64,
    malformed: u64,
}

/// The missing seq ranges of copies met in trace order (unwrapped seqs). A late copy — at
/// or below the last one, which the merge reports — fills its place in a missing range.
///
/// Ranges are kept as periodic runs (equal ranges at an equal stride): a dump host that
/// captured nothing leaves a gap every few seqs, tens of millions of ranges in a long run,
/// which as a run take one entry. Memory grows with the irregular gaps only.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Gaps {
    pub first: Option<u64>,
    pub last: Option<u64>,
    /// Each run by its first seq (unwrapped); runs are disjoint and in order.
    runs: std::collections::BTreeMap<u64, Run>,
    pub total: u64,
    /// Missing ranges in all (a run holds `reps` of them).
    ranges: u64,
}

/// `reps` missing ranges of `len` seqs each, the i-th starting `i * stride` after the
/// run's first seq (`stride` is unused when `reps` is 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    len: u64,
    stride: u64,
    reps: u64,
}

impl Run {
    fn single(first: u64, last: u64) -> Run {
        Run { len: last - first + 1, stride: 0, reps: 1 }
    }

    /// The i-th range of a run starting at `first`.
    fn range(&self, first: u64, i: u64) -> (u64, u64) {
        let a = first + i * self.stride;
        (a, a + self.len - 1)
    }

    /// Which range of the run `seq` falls in or after (the run starts at `first <= seq`).
    fn index(&self, first: u64, seq: u64) -> u64 {
        if self.reps == 1 {
            0
        } else {
            ((seq - first) / self.stride).min(self.reps - 1)
        }
    }

    /// How many of the run's seqs lie below `x`.
    fn below(&self, first: u64, x: u64) -> u64 {
        if x <= first {
            return 0;
        }
        let i = self.index(first, x - 1);
        let (a, _) = self.range(first, i);
        i * self.len + (x - a).min(self.len)
    }
}

impl Gaps {
    #[inline]
    pub fn observe(&mut self, seq: u64) {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            (self.first, self.last) = (Some(seq), Some(seq));
            return;
        };
        if seq > last {
            if seq > last + 1 {
                self.push(last + 1, seq - 1);
            }
            self.last = Some(seq);
        } else if seq < first {
            if seq + 1 < first {
                self.insert(seq + 1, first - 1);
            }
            self.first = Some(seq);
        } else {
            self.fill(seq);
        }
    }

    /// Adds the range `a..=b`, which lies after every range so far: it extends the last
    /// run when it repeats that run's length at its stride.
    fn push(&mut self, a: u64, b: u64) {
        let len = b - a + 1;
        if let Some(mut last) = self.runs.last_entry() {
            let start = *last.key();
            let run = last.get_mut();
            let next = if run.reps == 1 { a - start > len } else { a == start + run.reps * run.stride };
            if run.len == len && next {
                if run.reps == 1 {
                    run.stride = a - start;
                }
                run.reps += 1;
                (self.total, self.ranges) = (self.total + len, self.ranges + 1);
                return;
            }
        }
        self.insert(a, b);
    }

    fn insert(&mut self, a: u64, b: u64) {
        self.runs.insert(a, Run::single(a, b));
        (self.total, self.ranges) = (self.total + (b - a + 1), self.ranges + 1);
    }

    /// A late copy: no longer missing (nothing changes for a duplicate). Its run is split
    /// around the range it falls in.
    fn fill(&mut self, seq: u64) {
        let Some((&first, &run)) = self.runs.range(..=seq).next_back() else { return };
        let i = run.index(first, seq);
        let (a, b) = run.range(first, i);
        if seq < a || seq > b {
            return;
        }
        self.runs.remove(&first);
        (self.total, self.ranges) = (self.total - run.len, self.ranges - 1);
        if i > 0 {
            self.runs.insert(first, Run { reps: i, ..run });
        }
        if a < seq {
            self.insert(a, seq - 1);
        }
        if seq < b {
            self.insert(seq + 1, b);
        }
        if i + 1 < run.reps {
            self.runs.insert(a + run.stride, Run { reps: run.reps - i - 1, ..run });
        }
    }

    /// The gaps of a pass over the copies `self` saw and then those `later` saw: a seq
    /// is missing when it lies between the lowest and highest seen and neither saw it.
    pub fn join(self, later: Gaps) -> Gaps {
        let (Some(a0), Some(a1)) = (self.first, self.last) else { return later };
        let (Some(b0), Some(b1)) = (later.first, later.last) else { return self };
        let (lo, hi) = (a0.min(b0), a1.max(b1));
        let mut out = Gaps { first: Some(lo), last: Some(hi), ..Gaps::default() };
        let (mut a, mut b) = (self.unseen_within(lo, hi).peekable(), later.unseen_within(lo, hi).peekable());
        while let (Some(&(x0, x1)), Some(&(y0, y1))) = (a.peek(), b.peek()) {
            let (first, last) = (x0.max(y0), x1.min(y1));
            if first <= last {
                out.push(first, last);
            }
            if x1 < y1 {
                a.next();
            } else {
                b.next();
            }
        }
        out
    }

    /// The seqs in `lo..=hi` this pass did not see, as ranges in order: its missing ranges
    /// and whatever lies outside its own first..=last.
    fn unseen_within(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (first, last) = (self.first.unwrap_or(hi + 1), self.last.unwrap_or(hi));
        let head = (lo < first).then(|| (lo, first.min(hi + 1) - 1));
        let tail = (last < hi && self.first.is_some()).then(|| (last + 1, hi));
        head.into_iter().chain(self.missing_unwrapped()).chain(tail)
    }

    /// The missing ranges in seq order, as wire seqs: the first `limit`.
    pub fn missing(&self, limit: usize) -> Vec<SeqRange> {
        self.missing_unwrapped().take(limit).map(|(a, b)| SeqRange::of_unwrapped(a, b)).collect()
    }

    /// The missing ranges in seq order, as unwrapped `(first, last)`.
    pub fn missing_unwrapped(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().flat_map(|(&first, run)| (0..run.reps).map(move |i| run.range(first, i)))
    }

    /// How many missing ranges there are.
    pub fn ranges(&self) -> u64 {
        self.ranges
    }

    /// How many seqs in `lo..hi` are missing.
    /// Whether any seq in `lo..hi` is missing: `count_within(lo, hi) > 0` in O(log runs),
    /// whatever the span (an analyzer asks it from a packet to the trace's end).
    pub fn any_within(&self, lo: u64, hi: u64) -> bool {
        if lo >= hi {
            return false;
        }
        let reaching =
            self.runs.range(..=lo).next_back().is_some_and(|(&first, run)| run.below(first, hi) > run.below(first, lo));
        reaching || self.runs.range(lo + 1..hi).next().is_some()
    }

    pub fn count_within(&self, lo: u64, hi: u64) -> u64 {
        if lo >= hi {
            return 0;
        }
        let from = self.runs.range(..=lo).next_back().map_or(lo, |(&first, _)| first);
        self.runs.range(from..hi).map(|(&first, run)| run.below(first, hi) - run.below(first, lo)).sum()
    }

    /// The trace's last copy, when seqs are missing just before it and its seq is more
    /// likely corrupted than they lost (`seq-outlier`), is set aside: the seqs it jumped
    /// over are not missing, and the span ends at the copy before. Returns whether it did.
    /// Corrupted: it lies more than [`LAP_MARGIN`] past the copy before (a real jump would
    /// have copies after it), or its seq is one bit from a seq missing before it and the
    /// copies before are so nearly whole that such a match is no chance ([`Self::one_bit_flip`]).
    pub fn set_aside_outlier(&mut self) -> bool {
        let Some(last) = self.last else { return false };
        let Some((&start, &run)) = self.runs.last_key_value() else { return false };
        let (a, b) = run.range(start, run.reps - 1);
        if b + 1 != last || (b - a < u64::from(LAP_MARGIN) && !self.one_bit_flip(last, a - 1, run.len)) {
            return false;
        }
        self.set_aside_last()
    }

    /// Sets the last copy aside when seqs are missing just before it: the span ends at the
    /// copy before, and the seqs between are not missing. Returns whether it did.
    pub fn set_aside_last(&mut self) -> bool {
        let Some(last) = self.last else { return false };
        let Some(mut entry) = self.runs.last_entry() else { return false };
        let (start, run) = (*entry.key(), *entry.get());
        let (a, b) = run.range(start, run.reps - 1);
        if b + 1 != last {
            return false;
        }
        match run.reps {
            1 => drop(entry.remove()),
            _ => entry.get_mut().reps -= 1,
        }
        (self.total, self.ranges, self.last) = (self.total - run.len, self.ranges - 1, Some(a - 1));
        true
    }

    /// Whether seqs are missing just after the first copy.
    pub fn missing_after_first(&self) -> bool {
        self.first.zip(self.runs.first_key_value()).is_some_and(|(first, (&start, _))| start == first + 1)
    }

    /// Sets the first copy aside when seqs are missing just after it: the span starts at
    /// the copy after, and the seqs between are not missing. Returns whether it did.
    pub fn set_aside_first(&mut self) -> bool {
        if !self.missing_after_first() {
            return false;
        }
        let Some((&start, &run)) = self.runs.first_key_value() else { return false };
        self.runs.remove(&start);
        if run.reps > 1 {
            self.runs.insert(start + run.stride, Run { reps: run.reps - 1, ..run });
        }
        (self.total, self.ranges, self.first) = (self.total - run.len, self.ranges - 1, Some(start + run.len));
        true
    }

    /// Whether the copy `seq`, after `jumped` missing seqs that follow the copy `before`,
    /// is rather a copy from before with one bit of its seq flipped (review: bit 23 of a
    /// last copy's seq made 8.4 M copies missing): some seq one bit from it is missing
    /// before it, and the chance that one of its one-bit neighbours there is missing by
    /// loss — their number times the share of seqs missing before — is at most 1 %. A jump
    /// of a single seq is as likely one copy lost.
    fn one_bit_flip(&self, seq: u64, before: u64, jumped: u64) -> bool {
        let Some(first) = self.first.filter(|_| jumped >= 2) else { return false };
        let near: Vec<u64> = one_bit_neighbours(seq, before).filter(|&u| first <= u && u < before).collect();
        let lost_before = self.total - jumped;
        let spanned = before - first + 1;
        near.iter().any(|&u| self.any_within(u, u + 1)) && 100 * near.len() as u64 * lost_before <= spanned
    }

    /// Whether wire seq `wire` is missing on any lap the gaps span.
    pub fn wire_seq_missing(&self, wire: u32) -> bool {
        let Some(first) = self.first else { return false };
        let end = self.runs.last_key_value().map_or(first, |(&start, run)| run.range(start, run.reps - 1).1);
        let (lap, w) = (u64::from(wire::mirror::SEQ_MAX), u64::from(wire));
        // The unwrapped seqs of wire seq w are w, w + lap, w + 2 lap, ...
        (first.saturating_sub(w) / lap..=end / lap).map(|k| w + k * lap).any(|u| self.any_within(u, u + 1))
    }

    /// `n` copies were lost after the last one (the switch's counters say so): the seqs
    /// after it are missing. `last` stays the last copy's.
    pub fn missing_after_last(&mut self, n: u64) {
        let Some(last) = self.last.filter(|_| n > 0) else { return };
        if !self.runs.contains_key(&(last + 1)) {
            self.insert(last + 1, last + n);
        }
    }
}

/// The unwrapped seqs whose wire seq differs from `seq`'s in one bit, each placed on the
/// lap nearest `near`.
fn one_bit_neighbours(seq: u64, near: u64) -> impl Iterator<Item = u64> {
    let (wire, base) = (wire_of(seq), wire_of(near));
    (0..31).map(move |b| wire ^ 1 << b).filter(|&m| m != 0 && m <= wire::mirror::SEQ_MAX).filter_map(move |m| {
        near.checked_add_signed(i64::from(crate::merge::signed_seq_distance(base, m))).filter(|&u| u > 0)
    })
}

impl Tally {
    fn new(sources: usize) -> Tally {
        Tally {
            packets: 0,
            mirrored: 0,
            gaps: Gaps::default(),
            not_copies: vec![NotCopies::default(); sources],
            headers_cut: HeadersCut::default(),
        }
    }

    fn add(&mut self, m: &Merged<'_>, well_formed: bool) {
        self.packets += 1;
        if m.mirrored {
            self.mirrored += 1;
            self.gaps.observe(m.key.seq);
            return;
        }
        let n = &mut self.not_copies[usize::from(m.key.source)];
        if well_formed {
            n.other += 1;
        } else {
            n.malformed += 1;
        }
    }

    fn summary(
        mut self,
        paths: &[PathBuf],
        inputs: &Inputs,
        opts: &Options,
        stats: &[SourceStats],
        mut issues: Issues,
        last_jump: Option<(crate::merge::MergeIssue, bool)>,
    ) -> Summary {
        if let Some(jump) = last_jump.filter(|_| self.gaps.set_aside_outlier()) {
            issues.add_outlier(jump);
        }
        let missing = self.gaps.missing(MISSING_LISTED);
        let issues_kept = issues
            .kept
            .iter()
            .map(|i| tie_outlier(serde_json::to_value(i).expect("serializable"), &self.gaps))
            .collect();
        let read: Vec<(&SourceSpec, SourceStats)> = inputs
            .sources
            .iter()
            .zip(stats)
            .zip(&self.not_copies)
            .map(|((s, st), n)| (s, SourceStats { other: n.other, malformed: n.malformed, ..st.clone() }))
            .collect();
        let sources = by_file(&read);
        Summary {
            format: SUMMARY_FORMAT.into(),
            version: 1,
            inputs: paths.to_vec(),
            // Absolute: check and analyze look here for the run's files from wherever they run.
            dirs: inputs.dirs.iter().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())).collect(),
            mirror_port: opts.classify.mirror_port,
            roce_port: opts.classify.roce_port,
            window: opts.window,
            sources,
            packets: self.packets,
            mirrored: self.mirrored,
            first_seq: self.gaps.first.map(wire_of),
            last_seq: self.gaps.last.map(wire_of),
            first_unwrapped: self.gaps.first,
            last_unwrapped: self.gaps.last,
            missing,
            missing_ranges: self.gaps.ranges(),
            missing_total: self.gaps.total,
            issues: issues_kept,
            issue_counts: issues.counts.iter().map(|(k, &n)| (k.to_string(), n)).collect(),
            headers_cut: self.headers_cut,
            skipped_inputs: inputs.skipped.clone(),
            removed_outputs: Vec::new(),
            no_copies: None,
        }
    }
}

/// The sources as files: the lcore runs of a Lumina-dumper file (consecutive sources) as
/// one, their tallies summed and listed.
fn by_file(read: &[(&SourceSpec, SourceStats)]) -> Vec<SourceSummary> {
    let mut files: Vec<SourceSummary> = Vec::new();
    for (s, st) in read {
        let Some(run) = &s.run else {
            files.push(file_summary(s, s.name.clone(), st.clone()));
            continue;
        };
        if run.index == 0 {
            files.push(file_summary(s, run.file.clone(), SourceStats::default()));
        }
        let file = files.last_mut().expect("a file's run 0 comes first");
        add_stats(&mut file.stats, st);
        let (offset, end) = (run.offset, run.end);
        file.lcore_runs.push(RunSummary { name: s.name.clone(), offset, end, stats: st.clone() });
    }
    files
}

fn file_summary(s: &SourceSpec, name: String, stats: SourceStats) -> SourceSummary {
    SourceSummary {
        name,
        path: s.path.clone(),
        format: s.format,
        host: s.host,
        core: s.core,
        read_as: s.read_as,
        lcore_runs: Vec::new(),
        stats,
    }
}

/// A file's tallies plus one more of its runs (read in file order).
fn add_stats(file: &mut SourceStats, run: &SourceStats) {
    file.packets += run.packets;
    file.mirrored += run.mirrored;
    file.other += run.other;
    file.malformed += run.malformed;
    // Each run covers the file's whole span of seqs: the file's first is the earliest of
    // the runs' firsts, its last the latest of their lasts (on the seq ring).
    let before = |a: u32, b: u32| crate::merge::signed_seq_distance(a, b) > 0;
    file.first_seq = match (file.first_seq, run.first_seq) {
        (Some(a), Some(b)) if before(b, a) => Some(b),
        (a, b) => a.or(b),
    };
    file.last_seq = match (file.last_seq, run.last_seq) {
        (Some(a), Some(b)) if before(a, b) => Some(b),
        (a, b) => a.or(b),
    };
}

/// A `seq-outlier` issue with `one_bit_from`: the missing seq its seq differs from in one
/// bit, when there is one — the copy's own seq, most likely, a bit flipped on the way.
/// Every missing range counts, not only those listed.
fn tie_outlier(mut issue: serde_json::Value, gaps: &Gaps) -> serde_json::Value {
    let seq = match (issue["kind"].as_str(), issue["seq"].as_u64()) {
        (Some("seq-outlier"), Some(seq)) => seq as u32,
        _ => return issue,
    };
    let mut near = (0..31).map(|b| seq ^ 1 << b).filter(|&s| s != 0 && s <= wire::mirror::SEQ_MAX);
    if let Some(s) = near.find(|&s| gaps.wire_seq_missing(s)) {
        issue["one_bit_from"] = s.into();
    }
    issue
}

/// The files `reconstruct` writes: the pcapng trace (one interface per source, so a
/// Wireshark user sees which dump host or core each packet came from) and the records,
/// each spooled to disk by a thread of its own.
pub struct FileSink {
    /// None when only records are wanted.
    pcapng: Option<Spool>,
    records: RecordWriter<Spool>,
    dir: PathBuf,
    /// The earlier analysis outputs removed from `dir`.
    removed: Vec<String>,
}

/// Bytes per write(2). 1 MiB rather than more: O_DIRECT reaches the disk's rate from
/// 1 MiB writes on (dd on the bench VM: 2.5 GB/s at 1 MiB, 2.6 at 4 MiB, 1.7 at 256 KiB),
/// and the chunks in flight (a handful per spool) then stay closer to the cache; full
/// output at 53 M packets took a median 8.0 s instead of 9.4 s (docs/benchmarks.md).
const CHUNK: usize = 1 << 20;

impl FileSink {
    /// With `pcapng` false no trace.pcapng is written, and one left by an earlier
    /// reconstruction into `dir` is removed (it would not match the new records).
    pub fn create(dir: &Path, inputs: &Inputs, pcapng: bool) -> Result<FileSink, ReconstructError> {
        let werr = |path: PathBuf| move |source| ReconstructError::Write { path, source };
        crate::outputs::check_replaceable(dir, pcapng)?;
        std::fs::create_dir_all(dir).map_err(werr(dir.into()))?;
        // An earlier summary goes first: if this run fails, no summary describes its
        // unfinished outputs (one is written only when they are complete).
        let summary_path = dir.join(SUMMARY_FILE);
        match std::fs::remove_file(&summary_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(werr(summary_path)(e)),
            _ => {}
        }
        let removed = remove_analysis(dir)?;
        let trace_path = dir.join(TRACE_FILE);
        let pcapng = if pcapng {
            // Direct I/O: nothing of ours reads the trace back, so it need not pass through
            // the page cache (the records, which check and analyze map next, do).
            let mut spool = Spool::create_direct(&trace_path, CHUNK).map_err(werr(trace_path.clone()))?;
            let app = concat!("rocescope reconstruct ", env!("CARGO_PKG_VERSION"));
            spool.write_all(&trace::pcapng::section_header(app)).map_err(werr(trace_path.clone()))?;
            for s in inputs.files() {
                let idb = trace::pcapng::interface_description(65_535, &s.name, &s.path.display().to_string());
                spool.write_all(&idb).map_err(werr(trace_path.clone()))?;
            }
            Some(spool)
        } else {
            match std::fs::remove_file(&trace_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(werr(trace_path)(e)),
                _ => None,
            }
        };
        let rec_path = dir.join(trace::record::FILE_NAME);
        let rec_file = File::create(&rec_path).map_err(werr(rec_path.clone()))?;
        let spool = Spool::new(rec_file, CHUNK).map_err(werr(rec_path.clone()))?;
        let records = RecordWriter::new(spool).map_err(werr(rec_path))?;
        Ok(FileSink { pcapng, records, dir: dir.to_path_buf(), removed })
    }

    /// The earlier analysis outputs [`FileSink::create`] removed.
    pub fn removed(&self) -> &[String] {
        &self.removed
    }

    /// Writes the flow table and record header, then `reconstruct.json`.
    pub fn finish(self, summary: &Summary, flows: &[Flow]) -> Result<(), ReconstructError> {
        let werr = |path: PathBuf| move |source| ReconstructError::Write { path, source };
        if let Some(pcapng) = self.pcapng {
            pcapng.finish().map_err(werr(self.dir.join(TRACE_FILE)))?;
        }
        let rec_path = self.dir.join(trace::record::FILE_NAME);
        self.records.finish(flows).and_then(Spool::finish).map_err(werr(rec_path))?;
        let json = serde_json::to_vec_pretty(summary).expect("serializable");
        let path = self.dir.join(SUMMARY_FILE);
        std::fs::write(&path, json).map_err(werr(path))
    }
}

impl Sink for FileSink {
    fn packet(
        &mut self,
        record: &Record,
        m: &Merged<'_>,
        info: &Result<FrameInfo, ErrorKind>,
        restored: &[u8],
    ) -> std::io::Result<()> {
        if let Some(pcapng) = &mut self.pcapng {
            let annotation = match (info, m.mirrored) {
                (_, true) => Annotation::Mirrored { seq: record.wire_seq(), event: m.event },
                (Ok(info), false) => Annotation::Class(info.class),
                (Err(kind), false) => Annotation::Malformed(*kind),
            };
            let mut comment = [0u8; trace::pcapng::MAX_COMMENT];
            let comment = annotation.comment(&mut comment);
            let epb = Epb {
                interface_id: u32::from(record.source),
                timestamp_ns: record.switch_ts_ns,
                original_len: m.raw.orig_len,
                data: restored,
                packet_id: u64::from(record.wire_seq()),
                comment,
            };
            pcapng.append(|chunk| epb.append_to(chunk)).map_err(|e| named(TRACE_FILE, e))?;
        }
        self.records.push(record).map_err(|e| named(trace::record::FILE_NAME, e))
    }
}

/// Removes what an analysis wrote into `dir` (report.json, plots): it describes the trace
/// there, which a new reconstruction replaces. Returns the names removed. The plots go
/// first: they are known to be ours by the report.json of ours beside them
/// ([`crate::outputs::check_replaceable`]), which a failure between must not leave gone.
fn remove_analysis(dir: &Path) -> Result<Vec<String>, ReconstructError> {
    let mut removed = Vec::new();
    for name in crate::analyze::OUTPUT_FILES.iter().rev() {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(name.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(ReconstructError::Write { path, source }),
        }
    }
    removed.reverse(); // listed as the analysis names them, report.json first
    Ok(removed)
}

/// A write error that says which output file failed.
fn named(file: &str, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{file}: {e}"))
}

/// Merges `paths` into `out`: trace.pcapng (unless `opts.pcapng` is false), records.rsr,
/// reconstruct.json.
pub fn reconstruct_to(paths: &[PathBuf], out: &Path, opts: &Options) -> Result<Summary, ReconstructError> {
    let inputs = crate::input::discover_for(paths, &opts.classify)?;
    ready_to_overwrite(&inputs, out)?;
    let mut sink = FileSink::create(out, &inputs, opts.pcapng)?;
    let (mut summary, flows) = run(paths, &inputs, opts, &mut sink)?;
    summary.removed_outputs = sink.removed().to_vec();
    if summary.mirrored == 0 {
        let found = crate::mirror_port::NoCopies::look(&inputs, opts.classify);
        summary.no_copies = Some(found.advice(opts.classify));
    }
    sink.finish(&summary, &flows)?;
    Ok(summary)
}

/// Whether the outputs in `out` may be truncated: no input is one of them (a trace.pcapng
/// given back as an input would be emptied before it is read), and every input opens (a
/// run that cannot start does not destroy the last one's outputs).
fn ready_to_overwrite(inputs: &crate::input::Inputs, out: &Path) -> Result<(), ReconstructError> {
    let outputs: Vec<PathBuf> = [TRACE_FILE, trace::record::FILE_NAME, SUMMARY_FILE]
        .iter()
        .filter_map(|name| std::fs::canonicalize(out.join(name)).ok())
        .collect();
    let real_out = std::fs::canonicalize(out).ok();
    if real_out.is_some() && inputs.dirs.iter().any(|d| std::fs::canonicalize(d).ok() == real_out) {
        return Err(ReconstructError::OutputInInput(out.to_path_buf()));
    }
    for s in &inputs.sources {
        let path = &s.path;
        trace::mapped::open_regular(path).map_err(|source| InputError::Io { path: path.clone(), source })?;
        if std::fs::canonicalize(path).is_ok_and(|p| outputs.contains(&p)) {
            return Err(ReconstructError::InputIsOutput(path.clone()));
        }
    }
    Ok(())
}

/// A reconstruction on disk, loaded: its summary and its record file, mapped.
pub struct Reconstruction {
    map: trace::mapped::MappedFile,
    pub dir: PathBuf,
    pub summary: Summary,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Summary(#[from] ReconstructError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Records { path: PathBuf, source: trace::record::RecordFileError },
}

impl Reconstruction {
    pub fn load(dir: &Path) -> Result<Reconstruction, LoadError> {
        let summary = Summary::load(dir)?;
        let path = dir.join(trace::record::FILE_NAME);
        let map =
            trace::mapped::MappedFile::open(&path).map_err(|source| LoadError::Io { path: path.clone(), source })?;
        trace::record::RecordView::parse(map.bytes()).map_err(|source| LoadError::Records { path, source })?;
        Ok(Reconstruction { map, dir: dir.to_path_buf(), summary })
    }

    pub fn view(&self) -> trace::record::RecordView<'_> {
        trace::record::RecordView::parse(self.map.bytes()).expect("parsed once in load")
    }

    /// The records, writable in memory: the file is mapped again copy-on-write, so what
    /// is written costs only the pages written and never reaches the file.
    pub fn records_mut(&mut self) -> Result<&mut [Record], LoadError> {
        let path = self.dir.join(trace::record::FILE_NAME);
        if self.map.bytes_mut().is_none() {
            self.map = trace::mapped::MappedFile::open_copy_on_write(&path)
                .map_err(|source| LoadError::Io { path: path.clone(), source })?;
        }
        let bytes = self.map.bytes_mut().expect("mapped copy-on-write above");
        trace::record::RecordView::records_mut(bytes).map_err(|source| LoadError::Records { path, source })
    }
}

/// A progress bar on stderr when it is a terminal and the input is large.
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn new(enabled: bool, total_bytes: u64) -> Progress {
        use std::io::IsTerminal;
        if !enabled || !std::io::stderr().is_terminal() || total_bytes < 64 << 20 {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new(total_bytes);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} packets [{bar:40}] {bytes}/{total_bytes} ({eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Progress(Some(bar))
    }
    fn set(&self, packets: u64, bytes_read: u64) {
        if let Some(b) = &self.0 {
            b.set_message(packets.to_string());
            b.set_position(bytes_read);
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// A Lumina-dumper file's runs, as the terminal summary lists them.
fn lcore_runs(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "read whole, as one source".into();
    }
    let each: Vec<String> = runs.iter().map(|r| r.stats.mirrored.to_string()).collect();
    format!("{} lcore runs, each merged as a source ({} copies)", runs.len(), each.join(" + "))
}

/// The terminal summary of a reconstruction.
pub fn render(s: &Summary) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "{} sources, {} packets ({} mirrored copies)", s.sources.len(), s.packets, s.mirrored);
    for src in &s.sources {
        let (name, runs, read_as, src) = (&src.name, &src.lcore_runs, src.read_as, &src.stats);
        let seqs = match (src.first_seq, src.last_seq) {
            (Some(a), Some(b)) => format!("seq {a}..{b}"),
            _ => "no copies".into(),
        };
        let _ = writeln!(
            out,
            "  {:<32} {:>10} packets {:>10} copies {:>6} other {:>6} malformed  {seqs}",
            name, src.packets, src.mirrored, src.other, src.malformed
        );
        if read_as == ReadAs::LuminaDumper {
            let _ = writeln!(
                out,
                "    read as Lumina's dumper writes it (ports restored, records by lcore): {}",
                lcore_runs(runs)
            );
        }
    }
    if let (Some(a), Some(b)) = (s.first_seq, s.last_seq) {
        let _ = writeln!(out, "mirror seq {a}..{b}: {} missing in {} ranges", s.missing_total, s.missing_ranges);
    }
    for r in s.missing.iter().take(20) {
        let _ = writeln!(out, "  missing {}..{} ({})", r.first, r.last, r.count);
    }
    if s.missing_ranges > 20 {
        let listed = s.missing.len();
        let _ = writeln!(out, "  ... {} more ranges ({SUMMARY_FILE} lists the first {listed})", s.missing_ranges - 20);
    }
    if !s.removed_outputs.is_empty() {
        let names = s.removed_outputs.join(", ");
        let _ = writeln!(out, "  removed {names}: an earlier analysis's, of the trace this one replaces");
    }
    let cut = &s.headers_cut;
    if cut.frames > 0 {
        let _ = writeln!(
            out,
            "  {} frames cut inside their extension headers by the snap length (BTH kept): RETH DMA length unknown on {}, AETH syndrome and MSN on {}",
            cut.frames, cut.reth, cut.aeth
        );
    }
    for k in &s.skipped_inputs {
        let _ = writeln!(out, "  skipped {}: {}", k.path.display(), k.why);
    }
    for i in s.issues.iter().take(20) {
        let _ = writeln!(out, "  problem: {i}");
    }
    let total = s.issues_total();
    if total > 20 {
        let kept = crate::merge::ISSUES_KEPT_PER_KIND;
        let _ = writeln!(
            out,
            "  ... {} more problems ({SUMMARY_FILE} keeps the first {kept} of each kind; by kind: {:?})",
            total - 20,
            s.issue_counts
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_wire_length_pads_no_further_than_a_frame_can_reach() {
        let mut c = Classifier::new(ClassifyConfig::default());
        let _ = c.classify(&[0u8; 60], u32::MAX, None);
        assert!(c.zeros.len() <= 14 + 8 + 40 + 65_535, "padded to {} bytes", c.zeros.len());
    }

    #[test]
    fn a_last_copy_far_past_the_rest_is_set_aside() {
        let far = u64::from(LAP_MARGIN) + 1;
        let mut gaps = Gaps::default();
        [1, 3, 5, 7, 9].into_iter().chain([9 + far + 1]).for_each(|s| gaps.observe(s));
        assert!(gaps.set_aside_outlier());
        assert_eq!((gaps.last, gaps.total, gaps.ranges()), (Some(9), 4, 4));
        assert_eq!(gaps.missing_unwrapped().collect::<Vec<_>>(), [(2, 2), (4, 4), (6, 6), (8, 8)]);
        // A jump no longer than the margin is loss, and one with copies after it too.
        let mut near = Gaps::default();
        [1, far].into_iter().for_each(|s| near.observe(s));
        assert!(!near.set_aside_outlier());
        let mut followed = Gaps::default();
        [1, far + 1, far + 2].into_iter().for_each(|s| followed.observe(s));
        assert!(!followed.set_aside_outlier());
        assert_eq!(followed.total, far - 1);
    }

    /// Review: `one_bit_from` was looked for among the first 10,000 missing ranges only.
    #[test]
    fn an_outlier_is_tied_to_its_missing_seq_beyond_the_listed_ranges() {
        let mut gaps = Gaps::default();
        // Every other seq lost up to 40,000 (20,000 ranges), then 60,001 missing alone.
        (1..=40_001).step_by(2).chain(40_002..=60_000).chain(60_002..=70_000).for_each(|s| gaps.observe(s));
        assert!(gaps.ranges() > MISSING_LISTED as u64);
        let issue = |seq: u32| serde_json::json!({"kind": "seq-outlier", "seq": seq});
        let tied = tie_outlier(issue(60_001 ^ 1 << 20), &gaps);
        assert_eq!(tied["one_bit_from"], 60_001);
        assert_eq!(tie_outlier(issue(39_998 ^ 1 << 25), &gaps)["one_bit_from"], 39_998);
        assert!(tie_outlier(issue(60_003 ^ 1 << 20), &gaps).get("one_bit_from").is_none(), "60,003 was seen");
        // On the lap after the wrap: wire seq 5 is unwrapped seq SEQ_MAX + 5.
        let lap = u64::from(wire::mirror::SEQ_MAX);
        let mut wrapped = Gaps::default();
        [lap - 1, lap, lap + 1, lap + 2, lap + 3, lap + 4, lap + 6].into_iter().for_each(|s| wrapped.observe(s));
        assert_eq!(tie_outlier(issue(5 ^ 1 << 28), &wrapped)["one_bit_from"], 5);
    }

    proptest::proptest! {
        /// In any order, the missing ranges are exactly the seqs between the lowest and
        /// highest seen that were never seen.
        #[test]
        fn gaps_are_the_unseen_seqs_whatever_the_order(seqs in proptest::collection::vec(1u64..300, 1..120)) {
            let mut gaps = Gaps::default();
            seqs.iter().for_each(|&s| gaps.observe(s));
            let seen: std::collections::BTreeSet<u64> = seqs.iter().copied().collect();
            let (lo, hi) = (*seen.first().unwrap(), *seen.last().unwrap());
            let unseen: Vec<u64> = (lo..=hi).filter(|s| !seen.contains(s)).collect();
            let listed: Vec<u64> = gaps.missing(usize::MAX).iter().flat_map(|r| u64::from(r.first)..=u64::from(r.last)).collect();
            proptest::prop_assert_eq!(&listed, &unseen);
            proptest::prop_assert_eq!(gaps.total, unseen.len() as u64);
            proptest::prop_assert_eq!((gaps.first, gaps.last), (Some(lo), Some(hi)));
            proptest::prop_assert_eq!(gaps.ranges(), gaps.missing_unwrapped().count() as u64);
            for (a, b) in [(0, 400), (lo, hi), (lo + 3, hi / 2), (hi / 3, hi)] {
                let brute = unseen.iter().filter(|&&s| a <= s && s < b).count() as u64;
                proptest::prop_assert_eq!(gaps.count_within(a, b), brute, "{}..{}", a, b);
                proptest::prop_assert_eq!(gaps.any_within(a, b), brute > 0, "{}..{}", a, b);
            }
        }

        /// A dump host that captured nothing (every `period`-th seq from `phase` missing),
        /// some of its copies then arriving late: exact, and a few runs however long.
        #[test]
        fn periodic_gaps_are_exact_in_a_few_runs(
            period in 2u64..6,
            phase in 0u64..6,
            n in 1u64..3000,
            late in proptest::collection::vec(0u64..3000, 0..6),
        ) {
            let lost = |s: u64| s % period == phase % period;
            let mut gaps = Gaps::default();
            (1..=n).filter(|&s| !lost(s)).for_each(|s| gaps.observe(s));
            late.iter().filter(|&&s| (1..=n).contains(&s)).for_each(|&s| gaps.observe(s));
            let seen: std::collections::BTreeSet<u64> =
                (1..=n).filter(|&s| !lost(s)).chain(late.iter().copied().filter(|s| (1..=n).contains(s))).collect();
            let Some((&lo, &hi)) = seen.first().zip(seen.last()) else { return Ok(()) };
            let unseen: Vec<u64> = (lo..=hi).filter(|s| !seen.contains(s)).collect();
            let listed: Vec<u64> = gaps.missing_unwrapped().flat_map(|(a, b)| a..=b).collect();
            proptest::prop_assert_eq!(&listed, &unseen);
            proptest::prop_assert_eq!(gaps.total, unseen.len() as u64);
            proptest::prop_assert!(gaps.runs.len() <= 2 + 3 * late.len(), "{} runs", gaps.runs.len());
            let (a, b) = (lo + n / 5, hi - n / 7);
            let brute = unseen.iter().filter(|&&s| a <= s && s < b).count() as u64;
            proptest::prop_assert_eq!(gaps.count_within(a, b), brute);
            for (a, b) in [(a, b), (lo, u64::MAX), (hi / 2, u64::MAX), (a, a + 1), (a, a + period)] {
                let brute = unseen.iter().any(|&s| a <= s && s < b);
                proptest::prop_assert_eq!(gaps.any_within(a, b), brute, "{}..{}", a, b);
            }
        }

        /// Two passes over a trace cut anywhere, joined, find what one pass finds.
        #[test]
        fn joined_gaps_equal_one_pass(seqs in proptest::collection::vec(1u64..300, 0..120), cut in 0usize..120) {
            let cut = cut.min(seqs.len());
            let pass = |part: &[u64]| {
                let mut gaps = Gaps::default();
                part.iter().for_each(|&s| gaps.observe(s));
                gaps
            };
            let listed = |g: &Gaps| (g.first, g.last, g.total, g.ranges(), g.missing_unwrapped().collect::<Vec<_>>());
            proptest::prop_assert_eq!(listed(&pass(&seqs[..cut]).join(pass(&seqs[cut..]))), listed(&pass(&seqs)));
        }
    }
}
