//! `wire`: the protocol layer of rocescope — parsing, classifying, restoring and building
//! the frames a Lumina-style mirroring switch sends to a capture host.
//!
//! Everything here is pure, safe Rust with no DPDK dependency, so both the dataplane (hot
//! path, per packet) and the control process (reconstruction, analyzers, tests) use it.
//!
//! Shape (after smoltcp's `src/wire/`, see STYLE.md): one module per protocol, each with a
//! zero-copy `Packet<T: AsRef<[u8]>>` view whose `new_checked` validates lengths once,
//! field offsets in a `field` module, and an owned `Repr` whose `parse` and `emit` are mirror
//! images. Malformed input is an [`Error`] value, never a panic; [`ErrorKind`] indexes
//! fixed per-core counter arrays. The part of a view that is the same everywhere (struct,
//! `new_unchecked`, `new_checked`, `into_inner`, and `check_len` of a fixed-length header)
//! is written once, in the private `view` module, as two small `macro_rules!`.
//!
//! Layers: [`ethernet`] (+802.1Q/QinQ) → [`ipv4`] / [`ipv6`] → [`udp`] → [`roce`] (the
//! [`bth`] and its extension headers [`rdeth`], [`deth`], [`reth`], [`atomic_eth`],
//! [`aeth`], [`atomic_ack_eth`], [`immdt`], [`ieth`], then payload and [`icrc`]).
//! Beside them: [`pfc`] (MAC control PFC / 802.3x PAUSE), [`mirror`] (the Lumina mirror
//! metadata and header restoration), [`psn`] (24-bit PSN arithmetic), [`frame`] (the
//! one-call classifier the dataplane runs per packet) and [`build`] (whole-frame builder
//! for tests and the testbed emulator; it is the `emit` side, not a second encoder).
//!
//! The contract these modules implement is `DESIGN.md` § "Wire formats".
#![forbid(unsafe_code)]
#![deny(missing_debug_implementations)]
#![warn(rust_2018_idioms)]

pub mod error;

pub mod aeth;
pub mod atomic_ack_eth;
pub mod atomic_eth;
pub mod bth;
pub mod build;
pub mod deth;
pub mod ethernet;
pub mod frame;
pub mod icrc;
pub mod ieth;
pub mod immdt;
pub mod ipv4;
pub mod ipv6;
pub mod mirror;
pub mod pfc;
pub mod psn;
pub mod rdeth;
pub mod reth;
pub mod roce;
pub mod udp;

mod checksum;
mod view;

pub use error::{Error, ErrorKind, Result};

/// A byte range of a header field, as in smoltcp.
pub(crate) type Field = core::ops::Range<usize>;

/// Big-endian field access on slices whose length the caller has already checked
/// (`new_checked`); these index directly, so they are only used behind such checks.
pub(crate) mod be {
    #[inline]
    pub fn u16_at(d: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([d[at], d[at + 1]])
    }
    #[inline]
    pub fn u24_at(d: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([0, d[at], d[at + 1], d[at + 2]])
    }
    #[inline]
    pub fn u32_at(d: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]])
    }
    #[inline]
    pub fn u64_at(d: &[u8], at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[at..at + 8]);
        u64::from_be_bytes(b)
    }
    #[inline]
    pub fn set_u16(d: &mut [u8], at: usize, v: u16) {
        d[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    #[inline]
    pub fn set_u24(d: &mut [u8], at: usize, v: u32) {
        d[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
    }
    #[inline]
    pub fn set_u32(d: &mut [u8], at: usize, v: u32) {
        d[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }
    #[inline]
    pub fn set_u64(d: &mut [u8], at: usize, v: u64) {
        d[at..at + 8].copy_from_slice(&v.to_be_bytes());
    }

    /// Reads a big-endian u16 if it lies inside `d` (for code that must not assume lengths).
    #[inline]
    pub fn get_u16(d: &[u8], at: usize) -> Option<u16> {
        match d.get(at..at.checked_add(2)?) {
            Some(&[a, b]) => Some(u16::from_be_bytes([a, b])),
            _ => None,
        }
    }
    /// Writes a big-endian u16 only if it lies inside `d`; reports whether it did.
    #[inline]
    pub fn put_u16(d: &mut [u8], at: usize, v: u16) -> bool {
        match at.checked_add(2).and_then(|end| d.get_mut(at..end)) {
            Some(s) => {
                s.copy_from_slice(&v.to_be_bytes());
                true
            }
            None => false,
        }
    }
}
