//! RDMA Extended Transport Header (16 bytes; RDMA WRITE First/Only and READ Request):
//! virtual address, R_Key and DMA length.

use crate::view::fixed_header_packet;
use crate::{be, Error, Result};

pub const HEADER_LEN: usize = 16;

mod field {
    use crate::Field;
    pub const VA: Field = 0..8;
    pub const R_KEY: Field = 8..12;
    pub const DMA_LEN: Field = 12..16;
}

fixed_header_packet! {
    /// A read/write view of a RETH.
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
    pub fn dma_len(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::DMA_LEN.start)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_va(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::VA.start, v);
    }
    pub fn set_rkey(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::R_KEY.start, v);
    }
    pub fn set_dma_len(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::DMA_LEN.start, v);
    }
}

/// Parsed RETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr { va: p.va(), rkey: p.rkey(), dma_len: p.dma_len() })
    }
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }
    /// Writes the header. The buffer must hold 16 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_va(self.va);
        p.set_rkey(self.rkey);
        p.set_dma_len(self.dma_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RETH of the Soft-RoCE READ request (roce_icrc_vectors_3rdparty.pcap frame 4).
    const RXE_READ: [u8; 16] =
        [0x00, 0x00, 0x7f, 0xee, 0x26, 0x0f, 0xb0, 0x00, 0x00, 0x00, 0x02, 0xb8, 0x00, 0x01, 0x00, 0x00];

    #[test]
    fn parse_rxe_read_request() {
        let r = Repr::parse(&Packet::new_checked(&RXE_READ[..]).unwrap()).unwrap();
        assert_eq!(r, Repr { va: 0x7fee_260f_b000, rkey: 0x2b8, dma_len: 65536 });
        let mut out = [0u8; 16];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, RXE_READ);
        assert!(Packet::new_checked(&RXE_READ[..15]).is_err());
    }
}
