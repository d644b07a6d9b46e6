//! Read-only memory maps of shard files, so readers handle shards of any size in bounded
//! memory (the OS pages them in and out) without copying them.

use std::fs::File;
use std::path::Path;

/// A whole file mapped read-only; `bytes()` is its content.
pub struct MappedFile {
    /// `None` for an empty file, which cannot be mapped.
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    pub fn open(path: &Path) -> std::io::Result<MappedFile> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(MappedFile { map: None });
        }
        // SAFETY: the map is read-only and private to this process. A shard is immutable
        // once its run has finished; if another process truncated it while mapped, reads
        // past the new end would fault (SIGBUS) rather than return wrong data — the same
        // contract every mmap-based pcap reader has.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedFile { map: Some(map) })
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_files_including_empty_ones() {
        let scratch = tempfile::Builder::new().prefix("rs-mapped-").tempdir().unwrap();
        let dir = scratch.path();
        std::fs::write(dir.join("a"), b"hello").unwrap();
        std::fs::write(dir.join("empty"), b"").unwrap();
        assert_eq!(MappedFile::open(&dir.join("a")).unwrap().bytes(), b"hello");
        assert_eq!(MappedFile::open(&dir.join("empty")).unwrap().bytes(), b"");
        assert!(MappedFile::open(&dir.join("missing")).is_err());
    }
}
