//! Where packets come from: the inputs a user names on the command line, found and opened.
//!
//! A *source* is one file of packets in capture order: a dataplane shard (pcapng, copies
//! already restored, seq in the packet id), a dump host's classic pcap as Lumina's dumper
//! or the testbed emulator writes it (copies in the raw mirror format), or any pcap/pcapng
//! a user has. Inputs are run directories (a dataplane run with `manifest.json`, or a Lumina
//! / emulator run with `*.pcap` files) or single files; each source is named
//! `<input>/<file>` and keeps the host (input) and core it came from, for the integrity
//! check's "who should have had it".

use std::path::{Path, PathBuf};

use trace::annotation::Annotation;
use trace::manifest::Manifest;
use trace::mapped::MappedFile;
use trace::reader::{skips, verify_blocks, BlockFault, IntactPackets, ShardReader, Skip};

use wire::frame::ClassifyConfig;

use crate::pcap::{PcapRecords, MAX_CAPTURED};
use crate::reconstruct::{SUMMARY_FILE, TRACE_FILE};

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Manifest(#[from] trace::manifest::ManifestError),
    #[error("{0}: no packet files here (expected manifest.json, or capture files: *.pcap, *.pcapng, *.cap)")]
    Empty(PathBuf),
    #[error("{path}: not a pcap or pcapng file (first bytes {magic:02x?})")]
    UnknownFormat { path: PathBuf, magic: Vec<u8> },
    #[error("more than {max} sources")]
    TooMany { max: usize },
    #[error(
        "{}: listed in {} but not there; the run is incomplete. {hint}",
        shard.display(), run.join(trace::manifest::FILE_NAME).display()
    )]
    MissingShard { shard: PathBuf, run: PathBuf, hint: String },
    #[error("{path} is given twice (as {first} and {second}): every copy in it would be a duplicate")]
    GivenTwice { path: PathBuf, first: String, second: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// rocescope-dataplane shard: pcapng, restored, annotated.
    Shard,
    Pcapng,
    Pcap,
}

/// One packet file to merge.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SourceSpec {
    pub name: String,
    pub path: PathBuf,
    pub format: Format,
    /// Index of the input (run directory or file) it belongs to: its capture host.
    pub host: usize,
    /// Core of a dataplane shard.
    pub core: Option<u32>,
    /// Manifest blocks to verify before reading (dataplane shards).
    #[serde(skip)]
    pub blocks: Vec<trace::manifest::BlockRecord>,
    /// How its mirrored copies are read (found per file, [`find_lumina_dumps`]).
    #[serde(default)]
    pub read_as: ReadAs,
    /// One lcore's run of a Lumina-dumper file, read as a source of its own; `None`: the
    /// whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<DumpRun>,
}

impl SourceSpec {
    /// A whole capture file of input `host`, its copies read in the mirror format until
    /// [`find_lumina_dumps`] finds them in the dumper's.
    fn capture(name: String, path: PathBuf, format: Format, host: usize) -> SourceSpec {
        SourceSpec {
            name,
            path,
            format,
            host,
            core: None,
            blocks: Vec::new(),
            read_as: ReadAs::MirrorFormat,
            run: None,
        }
    }
}

/// The form a source's mirrored copies are in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadAs {
    /// As the switch mirrors them (UDP to the mirror port), or restored already (shards).
    #[default]
    MirrorFormat,
    /// As Lumina's own dumper writes them ([`wire::mirror::CopyForm::Dumped`]): ports
    /// restored, UDP to the RoCE port, the metadata still in MACs and TTL.
    LuminaDumper,
}

impl ReadAs {
    /// The wire form of the copies.
    pub fn copy_form(self) -> wire::mirror::CopyForm {
        match self {
            ReadAs::MirrorFormat => wire::mirror::CopyForm::Mirrored,
            ReadAs::LuminaDumper => wire::mirror::CopyForm::Dumped,
        }
    }
}

