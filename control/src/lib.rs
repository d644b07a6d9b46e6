//! rocescope's control side: everything that reads captured runs. Pure Rust, no DPDK.
//!
//! - [`verify`]: a dataplane run directory is exactly what its manifest says.
//! - [`input`] (with [`pcap`]) → [`merge`] (with [`tournament`]) → [`reconstruct`]: any number of
//!   shards and dump files merged by mirror seq into one restored trace and its record file
//!   (Lumina §3.5).
//!   [`spool`] writes its files from a thread of their own; [`mirror_port`] says which
//!   UDP port the copies come on; [`outputs`] says which files in its output directory
//!   are rocescope's to replace.
//! - [`check`]: Lumina's integrity conditions over a reconstructed trace (§3.5).
//! - [`analyze`]: connection tracking and Lumina's analyzers (§4); [`compare`]: several
//!   analyses' NACK latencies side by side (§6.1's Figures 8–9).

#![forbid(unsafe_code)]

pub mod analyze;
pub mod check;
pub mod compare;
pub mod input;
pub mod merge;
pub mod mirror_port;
pub mod outputs;
pub mod pcap;
pub mod reconstruct;
pub mod spool;
pub mod tournament;
pub mod verify;
