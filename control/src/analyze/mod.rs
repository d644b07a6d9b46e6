//! `rocescope analyze`: Lumina's test-suite analyzers (§4) over a reconstructed trace.
//!
//! The split follows Lumina's analyzer (STYLE.md): parsing is done once, by reconstruction,
//! into the record file; [`conn`] groups records into connections; each analyzer is a
//! module with `analyze(&Input) -> Report`, a serializable report that renders itself for
//! the terminal. Adding an analyzer touches only its module, [`Report`] and [`report`].
//!
//! | module | Lumina |
//! |---|---|
//! | [`gbn`] | §4 "Retransmission logic": the Go-back-N specification as a state machine |
//! | [`retrans`] | §4 "Retransmission performance", Figure 5: NACK generation / reaction, timeouts |
//! | [`cnp`] | §4 "Congestion notification", §6.3 CNP rate limiting |
//! | [`counters`] | §4 "Hardware network stack counter", §6.2.4 |
//! | [`interop`] | §6.2.3 interoperability (MigReq and other BTH fields) |
//! | [`goodput`] | §3.2 goodput and message completion times, from the trace |
//!
//! [`transport`] holds what every analyzer needs to read a record as an RC transport does
//! (delivered or not, ACK or NAK, message boundaries, READ spans, the IBA timeout, the
//! switch clock) and the Go-back-N receiver's rule, `transport::GbnReceiver`, which the
//! Go-back-N check, the retransmission latencies and the CNP triggers all replay.
//! [`egress`] models when a frame the switch forwards reaches its host: the NP's clock
//! for [`cnp`], completions at the requester for [`goodput`].

use std::path::{Path, PathBuf};

use crate::check::Corrupted;
use trace::record::RecordView;

pub mod cnp;
pub mod conn;
pub mod context;
pub mod counters;
pub mod cut;
pub mod egress;
pub mod events;
pub mod gbn;
pub mod goodput;
pub mod interop;
pub mod retrans;
pub mod transport;
pub mod unseen;

use conn::Connections;
use context::{RunContext, Verb};

pub const REPORT_FILE: &str = "report.json";
pub const REPORT_FORMAT: &str = "rocescope-report";
/// Every plot an analysis may draw.
pub const PLOT_FILES: [&str; 3] = [retrans::PLOT_GENERATION, retrans::PLOT_REACTION, cnp::PLOT_INTERVALS];
/// Every file an analysis may write: a new reconstruction into its directory removes them,
/// as they describe the trace it replaces.
pub const OUTPUT_FILES: [&str; 4] = [REPORT_FILE, PLOT_FILES[0], PLOT_FILES[1], PLOT_FILES[2]];

/// Lines of one list an analyzer prints on the terminal; report.json has them all. A
/// trace of thousands of connections must still give a summary one can read.
pub(crate) const RENDER_LINES: usize = 20;

/// An integer plot axis from `lo` to `hi` with room on both sides, so that no point is
/// drawn on the axis line (a point at the range's end was cut in half): a twentieth of
/// the span, at least 1. Integer ranges get integer tick labels.
pub(crate) fn plot_range(lo: i64, hi: i64) -> std::ops::Range<i64> {
    let pad = (hi.saturating_sub(lo) / 20).max(1);
    lo.saturating_sub(pad)..hi.saturating_add(pad).saturating_add(1)
}

