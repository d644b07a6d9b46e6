//! The one error type of the crate, and its allocation-free counter key.
//!
//! Every malformed input is a value of [`Error`], never a panic (DESIGN "Quality bar":
//! "malformed frames, truncated headers, garbage reports yield a counted, classified
//! error"). The dataplane keeps one `[u64; ErrorKind::COUNT]` per core and bumps
//! `counters[err.kind().index()]`; the manifest names each slot with [`ErrorKind::name`].

/// A malformed frame or header, or a builder input that cannot be encoded.
///
/// Variants carry only small `Copy` context so that returning one never allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Shorter than the 14-byte Ethernet II header.
    #[error("runt frame: {len} bytes, shorter than the 14-byte Ethernet header")]
    Runt { len: usize },
    /// An 802.1Q / 802.1ad tag is announced but its 4 bytes are cut off.
    #[error("truncated VLAN tag")]
    TruncatedVlan,
    /// Fewer bytes than the IPv4 header (20 bytes, or IHL*4 with options).
    #[error("truncated IPv4 header")]
    TruncatedIpv4,
    /// Ethertype 0x0800 but the version nibble is not 4.
    #[error("IPv4 version field is {version}, not 4")]
    BadIpv4Version { version: u8 },
    /// IHL below 5 words.
    #[error("IPv4 IHL {ihl} is below the minimum 5")]
    BadIpv4Ihl { ihl: u8 },
    /// Total length smaller than the header, or larger than the bytes present.
    #[error(
        "IPv4 total length {total_len} inconsistent with header length {header_len} and {available} bytes present"
    )]
    BadIpv4Length { total_len: u16, header_len: u8, available: usize },
    /// Fewer than the 40 bytes of the fixed IPv6 header (or RoCEv1 GRH).
    #[error("truncated IPv6 header")]
    TruncatedIpv6,
    /// Ethertype 0x86dd but the version nibble is not 6.
    #[error("IPv6 version field is {version}, not 6")]
    BadIpv6Version { version: u8 },
    /// Payload length larger than the bytes present.
    #[error("IPv6 payload length {payload_len} exceeds the {available} bytes present")]
    BadIpv6Length { payload_len: u16, available: usize },
    /// Fewer than the 8 bytes of a UDP header.
    #[error("truncated UDP header")]
    TruncatedUdp,
    /// UDP length below 8 or beyond the IP payload.
    #[error("UDP length {udp_len} inconsistent with the {available}-byte IP payload")]
    BadUdpLength { udp_len: u16, available: usize },
    /// UDP payload shorter than the 12-byte Base Transport Header.
    #[error("truncated BTH")]
    TruncatedBth,
    /// The extension headers the opcode calls for do not fit.
    #[error("truncated RoCE extension headers (opcode {opcode:#04x})")]
    TruncatedExtHeaders { opcode: u8 },
    /// No room for the 4-byte ICRC after the headers.
    #[error("truncated ICRC")]
    TruncatedIcrc,
    /// BTH PadCnt larger than the payload it pads.
    #[error("BTH pad count {pad_count} exceeds the {payload_len}-byte payload")]
    BadPadCount { pad_count: u8, payload_len: usize },
    /// Mirror sequence number 0, above 0x7fffffff, or the upper two src-MAC bytes non-zero.
    #[error("bad mirror sequence number in src MAC (raw {raw:#014x})")]
    BadMirrorSeq { raw: u64 },
    /// Mirror event (TTL / hop limit) outside 0..=3.
    #[error("bad mirror event type {value} (expected 0..=3)")]
    BadMirrorEvent { value: u8 },
    /// Ethertype 0x8808 frame shorter than its opcode's parameters.
    #[error("truncated MAC control frame")]
    TruncatedMacControl,
    /// MAC control opcode that is neither PAUSE (0x0001) nor PFC (0x0101).
    #[error("unknown MAC control opcode {opcode:#06x}")]
    UnknownMacControlOpcode { opcode: u16 },
    /// An operation that needs a UDP datagram was given something else.
    #[error("not a UDP-over-IP frame")]
    NotUdp,
    /// The output buffer cannot hold what is to be emitted.
    #[error("output buffer too small: need {need} bytes, have {have}")]
    BufferTooSmall { need: usize, have: usize },
    /// A representation that cannot be encoded (builder misuse), with the reason.
    #[error("cannot encode: {reason}")]
    BadRepr { reason: &'static str },
}

impl Error {
    /// The counter slot for this error.
    pub const fn kind(&self) -> ErrorKind {
        match self {
            Error::Runt { .. } => ErrorKind::Runt,
            Error::TruncatedVlan => ErrorKind::TruncatedVlan,
            Error::TruncatedIpv4 => ErrorKind::TruncatedIpv4,
            Error::BadIpv4Version { .. } => ErrorKind::BadIpv4Version,
            Error::BadIpv4Ihl { .. } => ErrorKind::BadIpv4Ihl,
            Error::BadIpv4Length { .. } => ErrorKind::BadIpv4Length,
            Error::TruncatedIpv6 => ErrorKind::TruncatedIpv6,
            Error::BadIpv6Version { .. } => ErrorKind::BadIpv6Version,
            Error::BadIpv6Length { .. } => ErrorKind::BadIpv6Length,
            Error::TruncatedUdp => ErrorKind::TruncatedUdp,
            Error::BadUdpLength { .. } => ErrorKind::BadUdpLength,
            Error::TruncatedBth => ErrorKind::TruncatedBth,
            Error::TruncatedExtHeaders { .. } => ErrorKind::TruncatedExtHeaders,
            Error::TruncatedIcrc => ErrorKind::TruncatedIcrc,
            Error::BadPadCount { .. } => ErrorKind::BadPadCount,
            Error::BadMirrorSeq { .. } => ErrorKind::BadMirrorSeq,
            Error::BadMirrorEvent { .. } => ErrorKind::BadMirrorEvent,
            Error::TruncatedMacControl => ErrorKind::TruncatedMacControl,
            Error::UnknownMacControlOpcode { .. } => ErrorKind::UnknownMacControlOpcode,
            Error::NotUdp => ErrorKind::NotUdp,
            Error::BufferTooSmall { .. } => ErrorKind::BufferTooSmall,
            Error::BadRepr { .. } => ErrorKind::BadRepr,
        }
    }
}

