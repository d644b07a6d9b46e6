//! rocescope's on-disk trace format, shared by the dataplane (which writes it) and the
//! control process (which reads it). Pure Rust, no DPDK.
//!
//! A capture is a *run directory*: one pcapng *shard* per dataplane core plus a
//! `manifest.json` ([`manifest::Manifest`]) with per-core counters and the CRC-32C of every
//! block the writer put on disk. Each packet in a shard is an Enhanced Packet Block whose
//! timestamp is the switch timestamp (mirrored copies) or host time (everything else), whose
//! packet id option is the Lumina mirror sequence number, and whose comment says what the
//! dataplane made of the frame ([`annotation::Annotation`]). See `docs/formats.md`.

// `unsafe` only in `mapped` (mmap'd shard reading), as DESIGN allows.
#![deny(unsafe_code)]

pub mod annotation;
pub mod direct;
pub mod manifest;
#[allow(unsafe_code)]
pub mod mapped;
pub mod pcapng;
pub mod reader;
pub mod record;

pub use annotation::Annotation;
pub use manifest::Manifest;
