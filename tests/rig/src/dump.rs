//! The traffic dumper pool as the rig sees it: each dump host receives its share of the
//! mirrored copies; the rig writes exactly those frames to the host's pcap, with the
//! host's receive time. The fault knobs that act between the switch and a dumper (lost
//! copies, reordering, extra delay) apply here.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
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
    Pcap(PcapWriter<BackgroundFile>),
    Memory(Vec<Captured>),
}

/// A file written by its own thread in large chunks, so that generating frames and the
/// kernel's copying of them into the page cache overlap (at scale the two take about as
/// long as each other).
pub struct BackgroundFile {
    buf: Vec<u8>,
    full: Option<SyncSender<Vec<u8>>>,
    empty: Receiver<Vec<u8>>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
}

const CHUNK: usize = 4 << 20;

impl BackgroundFile {
    pub fn create(path: &Path) -> std::io::Result<BackgroundFile> {
        let mut file = File::create(path)?;
        let (full_tx, full_rx) = sync_channel::<Vec<u8>>(2);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(3);
        for _ in 0..2 {
            empty_tx.send(Vec::with_capacity(CHUNK)).expect("receiver alive");
        }
        let writer = std::thread::Builder::new().name("rig-pcap-writer".into()).spawn(move || {
            for mut chunk in full_rx {
                file.write_all(&chunk)?;
                chunk.clear();
                let _ = empty_tx.send(chunk);
            }
            file.flush()
        })?;
        Ok(BackgroundFile {
            buf: Vec::with_capacity(CHUNK),
            full: Some(full_tx),
            empty: empty_rx,
            writer: Some(writer),
        })
    }

    fn ship(&mut self) -> std::io::Result<()> {
        let next = self.empty.recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let chunk = std::mem::replace(&mut self.buf, next);
        let sent = self.full.as_ref().map(|tx| tx.send(chunk));
        if !matches!(sent, Some(Ok(()))) {
            return Err(self.join().err().unwrap_or_else(|| std::io::Error::other("pcap writer thread stopped")));
        }
        Ok(())
    }

    fn join(&mut self) -> std::io::Result<()> {
        self.full = None;
        match self.writer.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(std::io::Error::other("pcap writer thread panicked")),
            None => Ok(()),
        }
    }

    /// Writes what is buffered and waits for the writer thread.
    pub fn close(mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.ship()?;
        }
        self.join()
    }
}

impl Write for BackgroundFile {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.ship()?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink {
    /// A classic pcap whose header says `snaplen` (0: whole frames, written as 65535), as
    /// Lumina's dumper or `tcpdump -s` writes it. Records of trimmed frames keep their
    /// original length, larger than the header's snap length.
    pub fn pcap(path: &Path, snaplen: u32) -> std::io::Result<Sink> {
        let file = BackgroundFile::create(path)?;
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            snaplen: if snaplen == 0 { 65_535 } else { snaplen },
            // Native order on x86, as libpcap writes it.
            endianness: pcap_file::Endianness::Little,
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
        match self {
            Sink::Pcap(w) => {
                w.into_writer().close()?;
                Ok(Vec::new())
            }
            Sink::Memory(v) => Ok(v),
        }
    }
}

/// Losing `count` copies: the next loss comes after a random gap of 1–`2 × GAP` copies
/// (so `count` losses need at most `2 × GAP × count` copies on that host; a host that gets
/// fewer loses fewer, and the truth lists what was lost).
const GAP: u64 = 8;

/// Lumina's own DPDK dumper (Lumina §3.4; its `main.c`: `is_roce_pkt`, `dump_to_file`),
/// between what a dump host receives and its pcap: RSS spreads the copies over `lcores`
/// queues by the random UDP src port the switch wrote; each lcore keeps its copies in
/// arrival order, rewritten ([`wire::mirror::dumper_rewrite`]: ports restored, CE for an
/// ECN event, checksums, 128 bytes kept, length = IP length + 14) and stamped with the
/// switch timestamp of the dst MAC; at the end the file gets lcore 0's records, then lcore
/// 1's, and so on.
pub struct LuminaDumper {
    cfg: wire::frame::ClassifyConfig,
    lcores: Vec<Vec<Captured>>,
}

impl LuminaDumper {
    pub fn new(lcores: u32, mirror_port: u16) -> LuminaDumper {
        let cfg = wire::frame::ClassifyConfig { mirror_port, roce_port: wire::udp::ROCE_PORT };
        LuminaDumper { cfg, lcores: vec![Vec::new(); lcores.max(1) as usize] }
    }

    /// Takes in one whole copy as received.
    fn take(&mut self, c: Frame<'_>) -> std::io::Result<()> {
        let mut data = c.data.to_vec();
        let info = wire::frame::classify(&data, &self.cfg).map_err(std::io::Error::other)?;
        let meta = info.mirror.ok_or_else(|| std::io::Error::other("a dump host received a frame that is no copy"))?;
        let l4 = usize::from(info.l4_offset);
        let lcore = rss(u16::from_be_bytes([data[l4], data[l4 + 1]]), self.lcores.len());
        let (kept, orig_len) = wire::mirror::dumper_rewrite(&mut data, &self.cfg).map_err(std::io::Error::other)?;
        data.truncate(kept);
        self.lcores[lcore].push(Captured { ts_ns: meta.timestamp_ns, seq: c.seq, data, orig_len });
        Ok(())
    }

    /// Writes the records lcore by lcore, as the dumper does when it stops.
    fn write_to(self, sink: &mut Sink) -> std::io::Result<()> {
        for c in self.lcores.iter().flatten() {
            sink.write(Frame { ts_ns: c.ts_ns, seq: c.seq, data: &c.data, orig_len: c.orig_len })?;
        }
        Ok(())
    }
}

/// The RSS queue of a copy: a hash of its UDP src port (the field the switch randomises
/// for that purpose).
fn rss(udp_src_port: u16, queues: usize) -> usize {
    ((u64::from(udp_src_port) * 2_654_435_761) >> 7) as usize % queues
}

pub struct DumpHost {
    sink: Sink,
    /// `Some`: the host writes as Lumina's dumper does (else each copy as received).
    dumper: Option<LuminaDumper>,
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
            dumper: None,
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

    /// Writes as Lumina's dumper does (`receive` then wants whole copies).
    pub fn with_dumper(self, dumper: LuminaDumper) -> DumpHost {
        DumpHost { dumper: Some(dumper), ..self }
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
        match &mut self.dumper {
            Some(d) => {
                self.bytes += c.data.len().min(wire::mirror::DUMPER_CAPLEN) as u64;
                d.take(c)
            }
            None => {
                self.bytes += c.data.len() as u64;
                self.sink.write(c)
            }
        }
    }

    /// Writes what is held back and closes the sink; returns the frames of a memory
    /// sink (empty for a pcap).
    pub fn finish(mut self) -> std::io::Result<(Vec<Captured>, DumpStats)> {
        if let Some((ts_ns, seq, orig_len)) = self.held.take() {
            let held = std::mem::take(&mut self.held_data);
            self.put(Frame { ts_ns, seq, data: &held, orig_len })?;
        }
        if let Some(d) = self.dumper.take() {
            d.write_to(&mut self.sink)?;
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
