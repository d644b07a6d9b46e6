//! Atomic Acknowledge Extended Transport Header (8 bytes; ATOMIC Acknowledge): the
//! original remote data the atomic operation read.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 8;

mod field {
    use crate::Field;
    pub const ORIG_DATA: Field = 0..8;
}

fixed_header_packet! {
    /// A read/write view of an AtomicAckETH.
    len: HEADER_LEN,
    truncated: Error::TruncatedExtHeaders { opcode: 0 },
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub fn orig_data(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::ORIG_DATA.start)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_orig_data(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::ORIG_DATA.start, v);
    }
}

/// Parsed AtomicAckETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub orig_data: u64,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { orig_data: p.orig_data() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    /// Writes the header. The buffer must hold 8 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_orig_data(self.orig_data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let b = [0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1];
        let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r.orig_data, 0xdead_beef_0000_0001);
        let mut out = [0u8; 8];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        assert!(Packet::new_checked(&b[..7]).is_err());
    }
}
