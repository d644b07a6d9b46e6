//! A file written by a thread of its own, so the merge never waits on write(2): the merge
//! fills a chunk, hands it over and goes on filling the next while the thread writes.
//!
//! Memory is bounded: at most [`QUEUE`] chunks wait for the thread; when the disk is slower
//! than the merge, handing over a chunk waits instead (an offline tool loses nothing by
//! waiting). The first write error ends the thread and is returned by the next call.
//!
//! A *direct* spool writes with O_DIRECT, bypassing the page cache: for a file nobody reads
//! right away (trace.pcapng), the kernel's copy into the cache and its write-back cost more
//! than the merge itself (docs/benchmarks.md). O_DIRECT wants buffers, lengths and offsets
//! in multiples of 4 KiB: chunks are [`Buffer`]s (aligned, on huge pages), and only whole
//! 4 KiB pages are handed over; the rest is carried into the next chunk. What cannot be
//! aligned (the file's last partial page, writes after a seek) goes through a second,
//! ordinary handle to the same file.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use trace::direct::{Buffer, ALIGN};
use trace::pcapng::Out;

/// Chunks waiting for the writer thread.
const QUEUE: usize = 4;
/// The most one [`Spool::append`] may put: a chunk holds `chunk_size` plus this, so the
/// append that fills a chunk always fits (chunks never grow: that would lose their
/// alignment). A pcapng block of the largest frame any input holds (256 KiB,
/// `pcap::MAX_CAPTURED`) is well within it.
pub const MAX_APPEND: usize = 512 << 10;

/// A chunk: `chunk_size` and room for the append that fills it.
fn new_chunk(chunk_size: usize) -> io::Result<Buffer> {
    Buffer::new(chunk_size + MAX_APPEND)
}

enum Command {
    /// Writes `chunk.as_slice()[..len]` at the current position.
    Write { chunk: Buffer, len: usize },
    /// Moves the position after everything sent before; answers with the new position.
    Seek(SeekFrom, SyncSender<io::Result<u64>>),
    /// Answers once everything sent before is written.
    Sync(SyncSender<io::Result<()>>),
}

pub struct Spool {
    chunk: Buffer,
    chunk_size: usize,
    direct: bool,
    commands: Option<SyncSender<Command>>,
    /// Written chunks coming back for reuse.
    spare: Receiver<Buffer>,
    thread: Option<JoinHandle<io::Result<File>>>,
}

impl Spool {
    /// Ordinary (page-cached) writes of `chunk_size` bytes each.
    pub fn new(file: File, chunk_size: usize) -> io::Result<Spool> {
        Spool::start(Writer { file, plain: None, pos: 0 }, chunk_size, false)
    }

    /// Creates `path` for O_DIRECT writes, or ordinary ones where the filesystem refuses
    /// O_DIRECT (tmpfs before Linux 6.6).
    pub fn create_direct(path: &Path, chunk_size: usize) -> io::Result<Spool> {
        let chunk_size = chunk_size.next_multiple_of(ALIGN);
        match trace::direct::create(path)? {
            (file, true) => {
                let plain = std::fs::OpenOptions::new().write(true).open(path)?;
                Spool::start(Writer { file, plain: Some(plain), pos: 0 }, chunk_size, true)
            }
            (file, false) => Spool::new(file, chunk_size),
        }
    }

    fn start(writer: Writer, chunk_size: usize, direct: bool) -> io::Result<Spool> {
        let chunk_size = chunk_size.max(1);
        let chunk = new_chunk(chunk_size)?;
        let (commands, queue) = sync_channel(QUEUE);
        let (give_back, spare) = sync_channel(QUEUE + 2);
        let thread = std::thread::Builder::new()
            .name("spool".into())
            .spawn(move || writer.run(queue, give_back))
            .expect("spawning a thread");
        Ok(Spool { chunk, chunk_size, direct, commands: Some(commands), spare, thread: Some(thread) })
    }

    /// Lets `fill` put at most [`MAX_APPEND`] bytes into the current chunk (so a block is
    /// encoded straight into it), then hands the chunk over if it is full.
    #[inline]
    pub fn append<R>(&mut self, fill: impl FnOnce(&mut Buffer) -> R) -> io::Result<R> {
        let r = fill(&mut self.chunk);
        if self.chunk.len() >= self.chunk_size {
            self.ship(false)?;
        }
        Ok(r)
    }

    /// Writes everything and returns the file.
    pub fn finish(mut self) -> io::Result<File> {
        self.ship(true)?;
        self.commands = None;
        self.join()
    }

    /// Hands the chunk over: all of it when `all`, else (direct) whole pages only, the rest
    /// starting the next chunk.
    fn ship(&mut self, all: bool) -> io::Result<()> {
        let body = self.chunk.len();
        let len = if self.direct && !all { body / ALIGN * ALIGN } else { body };
        if len == 0 {
            return Ok(());
        }
        let mut next = match self.spare.try_recv() {
            Ok(spare) => spare,
            Err(_) => new_chunk(self.chunk_size)?,
        };
        next.clear();
        next.put(&self.chunk.as_slice()[len..]);
        let full = std::mem::replace(&mut self.chunk, next);
        self.send(Command::Write { chunk: full, len })
    }

    fn send(&mut self, c: Command) -> io::Result<()> {
        let sent = self.commands.as_ref().map(|tx| tx.send(c).is_ok()).unwrap_or(false);
        if sent {
            return Ok(());
        }
        // The thread stopped: on a write error, which joining returns.
        self.commands = None;
        self.join().and_then(|_| Err(io::Error::other("spool thread already finished")))
    }

