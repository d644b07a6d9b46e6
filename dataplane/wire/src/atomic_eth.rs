//! Atomic Extended Transport Header (28 bytes; CmpSwap and FetchAdd): virtual address,
//! R_Key, swap (or add) data and compare data.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 28;

mod field {
    use crate::Field;
    pub const VA: Field = 0..8;
    pub const R_KEY: Field = 8..12;
    pub const SWAP_ADD: Field = 12..20;
    pub const COMPARE: Field = 20..28;
}

fixed_header_packet! {
    /// A read/write view of an AtomicETH.
    len: HEADER_LEN,
    truncated: Error::TruncatedExtHeaders { opcode: 0 },
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub fn va(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::VA.start)
    }
    pub fn rkey(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::R_KEY.start)
    }
    /// Swap data (CmpSwap) or add data (FetchAdd).
    pub fn swap_add(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::SWAP_ADD.start)
    }
    pub fn compare(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::COMPARE.start)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_va(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::VA.start, v);
    }
    pub fn set_rkey(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::R_KEY.start, v);
    }
    pub fn set_swap_add(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::SWAP_ADD.start, v);
    }
    pub fn set_compare(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::COMPARE.start, v);
    }
}

/// Parsed AtomicETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { va: p.va(), rkey: p.rkey(), swap_add: p.swap_add(), compare: p.compare() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    /// Writes the header. The buffer must hold 28 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_va(self.va);
        p.set_rkey(self.rkey);
        p.set_swap_add(self.swap_add);
        p.set_compare(self.compare);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = Repr { va: 0x0102_0304_0506_0708, rkey: 0x1122_3344, swap_add: u64::MAX, compare: 7 };
        let mut b = [0u8; 28];
        r.emit(&mut Packet::new_unchecked(&mut b[..]));
        assert_eq!(&b[..12], &[1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44]);
        assert_eq!(&b[12..20], &[0xff; 8]);
        assert_eq!(&b[20..], &[0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        assert!(Packet::new_checked(&b[..27]).is_err());
    }
}