/// Lumina's dumper writes its records lcore by lcore (each lcore's copies in arrival
/// order, then the next lcore's), so its file is a sequence of runs of increasing seqs;
/// each run is merged as a source of its own.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DumpRun {
    /// The whole file's source name (its dump host, for the check's attribution).
    pub file: String,
    /// 0-based, in file order.
    pub index: u32,
    pub runs: u32,
    /// Byte offsets of its first record and of the end of its last.
    pub offset: u64,
    pub end: u64,
}

/// What the inputs are, plus the run directories for metadata files.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub sources: Vec<SourceSpec>,
    /// Directories among the inputs (for switch counters, QP info, NIC counters).
    pub dirs: Vec<PathBuf>,
    pub manifests: Vec<(PathBuf, Manifest)>,
    /// Files in an input directory that are not read, and why.
    pub skipped: Vec<Skipped>,
}

/// A file of an input directory left out.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

impl Inputs {
    /// Each source's file: its index among the files read, which records and
    /// reconstruct.json's `sources` count (the lcore runs of a Lumina-dumper file, merged as
    /// sources of their own, are one file: one dump host).
    pub fn file_of(&self) -> Vec<u16> {
        let mut file = 0u16;
        let starts = self.sources.iter().map(|s| s.run.as_ref().is_none_or(|r| r.index == 0));
        starts
            .enumerate()
            .map(|(i, first)| {
                file += u16::from(first && i > 0);
                file
            })
            .collect()
    }

    /// The sources that start a file ([`Inputs::file_of`]), in order.
    pub fn files(&self) -> impl Iterator<Item = &SourceSpec> {
        self.sources.iter().filter(|s| s.run.as_ref().is_none_or(|r| r.index == 0))
    }
}

/// Finds every source in `paths`. Sources get indices in the order found (sorted file names
/// within a directory), which is the record's `source` field.
pub fn discover(paths: &[PathBuf]) -> Result<Inputs, InputError> {
    discover_for(paths, &ClassifyConfig::default())
}

/// [`discover`], with the RoCE port of `cfg` for recognising Lumina-dumper files.
pub fn discover_for(paths: &[PathBuf], cfg: &ClassifyConfig) -> Result<Inputs, InputError> {
    let mut inputs = Inputs::default();
    for (host, path) in paths.iter().enumerate() {
        if path.is_dir() {
            discover_dir(path, host, &mut inputs)?;
        } else {
            let format = sniff(path)?;
            inputs.sources.push(SourceSpec::capture(display_name(path), path.clone(), format, host));
        }
    }
    if inputs.sources.len() > usize::from(u16::MAX) {
        return Err(InputError::TooMany { max: usize::from(u16::MAX) });
    }
    read_each_file_once(&mut inputs)?;
    name_uniquely(&mut inputs.sources);
    inputs.sources = find_lumina_dumps(std::mem::take(&mut inputs.sources), cfg);
    if inputs.sources.len() > usize::from(u16::MAX) {
        return Err(InputError::TooMany { max: usize::from(u16::MAX) });
    }
    Ok(inputs)
}

/// Records of a classic pcap looked at to tell a Lumina-dumper file.
const DUMPER_SNIFF: usize = 64;
/// More runs than this in one file is not lcores but disorder: the file is read whole.
pub const MAX_DUMP_RUNS: usize = 1024;

/// Classic pcap files written by Lumina's own dumper, recognised by their first records
/// ([`is_lumina_dump`]), are read as such and split into their lcore runs ([`dump_runs`]);
/// every other source is left as it is (no pass over it).
fn find_lumina_dumps(sources: Vec<SourceSpec>, cfg: &ClassifyConfig) -> Vec<SourceSpec> {
    let mut out = Vec::with_capacity(sources.len());
    for spec in sources {
        let map = match spec.format {
            Format::Pcap => MappedFile::open(&spec.path).ok(),
            _ => None,
        };
        let bytes = map.as_ref().map_or(&[][..], |m| m.bytes());
        match PcapRecords::new(bytes).ok().filter(|r| is_lumina_dump(r.clone(), cfg)) {
            Some(records) => out.extend(split_runs(spec, records, bytes.len() as u64, cfg)),
            None => out.push(spec),
        }
    }
    out
}

