//! The wrapper every smoltcp-style `Packet<T>` view in this crate starts with, written
//! once: the struct over a buffer, `new_unchecked`, `new_checked` and `into_inner`.
//!
//! A protocol module invokes one of the two macros below and then writes its own
//! `impl<T: AsRef<[u8]>> Packet<T>` with the field accessors — the part worth reading.
//!
//! - [`packet_view!`]: the module writes `check_len` itself (IPv4, IPv6, UDP, MAC
//!   control: their validity depends on fields, not only on the buffer length).
//! - [`fixed_header_packet!`]: also `check_len` for a header of fixed length, which is
//!   valid exactly when the buffer holds it (the BTH and its extension headers).
//!
//! Both expand to the same items the modules used to spell out by hand, so the public
//! API (`wire::reth::Packet::new_checked`, …) is unchanged.

/// Defines `pub struct Packet<T: AsRef<[u8]>>` (a private `buffer` field the module's
/// accessors read) with `new_unchecked`, `new_checked` and `into_inner`.
///
/// `new_checked` calls `self.check_len()`, which the invoking module must define.
/// Attributes given before the closing brace (the struct's doc comment) go on the struct.
///
/// ```text
/// packet_view! {
///     /// A read/write view of a UDP datagram.
/// }
/// impl<T: AsRef<[u8]>> Packet<T> {
///     pub fn check_len(&self) -> Result<()> { … }
///     pub fn src_port(&self) -> u16 { … }
/// }
/// ```
macro_rules! packet_view {
    ($(#[$attr:meta])*) => {
        $(#[$attr])*
        #[derive(Debug, Clone)]
        pub struct Packet<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> Packet<T> {
            /// Wraps without checks, e.g. to emit into a buffer already sized for the
            /// header; accessors may panic on a buffer that [`Packet::check_len`] rejects.
            pub const fn new_unchecked(buffer: T) -> Packet<T> {
                Packet { buffer }
            }

            /// Wraps after [`Packet::check_len`].
            pub fn new_checked(buffer: T) -> $crate::Result<Packet<T>> {
                let p = Self::new_unchecked(buffer);
                p.check_len()?;
                Ok(p)
            }

            pub fn into_inner(self) -> T {
                self.buffer
            }
        }
    };
}
pub(crate) use packet_view;

/// [`packet_view!`] for a fixed-length header, plus its `check_len`: Ok when the buffer
/// holds at least `len` bytes, else the `truncated` error.
///
/// ```text
/// fixed_header_packet! {
///     /// A read/write view of a RETH.
///     len: HEADER_LEN,
///     truncated: Error::TruncatedExtHeaders { opcode: 0 },
/// }
/// ```
macro_rules! fixed_header_packet {
    ($(#[$attr:meta])* len: $len:expr, truncated: $err:expr $(,)?) => {
        $crate::view::packet_view! { $(#[$attr])* }

        impl<T: AsRef<[u8]>> Packet<T> {
            /// Ok when the buffer holds the whole header.
            pub fn check_len(&self) -> $crate::Result<()> {
                if self.buffer.as_ref().len() < $len {
                    Err($err)
                } else {
                    Ok(())
                }
            }
        }
    };
}
pub(crate) use fixed_header_packet;
