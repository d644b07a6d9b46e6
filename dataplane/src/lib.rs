//! rocescope's capture dataplane: a DPDK, polled-mode, per-core receiver for
//! Lumina-mirrored RoCEv2 traffic (and everything else a mirror port carries).
//!
//! Data path: NIC queue (or the dispatcher's ring) → [`worker`] classifies, trims and
//! restores each frame into its core's [`shard`] buffer → a writer thread appends whole
//! buffers to the core's pcapng shard → `manifest.json` accounts for every packet.
//! `unsafe` lives only in [`dpdk`] (the safe layer over our `dpdk-sys` binding).

#![deny(unsafe_code)]

#[allow(unsafe_code)]
pub mod dpdk;

pub mod clock;
pub mod config;
pub mod counters;
pub mod dispatch;
pub mod report;
pub mod run;
pub mod shard;
pub mod worker;