/// Whether a pcap file is Lumina's dumper's: among its first [`DUMPER_SNIFF`] records,
/// some are copies in the dumper's form — UDP to the RoCE port with seq and event in src
/// MAC and TTL — and all such have the record's timestamp in their dst MAC
/// ([`wire::frame::peek_dumped`]: the dumper stamps records with the switch's time; a
/// plain RoCE capture's dst MACs are not its capture times).
pub fn is_lumina_dump(records: PcapRecords<'_>, cfg: &ClassifyConfig) -> bool {
    let (unit, dumped_cfg) = (records.ts_unit_ns(), wire::mirror::CopyForm::Dumped.classify_config(cfg));
    let mut signed = 0;
    for r in records.take(DUMPER_SNIFF).map_while(Result::ok) {
        if wire::frame::peek_mirror(r.data, &dumped_cfg).is_none() {
            continue;
        }
        match wire::frame::peek_dumped(r.data, r.ts_ns, unit, cfg) {
            Some(_) => signed += 1,
            None => return false,
        }
    }
    signed > 0
}

/// A Lumina-dumper file as one source per lcore run.
fn split_runs(spec: SourceSpec, records: PcapRecords<'_>, end: u64, cfg: &ClassifyConfig) -> Vec<SourceSpec> {
    let starts = dump_runs(records, cfg);
    let whole = SourceSpec { read_as: ReadAs::LuminaDumper, ..spec };
    if starts.len() <= 1 || starts.len() > MAX_DUMP_RUNS {
        return vec![whole];
    }
    let runs = starts.len() as u32;
    let ends = starts.iter().skip(1).copied().chain([end]);
    starts
        .iter()
        .zip(ends)
        .enumerate()
        .map(|(k, (&offset, end))| SourceSpec {
            name: format!("{} (lcore run {k})", whole.name),
            run: Some(DumpRun { file: whole.name.clone(), index: k as u32, runs, offset, end }),
            ..whole.clone()
        })
        .collect()
}

/// A step back of at most this many seqs inside a Lumina-dumper file is disorder within
/// one lcore's stream (the network's, or a queue's), which the merge's window absorbs,
/// not the start of the next lcore's run: an lcore's copies span the capture, so its
/// first lies far below the last of the lcore before it.
pub const LOCAL_DISORDER: u32 = 64;

/// Where the runs of increasing seqs start in a Lumina-dumper file: one pass over its
/// records' seqs (headers only), a new run at each seq more than [`LOCAL_DISORDER`] below
/// the one before (with the 31-bit wrap: 0x7fffffff → 1 goes on). The first run starts at
/// the first record; a damaged record ends the pass (the last run reads on to report it).
pub fn dump_runs(records: PcapRecords<'_>, cfg: &ClassifyConfig) -> Vec<u64> {
    let dumped_cfg = wire::mirror::CopyForm::Dumped.classify_config(cfg);
    let mut starts = vec![records.offset()];
    let mut last: Option<u32> = None;
    let back = |l: u32, seq: u32| -crate::merge::signed_seq_distance(l, seq) > LOCAL_DISORDER as i32;
    for r in records.map_while(Result::ok) {
        let Some(meta) = wire::frame::peek_mirror(r.data, &dumped_cfg) else { continue };
        if last.is_some_and(|l| back(l, meta.seq)) {
            starts.push(r.offset);
            if starts.len() > MAX_DUMP_RUNS {
                break;
            }
        }
        last = Some(meta.seq);
    }
    starts
}