/// "1 recovery", "2 recoveries": a count with its noun.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Writes the first [`RENDER_LINES`] of `items` with `line`, then how many more
/// report.json holds (the rest are counted, not formatted).
pub(crate) fn render_capped<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut line: impl FnMut(&mut String, T),
) {
    let mut n = 0usize;
    for item in items {
        if n < RENDER_LINES {
            line(out, item);
        }
        n += 1;
    }
    if n > RENDER_LINES {
        use std::fmt::Write as _;
        let _ = writeln!(out, "  ... {} more in report.json", n - RENDER_LINES);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Load(#[from] crate::reconstruct::LoadError),
}

/// A reconstruction loaded for analysis: the mapped records, the run's metadata files and
/// the connections.
pub struct Analysis {
    /// The mapped records, with what a snap length cut filled in from the trace (`cut`)
    /// when any READ request's RETH was cut.
    pub rec: crate::reconstruct::Reconstruction,
    pub ctx: RunContext,
    pub conns: Connections,
    pub verb: Option<Verb>,
}

/// What every analyzer reads.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    pub view: RecordView<'a>,
    pub conns: &'a Connections,
    pub ctx: &'a RunContext,
    /// The run's verb: from the configuration, else the one every connection's opcodes
    /// show; `None` when unknown or mixed (each [`conn::Connection`] has its own).
    pub verb: Option<Verb>,
}

impl Analysis {
    /// Loads the output directory of `reconstruct`.
    pub fn load(dir: &Path) -> Result<Analysis, AnalyzeError> {
        let mut rec = crate::reconstruct::Reconstruction::load(dir)?;
        let view = rec.view();
        let mut ctx = RunContext::load(&rec.summary.dirs);
        let s = &rec.summary;
        ctx.no_copies = s.no_copies.clone();
        let configured = ctx.config.as_ref().and_then(|c| c.verb);
        // QP info names sender and receiver, not requester and responder: orienting it
        // needs the run's verb, from the opcodes if no configuration gives it.
        let with_qp_info = configured.or_else(|| conn::verb_of(view.records).filter(|_| !ctx.qp_info.is_empty()));
        let mut conns = Connections::track(&view, &ctx.qp_info, with_qp_info);
        let ends = match crate::check::CheckContext::from_summary(s, None) {
            Ok(c) => {
                // As in check: a copy at an end whose seq was corrupted hides no copies.
                let aside = conns.unseen.set_aside_at_ends(&view, &c);
                for (why, seqs) in Corrupted::by_reason(&aside) {
                    ctx.problems.push(format!(
                        "{why}, corrupted: seq {seqs}; the seqs between them and the rest are not counted missing"
                    ));
                }
                let (first, last) = conns.unseen.span();
                crate::check::lost_at_ends(first, last, &c)
            }
            Err(e) => {
                ctx.problems.push(format!("{e} (copies lost at the trace's ends are not counted)"));
                crate::check::LostAtEnds::default()
            }
        };
        ctx.lost_at_ends = ends.total();
        if ends.known {
            conns.unseen.lost_before_first_exactly(ends.before_first);
        } else if ends.maybe_before_first() {
            conns.unseen.lost_before_first();
        }
        if ends.known {
            conns.unseen.spans_switch_start();
        }
        conns.unseen.lost_after_last(ends.after_last + ends.unplaced);
        let verb = configured.or_else(|| conns.common_verb());
        if conns.cut_acknowledges > 0 {
            ctx.problems.push(format!(
                "{} ACK/NAK copies had their AETH cut by the snap length: analyzed as missing copies (ACK or NAK unknown)",
                conns.cut_acknowledges
            ));
        }
        if cut::any_read_cut(view.records) {
            let unknown = cut::infer_read_lengths(rec.records_mut()?, &conns);
            if unknown > 0 {
                ctx.problems.push(format!(
                    "{unknown} READ requests had their RETH cut by the snap length and no response tells their DMA length: the PSNs they cover are unknown"
                ));
            }
        }
        Ok(Analysis { rec, ctx, conns, verb })
    }

    pub fn view(&self) -> RecordView<'_> {
        self.rec.view()
    }

    pub fn input(&self) -> Input<'_> {
        Input { view: self.view(), conns: &self.conns, ctx: &self.ctx, verb: self.verb }
    }

    pub fn run(&self) -> Report {
        report(&self.input(), &self.rec.dir)
    }
}

