//! Reliable Datagram Extended Transport Header (4 bytes; every RD opcode carries it,
//! right after the BTH): 8 reserved bits and the 24-bit EE-context.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 4;

mod field {
    pub const EE_CONTEXT: usize = 1;
}

fixed_header_packet! {
    /// A read/write view of an RDETH.
    len: HEADER_LEN,
    truncated: Error::TruncatedExtHeaders { opcode: 0 },
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub fn ee_context(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::EE_CONTEXT)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_ee_context(&mut self, v: u32) {
        let d = self.buffer.as_mut();
        d[0] = 0;
        be::set_u24(d, field::EE_CONTEXT, v & 0xff_ffff);
    }
}

/// Parsed RDETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    /// 24 bits.
    pub ee_context: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { ee_context: p.ee_context() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    /// Writes the header. The buffer must hold 4 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_ee_context(self.ee_context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let b = [0x00, 0x12, 0x34, 0x56];
        let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r.ee_context, 0x123456);
        let mut out = [0xffu8; 4];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        assert!(Packet::new_checked(&b[..3]).is_err());
    }
}