/// Field-less twin of [`Error`]: a dense index for fixed per-core counter arrays.
///
/// The discriminants are stable (append only) because run manifests store counts by
/// [`ErrorKind::name`] and older manifests must stay readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ErrorKind {
    Runt = 0,
    TruncatedVlan,
    TruncatedIpv4,
    BadIpv4Version,
    BadIpv4Ihl,
    BadIpv4Length,
    TruncatedIpv6,
    BadIpv6Version,
    BadIpv6Length,
    TruncatedUdp,
    BadUdpLength,
    TruncatedBth,
    TruncatedExtHeaders,
    TruncatedIcrc,
    BadPadCount,
    BadMirrorSeq,
    BadMirrorEvent,
    TruncatedMacControl,
    UnknownMacControlOpcode,
    NotUdp,
    BufferTooSmall,
    BadRepr,
}

impl ErrorKind {
    /// Every kind, in index order.
    pub const ALL: [ErrorKind; 22] = [
        ErrorKind::Runt,
        ErrorKind::TruncatedVlan,
        ErrorKind::TruncatedIpv4,
        ErrorKind::BadIpv4Version,
        ErrorKind::BadIpv4Ihl,
        ErrorKind::BadIpv4Length,
        ErrorKind::TruncatedIpv6,
        ErrorKind::BadIpv6Version,
        ErrorKind::BadIpv6Length,
        ErrorKind::TruncatedUdp,
        ErrorKind::BadUdpLength,
        ErrorKind::TruncatedBth,
        ErrorKind::TruncatedExtHeaders,
        ErrorKind::TruncatedIcrc,
        ErrorKind::BadPadCount,
        ErrorKind::BadMirrorSeq,
        ErrorKind::BadMirrorEvent,
        ErrorKind::TruncatedMacControl,
        ErrorKind::UnknownMacControlOpcode,
        ErrorKind::NotUdp,
        ErrorKind::BufferTooSmall,
        ErrorKind::BadRepr,
    ];
    /// Number of kinds; the length of a counter array.
    pub const COUNT: usize = Self::ALL.len();

    /// Dense index, `0..COUNT`.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Stable snake_case name, used as the key in manifests and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Runt => "runt",
            ErrorKind::TruncatedVlan => "truncated_vlan",
            ErrorKind::TruncatedIpv4 => "truncated_ipv4",
            ErrorKind::BadIpv4Version => "bad_ipv4_version",
            ErrorKind::BadIpv4Ihl => "bad_ipv4_ihl",
            ErrorKind::BadIpv4Length => "bad_ipv4_length",
            ErrorKind::TruncatedIpv6 => "truncated_ipv6",
            ErrorKind::BadIpv6Version => "bad_ipv6_version",
            ErrorKind::BadIpv6Length => "bad_ipv6_length",
            ErrorKind::TruncatedUdp => "truncated_udp",
            ErrorKind::BadUdpLength => "bad_udp_length",
            ErrorKind::TruncatedBth => "truncated_bth",
            ErrorKind::TruncatedExtHeaders => "truncated_ext_headers",
            ErrorKind::TruncatedIcrc => "truncated_icrc",
            ErrorKind::BadPadCount => "bad_pad_count",
            ErrorKind::BadMirrorSeq => "bad_mirror_seq",
            ErrorKind::BadMirrorEvent => "bad_mirror_event",
            ErrorKind::TruncatedMacControl => "truncated_mac_control",
            ErrorKind::UnknownMacControlOpcode => "unknown_mac_control_opcode",
            ErrorKind::NotUdp => "not_udp",
            ErrorKind::BufferTooSmall => "buffer_too_small",
            ErrorKind::BadRepr => "bad_repr",
        }
    }
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<Error> for ErrorKind {
    fn from(e: Error) -> Self {
        e.kind()
    }
}

/// Result alias used throughout the crate.
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_index_order_and_complete() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{k:?}");
        }
        assert_eq!(ErrorKind::COUNT, ErrorKind::BadRepr.index() + 1);
    }

    #[test]
    fn names_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for k in ErrorKind::ALL {
            let n = k.name();
            assert!(seen.insert(n), "duplicate name {n}");
            assert!(!n.is_empty());
            assert!(n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'), "{n}");
            assert!(!n.starts_with('_') && !n.ends_with('_'), "{n}");
        }
    }

    #[test]
    fn error_maps_to_its_kind_and_displays() {
        let e = Error::BadIpv4Ihl { ihl: 3 };
        assert_eq!(e.kind(), ErrorKind::BadIpv4Ihl);
        assert_eq!(ErrorKind::from(e), ErrorKind::BadIpv4Ihl);
        assert_eq!(e.to_string(), "IPv4 IHL 3 is below the minimum 5");
        assert_eq!(ErrorKind::BadMirrorSeq.to_string(), "bad_mirror_seq");
    }
}
