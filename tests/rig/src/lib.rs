//! rocescope's testbed emulator: a seeded, deterministic Lumina test rig.
//!
//! A configuration in Lumina's YAML ([`config`]) describes two traffic hosts with RNICs
//! ([`rnic`], behaving as the NIC [`profile`]s measured in Lumina §6), the traffic and the
//! events to inject. The [`switch`] injects them by Lumina's ITER rule and mirrors every
//! RoCE packet to the dump hosts ([`dump`]) in the Lumina mirror format. A run
//! ([`rig::Rig`]) writes what a real rig leaves behind — one pcap per dump host, switch and
//! NIC counters, the traffic generator's log ([`output`]) — plus the [`truth`] of what
//! happened, for testing the analyzers.

pub mod config;
pub mod conn;
pub mod dump;
pub mod event;
pub mod faults;
pub mod frames;
pub mod output;
pub mod packet;
pub mod profile;
pub mod recovery;
pub mod rig;
pub mod rng;
pub mod rnic;
pub mod scale;
pub mod sim;
pub mod switch;
pub mod truth;

pub use config::RigConfig;
pub use rig::{Capture, Rig, RunResult};
