//! Writing trace files with O_DIRECT, shared by the dataplane's shard writers and the control
//! process's spools. Bypassing the page cache is what keeps a writer's CPU per byte low on
//! files nobody reads right away (docs/benchmarks.md), but O_DIRECT wants buffers, lengths
//! and file offsets in multiples of [`ALIGN`]: writers start each chunk's body at an aligned
//! address ([`lead`]) and hand over whole pages.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// O_DIRECT's unit: buffer addresses, lengths and file offsets are multiples of it.
pub const ALIGN: usize = 4096;

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
        let dir = std::env::temp_dir().join(format!("rocescope-direct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, b"old contents").unwrap();
        let (file, _direct) = create(&path).unwrap(); // O_DIRECT or not, as the filesystem allows
        let mut buf = vec![0u8; 2 * ALIGN];
        let at = lead(buf.as_ptr());
        buf[at..at + ALIGN].fill(b'x');
        file.write_all_at(&buf[at..at + ALIGN], 0).unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), vec![b'x'; ALIGN], "truncated, then one aligned page");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
