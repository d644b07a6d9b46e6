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

/// Wire time of a frame of `frame_len` bytes (without FCS) on a link of `gbps`:
/// FCS (4) + preamble and SFD (8) + inter-frame gap (12) are on the wire too.
pub fn wire_time(frame_len: usize, gbps: f64) -> Ps {
    let bits = (frame_len + 24) as f64 * 8.0;
    (bits * 1000.0 / gbps).round() as Ps
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(Ps, u64, Slot)>>,
    slots: Vec<Option<E>>,
    free: Vec<Slot>,
    next_seq: u64,
}

type Slot = u32;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), slots: Vec::new(), free: Vec::new(), next_seq: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, at: Ps, event: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(event);
                s
            }
            None => {
                self.slots.push(Some(event));
                (self.slots.len() - 1) as Slot
            }
        };
        self.heap.push(Reverse((at, self.next_seq, slot)));
        self.next_seq += 1;
    }

    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let Reverse((at, _, slot)) = self.heap.pop()?;
        self.free.push(slot);
        let e = self.slots[slot as usize].take().expect("a queued slot holds its event");
        Some((at, e))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(10, 'a'), (10, 'b'), (30, 'c'), (30, 'd')]);
        assert!(q.is_empty());
    }

    #[test]
    fn wire_times() {
        // Minimum frame (60 bytes + FCS) at 100 Gb/s: (60 + 24) × 8 = 672 bits = 6.72 ns.
        assert_eq!(wire_time(60, 100.0), 6_720);
        assert_eq!(wire_time(1_000, 40.0), 204_800);
    }
}
