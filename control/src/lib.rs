//! rocescope's control side: everything that reads captured runs. Pure Rust, no DPDK.
//!
//! Today: [`verify`] proves a run directory intact against its manifest. Trace
//! reconstruction, Lumina's integrity check and the analyzers of the five papers grow here.

#![forbid(unsafe_code)]

pub mod verify;
