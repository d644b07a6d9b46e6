//! Per-core shard buffering: the worker appends pcapng blocks into fixed, preallocated
//! chunks; a writer thread takes full chunks and writes them with one large sequential write
//! each, then hands them back. The worker never waits: if every chunk is full or in flight
//! the packet is dropped and counted (DESIGN.md "Traces").
//!
//! Each chunk's CRC-32C is summed as it fills: the worker sums each burst's blocks right
//! after writing them ([`ShardBuffer::checksum_pending`]), while they are in its cache, and
//! the writer sums whatever the worker had not (the last blocks, the padding). The writer's
//! pass over a whole cold 4 MiB chunk cost ~18 ns of CPU per packet, on the capture core's
//! CPU when the writer shares it; the worker's sums cost it ~1 ns (docs/benchmarks.md).

use crate::counters::{Stop, StopReason};
use crossbeam::channel::{self, Receiver, Sender};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use trace::direct::ALIGN;
use trace::manifest::{BlockCrc, BlockRecord};

/// A buffer of whole pcapng blocks on its way to disk.
pub struct Chunk {
    pub data: Vec<u8>,
    pub packets: u64,
    /// Filler bytes at the front so that `data[lead..]`, what is written, is 4 KiB aligned
    /// (O_DIRECT needs aligned buffers).
    pub lead: usize,
    /// The worker fills up to here; the rest is room for the padding block.
    pub limit: usize,
    /// The CRC-32C of `data[lead..summed]`.
    crc: BlockCrc,
    summed: usize,
}

// Writes bypass the page cache (O_DIRECT, `trace::direct`): the kernel's copy into the
// cache cost more CPU than everything the worker does per packet (docs/benchmarks.md).
// That needs buffers, lengths and file offsets in multiples of 4 KiB (`ALIGN`), so every
// chunk is padded to one.
const PAD_ROOM: usize = ALIGN + 64;
/// How far past its end a chunk asks for the cache lines the next blocks will go into. The
/// chunk is memory last touched when the writer sent it to disk, a store to a line not in
/// cache waits for it, and the hardware's prefetchers do not cross 4 KiB pages: the block
/// copy stalled on the cold lines. Asking ahead cut `recbench`'s time per packet by ~17 %
/// (docs/benchmarks.md). 1 KiB is five or so 128-byte-snap blocks.
const WRITE_AHEAD: usize = 1024;
const LINE: usize = 64;
/// Padding is an Interface Statistics Block (`trace::pcapng::put_padding`).
const ISB_BARE: usize = trace::pcapng::PADDING_BARE;
impl Chunk {
    // The "slow" zero fill is the point: it touches every page now, not on the hot path.
    #[allow(clippy::slow_vector_initialization)]
    fn aligned(bytes: usize) -> Chunk {
        let mut data = Vec::with_capacity(bytes + ALIGN + PAD_ROOM);
        // Prefault: no page faults on the polling core, and too large a buffer fails here,
        // at start-up. (Not `vec![0; n]`: calloc's fresh pages stay unmapped until written.)
        data.resize(bytes + ALIGN + PAD_ROOM, 0u8);
        data.clear();
        let mut c = Chunk { data, packets: 0, lead: 0, limit: 0, crc: BlockCrc::new(), summed: 0 };
        c.reset(bytes);
        c
    }
    fn reset(&mut self, bytes: usize) {
        self.data.clear();
        self.lead = trace::direct::lead(self.data.as_ptr());
        self.data.resize(self.lead, 0);
        self.limit = self.lead + bytes;
        self.packets = 0;
        self.crc = BlockCrc::new();
        self.summed = self.lead;
    }

    /// Adds the bytes appended since the last call to the chunk's CRC. Only once the last
    /// block is final (after `restore` rewrote its headers): in the worker, at the end of a
    /// burst.
    #[inline]
    pub fn checksum_pending(&mut self) {
        self.crc.update(&self.data[self.summed..]);
        self.summed = self.data.len();
    }
    /// Asks for the cache lines `WRITE_AHEAD` past the end that the next `len` bytes will
    /// fill (at most 4 lines: longer blocks make a stream the hardware follows by itself).
    #[inline]
    pub fn prefetch_ahead(&self, len: usize) {
        let next = self.data.as_ptr().wrapping_add(self.data.len() + WRITE_AHEAD);
        for line in 0..len.div_ceil(LINE).min(4) {
            // Past the allocation is fine: a prefetch never faults.
            crate::dpdk::prefetch(next.wrapping_add(line * LINE));
        }
    }