/// Copies the switch mirrored that the trace lacks: the gaps between its copies and those
/// lost at either end.
pub fn missing_copies(input: &Input<'_>) -> u64 {
    input.conns.unseen.total().saturating_sub(input.conns.late_copies()) + input.ctx.lost_at_ends
}

/// Runs every analyzer over `input`, the records of the reconstruction in `trace`. They
/// only read the records and the connections, so they run side by side on threads.
pub fn report(input: &Input<'_>, trace: &Path) -> Report {
    // When progress reaches the requester: the Go-back-N replay's timer and goodput's
    // completions both follow the switch port toward it; the replay times the path from
    // when a request left the port toward the responder.
    let ports = &egress::Ports::of(input);
    let arrivals = &ports.to_requester;
    let (gbn, counters, retransmission, cnp, interop, mut goodput, events) = std::thread::scope(|s| {
        let retransmission = s.spawn(|| retrans::analyze_with(input, arrivals));
        let cnp = s.spawn(|| cnp::analyze(input));
        let goodput = s.spawn(|| goodput::analyze_with(input, arrivals));
        let interop = s.spawn(|| interop::analyze(input));
        let frames = s.spawn(|| counters::Frames::count(input));
        let events = s.spawn(|| events::analyze(input));
        let gbn = gbn::analyze_with(input, ports);
        let counters = counters::analyze_counted(input, joined(frames), &gbn);
        (gbn, counters, joined(retransmission), joined(cnp), joined(interop), joined(goodput), joined(events))
    });
    // A QP whose retries ran out took nothing that reached it after (the Go-back-N replay
    // tells when): its late acknowledgements completed no message.
    let failed = gbn.connections.iter().filter_map(|c| Some((c.conn, c.retries_exhausted_by_ns?))).collect();
    goodput.qps_failed(&failed);
    let maybe = gbn.connections.iter().filter_map(|c| Some((c.conn, c.retries_maybe_exhausted_by_ns?))).collect();
    goodput.qps_may_have_failed(&maybe);
    Report {
        format: REPORT_FORMAT.into(),
        version: 1,
        trace: trace.to_path_buf(),
        packets: input.view.records.len() as u64,
        mirrored: input.conns.copies,
        missing_copies: missing_copies(input),
        late_copies: input.conns.late_copies(),
        verb: input.verb,
        connections: input.conns.list.iter().map(ConnSummary::of).collect(),
        unassigned_packets: input.conns.unassigned,
        unmirrored_packets: input.conns.unmirrored,
        no_copies: input.ctx.no_copies.clone().filter(|_| input.conns.copies == 0),
        context_problems: input.ctx.problems.clone(),
        counters,
        gbn,
        retransmission,
        cnp,
        interop,
        goodput,
        events,
    }
}

/// An analyzer thread's result; a panic there is a bug, and goes on as one here.
fn joined<T>(t: std::thread::ScopedJoinHandle<'_, T>) -> T {
    t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

#[derive(Debug, serde::Serialize)]
pub struct ConnSummary {
    pub id: u32,
    pub requester: conn::End,
    pub responder: conn::End,
    pub ipsn: Option<u32>,
    pub from_qp_info: bool,
    pub verb: Option<Verb>,
    pub packets: usize,
}

impl ConnSummary {
    pub fn of(c: &conn::Connection) -> ConnSummary {
        ConnSummary {
            id: c.id,
            requester: c.requester,
            responder: c.responder,
            ipsn: c.ipsn,
            from_qp_info: c.from_qp_info,
            verb: c.verb,
            packets: c.packets.len(),
        }
    }
}

/// `report.json` (schema in docs/formats.md §8).
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub format: String,
    pub version: u32,
    pub trace: PathBuf,
    pub packets: u64,
    /// Mirrored copies in the trace: with none, there was nothing to analyze.
    pub mirrored: u64,
    /// Mirror copies missing from the trace (gaps in the seqs): every replay is less sure.
    pub missing_copies: u64,
    /// Copies the reconstruction placed later than their seq: analyzed as missing there.
    pub late_copies: u64,
    pub verb: Option<Verb>,
    pub connections: Vec<ConnSummary>,
    pub unassigned_packets: u64,
    /// RoCE frames that are not mirrored copies: no analyzer reads them.
    pub unmirrored_packets: u64,
    /// Why the trace holds no mirrored copy (reconstruct.json `no_copies`), when it holds none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_copies: Option<String>,
    pub context_problems: Vec<String>,
    pub gbn: gbn::Report,
    pub retransmission: retrans::Report,
    pub cnp: cnp::Report,
    pub counters: counters::Report,
    pub interop: interop::Report,
    pub goodput: goodput::Report,
    /// The injected events the trace shows, against the configured ones.
    pub events: events::Report,
}