/// The same file reached twice would make every copy in it a duplicate. Within one input
/// directory that is an alias (a symlink or hard link beside the file: `latest.pcap`),
/// read once and the alias skipped; through two inputs (`run/` and `run/dump-0.pcap`, or
/// a path given twice) it is a mistake on the command line, refused.
fn read_each_file_once(inputs: &mut Inputs) -> Result<(), InputError> {
    let mut seen: std::collections::HashMap<FileId, (usize, String)> = std::collections::HashMap::new();
    let mut kept = Vec::with_capacity(inputs.sources.len());
    for s in std::mem::take(&mut inputs.sources) {
        let shown = s.path.display().to_string();
        match seen.get(&FileId::of(&s.path)) {
            None => {
                seen.insert(FileId::of(&s.path), (s.host, shown));
                kept.push(s);
            }
            Some((host, first)) if *host == s.host => {
                let why = format!("the same file as {first}");
                inputs.skipped.push(Skipped { path: s.path, why });
            }
            Some((_, first)) => {
                let path = std::fs::canonicalize(&s.path).unwrap_or(s.path);
                return Err(InputError::GivenTwice { path, first: first.clone(), second: shown });
            }
        }
    }
    inputs.sources = kept;
    Ok(())
}

/// What makes two paths one file: device and inode (hard links too), else the path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum FileId {
    Inode(u64, u64),
    Path(PathBuf),
}

impl FileId {
    fn of(path: &Path) -> FileId {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(m) => FileId::Inode(m.dev(), m.ino()),
            Err(_) => FileId::Path(path.to_path_buf()),
        }
    }
}

/// Sources are named `<dir>/<file>` (or the file's name); where two inputs give the same
/// name (`a/run` and `b/run`), those sources are named by their path instead, so that every
/// location in the reports points at one file.
fn name_uniquely(sources: &mut [SourceSpec]) {
    let mut count = std::collections::HashMap::new();
    for s in sources.iter() {
        *count.entry(s.name.clone()).or_insert(0usize) += 1;
    }
    for s in sources.iter_mut().filter(|s| count[&s.name] > 1) {
        s.name = s.path.display().to_string();
    }
}

/// A shard the manifest lists that is not in the run directory: refused (its packets would
/// be missing without a trace in the check), naming the shards that are there.
fn missing_shard(dir: &Path, manifest: &Manifest) -> Result<(), InputError> {
    let path = |shard: &str| dir.join(shard);
    let Some(lost) = manifest.cores.iter().find(|c| !path(&c.shard).exists()) else { return Ok(()) };
    let present: Vec<String> =
        manifest.cores.iter().map(|c| path(&c.shard)).filter(|p| p.exists()).map(|p| p.display().to_string()).collect();
    let hint = match present.is_empty() {
        true => "None of its shards is there.".to_string(),
        false => {
            format!("To merge what remains, give its shards as files: rocescope reconstruct {}", present.join(" "))
        }
    };
    Err(InputError::MissingShard { shard: path(&lost.shard), run: dir.to_path_buf(), hint })
}

fn discover_dir(dir: &Path, host: usize, inputs: &mut Inputs) -> Result<(), InputError> {
    inputs.dirs.push(dir.to_path_buf());
    let prefix = display_name(dir);
    if dir.join(trace::manifest::FILE_NAME).exists() {
        let manifest = Manifest::load(dir)?;
        missing_shard(dir, &manifest)?;
        for core in &manifest.cores {
            inputs.sources.push(SourceSpec {
                core: Some(core.core),
                blocks: core.blocks.clone(),
                ..SourceSpec::capture(format!("{prefix}/{}", core.shard), dir.join(&core.shard), Format::Shard, host)
            });
        }
        inputs.manifests.push((dir.to_path_buf(), manifest));
        return Ok(());
    }
    let io = |source| InputError::Io { path: dir.to_path_buf(), source };
    let mut files = Vec::new();
    for path in std::fs::read_dir(dir).map_err(io)?.filter_map(|e| e.ok().map(|e| e.path())) {
        if let Some(format) = capture_format(&path)? {
            files.push((path, format));
        } else if named_format(&path).is_some() && path.exists() && !path.is_file() && !path.is_dir() {
            // Named as a capture, but a FIFO or device: reading it could block or never end.
            let why = "not a regular file (a FIFO or device): not read".to_string();
            inputs.skipped.push(Skipped { path, why });
        }
    }
    if dir.join(SUMMARY_FILE).exists() {
        // A reconstruction's own trace (written here by `-o` before that was refused): its
        // copies are the other files' again.
        let ours = dir.join(TRACE_FILE);
        if files.iter().any(|(p, _)| *p == ours) {
            files.retain(|(p, _)| *p != ours);
            let why = format!("the trace of the reconstruction whose {SUMMARY_FILE} is beside it");
            inputs.skipped.push(Skipped { path: ours, why });
        }
    }
    files.sort_by(|(a, _), (b, _)| a.cmp(b));
    if files.is_empty() {
        return Err(InputError::Empty(dir.to_path_buf()));
    }
    for (path, format) in files {
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        inputs.sources.push(SourceSpec::capture(format!("{prefix}/{file}"), path, format, host));
    }
    Ok(())
}