    fn body_len(&self) -> usize {
        self.data.len() - self.lead
    }
    /// Pads the body to a multiple of 4 KiB with a filler Interface Statistics Block.
    fn pad(&mut self) {
        let len = self.body_len();
        debug_assert_eq!(len % 4, 0, "pcapng blocks are whole 32-bit words");
        let mut gap = (ALIGN - len % ALIGN) % ALIGN;
        if gap == 0 {
            return;
        }
        if gap < ISB_BARE {
            gap += ALIGN;
        }
        trace::pcapng::put_padding(&mut self.data, gap);
    }
}

/// The worker's end: where packets are appended.
pub struct ShardBuffer {
    current: Option<Chunk>,
    full_tx: Sender<Chunk>,
    free_rx: Receiver<Chunk>,
    handoffs: u64,
}

/// What the writer thread did, for the manifest.
#[derive(Debug, Default)]
pub struct WriterReport {
    pub blocks: Vec<BlockRecord>,
    pub bytes: u64,
    pub packets_written: u64,
    /// Packets in chunks that could not be written (the error is in `error`).
    pub packets_lost: u64,
    pub error: Option<String>,
}

/// Creates `chunks` buffers of `chunk_bytes` each, the shard file (starting with `header`)
/// and its writer thread. All memory is allocated here, none per packet. A write error
/// stops the whole capture (`stop`): a run that cannot reach the disk must not go on.
pub fn open(
    path: &Path,
    header: Vec<u8>,
    chunks: usize,
    chunk_bytes: usize,
    stop: Arc<Stop>,
    cpu: Option<usize>,
) -> std::io::Result<(ShardBuffer, std::thread::JoinHandle<WriterReport>)> {
    // O_DIRECT where the filesystem supports it; otherwise ordinary writes.
    let (file, _direct) = trace::direct::create(path)?;
    let (full_tx, full_rx) = channel::bounded(chunks);
    let (free_tx, free_rx) = channel::bounded(chunks);
    for _ in 0..chunks {
        free_tx.send(Chunk::aligned(chunk_bytes)).expect("capacity is `chunks`");
    }
    let name = format!("writer-{}", path.file_name().unwrap_or_default().to_string_lossy());
    let handle = std::thread::Builder::new().name(name).spawn(move || {
        // Off the workers' CPUs when asked: the writer's CRC and I/O set-up otherwise
        // take their time from a polling core (docs/benchmarks.md).
        if let Some(id) = cpu {
            if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
                tracing::warn!("cannot pin the shard writer to CPU {id}; it runs unpinned");
            }
        }
        write_loop(file, header, full_rx, free_tx, &stop, chunk_bytes)
    })?;
    Ok((ShardBuffer { current: None, full_tx, free_rx, handoffs: 0 }, handle))
}

impl ShardBuffer {
    /// A chunk with at least `need` free bytes, or `None` when all chunks are busy
    /// (the caller drops the packet and counts it).
    pub fn reserve(&mut self, need: usize) -> Option<&mut Chunk> {
        let fits = |c: &Chunk| c.limit - c.data.len() >= need;
        if self.current.as_ref().is_some_and(|c| !fits(c)) {
            self.hand_off();
        }
        if self.current.is_none() {
            self.current = self.free_rx.try_recv().ok();
        }
        self.current.as_mut().filter(|c| fits(c))
    }

    /// Sends the current chunk to the writer if it holds anything (idle flush, shutdown).
    pub fn flush(&mut self) {
        if self.current.as_ref().is_some_and(|c| c.body_len() > 0) {
            self.hand_off();
        }
    }

    /// Sums the current chunk's blocks appended since the last call into its CRC. The
    /// worker calls it after each burst: the burst's blocks are still in its L1 cache then,
    /// where the writer's pass, later, would read them from memory.
    #[inline]
    pub fn checksum_pending(&mut self) {
        if let Some(chunk) = self.current.as_mut() {
            chunk.checksum_pending();
        }
    }

