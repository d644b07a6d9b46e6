//! The UDP port the mirrored copies arrive on. Lumina's switch rewrites the copies' dst
//! port (`rewrite-udp-dst-port`, so that RSS spreads them, Lumina §3.4): when the user
//! names no port, the run's configuration says which; and when a trace holds no copy at
//! all, its frames say which port would have made them copies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wire::frame::{ClassifyConfig, FrameClass};

use crate::input::{Inputs, OpenSource};

/// The run configuration beside the dumps (emulator §4.9, Lumina's test YAML), by the
/// names `analyze` reads it by: the first there.
pub const CONFIG_FILES: [&str; 2] = ["config.yaml", "config.yml"];

/// The mirror port and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorPort {
    pub port: u16,
    pub from: PortFrom,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortFrom {
    /// `--mirror-port`.
    Given,
    /// A run's configuration: the file and its key.
    Config { path: PathBuf, key: &'static str },
    /// Lumina's 9741.
    Default,
}

#[derive(Debug, thiserror::Error)]
pub enum PortError {
    #[error("{path}: `{key}` is {value}, not a UDP port (1..=65535)")]
    NotAPort { path: PathBuf, key: &'static str, value: String },
    #[error(
        "the runs' configurations name different mirror ports ({first} in {}, {second} in {}): say which with --mirror-port",
        first_path.display(), second_path.display()
    )]
    Differ { first: u16, first_path: PathBuf, second: u16, second_path: PathBuf },
}

/// The mirror port for the inputs `paths`: `given`, else the one the configuration of the
/// input directories names (they must agree), else Lumina's 9741.
pub fn choose(paths: &[PathBuf], given: Option<u16>) -> Result<MirrorPort, PortError> {
    if let Some(port) = given {
        return Ok(MirrorPort { port, from: PortFrom::Given });
    }
    let mut found: Option<(u16, PathBuf, &'static str)> = None;
    let config = |dir: &PathBuf| CONFIG_FILES.iter().map(|f| dir.join(f)).find(|p| p.exists());
    for path in paths.iter().filter(|p| p.is_dir()).filter_map(config) {
        let Some((port, key)) = configured(&path)? else { continue };
        match &found {
            Some((first, first_path, _)) if *first != port => {
                let (first_path, second_path) = (first_path.clone(), path);
                return Err(PortError::Differ { first: *first, first_path, second: port, second_path });
            }
            Some(_) => {}
            None => found = Some((port, path, key)),
        }
    }
    Ok(match found {
        Some((port, path, key)) => MirrorPort { port, from: PortFrom::Config { path, key } },
        None => MirrorPort { port: wire::udp::LUMINA_MIRROR_PORT, from: PortFrom::Default },
    })
}

/// The mirror port a configuration names: the emulator's `rig.mirror-port`, else Lumina's
/// `rewrite-udp-dst-port`. A file that is not there or not YAML names none (`check` and
/// `analyze` say what they cannot read); a value that is no port is an error.
fn configured(path: &Path) -> Result<Option<(u16, &'static str)>, PortError> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(None) };
    let Ok(yaml) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text) else { return Ok(None) };
    let keys =
        [("rig.mirror-port", &yaml["rig"]["mirror-port"]), ("rewrite-udp-dst-port", &yaml["rewrite-udp-dst-port"])];
    let Some((key, value)) = keys.into_iter().find(|(_, v)| !v.is_null()) else { return Ok(None) };
    match value.as_u64().and_then(|v| u16::try_from(v).ok()).filter(|&p| p > 0) {
        Some(port) => Ok(Some((port, key))),
        None => {
            let value = serde_yaml_ng::to_string(value).unwrap_or_default().trim().to_string();
            Err(PortError::NotAPort { path: path.to_path_buf(), key, value })
        }
    }
}

/// Frames looked at to tell why a trace has no copy: its first million.
const SAMPLE: u64 = 1 << 20;

/// What the frames of a trace without a single mirrored copy are instead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoCopies {
    /// Frames looked at (the first [`SAMPLE`] of the inputs).
    pub frames: u64,
    /// The UDP dst port on which the most of them carry Lumina's mirror metadata, and
    /// how many do: the copies, on a port other than the one given.
    pub likely: Option<(u16, u64)>,
    /// Plain RoCE frames among them (the RoCE port, no mirror metadata).
    pub plain_roce: u64,
}

