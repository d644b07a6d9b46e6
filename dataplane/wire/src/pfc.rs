//! MAC control frames (ethertype 0x8808): 802.1Qbb priority flow control (PFC, opcode
//! 0x0101) and 802.3x PAUSE (opcode 0x0001).
//!
//! The view starts at the opcode (after the Ethernet header). A plain PAUSE stops the
//! whole link and must never be read as PFC: the two share the ethertype and differ only
//! in the opcode (DESIGN "RoCEv2": PFC = opcode 0x0101 with a class-enable vector and
//! 8 pause quanta; 1 quantum = 512 bit times). Hawkeye and Collie reason about PFC pause
//! durations, hence [`quanta_to_ns`].

use crate::ethernet::{self, Address};
use crate::view::packet_view;
use crate::{be, Error, Result};

/// MAC control opcodes.
pub mod opcode {
    /// 802.3x PAUSE.
    pub const PAUSE: u16 = 0x0001;
    /// 802.1Qbb priority-based (class-based) flow control.
    pub const PFC: u16 = 0x0101;
}

/// Destination of PAUSE and PFC frames (the reserved "MAC control" multicast address).
pub const DST_MAC: Address = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// Opcode + pause time.
pub const PAUSE_LEN: usize = 4;
/// Opcode + class-enable vector + 8 pause times.
pub const PFC_LEN: usize = 20;
/// Minimum Ethernet frame without FCS; MAC control frames are padded to it.
pub const MIN_FRAME_LEN: usize = 60;
/// Number of priorities.
pub const PRIORITIES: usize = 8;
/// Bit times per pause quantum.
pub const BITS_PER_QUANTUM: u64 = 512;

mod field {
    use crate::Field;
    pub const OPCODE: Field = 0..2;
    /// PAUSE: pause time. PFC: class-enable vector.
    pub const PARAM: Field = 2..4;
    /// PFC: first of 8 two-byte pause times.
    pub const PFC_TIMES: usize = 4;
}

/// Pause duration of `quanta` at `link_bps` bits/s, in ns rounded down (at 100 Gb/s one
/// quantum is 5.12 ns). 0 for a 0 link speed.
pub const fn quanta_to_ns(quanta: u16, link_bps: u64) -> u64 {
    if link_bps == 0 {
        return 0;
    }
    (quanta as u128 * BITS_PER_QUANTUM as u128 * 1_000_000_000 / link_bps as u128) as u64
}

packet_view! {
    /// A view of a MAC control frame's payload, from the opcode on.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Ok for a PAUSE or PFC opcode with its parameters present (trailing pad allowed).
    pub fn check_len(&self) -> Result<()> {
        let d = self.buffer.as_ref();
        let op = be::get_u16(d, field::OPCODE.start).ok_or(Error::TruncatedMacControl)?;
        let need = match op {
            opcode::PAUSE => PAUSE_LEN,
            opcode::PFC => PFC_LEN,
            opcode => return Err(Error::UnknownMacControlOpcode { opcode }),
        };
        if d.len() < need {
            return Err(Error::TruncatedMacControl);
        }
        Ok(())
    }
    pub fn opcode(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::OPCODE.start)
    }
    pub fn is_pfc(&self) -> bool {
        self.opcode() == opcode::PFC
    }
    /// PAUSE: the pause time in quanta. (For PFC this reads the class-enable vector.)
    pub fn pause_quanta(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::PARAM.start)
    }
    /// PFC: class-enable vector; bit n enables priority n, the upper 8 bits are reserved.
    pub fn class_enable(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::PARAM.start)
    }
    /// PFC: pause time of priority `prio` (0..8), in quanta; `None` out of range.
    pub fn pfc_quanta(&self, prio: usize) -> Option<u16> {
        if prio >= PRIORITIES {
            return None;
        }
        be::get_u16(self.buffer.as_ref(), field::PFC_TIMES + 2 * prio)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_opcode(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::OPCODE.start, v);
    }
    pub fn set_param(&mut self, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::PARAM.start, v);
    }
    pub fn set_pfc_quanta(&mut self, prio: usize, v: u16) {
        be::set_u16(self.buffer.as_mut(), field::PFC_TIMES + 2 * (prio % PRIORITIES), v);
    }
}

