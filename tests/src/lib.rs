//! Test support shared across crates: a Lumina test-rig scenario with every answer known in
//! advance ([`scenario`]), pcap writing and tshark invocation ([`pcap`], [`tshark`]).
//! The testbed emulator is its own crate beside this one (`tests/rig`, `rocescope-rig`),
//! built on the same `wire::build` emitters.

pub mod pcap;
pub mod scenario;
pub mod tshark;

/// The third-party captures shipped beside the project (`../shared/data/captures`), or
/// `None` with a note on stderr when this is a plain clone without `shared/`.
pub fn shared_captures() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("note: {} is absent; skipping tests that need the shared captures", dir.display());
        None
    }
}