    fn join(&mut self) -> io::Result<File> {
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(io::Error::other("spool thread panicked"))),
            None => Err(io::Error::other("spool already finished")),
        }
    }

    fn ask<T>(&mut self, make: impl FnOnce(SyncSender<io::Result<T>>) -> Command) -> io::Result<T> {
        self.ship(true)?;
        let (reply, answer) = sync_channel(1);
        self.send(make(reply))?;
        match answer.recv() {
            Ok(r) => r,
            Err(_) => self.join().and_then(|_| Err(io::Error::other("spool thread finished early"))),
        }
    }
}

/// The thread's side: positional writes, so the direct and the ordinary handle agree on
/// where the file is.
struct Writer {
    file: File,
    /// The ordinary handle beside an O_DIRECT `file`.
    plain: Option<File>,
    pos: u64,
}

impl Writer {
    fn run(mut self, queue: Receiver<Command>, give_back: SyncSender<Buffer>) -> io::Result<File> {
        for c in queue {
            match c {
                Command::Write { chunk, len } => {
                    self.write(&chunk.as_slice()[..len])?;
                    let _ = give_back.try_send(chunk);
                }
                Command::Seek(pos, reply) => {
                    let _ = reply.send(self.seek(pos));
                }
                Command::Sync(reply) => {
                    let _ = reply.send(Ok(()));
                }
            }
        }
        Ok(self.file)
    }

    fn write(&mut self, body: &[u8]) -> io::Result<()> {
        let aligned = match &self.plain {
            Some(_) if self.pos % ALIGN as u64 == 0 && body.as_ptr() as usize % ALIGN == 0 => {
                body.len() / ALIGN * ALIGN
            }
            _ => 0,
        };
        self.file.write_all_at(&body[..aligned], self.pos)?;
        self.plain.as_ref().unwrap_or(&self.file).write_all_at(&body[aligned..], self.pos + aligned as u64)?;
        self.pos += body.len() as u64;
        Ok(())
    }

    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.file.metadata()?.len().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

impl Write for Spool {
    /// Takes all of `buf`. Inlined, as `write_all`: a record at a time is the hot path, and
    /// with its length known there its copy needs no call.
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for piece in buf.chunks(MAX_APPEND) {
            self.append(|c| c.put(piece))?;
        }
        Ok(buf.len())
    }

    /// `write` always takes everything, so there is nothing to loop over.
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write(buf).map(|_| ())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.ask(Command::Sync)
    }
}

impl Seek for Spool {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.ask(|reply| Command::Seek(pos, reply))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        // Unfinished (an error path): stop the thread; what it had is written or lost
        // with the error the caller is already returning.
        self.commands = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header, many small appends across chunk boundaries, a header rewrite after a seek,
    /// and a tail: the file must hold exactly that, in both modes.
    fn round_trip(make: impl Fn(&Path) -> Spool) {
        let dir = temp_dir();
        let path = dir.path().join("spooled");
        let mut s = make(&path);
        s.write_all(b"headerXX").unwrap();
        let mut want = b"HEADERXX".to_vec();
        for i in 0..20_000u32 {
            let n = (i % 97) as usize;
            let bytes: Vec<u8> = (0..n).map(|k| (i as usize + k) as u8).collect();
            s.append(|c| c.put(&bytes)).unwrap();
            want.extend_from_slice(&bytes);
        }
        assert_eq!(s.seek(SeekFrom::Start(0)).unwrap(), 0);
        s.write_all(b"HEADER").unwrap();
        assert_eq!(s.seek(SeekFrom::End(0)).unwrap(), want.len() as u64);
        // One write larger than any append may be (a flow table), split by `write`.
        let big: Vec<u8> = (0..3 * MAX_APPEND + 5).map(|k| (k % 251) as u8).collect();
        s.write_all(&big).unwrap();
        want.extend_from_slice(&big);
        s.write_all(b"end").unwrap();
        want.extend_from_slice(b"end");
        s.finish().unwrap();
        let got = std::fs::read(&path).unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "contents differ");
    }

    #[test]
    fn ordinary_writes_in_order_seek_and_finish() {
        round_trip(|p| Spool::new(File::create(p).unwrap(), 4096 + 7).unwrap());
    }

    #[test]
    fn direct_writes_in_order_seek_and_finish() {
        // Small chunks: many aligned hand-overs, each with a carried remainder.
        round_trip(|p| Spool::create_direct(p, 3 * 4096).unwrap());
    }

    #[test]
    fn a_write_error_is_returned_not_lost() {
        // /dev/full fails every write with ENOSPC.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
        let mut s = Spool::new(full, 4).unwrap();
        let err = match (0..100).try_for_each(|_| s.write_all(b"data")) {
            Err(e) => e,
            Ok(()) => s.finish().unwrap_err(),
        };
        assert_eq!(err.raw_os_error(), Some(28), "ENOSPC expected, got {err}");
    }

    fn temp_dir() -> tempfile::TempDir {
        // Under the target directory, not /tmp: that may be an older tmpfs, which refuses O_DIRECT
        // and the direct path would go untested.
        let base = std::env::var_os("CARGO_TARGET_TMPDIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/tmp"));
        std::fs::create_dir_all(&base).unwrap();
        tempfile::Builder::new().prefix("spool-").tempdir_in(base).unwrap()
    }
}
