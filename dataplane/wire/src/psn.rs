//! 24-bit packet sequence number arithmetic with wraparound.
//!
//! PSNs start at a random value and wrap at 2^24 (DESIGN "RoCEv2": "PSNs are 24-bit and
//! wrap"); Lumina's own checkers ignore the wrap (STYLE.md), ours must not. Ordering is
//! only meaningful within half the space (2^23), as in IBA's PSN validity window.

/// Mask of a PSN.
pub const MASK: u32 = 0x00ff_ffff;
/// Size of the PSN space.
pub const MODULUS: u32 = 1 << 24;
/// Half the space: the largest forward distance that still means "after".
pub const HALF: u32 = 1 << 23;

/// `psn + n` modulo 2^24.
pub const fn add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & MASK
}

/// `psn - n` modulo 2^24.
pub const fn sub(psn: u32, n: u32) -> u32 {
    psn.wrapping_sub(n) & MASK
}

/// Forward distance from `from` to `to` (0..2^24): how many increments reach `to`.
pub const fn distance(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) & MASK
}

/// Signed distance from `from` to `to` in -2^23..2^23: positive when `to` is after `from`.
pub const fn signed_distance(from: u32, to: u32) -> i32 {
    let d = distance(from, to);
    if d >= HALF {
        d as i32 - MODULUS as i32
    } else {
        d as i32
    }
}

/// Whether `a` comes before `b` within half a window.
pub const fn lt(a: u32, b: u32) -> bool {
    signed_distance(a, b) > 0
}

/// Whether `a` comes before or equals `b` within half a window.
pub const fn le(a: u32, b: u32) -> bool {
    signed_distance(a, b) >= 0
}

/// Whether `a` comes after `b` within half a window.
pub const fn gt(a: u32, b: u32) -> bool {
    lt(b, a)
}

/// Whether `a` comes after or equals `b` within half a window.
pub const fn ge(a: u32, b: u32) -> bool {
    le(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps() {
        assert_eq!(add(MASK, 1), 0);
        assert_eq!(add(MASK - 1, 5), 3);
        assert_eq!(sub(0, 1), MASK);
        assert_eq!(distance(MASK, 0), 1);
        assert_eq!(distance(0, MASK), MASK);
        assert_eq!(signed_distance(0, MASK), -1);
        assert_eq!(signed_distance(MASK, 2), 3);
        assert!(lt(MASK, 0) && gt(0, MASK));
        assert!(lt(10, 11) && !lt(11, 10) && !lt(7, 7) && le(7, 7) && ge(7, 7));
        // Exactly half a window away is ambiguous: neither is before the other.
        assert_eq!(signed_distance(0, HALF), -(HALF as i32));
        assert_eq!(signed_distance(HALF, 0), -(HALF as i32));
        assert!(!lt(0, HALF) && !lt(HALF, 0));
        // Upper bits of the inputs are ignored.
        assert_eq!(add(0xff00_0000, 1), 1);
    }

    proptest! {
        #[test]
        fn add_then_distance(a in 0u32..MODULUS, n in 0u32..MODULUS) {
            let b = add(a, n);
            prop_assert!(b <= MASK);
            prop_assert_eq!(distance(a, b), n);
            prop_assert_eq!(sub(b, n), a);
        }

        #[test]
        fn order_is_antisymmetric(a in 0u32..MODULUS, b in 0u32..MODULUS) {
            prop_assert!(!(lt(a, b) && lt(b, a)));
            if a != b && distance(a, b) != HALF {
                prop_assert!(lt(a, b) ^ lt(b, a));
            }
            prop_assert_eq!(signed_distance(a, b) == 0, a == b);
        }

        #[test]
        fn successor_is_after(a in 0u32..MODULUS, n in 1u32..HALF) {
            prop_assert!(lt(a, add(a, n)));
            prop_assert!(gt(add(a, n), a));
        }
    }
}