    pub fn pending_bytes(&self) -> usize {
        self.current.as_ref().map_or(0, |c| c.body_len())
    }

    /// How many chunks went to the writer so far.
    pub fn handoffs(&self) -> u64 {
        self.handoffs
    }

    fn hand_off(&mut self) {
        if let Some(chunk) = self.current.take() {
            self.handoffs += 1;
            // Cannot be full: at most `chunks` chunks exist. If the writer died its
            // report carries the error, and the lost packets are counted there.
            let _ = self.full_tx.try_send(chunk);
        }
    }
}

fn write_loop(
    mut file: File,
    header: Vec<u8>,
    full_rx: Receiver<Chunk>,
    free_tx: Sender<Chunk>,
    stop: &Stop,
    chunk_bytes: usize,
) -> WriterReport {
    let mut report = WriterReport::default();
    let mut head = Chunk::aligned(header.len());
    head.data.extend_from_slice(&header);
    head.pad();
    write_chunk(&mut file, &mut head, &mut report, stop);
    for mut chunk in full_rx {
        chunk.pad();
        write_chunk(&mut file, &mut chunk, &mut report, stop);
        chunk.reset(chunk_bytes);
        let _ = free_tx.send(chunk); // the worker may already be gone at shutdown
    }
    if report.error.is_none() {
        if let Err(e) = file.sync_all() {
            report.error = Some(format!("fsync: {e}"));
        }
    }
    report
}