/// A file of an input directory as a capture: its format, from its first bytes or its
/// name ([`named_format`]); `None` for any other file. A file named as a capture that
/// cannot be read is an error; any other unreadable file is not a capture.
fn capture_format(path: &Path) -> Result<Option<Format>, InputError> {
    if !path.is_file() {
        return Ok(None);
    }
    match sniff(path) {
        Ok(format) => Ok(Some(format)),
        Err(InputError::UnknownFormat { .. }) => Ok(None),
        Err(e) if named_format(path).is_some() => Err(e),
        Err(_) => Ok(None),
    }
}

fn display_name(path: &Path) -> String {
    path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}

/// A file's format from its first bytes. A pcapng file that rocescope wrote (a dataplane
/// shard, or a reconstruction's trace.pcapng) is read as a shard: its copies are restored
/// and say their seq in their annotations. A file too short to tell or with a wrong
/// magic, named as a capture ([`named_format`]), is taken for what its name says, so
/// that it is reported damaged rather than stopping the whole reconstruction.
fn sniff(path: &Path) -> Result<Format, InputError> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    let f = trace::mapped::open_regular(path).map_err(|source| InputError::Io { path: path.into(), source })?;
    f.take(4096).read_to_end(&mut head).map_err(|source| InputError::Io { path: path.into(), source })?;
    let magic = head.get(..4).map(|m| u32::from_le_bytes(m.try_into().expect("4 bytes")));
    match magic.and_then(format_of_magic).or_else(|| named_format(path)) {
        Some(Format::Pcapng) => {
            let ours = trace::reader::section_application(&head).is_some_and(|app| app.starts_with(b"rocescope"));
            Ok(if ours { Format::Shard } else { Format::Pcapng })
        }
        Some(format) => Ok(format),
        None => Err(InputError::UnknownFormat { path: path.into(), magic: head[..head.len().min(4)].to_vec() }),
    }
}

/// The format a file's first four bytes (little-endian) announce.
fn format_of_magic(magic: u32) -> Option<Format> {
    match magic {
        trace::pcapng::BT_SECTION_HEADER => Some(Format::Pcapng),
        0xa1b2_c3d4 | 0xa1b2_3c4d | 0xd4c3_b2a1 | 0x4d3c_b2a1 => Some(Format::Pcap),
        _ => None,
    }
}

/// The format a capture's name says: `.pcap`, `.pcapng`, `.cap` in any case, or numbered
/// (`.pcap1`, `.pcapng12`, as `tcpdump -C` names rotated files). Such a file is read even
/// when its first bytes are wrong, to be reported damaged.
fn named_format(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.trim_end_matches(|c: char| c.is_ascii_digit()) {
        "pcapng" => Some(Format::Pcapng),
        "pcap" | "cap" => Some(Format::Pcap),
        _ => None,
    }
}

