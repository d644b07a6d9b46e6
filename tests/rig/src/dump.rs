//! The traffic dumper pool as the rig sees it: each dump host receives its share of the
//! mirrored copies; the rig writes exactly those frames to the host's pcap, with the
//! host's receive time. The fault knobs that act between the switch and a dumper (lost
//! copies, reordering, extra delay) apply here.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};

use crate::rng::Rng;

/// A frame as a dump host received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// Host receive time, ns since the Unix epoch.
    pub ts_ns: u64,
    pub seq: u32,
    /// The bytes kept (the whole frame unless a snap length cut it).
    pub data: Vec<u8>,
    pub orig_len: u32,
}

/// A frame on its way into a sink (borrowed: the rig reuses one buffer).
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    pub ts_ns: u64,
    pub seq: u32,
    pub data: &'a [u8],
    pub orig_len: u32,
}

pub enum Sink {
    Pcap(PcapWriter<BufWriter<File>>),
    Memory(Vec<Captured>),
}

impl Sink {
    pub fn pcap(path: &Path, snaplen: u32) -> std::io::Result<Sink> {
        let file = BufWriter::with_capacity(4 << 20, File::create(path)?);
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            snaplen: if snaplen == 0 { 65_535 } else { snaplen },
            ..Default::default()
        };
        Ok(Sink::Pcap(PcapWriter::with_header(file, header).map_err(std::io::Error::other)?))
    }

    fn write(&mut self, c: Frame<'_>) -> std::io::Result<()> {
        match self {
            Sink::Pcap(w) => {
                let p = PcapPacket::new(Duration::from_nanos(c.ts_ns), c.orig_len, c.data);
                w.write_packet(&p).map(|_| ()).map_err(std::io::Error::other)
            }
            Sink::Memory(v) => {
                v.push(Captured { ts_ns: c.ts_ns, seq: c.seq, data: c.data.to_vec(), orig_len: c.orig_len });
                Ok(())
            }
        }
    }

    /// Flushes a pcap; returns the frames of a memory sink.
    fn finish(self) -> std::io::Result<Vec<Captured>> {
        use std::io::Write;
        match self {
            Sink::Pcap(w) => {
                w.into_writer().flush()?;
                Ok(Vec::new())
            }
            Sink::Memory(v) => Ok(v),
        }
    }
}

/// Losing `count` copies: the next loss comes after a random gap of 1–`2 × GAP` copies.
const GAP: u64 = 50;

pub struct DumpHost {
    sink: Sink,
    frames: u64,
    bytes: u64,
    delay_ns: u64,
    lose_seqs: Vec<u32>,
    lose_left: u32,
    lose_gap: u64,
    reorder_p: f64,
    /// A copy held back to be written after the next one (reorder fault).
    held: Option<(u64, u32, u32)>,
    held_data: Vec<u8>,
    lost: Vec<u32>,
    swapped: Vec<(u32, u32)>,
}

impl DumpHost {
    pub fn new(sink: Sink, delay_ns: u64, lose_seqs: Vec<u32>, lose_count: u32, reorder_p: f64) -> DumpHost {
        DumpHost {
            sink,
            frames: 0,
            bytes: 0,
            delay_ns,
            lose_seqs,
            lose_left: lose_count,
            lose_gap: 0,
            reorder_p,
            held: None,
            held_data: Vec::new(),
            lost: Vec::new(),
            swapped: Vec::new(),
        }
    }

    /// A copy arrives (`ts_ns` = host time).
    pub fn receive(&mut self, rng: &mut Rng, mut c: Frame<'_>) -> std::io::Result<()> {
        if self.lose(rng, c.seq) {
            self.lost.push(c.seq);
            return Ok(());
        }
        c.ts_ns += self.delay_ns;
        match self.held.take() {
            Some((ts_ns, seq, orig_len)) => {
                self.swapped.push((seq, c.seq));
                self.put(c)?;
                let held = std::mem::take(&mut self.held_data);
                let r = self.put(Frame { ts_ns, seq, data: &held, orig_len });
                self.held_data = held;
                r
            }
            None if self.reorder_p > 0.0 && rng.chance(self.reorder_p) => {
                self.held = Some((c.ts_ns, c.seq, c.orig_len));
                self.held_data.clear();
                self.held_data.extend_from_slice(c.data);
                Ok(())
            }
            None => self.put(c),
        }
    }

    fn lose(&mut self, rng: &mut Rng, seq: u32) -> bool {
        if let Some(i) = self.lose_seqs.iter().position(|&s| s == seq) {
            self.lose_seqs.swap_remove(i);
            return true;
        }
        if self.lose_left == 0 {
            return false;
        }
        if self.lose_gap == 0 {
            self.lose_gap = rng.between(1, 2 * GAP);
        }
        self.lose_gap -= 1;
        if self.lose_gap == 0 {
            self.lose_left -= 1;
            return true;
        }
        false
    }

    fn put(&mut self, c: Frame<'_>) -> std::io::Result<()> {
        self.frames += 1;
        self.bytes += c.data.len() as u64;
        self.sink.write(c)
    }

    /// Writes what is held back and closes the sink; returns the frames of a memory
    /// sink (empty for a pcap).
    pub fn finish(mut self) -> std::io::Result<(Vec<Captured>, DumpStats)> {
        if let Some((ts_ns, seq, orig_len)) = self.held.take() {
            let held = std::mem::take(&mut self.held_data);
            self.put(Frame { ts_ns, seq, data: &held, orig_len })?;
        }
        let stats = DumpStats { frames: self.frames, bytes: self.bytes, lost: self.lost, swapped: self.swapped };
        Ok((self.sink.finish()?, stats))
    }
}

/// What a dump host got.
#[derive(Debug, Clone, Default)]
pub struct DumpStats {
    pub frames: u64,
    pub bytes: u64,
    pub lost: Vec<u32>,
    pub swapped: Vec<(u32, u32)>,
}
