//! RFC 1071 Internet checksum, shared by the IPv4 header and the UDP pseudo-header sums.

/// One's-complement sum of `data` as big-endian 16-bit words (odd tail padded with 0),
/// folded to 16 bits, not yet complemented.
pub(crate) fn sum(data: &[u8]) -> u16 {
    fold(sum_u32(data, 0))
}

/// Accumulates into a 32-bit (unfolded) running sum; `acc` may carry earlier parts.
pub(crate) fn sum_u32(data: &[u8], acc: u32) -> u32 {
    // 32-bit big-endian words into a 64-bit accumulator (RFC 1071 §2: the folded sum is the
    // same as over 16-bit words), folded once at the end: half the additions, no per-step fold.
    let mut s = u64::from(acc);
    let mut words = data.chunks_exact(4);
    for c in &mut words {
        s += u64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
    }
    let mut tail = words.remainder().chunks_exact(2);
    for c in &mut tail {
        s += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = tail.remainder() {
        s += u64::from(*last) << 8;
    }
    let s = (s & 0xffff_ffff) + (s >> 32);
    let s = (s & 0xffff_ffff) + (s >> 32);
    s as u32
}

/// Folds a 32-bit running sum to 16 bits.
pub(crate) fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        assert_eq!(sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), 0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(sum(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }

    #[test]
    fn large_input_does_not_overflow() {
        let data = vec![0xffu8; 1 << 20];
        assert_eq!(sum(&data), 0xffff);
    }
}