/// One packet as read from a source, borrowed from its mapped bytes.
#[derive(Debug, Clone, Copy)]
pub struct RawPacket<'a> {
    /// Byte offset of the packet's record/block in its file.
    pub offset: u64,
    /// The file's timestamp, ns since the Unix epoch.
    pub ts_ns: u64,
    pub orig_len: u32,
    pub data: &'a [u8],
    /// The dataplane's annotation of a restored copy (shards only).
    pub annotation: Option<Annotation>,
}

/// Where and why a source could not be read to its end.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Damage {
    pub source: String,
    pub offset: u64,
    pub what: String,
}

/// A source's mapped bytes.
pub struct OpenSource {
    pub spec: SourceSpec,
    map: MappedFile,
    /// Manifest blocks whose CRC or extent is wrong, checked once when opened.
    damage: Vec<Damage>,
    /// Where reading skips damage, in file order: from an offset to where the next intact
    /// block starts, or to the end.
    skips: Vec<Skip>,
}

impl OpenSource {
    pub fn open(spec: SourceSpec) -> Result<OpenSource, InputError> {
        let map = MappedFile::open(&spec.path).map_err(|source| InputError::Io { path: spec.path.clone(), source })?;
        let mut source = OpenSource { spec, map, damage: Vec::new(), skips: Vec::new() };
        if !source.spec.blocks.is_empty() {
            let faults = verify_blocks(source.bytes(), &source.spec.blocks);
            source.skips = skips(&faults);
            source.damage = faults.into_iter().map(|f| source.describe(f)).collect();
        }
        Ok(source)
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }

    /// Bytes of the file it reads: its lcore run's, or the whole file.
    pub fn extent(&self) -> u64 {
        self.spec.run.as_ref().map_or(self.bytes().len() as u64, |r| r.end.saturating_sub(r.offset))
    }

    /// Manifest blocks whose CRC or extent is wrong: each is a [`Damage`] naming the
    /// packets it held, and reading skips it (its packets cannot be trusted) to the next
    /// block, which the manifest locates and its own CRC vouches for.
    pub fn block_damage(&self) -> Vec<Damage> {
        self.damage.clone()
    }

    fn describe(&self, f: BlockFault) -> Damage {
        let (offset, what) = match f {
            BlockFault::Missing { index, offset, len, file_len } => (
                offset,
                format!(
                    "block {index} ({len} bytes, {} packets) extends past the end of the file ({file_len} bytes): \
                     truncated, not read",
                    self.block_packets(index)
                ),
            ),
            BlockFault::Crc { index, offset, len, expected, actual } => (
                offset,
                format!(
                    "block {index} ({len} bytes, {} packets): CRC-32C {actual:#010x}, manifest says {expected:#010x}; \
                     {}not read",
                    self.block_packets(index),
                    self.kept_headers(offset, len)
                ),
            ),
            BlockFault::PaddingCut { index, len, file_len, padding, .. } => (
                padding,
                format!(
                    "block {index} ({len} bytes, {} packets) is cut by the end of the file ({file_len} bytes) in its \
                     trailing padding (from {padding}): with the padding restored its CRC-32C matches, so its \
                     packets are read; the shard is truncated",
                    self.block_packets(index)
                ),
            ),
            // Reported where the skipped bytes start: the end of the block before the gap.
            BlockFault::Gap { index, expected_offset, offset } => {
                (expected_offset, format!("block {index} starts at {offset}, previous ended at {expected_offset}"))
            }
            BlockFault::Unaccounted { offset, len } => {
                (offset, format!("{len} bytes after the last block the manifest lists"))
            }
        };
        self.damage(offset, what)
    }

