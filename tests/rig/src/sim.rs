//! Discrete-event core: simulated time and a deterministic event queue.
//!
//! Time is in picoseconds so that serialisation delays (a minimum frame takes 6.72 ns at
//! 100 Gb/s) add up without rounding drift. Events at the same instant run in the order
//! they were scheduled, so a run depends only on its configuration and seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Simulated time, picoseconds since the start of the run.
pub type Ps = u64;

pub const PS_PER_NS: u64 = 1_000;

pub const fn ns(v: u64) -> Ps {
    v * PS_PER_NS
}

pub const fn to_ns(t: Ps) -> u64 {
    t / PS_PER_NS
}

/// Bytes on the wire besides the frame: FCS (4), preamble and SFD (8), inter-frame gap (12).
pub const WIRE_OVERHEAD: u64 = 24;

/// A link rate, kept as femtoseconds per byte so that wire times are integer arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    fs_per_byte: u64,
}

impl Rate {
    pub fn gbps(g: f64) -> Rate {
        Rate { fs_per_byte: (8.0e6 / g).round().max(1.0) as u64 }
    }

    /// Wire time of a frame of `frame_len` bytes (without FCS).
    pub fn wire_time(self, frame_len: usize) -> Ps {
        ((frame_len as u64 + WIRE_OVERHEAD) * self.fs_per_byte + 500) / 1000
    }

    /// Bytes the link carries in `t`.
    pub fn bytes_in(self, t: Ps) -> u64 {
        t * 1000 / self.fs_per_byte
    }
}

/// Wire time of a frame of `frame_len` bytes (without FCS) on a link of `gbps`.
pub fn wire_time(frame_len: usize, gbps: f64) -> Ps {
    Rate::gbps(gbps).wire_time(frame_len)
}

/// A priority queue of events in two lanes with one order: `push` for the many
/// short-lived events of packets in flight, `push_far` for the few long timers (one per
/// QP). Keeping timers out of the packet lane keeps that heap small, which is most of the
/// rig's speed.
pub struct EventQueue<E> {
    near: BinaryHeap<Reverse<Key>>,
    far: BinaryHeap<Reverse<Key>>,
    slots: Vec<Option<E>>,
    free: Vec<Slot>,
    next_seq: u64,
}

type Slot = u32;

/// (time, insertion order, slot) packed into one integer, ordered by time then insertion:
/// time in the high 64 bits, a 40-bit insertion counter, a 24-bit slot index.
type Key = u128;
const SLOT_BITS: u32 = 24;

fn key(at: Ps, seq: u64, slot: Slot) -> Key {
    (u128::from(at) << 64) | (u128::from(seq & ((1 << 40) - 1)) << SLOT_BITS) | u128::from(slot)
}

fn key_time(k: Key) -> Ps {
    (k >> 64) as Ps
}

fn key_slot(k: Key) -> Slot {
    (k & ((1 << SLOT_BITS) - 1)) as Slot
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { near: BinaryHeap::new(), far: BinaryHeap::new(), slots: Vec::new(), free: Vec::new(), next_seq: 0 }
    }
}

impl<E> EventQueue<E> {
    fn store(&mut self, at: Ps, event: E) -> Reverse<Key> {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(event);
                s
            }
            None => {
                assert!(self.slots.len() < 1 << SLOT_BITS, "more than 2^24 events queued at once");
                self.slots.push(Some(event));
                (self.slots.len() - 1) as Slot
            }
        };
        self.next_seq += 1;
        Reverse(key(at, self.next_seq, slot))
    }

    pub fn push(&mut self, at: Ps, event: E) {
        let e = self.store(at, event);
        self.near.push(e);
    }

    pub fn push_far(&mut self, at: Ps, event: E) {
        let e = self.store(at, event);
        self.far.push(e);
    }

    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let lane = match (self.near.peek(), self.far.peek()) {
            (Some(n), Some(f)) if f.0 < n.0 => &mut self.far,
            (Some(_), _) => &mut self.near,
            (None, Some(_)) => &mut self.far,
            (None, None) => return None,
        };
        let Reverse(k) = lane.pop().expect("peeked");
        let (at, slot) = (key_time(k), key_slot(k));
        self.free.push(slot);
        let e = self.slots[slot as usize].take().expect("a queued slot holds its event");
        Some((at, e))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Ps> {
        let t = |h: &BinaryHeap<Reverse<Key>>| h.peek().map(|e| key_time(e.0));
        match (t(&self.near), t(&self.far)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_fifo_order() {
        let mut q = EventQueue::default();
        q.push(30, 'c');
        q.push(10, 'a');
        q.push(30, 'd');
        q.push(10, 'b');
        q.push_far(10, 'x');
        q.push_far(5, 'w');
        q.push(30, 'e');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(5, 'w'), (10, 'a'), (10, 'b'), (10, 'x'), (30, 'c'), (30, 'd'), (30, 'e')]);
        assert!(q.is_empty());
    }

    #[test]
    fn wire_times() {
        // Minimum frame (60 bytes + FCS) at 100 Gb/s: (60 + 24) × 8 = 672 bits = 6.72 ns.
        assert_eq!(wire_time(60, 100.0), 6_720);
        assert_eq!(wire_time(1_000, 40.0), 204_800);
    }
}
