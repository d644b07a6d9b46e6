//! Lumina's test-suite analyzers (§4) over a reconstructed trace — the groundwork.
//!
//! The split follows Lumina's analyzer (STYLE.md): parsing is done once, by reconstruction,
//! into the record file; [`context`] reads the run's own files (QP info, configuration, NIC
//! counter dumps); [`conn`] groups records into connections. The analyzers (Go-back-N,
//! retransmission performance, CNP, counters, interop, goodput) plug in as one module each
//! with `analyze(&Input) -> Report` — in progress, see issue 4.

use std::path::Path;

use trace::record::RecordView;

pub mod conn;
pub mod context;

use conn::Connections;
use context::{RunContext, Verb};

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Load(#[from] crate::reconstruct::LoadError),
}

/// A reconstruction loaded for analysis: the mapped records, the run's metadata files and
/// the connections.
pub struct Analysis {
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
    /// From the configuration, else inferred from the opcodes in the trace.
    pub verb: Option<Verb>,
}

impl Analysis {
    /// Loads the output directory of `reconstruct`.
    pub fn load(dir: &Path) -> Result<Analysis, AnalyzeError> {
        let rec = crate::reconstruct::Reconstruction::load(dir)?;
        let view = rec.view();
        let ctx = RunContext::load(&rec.summary.dirs);
        let verb = ctx.config.as_ref().and_then(|c| c.verb).or_else(|| infer_verb(&view));
        let conns = Connections::track(&view, &ctx.qp_info, verb);
        Ok(Analysis { rec, ctx, conns, verb })
    }

    pub fn view(&self) -> RecordView<'_> {
        self.rec.view()
    }

    pub fn input(&self) -> Input<'_> {
        Input { view: self.view(), conns: &self.conns, ctx: &self.ctx, verb: self.verb }
    }
}

/// The verb from the opcodes: READ requests mean READ, SEND opcodes SEND, else WRITE.
fn infer_verb(view: &RecordView<'_>) -> Option<Verb> {
    let mut verb = None;
    for r in view.records.iter().filter(|r| r.kind() == trace::record::Kind::Request) {
        match r.opcode & 0x1f {
            0x0c => return Some(Verb::Read),
            0x00..=0x05 | 0x16 | 0x17 => verb = Some(Verb::Send),
            0x06..=0x0b => verb = verb.or(Some(Verb::Write)),
            _ => {}
        }
    }
    verb
}

#[derive(Debug, serde::Serialize)]
pub struct ConnSummary {
    pub id: u32,
    pub requester: conn::End,
    pub responder: conn::End,
    pub ipsn: Option<u32>,
    pub from_qp_info: bool,
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
            packets: c.packets.len(),
        }
    }
}
