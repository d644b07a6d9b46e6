//! Read-only memory maps of shard files, so readers handle shards of any size in bounded
//! memory (the OS pages them in and out) without copying them.

use std::fs::File;
use std::path::Path;

/// A whole file mapped read-only, or copy-on-write; `bytes()` is its content.
pub struct MappedFile {
    /// `None` for an empty file, which cannot be mapped.
    map: Option<Map>,
}

enum Map {
    Shared(memmap2::Mmap),
    /// Writes go to private copies of the pages written, never to the file.
    CopyOnWrite(memmap2::MmapMut),
}

/// Opens `path` for reading when it is a regular file (after symlinks). A FIFO would block
/// the open until a writer came, forever; a device (`/dev/zero`) never ends: both are
/// refused, as is a directory.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = match () {
            _ if kind.is_fifo() => "a FIFO",
            _ if kind.is_dir() => "a directory",
            _ if kind.is_char_device() || kind.is_block_device() => "a device",
            _ => "not a file",
        };
        let msg = format!("{what}, not a regular file: only capture files can be read");
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, msg));
    }
    File::open(path)
}

/// The regular file at `path`, opened; `None` when it is empty, which cannot be mapped.
fn open_mappable(path: &Path) -> std::io::Result<Option<File>> {
    let file = open_regular(path)?;
    Ok((file.metadata()?.len() > 0).then_some(file))
}

impl MappedFile {
    pub fn open(path: &Path) -> std::io::Result<MappedFile> {
        let Some(file) = open_mappable(path)? else { return Ok(MappedFile { map: None }) };
        // SAFETY: the map is read-only and private to this process. A shard is immutable
        // once its run has finished; if another process truncated it while mapped, reads
        // past the new end would fault (SIGBUS) rather than return wrong data — the same
        // contract every mmap-based pcap reader has.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedFile { map: Some(Map::Shared(map)) })
    }

    /// Maps `path` copy-on-write: `bytes_mut` may patch the content in memory, which costs
    /// only the pages patched (a copy of the whole file would cost all of them).
    pub fn open_copy_on_write(path: &Path) -> std::io::Result<MappedFile> {
        let Some(file) = open_mappable(path)? else { return Ok(MappedFile { map: None }) };
        // SAFETY: as in `open`; the map is private, so writing through it never reaches
        // the file or another process's view of it.
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file)? };
        Ok(MappedFile { map: Some(Map::CopyOnWrite(map)) })
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.map {
            Some(Map::Shared(m)) => m,
            Some(Map::CopyOnWrite(m)) => m,
            None => &[],
        }
    }

    /// The content, writable, for a copy-on-write map (empty for an empty file); `None`
    /// for a read-only one.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match &mut self.map {
            Some(Map::Shared(_)) => None,
            Some(Map::CopyOnWrite(m)) => Some(m),
            None => Some(&mut []),
        }
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

    #[test]
    fn copy_on_write_patches_memory_not_the_file() {
        let scratch = tempfile::Builder::new().prefix("rs-mapped-").tempdir().unwrap();
        let path = scratch.path().join("a");
        std::fs::write(&path, b"hello").unwrap();
        assert!(MappedFile::open(&path).unwrap().bytes_mut().is_none(), "a shared map is read-only");
        let mut map = MappedFile::open_copy_on_write(&path).unwrap();
        map.bytes_mut().unwrap()[0] = b'j';
        assert_eq!(map.bytes(), b"jello");
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert_eq!(MappedFile::open(&path).unwrap().bytes(), b"hello");
    }
}
