//! A file written by a thread of its own, so the merge never waits on write(2): the merge
//! fills a chunk, hands it over and goes on filling the next while the thread writes.
//!
//! Memory is bounded: at most [`QUEUE`] chunks wait for the thread; when the disk is slower
//! than the merge, handing over a chunk waits instead (an offline tool loses nothing by
//! waiting). The first write error ends the thread and is returned by the next call.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Chunks waiting for the writer thread.
const QUEUE: usize = 4;

enum Command {
    Write(Vec<u8>),
    /// Seek after everything sent before; answers with the new position.
    Seek(SeekFrom, SyncSender<io::Result<u64>>),
    /// Answers once everything sent before is written.
    Sync(SyncSender<io::Result<()>>),
}

pub struct Spool {
    chunk: Vec<u8>,
    chunk_size: usize,
    commands: Option<SyncSender<Command>>,
    /// Written chunks coming back for reuse.
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<File>>>,
}

impl Spool {
    /// `chunk_size`: bytes gathered before each write(2).
    pub fn new(file: File, chunk_size: usize) -> Spool {
        let (commands, queue) = sync_channel(QUEUE);
        let (give_back, spare) = sync_channel(QUEUE + 2);
        let thread = std::thread::Builder::new()
            .name("spool".into())
            .spawn(move || write_loop(file, queue, give_back))
            .expect("spawning a thread");
        Spool {
            chunk: Vec::with_capacity(chunk_size),
            chunk_size,
            commands: Some(commands),
            spare,
            thread: Some(thread),
        }
    }

    /// Lets `fill` append to the current chunk (so a block is encoded straight into it),
    /// then hands the chunk over if it is full.
    #[inline]
    pub fn append<R>(&mut self, fill: impl FnOnce(&mut Vec<u8>) -> R) -> io::Result<R> {
        let r = fill(&mut self.chunk);
        if self.chunk.len() >= self.chunk_size {
            self.ship()?;
        }
        Ok(r)
    }

    /// Writes everything and returns the file.
    pub fn finish(mut self) -> io::Result<File> {
        self.ship()?;
        self.commands = None;
        self.join()
    }

    fn ship(&mut self) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let next = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(self.chunk_size));
        let full = std::mem::replace(&mut self.chunk, next);
        self.send(Command::Write(full))
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
        self.ship()?;
        let (reply, answer) = sync_channel(1);
        self.send(make(reply))?;
        match answer.recv() {
            Ok(r) => r,
            Err(_) => self.join().and_then(|_| Err(io::Error::other("spool thread finished early"))),
        }
    }
}

fn write_loop(mut file: File, queue: Receiver<Command>, give_back: SyncSender<Vec<u8>>) -> io::Result<File> {
    for c in queue {
        match c {
            Command::Write(mut chunk) => {
                file.write_all(&chunk)?;
                chunk.clear();
                let _ = give_back.try_send(chunk);
            }
            Command::Seek(pos, reply) => {
                let _ = reply.send(file.seek(pos));
            }
            Command::Sync(reply) => {
                let _ = reply.send(file.flush());
            }
        }
    }
    file.flush()?;
    Ok(file)
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append(|c| c.extend_from_slice(buf))?;
        Ok(buf.len())
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
    use std::io::Read;

    #[test]
    fn writes_in_order_seeks_and_finishes() {
        let dir = tempfile_dir();
        let path = dir.join("spooled");
        let mut s = Spool::new(File::create(&path).unwrap(), 7);
        s.write_all(b"headerXX").unwrap();
        for i in 0..1000u32 {
            s.append(|c| c.extend_from_slice(&i.to_le_bytes())).unwrap();
        }
        assert_eq!(s.seek(SeekFrom::Start(0)).unwrap(), 0);
        s.write_all(b"HEADER").unwrap();
        assert_eq!(s.seek(SeekFrom::End(0)).unwrap(), 8 + 4000);
        s.write_all(b"end").unwrap();
        s.finish().unwrap();
        let mut got = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut got).unwrap();
        let mut want = b"HEADERXX".to_vec();
        (0..1000u32).for_each(|i| want.extend_from_slice(&i.to_le_bytes()));
        want.extend_from_slice(b"end");
        assert_eq!(got, want);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_write_error_is_returned_not_lost() {
        // /dev/full fails every write with ENOSPC.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
        let mut s = Spool::new(full, 4);
        let err = match (0..100).try_for_each(|_| s.write_all(b"data")) {
            Err(e) => e,
            Ok(()) => s.finish().unwrap_err(),
        };
        assert_eq!(err.raw_os_error(), Some(28), "ENOSPC expected, got {err}");
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "rocescope-spool-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
