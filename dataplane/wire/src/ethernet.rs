//! Ethernet II with up to two VLAN tags (802.1Q, or 802.1ad QinQ).
//!
//! Mirrored traffic arrives untagged or tagged depending on the switch's mirror session,
//! and test rigs often run RoCE in a VLAN for PFC priority, so the walk over tags is part
//! of the frame view rather than a separate layer.

use crate::{be, Error, Result};

/// A 48-bit MAC address. In a Lumina mirrored copy the dst MAC holds the switch timestamp
/// and the src MAC the mirror sequence number (see [`crate::mirror`]).
pub type Address = [u8; 6];

/// Ethertype values this crate dispatches on.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    pub const VLAN: u16 = 0x8100;
    pub const MAC_CONTROL: u16 = 0x8808;
    pub const IPV6: u16 = 0x86dd;
    pub const QINQ: u16 = 0x88a8;
    /// Pre-802.1ad vendor QinQ TPID, still seen on older switches.
    pub const QINQ_LEGACY: u16 = 0x9100;
    /// RoCEv1 (IB GRH directly over Ethernet).
    pub const ROCE_V1: u16 = 0x8915;
}

/// Ethernet II header length without tags.
pub const HEADER_LEN: usize = 14;
/// One VLAN tag (TPID + TCI).
pub const VLAN_TAG_LEN: usize = 4;
/// Most tags the view walks; a third stacked TPID is left as the ethertype (class "other").
pub const MAX_VLAN_TAGS: usize = 2;

mod field {
    use crate::Field;
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    /// Within a tag, the TCI follows the TPID (which sits where an ethertype would).
    pub const TAG_TCI: usize = 2;
}

/// Whether `t` announces a VLAN tag rather than a payload type.
pub const fn is_vlan_tpid(t: u16) -> bool {
    matches!(t, ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_LEGACY)
}

/// Number of tags and offset of the type field that names the payload. Reads with bounds
/// checks so it is safe on any buffer; a tag whose bytes are missing is not counted.
fn walk_tags(d: &[u8]) -> (usize, usize) {
    let mut type_at = field::ETHERTYPE.start;
    let mut n = 0;
    while n < MAX_VLAN_TAGS {
        match be::get_u16(d, type_at) {
            Some(t) if is_vlan_tpid(t) && d.len() >= type_at + VLAN_TAG_LEN + 2 => {
                type_at += VLAN_TAG_LEN;
                n += 1;
            }
            _ => break,
        }
    }
    (n, type_at)
}

/// A read/write view of an Ethernet frame.
#[derive(Debug, Clone)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps without checks; accessors may panic on a buffer shorter than the header.
    /// Use for emitting into a buffer you sized with [`Repr::header_len`].
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Wraps after [`Frame::check_len`].
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Ok when the header and every announced tag (up to [`MAX_VLAN_TAGS`]) are present.
    pub fn check_len(&self) -> Result<()> {
        let d = self.buffer.as_ref();
        if d.len() < HEADER_LEN {
            return Err(Error::Runt { len: d.len() });
        }
        let (_, type_at) = walk_tags(d);
        // walk_tags stops at a tag whose bytes are cut; if that TPID is still a VLAN
        // TPID and we stopped early, the tag is truncated.
        let n = (type_at - field::ETHERTYPE.start) / VLAN_TAG_LEN;
        if n < MAX_VLAN_TAGS && is_vlan_tpid(be::u16_at(d, type_at)) {
            return Err(Error::TruncatedVlan);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> Address {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        a
    }

    pub fn src_addr(&self) -> Address {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        a
    }

    /// The first type field (a TPID when the frame is tagged).
    pub fn ethertype(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::ETHERTYPE.start)
    }

    /// Number of VLAN tags (0..=[`MAX_VLAN_TAGS`]).
    pub fn vlan_count(&self) -> usize {
        walk_tags(self.buffer.as_ref()).0
    }

    /// Tag `i` (0 = outermost), if present.
    pub fn vlan(&self, i: usize) -> Option<VlanTag> {
        let d = self.buffer.as_ref();
        if i >= walk_tags(d).0 {
            return None;
        }
        let at = field::ETHERTYPE.start + i * VLAN_TAG_LEN;
        Some(VlanTag::from_raw(be::u16_at(d, at), be::u16_at(d, at + field::TAG_TCI)))
    }

    /// The type field after all tags: what the payload is.
    pub fn inner_ethertype(&self) -> u16 {
        let d = self.buffer.as_ref();
        be::u16_at(d, walk_tags(d).1)
    }

    /// Header length including tags: the payload offset.
    pub fn header_len(&self) -> usize {
        walk_tags(self.buffer.as_ref()).1 + 2
    }

    pub fn payload(&self) -> &[u8] {
        let at = self.header_len();
        &self.buffer.as_ref()[at..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    pub fn set_dst_addr(&mut self, a: Address) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&a);
    }
    pub fn set_src_addr(&mut self, a: Address) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&a);
    }
    pub fn set_ethertype(&mut self, t: u16) {
        be::set_u16(self.buffer.as_mut(), field::ETHERTYPE.start, t);
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

/// One VLAN tag: the TPID that announced it and the decoded TCI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    /// 0x8100 for 802.1Q, 0x88a8 (or legacy 0x9100) for an 802.1ad outer tag.
    pub tpid: u16,
    /// Priority code point (3 bits): the PFC priority of RoCE traffic.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN id (12 bits).
    pub vid: u16,
}