/// A parsed MAC control frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// 802.3x PAUSE of the whole link.
    Pause { quanta: u16 },
    /// PFC: pause per priority. A quanta of 0 on an enabled class means "resume" (XON).
    Pfc { class_enable: u16, quanta: [u16; PRIORITIES] },
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr> {
        p.check_len()?;
        if !p.is_pfc() {
            return Ok(Repr::Pause { quanta: p.pause_quanta() });
        }
        let mut quanta = [0u16; PRIORITIES];
        for (i, q) in quanta.iter_mut().enumerate() {
            *q = p.pfc_quanta(i).ok_or(Error::TruncatedMacControl)?;
        }
        Ok(Repr::Pfc { class_enable: p.class_enable(), quanta })
    }

    /// Bytes the opcode and parameters take (before padding).
    pub const fn buffer_len(&self) -> usize {
        match self {
            Repr::Pause { .. } => PAUSE_LEN,
            Repr::Pfc { .. } => PFC_LEN,
        }
    }

    /// Whether priority `prio` is told to pause (enabled with non-zero quanta).
    pub fn pauses(&self, prio: usize) -> bool {
        match self {
            Repr::Pause { quanta } => *quanta != 0,
            Repr::Pfc { class_enable, quanta } => {
                prio < PRIORITIES && class_enable & (1 << prio) != 0 && quanta[prio] != 0
            }
        }
    }

    /// Pause duration ordered for `prio` at `link_bps`; 0 when not enabled.
    pub fn pause_ns(&self, prio: usize, link_bps: u64) -> u64 {
        match self {
            Repr::Pause { quanta } => quanta_to_ns(*quanta, link_bps),
            Repr::Pfc { class_enable, quanta } if prio < PRIORITIES && class_enable & (1 << prio) != 0 => {
                quanta_to_ns(quanta[prio], link_bps)
            }
            Repr::Pfc { .. } => 0,
        }
    }

    /// Writes opcode and parameters. The buffer must hold `buffer_len()` bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        match self {
            Repr::Pause { quanta } => {
                p.set_opcode(opcode::PAUSE);
                p.set_param(*quanta);
            }
            Repr::Pfc { class_enable, quanta } => {
                p.set_opcode(opcode::PFC);
                p.set_param(*class_enable);
                for (i, q) in quanta.iter().enumerate() {
                    p.set_pfc_quanta(i, *q);
                }
            }
        }
    }
}

/// The MAC-control view of a whole Ethernet frame; `Ok(None)` when the frame has
/// another ethertype.
pub fn from_frame(frame: &[u8]) -> Result<Option<Packet<&[u8]>>> {
    let eth = ethernet::Frame::new_checked(frame)?;
    if eth.inner_ethertype() != ethernet::ethertype::MAC_CONTROL {
        return Ok(None);
    }
    Packet::new_checked(&frame[eth.header_len()..]).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The 22-byte payload from pypacker's test_pfc (class-enable 0x00dd).
    const PYPACKER_PFC: [u8; 20] = [
        0x01, 0x01, 0x00, 0xdd, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x14, 0x00, 0x03, 0x00, 0x28, 0x00, 0x03,
        0x01, 0xf4,
    ];

    #[test]
    fn parse_pfc() {
        let p = Packet::new_checked(&PYPACKER_PFC[..]).unwrap();
        assert!(p.is_pfc());
        assert_eq!(p.class_enable(), 0x00dd);
        assert_eq!(p.pfc_quanta(8), None);
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r, Repr::Pfc { class_enable: 0x00dd, quanta: [0, 1, 0, 20, 3, 40, 3, 500] });
        assert!(!r.pauses(0) && !r.pauses(1) && r.pauses(3) && !r.pauses(5) && r.pauses(7));
        let mut out = [0u8; 20];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, PYPACKER_PFC);
    }

    #[test]
    fn pause_is_not_pfc() {
        let b = [0x00, 0x01, 0xff, 0xff];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(!p.is_pfc());
        assert_eq!(Repr::parse(&p).unwrap(), Repr::Pause { quanta: 0xffff });
    }

    #[test]
    fn malformed() {
        assert_eq!(Packet::new_checked(&[0x01][..]).unwrap_err(), Error::TruncatedMacControl);
        assert_eq!(Packet::new_checked(&PYPACKER_PFC[..19]).unwrap_err(), Error::TruncatedMacControl);
        assert_eq!(Packet::new_checked(&[0x00, 0x01, 0x00][..]).unwrap_err(), Error::TruncatedMacControl);
        assert_eq!(
            Packet::new_checked(&[0x00, 0x02, 0, 0][..]).unwrap_err(),
            Error::UnknownMacControlOpcode { opcode: 2 }
        );
    }

    #[test]
    fn quanta_conversion() {
        assert_eq!(quanta_to_ns(1, 100_000_000_000), 5);
        assert_eq!(quanta_to_ns(100, 100_000_000_000), 512);
        assert_eq!(quanta_to_ns(0xffff, 100_000_000_000), 335_539);
        assert_eq!(quanta_to_ns(1, 10_000_000_000), 51);
        assert_eq!(quanta_to_ns(0xffff, 1_000_000_000), 33_553_920);
        assert_eq!(quanta_to_ns(5, 0), 0);
        let r = Repr::Pfc { class_enable: 0x08, quanta: [9, 0, 0, 1000, 0, 0, 0, 0] };
        assert_eq!(r.pause_ns(3, 25_000_000_000), 20_480);
        assert_eq!(r.pause_ns(0, 25_000_000_000), 0, "class 0 not enabled");
    }
}
