//! Per-core shard buffering: the worker appends pcapng blocks into fixed, preallocated
//! chunks; a writer thread takes full chunks, CRCs them and writes them with one large
//! sequential write each, then hands them back. The worker never waits: if every chunk is
//! full or in flight the packet is dropped and counted (DESIGN.md "Traces").

use crate::counters::{Stop, StopReason};
use crossbeam::channel::{self, Receiver, Sender};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use trace::manifest::BlockRecord;

/// A buffer of whole pcapng blocks on its way to disk.
pub struct Chunk {
    pub data: Vec<u8>,
    pub packets: u64,
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
) -> std::io::Result<(ShardBuffer, std::thread::JoinHandle<WriterReport>)> {
    let file = File::create(path)?;
    let (full_tx, full_rx) = channel::bounded(chunks);
    let (free_tx, free_rx) = channel::bounded(chunks);
    for _ in 0..chunks {
        free_tx.send(Chunk { data: prefaulted(chunk_bytes), packets: 0 }).expect("capacity is `chunks`");
    }
    let name = format!("writer-{}", path.file_name().unwrap_or_default().to_string_lossy());
    let handle =
        std::thread::Builder::new().name(name).spawn(move || write_loop(file, header, full_rx, free_tx, &stop))?;
    Ok((ShardBuffer { current: None, full_tx, free_rx, handoffs: 0 }, handle))
}

/// An empty buffer whose pages are already mapped: the polling core must not take a page
/// fault every few packets on first use, and a buffer too large for memory should fail
/// here, at start-up, not mid-capture.
fn prefaulted(bytes: usize) -> Vec<u8> {
    // Not `vec![0; n]`: that is calloc, whose fresh pages stay unmapped until first written.
    let mut v = Vec::with_capacity(bytes);
    v.resize(bytes, 0u8);
    v.clear();
    v
}

impl ShardBuffer {
    /// A chunk with at least `need` free bytes, or `None` when all chunks are busy
    /// (the caller drops the packet and counts it).
    pub fn reserve(&mut self, need: usize) -> Option<&mut Chunk> {
        let fits = |c: &Chunk| c.data.capacity() - c.data.len() >= need;
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
        if self.current.as_ref().is_some_and(|c| !c.data.is_empty()) {
            self.hand_off();
        }
    }

    pub fn pending_bytes(&self) -> usize {
        self.current.as_ref().map_or(0, |c| c.data.len())
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
) -> WriterReport {
    let mut report = WriterReport::default();
    let header = Chunk { data: header, packets: 0 };
    write_chunk(&mut file, &header, &mut report, stop);
    for mut chunk in full_rx {
        write_chunk(&mut file, &chunk, &mut report, stop);
        chunk.data.clear();
        chunk.packets = 0;
        let _ = free_tx.send(chunk); // the worker may already be gone at shutdown
    }
    if report.error.is_none() {
        if let Err(e) = file.sync_all() {
            report.error = Some(format!("fsync: {e}"));
        }
    }
    report
}

fn write_chunk(file: &mut File, chunk: &Chunk, report: &mut WriterReport, stop: &Stop) {
    if report.error.is_some() {
        report.packets_lost += chunk.packets;
        return;
    }
    match file.write_all(&chunk.data) {
        Ok(()) => {
            report.blocks.push(BlockRecord {
                offset: report.bytes,
                len: chunk.data.len() as u64,
                crc32c: trace::manifest::block_crc(&chunk.data),
                packets: chunk.packets,
            });
            report.bytes += chunk.data.len() as u64;
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

    #[test]
    fn writes_every_accepted_packet_and_tiles_the_file_with_crcs() {
        let dir = std::env::temp_dir().join(format!("rocescope-shard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.bin");
        let (mut buf, writer) = open(&path, b"HEAD".to_vec(), 4, 64, Arc::default()).unwrap();
        let mut accepted = 0;
        for i in 0..100u8 {
            if append(&mut buf, &[i; 16]) {
                accepted += 1;
            }
        }
        buf.flush();
        drop(buf);
        let report = writer.join().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(report.error, None);
        assert_eq!(report.packets_written, accepted);
        assert_eq!(bytes.len() as u64, 4 + 16 * accepted);
        assert!(trace::reader::verify_blocks(&bytes, &report.blocks).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_error_stops_the_capture_and_counts_the_lost_packets() {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let stop = Arc::new(Stop::default());
        let (mut buf, writer) = open(Path::new("/dev/full"), b"HEAD".to_vec(), 2, 64, stop.clone()).unwrap();
        assert!(append(&mut buf, &[7; 16]));
        buf.flush();
        drop(buf);
        let report = writer.join().unwrap();
        assert!(report.error.is_some());
        assert_eq!((report.packets_written, report.packets_lost), (0, 1));
        assert_eq!(stop.reason(), Some(StopReason::WriteError));
    }

    #[test]
    fn drops_instead_of_waiting_when_every_chunk_is_busy() {
        // A writer that never runs: build the buffer by hand with no free chunks left.
        let (full_tx, _full_rx) = channel::bounded(1);
        let (free_tx, free_rx) = channel::bounded(1);
        free_tx.send(Chunk { data: Vec::with_capacity(32), packets: 0 }).unwrap();
        let mut buf = ShardBuffer { current: None, full_tx, free_rx, handoffs: 0 };
        assert!(append(&mut buf, &[1; 32]));
        assert!(!append(&mut buf, &[2; 1]), "the only chunk is full and in flight");
        assert!(!append(&mut buf, &[3; 64]), "still nothing free");
    }
}