    /// What a damaged block's message says of its headers: that its section header is
    /// taken for the blocks after it ([`ShardReader::take_headers`]), when it is.
    fn kept_headers(&self, offset: u64, len: u64) -> &'static str {
        let at = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).min(self.bytes().len());
        let mut reader = ShardReader::new(self.bytes());
        reader.resume_at(at(offset));
        match reader.take_headers(at(offset.saturating_add(len))) {
            true => "its section and interface headers, which still parse, frame the blocks after it; its packets are ",
            false => "",
        }
    }

    /// The packets, in file order; the iterator ends with one `Err` if the file is damaged.
    pub fn packets(&self) -> Packets<'_> {
        let bytes = self.bytes();
        let inner = match self.spec.format {
            // An empty file has not even a section header: damage, as for a classic pcap.
            Format::Shard | Format::Pcapng if self.bytes().is_empty() => {
                Inner::Failed(Some(self.damage(0, "empty file: no pcapng section header".into())))
            }
            Format::Shard | Format::Pcapng => Inner::Pcapng(IntactPackets::new(bytes, &self.skips)),
            Format::Pcap => match PcapRecords::new(bytes) {
                Ok(records) => match &self.spec.run {
                    Some(run) => Inner::Pcap(records.span(run.offset, run.end)),
                    None => Inner::Pcap(records),
                },
                Err(e) => Inner::Failed(Some(self.damage(0, format!("pcap header: {e}")))),
            },
        };
        Packets { source: self, inner }
    }

    fn block_packets(&self, index: usize) -> u64 {
        self.spec.blocks.get(index).map_or(0, |b| b.packets)
    }

    fn damage(&self, offset: u64, what: String) -> Damage {
        Damage { source: self.spec.name.clone(), offset, what }
    }
}

pub struct Packets<'a> {
    source: &'a OpenSource,
    inner: Inner<'a>,
}

enum Inner<'a> {
    /// Reading steps over the damage reported when the source opened.
    Pcapng(IntactPackets<'a>),
    Pcap(PcapRecords<'a>),
    Failed(Option<Damage>),
}

impl<'a> Iterator for Packets<'a> {
    type Item = Result<RawPacket<'a>, Damage>;

    /// Always inlined into the merge: returned through memory, the packet was read back
    /// with loads wider than the stores that had just written it (a store-forwarding
    /// stall, a third of `Merger::refill`'s samples).
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Failed(d) => d.take().map(Err),
            Inner::Pcapng(_) => self.next_pcapng(),
            Inner::Pcap(records) => {
                let at = records.offset();
                Some(match records.next()? {
                    Ok(r) => Ok(RawPacket {
                        offset: r.offset,
                        ts_ns: r.ts_ns,
                        orig_len: r.orig_len,
                        data: r.data,
                        annotation: None,
                    }),
                    Err(e) => Err(self.source.damage(at, format!("pcap record: {e}"))),
                })
            }
        }
    }
}

impl<'a> Packets<'a> {
    #[inline(always)]
    fn next_pcapng(&mut self) -> Option<Result<RawPacket<'a>, Damage>> {
        let shard = self.source.spec.format == Format::Shard;
        let Inner::Pcapng(r) = &mut self.inner else { return None };
        match r.next()? {
            // As in a classic pcap file: no frame is that long, and the block would not
            // fit the output's chunks.
            Ok(p) if p.data.len() > MAX_CAPTURED as usize => {
                let what = format!("captured length {} is beyond any frame ({MAX_CAPTURED})", p.data.len());
                self.inner = Inner::Failed(None);
                Some(Err(self.source.damage(p.offset, what)))
            }
            Ok(p) => Some(Ok(RawPacket {
                offset: p.offset,
                ts_ns: p.timestamp_ns,
                orig_len: p.original_len,
                data: p.data,
                annotation: if shard { p.annotation() } else { None },
            })),
            Err(e) => {
                let offset = read_error_offset(&e);
                Some(Err(self.source.damage(offset, e.to_string())))
            }
        }
    }
}

fn read_error_offset(e: &trace::reader::ReadError) -> u64 {
    use trace::reader::ReadError::*;
    match *e {
        Truncated { offset, .. }
        | BadBlockLength { offset, .. }
        | LengthMismatch { offset, .. }
        | ByteOrder { offset, .. }
        | NoSection { offset }
        | BadCaptureLength { offset, .. }
        | UnknownInterface { offset, .. }
        | NotEthernet { offset, .. } => offset,
    }
}
