//! Where the merge's sources meet: a winner tree (a tournament, Knuth TAOCP vol. 3
//! §5.4.1), one leaf per source.
//!
//! The merge takes the lowest head, pops that source's packet and puts the source's new
//! head back in its place. A tree does that in log₂ k comparisons along one path and moves
//! no keys; a binary heap pops and pushes, swapping 16-byte keys as it sifts, and its
//! swaps' narrow stores read back by wide loads stalled the merge thread on store
//! forwarding (its `pop` held a tenth of the merge thread's CPU samples for k = 2).

/// Keys are `u128`s: lower wins, and no two leaves tie (the caller packs the source index
/// into the key). `u128::MAX` is an empty leaf: a source with nothing pending.
pub struct Tournament {
    /// `keys[i]`: leaf i's key; leaves past the sources (up to a power of two) stay empty.
    keys: Vec<u128>,
    /// `winner[node]` for the tree's nodes 1..leaves (node 1 the root, node n's children
    /// 2n and 2n + 1, nodes ≥ leaves the leaves themselves).
    winner: Vec<u32>,
}

pub const EMPTY: u128 = u128::MAX;

impl Tournament {
    /// `k` leaves, all empty.
    pub fn new(k: usize) -> Tournament {
        let leaves = k.max(1).next_power_of_two();
        let mut t = Tournament { keys: vec![EMPTY; leaves], winner: vec![0; leaves] };
        for node in (1..leaves).rev() {
            t.winner[node] = t.play(node);
        }
        t
    }

    fn leaves(&self) -> usize {
        self.keys.len()
    }

    /// The winner among node's two children.
    fn play(&self, node: usize) -> u32 {
        let [a, b] = [2 * node, 2 * node + 1].map(|c| self.entrant(c));
        if self.keys[b as usize] < self.keys[a as usize] {
            b
        } else {
            a
        }
    }

    /// The leaf that node stands for: itself at the bottom, its winner above.
    fn entrant(&self, node: usize) -> u32 {
        if node >= self.leaves() {
            (node - self.leaves()) as u32
        } else {
            self.winner[node]
        }
    }

    /// The leaf with the lowest key and that key, `None` when every leaf is empty.
    pub fn min(&self) -> Option<(usize, u128)> {
        let leaf = self.entrant(1) as usize;
        let key = self.keys[leaf];
        (key != EMPTY).then_some((leaf, key))
    }

    /// Gives leaf `i` a new key (`EMPTY` to retire it) and replays its path to the root.
    pub fn set(&mut self, i: usize, key: u128) {
        self.keys[i] = key;
        let mut node = (self.leaves() + i) / 2;
        while node >= 1 {
            self.winner[node] = self.play(node);
            node /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever the leaves' keys and however they change, `min` is the lowest
        /// non-empty key and its leaf.
        #[test]
        fn min_is_the_lowest_leaf(
            k in 1usize..40,
            changes in proptest::collection::vec((0usize..40, proptest::option::of(0u64..1000)), 0..300),
        ) {
            let mut t = Tournament::new(k);
            let mut reference = vec![EMPTY; k];
            proptest::prop_assert_eq!(t.min(), None);
            for (i, key) in changes {
                let i = i % k;
                // Ties are impossible by contract: the leaf index is the key's low bits.
                let key = key.map_or(EMPTY, |v| u128::from(v) << 16 | i as u128);
                t.set(i, key);
                reference[i] = key;
                let want = reference
                    .iter()
                    .enumerate()
                    .filter(|(_, &key)| key != EMPTY)
                    .min_by_key(|(_, &key)| key)
                    .map(|(leaf, &key)| (leaf, key));
                proptest::prop_assert_eq!(t.min(), want);
            }
        }
    }
}