impl VlanTag {
    /// An 802.1Q tag.
    pub const fn dot1q(vid: u16, pcp: u8) -> VlanTag {
        VlanTag { tpid: ethertype::VLAN, pcp, dei: false, vid }
    }

    pub const fn from_raw(tpid: u16, tci: u16) -> VlanTag {
        VlanTag { tpid, pcp: (tci >> 13) as u8, dei: tci & 0x1000 != 0, vid: tci & 0x0fff }
    }

    pub const fn tci(&self) -> u16 {
        ((self.pcp as u16 & 0x7) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0fff)
    }

    const fn is_encodable(&self) -> bool {
        is_vlan_tpid(self.tpid) && self.pcp <= 7 && self.vid <= 0x0fff
    }
}

/// The VLAN stack of a frame: none, one, or an outer (service) and inner (customer) tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vlans {
    #[default]
    Untagged,
    Single(VlanTag),
    Double {
        outer: VlanTag,
        inner: VlanTag,
    },
}

impl Vlans {
    pub const fn count(&self) -> usize {
        match self {
            Vlans::Untagged => 0,
            Vlans::Single(_) => 1,
            Vlans::Double { .. } => 2,
        }
    }
}

/// Parsed Ethernet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub dst_addr: Address,
    pub src_addr: Address,
    pub vlans: Vlans,
    /// The payload's type (after the tags).
    pub ethertype: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<Repr> {
        frame.check_len()?;
        let vlans = match (frame.vlan(0), frame.vlan(1)) {
            (None, _) => Vlans::Untagged,
            (Some(t), None) => Vlans::Single(t),
            (Some(outer), Some(inner)) => Vlans::Double { outer, inner },
        };
        Ok(Repr { dst_addr: frame.dst_addr(), src_addr: frame.src_addr(), vlans, ethertype: frame.inner_ethertype() })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN + self.vlans.count() * VLAN_TAG_LEN
    }

    /// Whether `emit` output parses back to `self`: tags use VLAN TPIDs, PCP and VID fit
    /// their bits, and the payload type is not itself a TPID.
    pub const fn is_encodable(&self) -> bool {
        let tags_ok = match self.vlans {
            Vlans::Untagged => true,
            Vlans::Single(t) => t.is_encodable(),
            Vlans::Double { outer, inner } => outer.is_encodable() && inner.is_encodable(),
        };
        tags_ok && !is_vlan_tpid(self.ethertype)
    }

    /// Writes the header (and tags). The buffer must hold [`Repr::header_len`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut Frame<T>) {
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        let d = frame.buffer.as_mut();
        let mut at = field::ETHERTYPE.start;
        let mut put_tag = |d: &mut [u8], t: &VlanTag| {
            be::set_u16(d, at, t.tpid);
            be::set_u16(d, at + field::TAG_TCI, t.tci());
            at += VLAN_TAG_LEN;
        };
        match &self.vlans {
            Vlans::Untagged => {}
            Vlans::Single(t) => put_tag(d, t),
            Vlans::Double { outer, inner } => {
                put_tag(d, outer);
                put_tag(d, inner);
            }
        }
        be::set_u16(d, at, self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNTAGGED: [u8; 16] =
        [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x08, 0x00, 0xaa, 0xbb];

    #[test]
    fn parse_untagged() {
        let f = Frame::new_checked(&UNTAGGED[..]).unwrap();
        assert_eq!(f.dst_addr(), [1, 2, 3, 4, 5, 6]);
        assert_eq!(f.src_addr(), [0x11, 0x12, 0x13, 0x14, 0x15, 0x16]);
        assert_eq!(f.ethertype(), ethertype::IPV4);
        assert_eq!(f.inner_ethertype(), ethertype::IPV4);
        assert_eq!(f.header_len(), 14);
        assert_eq!(f.payload(), &[0xaa, 0xbb]);
        assert_eq!(f.vlan_count(), 0);
    }

    #[test]
    fn parse_qinq() {
        let mut b = [0u8; 24];
        b[12..14].copy_from_slice(&[0x88, 0xa8]);
        b[14..16].copy_from_slice(&[0xa0, 0x64]); // pcp 5, vid 100
        b[16..18].copy_from_slice(&[0x81, 0x00]);
        b[18..20].copy_from_slice(&[0x70, 0x0a]); // pcp 3, dei 1, vid 10
        b[20..22].copy_from_slice(&[0x86, 0xdd]);
        let f = Frame::new_checked(&b[..]).unwrap();
        assert_eq!(f.vlan_count(), 2);
        assert_eq!(f.vlan(0), Some(VlanTag { tpid: 0x88a8, pcp: 5, dei: false, vid: 100 }));
        assert_eq!(f.vlan(1), Some(VlanTag { tpid: 0x8100, pcp: 3, dei: true, vid: 10 }));
        assert_eq!(f.vlan(2), None);
        assert_eq!(f.inner_ethertype(), ethertype::IPV6);
        assert_eq!(f.header_len(), 22);
        let r = Repr::parse(&f).unwrap();
        let mut out = [0u8; 22];
        r.emit(&mut Frame::new_unchecked(&mut out[..]));
        assert_eq!(&out[..], &b[..22]);
    }

    #[test]
    fn truncation_errors() {
        assert_eq!(Frame::new_checked(&UNTAGGED[..13]).unwrap_err(), Error::Runt { len: 13 });
        let mut b = [0u8; 20];
        b[..16].copy_from_slice(&UNTAGGED);
        b[12..14].copy_from_slice(&[0x81, 0x00]);
        // TPID present but the TCI and inner type are cut.
        assert_eq!(Frame::new_checked(&b[..14]).unwrap_err(), Error::TruncatedVlan);
        assert_eq!(Frame::new_checked(&b[..17]).unwrap_err(), Error::TruncatedVlan);
        assert!(Frame::new_checked(&b[..18]).is_ok());
    }

    #[test]
    fn third_tag_is_left_as_ethertype() {
        let mut b = [0u8; 30];
        for i in 0..3 {
            b[12 + 4 * i..14 + 4 * i].copy_from_slice(&[0x81, 0x00]);
        }
        let f = Frame::new_checked(&b[..]).unwrap();
        assert_eq!(f.vlan_count(), 2);
        assert_eq!(f.inner_ethertype(), ethertype::VLAN);
    }

    #[test]
    fn repr_round_trip_single_tag() {
        let r = Repr {
            dst_addr: [0xff; 6],
            src_addr: [2, 0, 0, 0, 0, 1],
            vlans: Vlans::Single(VlanTag::dot1q(42, 3)),
            ethertype: ethertype::IPV4,
        };
        assert!(r.is_encodable());
        let mut b = [0u8; 18];
        r.emit(&mut Frame::new_unchecked(&mut b[..]));
        assert_eq!(&b[12..18], &[0x81, 0x00, 0x60, 0x2a, 0x08, 0x00]);
        assert_eq!(Repr::parse(&Frame::new_checked(&b[..]).unwrap()).unwrap(), r);
    }
}