fn write_chunk(file: &mut File, chunk: &mut Chunk, report: &mut WriterReport, stop: &Stop) {
    if report.error.is_some() {
        report.packets_lost += chunk.packets;
        return;
    }
    chunk.checksum_pending(); // what the worker left: at least the padding
    let body = &chunk.data[chunk.lead..];
    match file.write_all(body) {
        Ok(()) => {
            report.blocks.push(BlockRecord {
                offset: report.bytes,
                len: body.len() as u64,
                crc32c: chunk.crc.value(),
                packets: chunk.packets,
            });
            report.bytes += body.len() as u64;
            report.packets_written += chunk.packets;
        }
        Err(e) => {
            tracing::error!("writing shard: {e}; stopping the capture, unwritten packets are counted as lost");
            report.error = Some(e.to_string());
            stop.request(StopReason::WriteError);
            report.packets_lost += chunk.packets;
            // A partial write left packets no block accounts for: cut the file back to the
            // last whole block so the shard says exactly what the manifest says.
            if let Err(e) = file.set_len(report.bytes) {
                report.error = Some(format!("{}; truncating after it: {e}", report.error.take().unwrap_or_default()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(buf: &mut ShardBuffer, bytes: &[u8]) -> bool {
        match buf.reserve(bytes.len()) {
            Some(c) => {
                c.data.extend_from_slice(bytes);
                c.packets += 1;
                true
            }
            None => false,
        }
    }

    /// Opens a shard of `chunks` × `chunk_bytes` in a scratch directory, lets `feed` append
    /// to it, and returns the writer's report and the file.
    fn write_shard(
        name: &str,
        chunks: usize,
        chunk_bytes: usize,
        feed: impl FnOnce(&mut ShardBuffer),
    ) -> (WriterReport, Vec<u8>) {
        let dir = tempfile::Builder::new().prefix(&format!("rocescope-shard-{name}-")).tempdir().unwrap();
        let path = dir.path().join("s.bin");
        let (mut buf, writer) = open(&path, b"HEAD".to_vec(), chunks, chunk_bytes, Arc::default(), None).unwrap();
        feed(&mut buf);
        buf.flush();
        drop(buf);
        let report = writer.join().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        (report, bytes)
    }

    #[test]
    fn writes_every_accepted_packet_and_tiles_the_file_with_crcs() {
        let mut accepted = 0;
        let (report, bytes) = write_shard("tiles", 4, 64, |buf| {
            for i in 0..100u8 {
                accepted += u64::from(append(buf, &[i; 16]));
            }
        });
        assert_eq!(report.error, None);
        assert_eq!(report.packets_written, accepted);
        assert!(accepted >= 4 * 64 / 16, "every chunk filled before any drop");
        // Every block is padded to 4 KiB (O_DIRECT) with a filler Interface Statistics Block.
        assert_eq!(bytes.len() % ALIGN, 0);
        assert!(report.blocks.iter().all(|b| b.len % ALIGN as u64 == 0));
        assert_eq!(&bytes[..4], b"HEAD");
        assert_eq!(&bytes[4..8], &trace::pcapng::BT_INTERFACE_STATISTICS.to_le_bytes());
        assert!(trace::reader::verify_blocks(&bytes, &report.blocks).is_empty());
    }

    #[test]
    fn blocks_summed_by_the_worker_in_pieces_carry_the_crc_of_what_was_written() {
        let (report, bytes) = write_shard("crc", 3, 4096, |buf| {
            for i in 0..3000u32 {
                // Whole 32-bit words, as pcapng blocks are.
                let block = vec![i as u8; 4 * (1 + (i as usize * 37) % 50)];
                // Unlike the worker, wait for a free chunk: every chunk is reused many times.
                while !append(buf, &block) {
                    std::thread::yield_now();
                }
                // As after bursts of uneven sizes (1 to 7 packets); chunks are handed off
                // between the sums too, leaving the writer a tail of blocks to sum.
                if i % 7 == 0 || i % 11 == 0 {
                    buf.checksum_pending();
                }
            }
        });
        assert_eq!((report.error, report.packets_written), (None, 3000));
        // The header's block, then ~300 KB in 4 KiB chunks, of which there are three.
        assert!(report.blocks.len() > 1 + 3 * 10, "chunks were reused: {} blocks", report.blocks.len());
        assert_eq!(report.blocks.iter().map(|b| b.len).sum::<u64>(), bytes.len() as u64);
        assert!(trace::reader::verify_blocks(&bytes, &report.blocks).is_empty());
    }

    #[test]
    fn a_write_error_stops_the_capture_and_counts_the_lost_packets() {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let stop = Arc::new(Stop::default());
        let (mut buf, writer) = open(Path::new("/dev/full"), b"HEAD".to_vec(), 2, 64, stop.clone(), Some(0)).unwrap();
        assert!(append(&mut buf, &[7; 16]));
        buf.flush();
        drop(buf);
        let report = writer.join().unwrap();
        assert!(report.error.is_some());
        assert_eq!((report.packets_written, report.packets_lost), (0, 1));
        assert_eq!(stop.reason(), Some(StopReason::WriteError));
    }

    #[test]
    fn padding_blocks_are_well_formed_for_every_gap() {
        for body in (0..ALIGN + 8).step_by(4) {
            let mut c = Chunk::aligned(2 * ALIGN);
            c.data.resize(c.lead + body, 0);
            c.pad();
            let padded = &c.data[c.lead..];
            assert_eq!(padded.len() % ALIGN, 0, "body {body}");
            if padded.len() == body {
                continue;
            }
            let block = &padded[body..];
            let le32 = |at: usize| u32::from_le_bytes(block[at..at + 4].try_into().unwrap());
            assert_eq!(le32(0), trace::pcapng::BT_INTERFACE_STATISTICS);
            assert_eq!(le32(4) as usize, block.len());
            assert_eq!(le32(block.len() - 4) as usize, block.len());
            assert!(block.len() >= ISB_BARE);
        }
    }

    #[test]
    fn drops_instead_of_waiting_when_every_chunk_is_busy() {
        // A writer that never runs: build the buffer by hand with no free chunks left.
        let (full_tx, _full_rx) = channel::bounded(1);
        let (free_tx, free_rx) = channel::bounded(1);
        free_tx.send(Chunk::aligned(32)).unwrap();
        let mut buf = ShardBuffer { current: None, full_tx, free_rx, handoffs: 0 };
        assert!(append(&mut buf, &[1; 32]));
        assert!(!append(&mut buf, &[2; 1]), "the only chunk is full and in flight");
        assert!(!append(&mut buf, &[3; 64]), "still nothing free");
    }
}