impl Report {
    /// The terminal summary.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let mixed = self.connections.iter().any(|c| c.verb.is_some());
        let verb = match self.verb {
            Some(v) => format!("{v:?}").to_lowercase(),
            None if mixed => "mixed verbs".into(),
            None => "unknown verb".into(),
        };
        let conns = plural(self.connections.len() as u64, "connection", "connections");
        let _ = writeln!(out, "{}, {conns}, {verb}", plural(self.packets, "packet", "packets"));
        if self.mirrored == 0 {
            let why = self.no_copies.as_deref().unwrap_or("no mirrored copy in the trace");
            let _ = writeln!(out, "  warning: nothing to analyze: {why}");
        }
        if self.missing_copies > 0 {
            let _ = writeln!(
                out,
                "  warning: {} from the trace (rocescope check lists them): what a missing copy may \
                 explain is reported as unverifiable, not as a violation",
                plural(self.missing_copies, "mirror copy is missing", "mirror copies are missing")
            );
        }
        if self.late_copies > 0 {
            let _ = writeln!(
                out,
                "  warning: {} than the reconstruction's reorder window: each is analyzed as missing at its \
                 place (reconstruct again with a larger --window)",
                plural(self.late_copies, "mirror copy came later", "mirror copies came later")
            );
        }
        if self.unassigned_packets > 0 {
            let _ = writeln!(out, "  {} RoCE packets belong to no known connection", self.unassigned_packets);
        }
        if self.unmirrored_packets > 0 {
            let _ = writeln!(
                out,
                "  {} RoCE frames are not mirrored copies (no switch time, no seq): left out of every analyzer",
                self.unmirrored_packets
            );
        }
        for p in &self.context_problems {
            let _ = writeln!(out, "  could not read: {p}");
        }
        self.events.render(&mut out);
        self.gbn.render(&mut out);
        self.retransmission.render(&mut out);
        self.cnp.render(&mut out);
        self.counters.render(&mut out);
        self.interop.render(&mut out);
        self.goodput.render(&mut out);
        out
    }

    /// Writes every analyzer's SVG plots into `dir`.
    pub fn plots(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        // A plot this analysis does not draw must not survive from an earlier one.
        for name in PLOT_FILES {
            match std::fs::remove_file(dir.join(name)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let mut out = Vec::new();
        out.extend(self.retransmission.plots(dir)?);
        out.extend(self.cnp.plots(dir)?);
        Ok(out)
    }

    /// Whether the analyzers had anything to read: a trace without a mirrored copy (the
    /// wrong mirror port, a plain capture) passes none of them (`analyze` exits 1).
    pub fn analyzed_copies(&self) -> bool {
        self.mirrored > 0
    }

    /// Findings that mean the RNICs misbehaved (flagged, not merely measured).
    pub fn problems(&self) -> usize {
        self.gbn.problems()
            + self.retransmission.problems()
            + self.cnp.problems()
            + self.counters.problems()
            + self.interop.problems()
    }
}