impl NoCopies {
    /// Looks at the first frames of `inputs`, classified as reconstruction did with `cfg`.
    pub fn look(inputs: &Inputs, cfg: ClassifyConfig) -> NoCopies {
        let mut found = NoCopies::default();
        let mut ports: BTreeMap<u16, u64> = BTreeMap::new();
        let mut classifier = crate::reconstruct::Classifier::new(cfg);
        for source in inputs.sources.iter().cloned().filter_map(|s| OpenSource::open(s).ok()) {
            for p in source.packets().map_while(Result::ok).take((SAMPLE - found.frames) as usize) {
                found.frames += 1;
                let Ok(info) = classifier.classify(p.data, p.orig_len, None) else { continue };
                found.plain_roce += u64::from(info.class == FrameClass::Roce);
                if let Some(port) = copy_port(p.data, info.l4_offset, cfg) {
                    *ports.entry(port).or_default() += 1;
                }
            }
        }
        // The most frames; of equal counts, the lowest port.
        found.likely = ports.into_iter().max_by_key(|&(port, n)| (n, std::cmp::Reverse(port)));
        found
    }

    /// What to tell the user: that the trace has no copy, and what to try.
    pub fn advice(&self, cfg: ClassifyConfig) -> String {
        let (frames, mirror, roce) = (self.frames, cfg.mirror_port, cfg.roce_port);
        let head = format!("no mirrored copy (UDP dst port {mirror} with Lumina's mirror metadata)");
        match self.likely {
            _ if frames == 0 => format!("{head}: the inputs hold no frame at all"),
            Some((port, n)) => format!(
                "{head}: {n} of the first {frames} frames carry mirror metadata to UDP dst port {port}; \
                 reconstruct again with --mirror-port {port}"
            ),
            None if self.plain_roce > 0 => format!(
                "{head}: of the first {frames} frames, {} are plain RoCE (UDP dst port {roce}, no mirror metadata): \
                 a capture of the traffic itself, not of the switch's mirrored copies",
                self.plain_roce
            ),
            None => format!("{head}: none of the first {frames} frames carries mirror metadata on any UDP port"),
        }
    }
}

/// The UDP dst port of a frame (its UDP header at `l4`) when the frame would be a copy
/// were that the mirror port, and it is not the one given.
fn copy_port(data: &[u8], l4: u16, cfg: ClassifyConfig) -> Option<u16> {
    if l4 == 0 {
        return None; // not IP
    }
    let at = usize::from(l4);
    let port = u16::from_be_bytes(data.get(at + 2..at + 4)?.try_into().ok()?);
    let as_mirror = ClassifyConfig { mirror_port: port, ..cfg };
    (port != cfg.mirror_port && wire::frame::peek_mirror(data, &as_mirror).is_some()).then_some(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(root: &Path, name: &str, config: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), config).unwrap();
        dir
    }

    #[test]
    fn the_configured_port_is_the_emulators_else_luminas_and_must_agree() {
        let root = tempfile::tempdir().unwrap();
        let lumina = run_with(root.path(), "lumina", "rewrite-udp-dst-port: 5555\n");
        let rig = run_with(root.path(), "rig", "rig: {mirror-port: 6000}\nrewrite-udp-dst-port: 5555\n");
        let plain = run_with(root.path(), "plain", "traffic: {}\n");
        let port = |dirs: &[&PathBuf], given| choose(&dirs.iter().map(|d| d.to_path_buf()).collect::<Vec<_>>(), given);
        let got = port(&[&lumina], None).unwrap();
        assert_eq!(
            (got.port, got.from),
            (5555, PortFrom::Config { path: lumina.join("config.yaml"), key: "rewrite-udp-dst-port" })
        );
        assert_eq!(port(&[&rig], None).unwrap().port, 6000);
        assert_eq!(port(&[&plain], None).unwrap(), MirrorPort { port: 9741, from: PortFrom::Default });
        assert_eq!(port(&[&lumina, &plain, &lumina], None).unwrap().port, 5555, "one run's dump hosts agree");
        assert_eq!(port(&[&rig], Some(7)).unwrap(), MirrorPort { port: 7, from: PortFrom::Given });
        let differ = port(&[&lumina, &rig], None).unwrap_err().to_string();
        assert!(differ.contains("5555") && differ.contains("6000") && differ.contains("--mirror-port"), "{differ}");
        let bad = run_with(root.path(), "bad", "rewrite-udp-dst-port: 70000\n");
        let e = port(&[&bad], None).unwrap_err().to_string();
        assert!(e.contains("`rewrite-udp-dst-port` is 70000, not a UDP port"), "{e}");
    }

    #[test]
    fn the_advice_names_what_the_frames_are() {
        let cfg = ClassifyConfig::default();
        let advice = |frames, likely, plain_roce| NoCopies { frames, likely, plain_roce }.advice(cfg);
        assert!(advice(0, None, 0).ends_with("the inputs hold no frame at all"));
        assert!(advice(10, Some((5555, 8)), 2).ends_with("8 of the first 10 frames carry mirror metadata to UDP dst port 5555; reconstruct again with --mirror-port 5555"));
        assert!(advice(10, None, 7).contains("7 are plain RoCE (UDP dst port 4791"));
        assert!(advice(10, None, 0).ends_with("none of the first 10 frames carries mirror metadata on any UDP port"));
    }
}
