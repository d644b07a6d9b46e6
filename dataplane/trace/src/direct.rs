//! Writing trace files with O_DIRECT, shared by the dataplane's shard writers and the control
//! process's spools. Bypassing the page cache is what keeps a writer's CPU per byte low on
//! files nobody reads right away (docs/benchmarks.md), but O_DIRECT wants buffers, lengths
//! and file offsets in multiples of [`ALIGN`]: writers start each chunk's body at an aligned
//! address ([`lead`], or a [`Buffer`], which starts aligned) and hand over whole pages.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use memmap2::{Advice, MmapMut};

/// O_DIRECT's unit: buffer addresses, lengths and file offsets are multiples of it.
pub const ALIGN: usize = 4096;

/// A transparent huge page (x86-64, arm64 with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// A fixed-capacity buffer for O_DIRECT writes, on a 2 MiB boundary and backed by
/// transparent huge pages where the kernel grants them (`madvise` mode included).
///
/// Why: O_DIRECT pins the buffer's pages for each write and hands the device one segment
/// per physically contiguous run. From 4 KiB pages a 1 MiB write is 256 pins and up to 256
/// segments; from a huge page it is one of each. Writing 4 GB with 1 MiB O_DIRECT writes
/// on the bench VM (a C test, by hand): 1.65–1.74 GB/s and 0.33 s of system time from 4 KiB
/// pages, 2.0–2.05 GB/s and 0.19 s from huge pages.
pub struct Buffer {
    map: MmapMut,
    /// Offset of the buffer's first byte in `map`: its first 2 MiB boundary.
    start: usize,
    len: usize,
    capacity: usize,
}

impl Buffer {
    /// An empty buffer of `capacity` bytes (rounded up to [`ALIGN`]).
    pub fn new(capacity: usize) -> io::Result<Buffer> {
        let capacity = capacity.max(1).next_multiple_of(ALIGN);
        let span = capacity.next_multiple_of(HUGE_PAGE);
        // One huge page more than needed, to start on its boundary; the pages before it are
        // never touched, so they cost address space only.
        let map = MmapMut::map_anon(span + HUGE_PAGE)?;
        let start = (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE;
        // Refused where THP is off or unsupported: 4 KiB pages then serve, only slower.
        let _ = map.advise_range(Advice::HugePage, start, span);
        Ok(Buffer { map, start, len: 0, capacity })
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes that can still be put.
    pub fn room(&self) -> usize {
        self.capacity - self.len
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.map[self.start..self.start + self.len]
    }
}

impl crate::pcapng::Out for Buffer {
    /// Panics when `bytes` do not fit: callers size their appends (it never grows, which
    /// would lose the alignment).
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        assert!(bytes.len() <= self.room(), "{} bytes put into a direct buffer with {} left", bytes.len(), self.room());
        let at = self.start + self.len;
        self.map[at..at + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }
}

/// How many filler bytes put a body that starts at `addr` on the next aligned address.
pub fn lead(addr: *const u8) -> usize {
    (ALIGN - addr as usize % ALIGN) % ALIGN
}

/// Creates (or truncates) `path` for O_DIRECT writes; where the filesystem refuses O_DIRECT
/// (tmpfs before Linux 6.6), for ordinary ones. The flag says which it is.
pub fn create(path: &Path) -> io::Result<(File, bool)> {
    let open = |flags| OpenOptions::new().write(true).create(true).truncate(true).custom_flags(flags).open(path);
    match open(libc::O_DIRECT) {
        Ok(file) => Ok((file, true)),
        Err(_) => Ok((open(0)?, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcapng::Out;

    #[test]
    fn a_buffer_starts_on_a_huge_page_and_holds_what_was_put() {
        let mut b = Buffer::new(10_000).unwrap();
        assert_eq!(b.capacity(), 12_288, "rounded up to whole 4 KiB pages");
        assert_eq!(b.as_slice().as_ptr() as usize % HUGE_PAGE, 0);
        b.put(b"abc");
        b.put(&[7; 5000]);
        assert_eq!((b.len(), b.room()), (5003, 12_288 - 5003));
        assert_eq!(&b.as_slice()[..4], b"abc\x07");
        b.clear();
        assert!(b.is_empty());
        b.put(&[1; 12_288]);
        assert_eq!(b.room(), 0);
    }

    #[test]
    #[should_panic(expected = "direct buffer")]
    fn putting_past_the_capacity_is_refused() {
        let mut b = Buffer::new(ALIGN).unwrap();
        b.put(&[0; ALIGN + 1]);
    }

    #[test]
    fn lead_reaches_the_next_aligned_address() {
        let buf = vec![0u8; 3 * ALIGN];
        for off in [0, 1, 17, ALIGN - 1, ALIGN, ALIGN + 5] {
            let p = buf[off..].as_ptr();
            let l = lead(p);
            assert!(l < ALIGN);
            assert_eq!((p as usize + l) % ALIGN, 0, "offset {off}");
        }
    }

    #[test]
    fn create_truncates_and_takes_aligned_writes() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::Builder::new().prefix("rocescope-direct-").tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"old contents").unwrap();
        let (file, _direct) = create(&path).unwrap(); // O_DIRECT or not, as the filesystem allows
        let mut buf = vec![0u8; 2 * ALIGN];
        let at = lead(buf.as_ptr());
        buf[at..at + ALIGN].fill(b'x');
        file.write_all_at(&buf[at..at + ALIGN], 0).unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), vec![b'x'; ALIGN], "truncated, then one aligned page");
    }
}
