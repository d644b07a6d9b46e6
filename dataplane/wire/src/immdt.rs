//! Immediate Data Extended Transport Header (4 bytes; the "with Immediate" opcodes):
//! opaque data delivered in the receiver's completion.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 4;

fixed_header_packet! {
    /// A read/write view of an ImmDt.
    len: HEADER_LEN,
    truncated: Error::TruncatedExtHeaders { opcode: 0 },
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub fn imm_data(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_imm_data(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), 0, v);
    }
}

/// Parsed ImmDt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub imm_data: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { imm_data: p.imm_data() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    /// Writes the header. The buffer must hold 4 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_imm_data(self.imm_data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let b = [0x12, 0x34, 0x56, 0x78];
        let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r.imm_data, 0x1234_5678);
        let mut out = [0u8; 4];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        assert!(Packet::new_checked(&b[..3]).is_err());
    }
}
