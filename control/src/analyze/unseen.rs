//! The mirror copies a trace lacks, where the analyzers ask about them.
//!
//! A missing copy is a loss of the capture, not of the network: the packet crossed the
//! switch (had an event dropped or corrupted it, its copy would say so), and it reached
//! its receiver. So when an analyzer meets a packet its model of a connection cannot
//! explain, it first asks whether a copy missing since that connection's previous packet
//! could: if so, the finding is *unverifiable*, not a violation, and the model catches up
//! with what the unseen packets must have done. Which connection a missing copy belonged
//! to is not known; asking only about the stretch between two packets of one connection
//! keeps a lost copy from excusing findings far from it.

use trace::record::Record;

use crate::reconstruct::Gaps;

/// Missing mirror seqs (the reconstruction's own count: a copy later than the reorder
/// window fills its place), as unwrapped seqs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unseen {
    gaps: Gaps,
    /// Between the first copy and the last.
    total: u64,
    /// The switch's snapshot gives its mirror seq range: the trace spans everything it
    /// mirrored from its start, each copy in it or counted missing.
    from_start: bool,
    /// Copies that may be missing before the trace's first: the switch's count, or
    /// [`UNBOUNDED`]. Counted apart from the gaps: how many seqs lie below the first copy
    /// depends on which lap the merge counts from, not on what was lost.
    before_first: u64,
}

/// Copies lost before the trace's first, not counted: any number (more than a lap of seqs
/// is as good as any, and sums of it do not overflow).
pub const UNBOUNDED: u64 = 1 << 32;

impl Unseen {
    pub fn of(records: &[Record]) -> Unseen {
        let mut gaps = Gaps::default();
        for r in records.iter().filter(|r| r.seq() != 0) {
            gaps.observe(r.seq());
        }
        Unseen::of_gaps(gaps)
    }

    /// From the gaps of a pass over the copies (`Connections::track` makes it).
    pub fn of_gaps(mut gaps: Gaps) -> Unseen {
        gaps.set_aside_outlier(); // a seq-outlier of the reconstruction hides nothing
        Unseen { total: gaps.total, gaps, from_start: false, before_first: 0 }
    }

    /// Sets aside a copy at either end whose seq was corrupted, as `check` does
    /// ([`crate::check::set_aside_at_ends`]): the seqs between it and the rest hide nothing.
    /// Returns the unwrapped seqs set aside and why.
    pub fn set_aside_at_ends(
        &mut self,
        view: &trace::record::RecordView<'_>,
        ctx: &crate::check::CheckContext,
    ) -> Vec<(u64, crate::check::Corrupted)> {
        let aside = crate::check::set_aside_at_ends(&mut self.gaps, view.records, view.flows, ctx);
        self.total = self.gaps.total;
        aside
    }

    /// The unwrapped seqs of the first and last copies the gaps are counted between.
    pub fn span(&self) -> (Option<u64>, Option<u64>) {
        (self.gaps.first, self.gaps.last)
    }

    /// Copies were lost before the trace's first (the switch's counters say so), how many
    /// is not known: any connection may have lost packets there.
    pub fn lost_before_first(&mut self) {
        self.before_first = UNBOUNDED;
    }

    /// Exactly `n` copies were lost before the trace's first (the snapshot's seq range).
    pub fn lost_before_first_exactly(&mut self, n: u64) {
        self.before_first = n;
    }

    /// `n` copies were lost after the trace's last (the switch's counters say so): any
    /// connection may have lost its last packets there.
    pub fn lost_after_last(&mut self, n: u64) {
        self.gaps.missing_after_last(n);
    }

    /// The switch's snapshot gives its mirror seq range: the copies lost before the
    /// trace's first, if any, are counted ([`Self::lost_before_first`]), none unknown.
    pub fn spans_switch_start(&mut self) {
        self.from_start = true;
    }

    /// Whether the trace provably begins with the switch's first copy: every packet the
    /// switch mirrored is in it or among the copies it counts as missing.
    pub fn from_start(&self) -> bool {
        self.from_start
    }

    /// How many copies are missing between the trace's first and last.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether a copy is missing strictly between trace orders (unwrapped seqs) `after`
    /// and `before`; `after = None` asks from the trace's start.
    pub fn between(&self, after: Option<u64>, before: u64) -> bool {
        (after.is_none() && self.before_first > 0) || self.gaps.any_within(after.map_or(0, |a| a + 1), before)
    }

    /// How many copies are missing strictly between `after` and `before`: at most that
    /// many packets went unseen there.
    pub fn count_between(&self, after: Option<u64>, before: u64) -> u64 {
        let head = if after.is_none() { self.before_first } else { 0 };
        head.saturating_add(self.gaps.count_within(after.map_or(0, |a| a + 1), before))
    }
}

/// Per direction of one connection, where its previous packet was: whether a copy is
/// missing since then is what [`Unseen`] is asked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Since {
    last: Option<u64>,
}

impl Since {
    /// The previous packet's trace order.
    pub fn last(&self) -> Option<u64> {
        self.last
    }

    /// How many copies are missing between the previous packet and `r`; `r` becomes the
    /// previous packet.
    pub fn step(&mut self, unseen: &Unseen, r: &Record) -> u64 {
        // The next seq straight after the previous packet's: nothing between to look up
        // (cnp's scan steps every copy of the trace through one of these).
        let next = self.last.is_some_and(|l| r.seq() == l + 1);
        let missing = if next { 0 } else { unseen.count_between(self.last, r.seq()) };
        self.last = Some(r.seq());
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(seqs: &[u64]) -> Vec<Record> {
        seqs.iter().map(|&s| Record::default().with_seq(s)).collect()
    }

    #[test]
    fn missing_copies_are_the_gaps() {
        assert_eq!(Unseen::of(&records(&[1, 2, 5, 6, 0, 9])).total(), 4);
        // 10 and 12 come first, then 1 and 2 (later than the reorder window, below the
        // first copy) and 2 again (a duplicate).
        assert_eq!(Unseen::of(&records(&[10, 12, 1, 2, 2])).total(), 8, "3..=9 and 11");
    }

    #[test]
    fn between_asks_about_the_open_stretch_only() {
        let u = Unseen::of(&records(&[1, 2, 5, 6, 9]));
        assert!(u.between(None, 4), "3 is missing");
        assert!(!u.between(None, 3), "before 3 nothing is");
        assert!(u.between(Some(2), 5));
        assert!(!u.between(Some(4), 5), "4 itself is past `after`, 5 is `before`");
        assert!(u.between(Some(3), 5), "4");
        assert!(!u.between(Some(5), 7));
        assert!(u.between(Some(6), 9));
        assert!(!u.between(Some(9), u64::MAX));
        assert!(!Unseen::default().between(None, u64::MAX));
        let mut after = u.clone();
        after.lost_after_last(2);
        assert!(after.between(Some(9), u64::MAX) && !after.between(Some(9), 10), "10 and 11 are missing");
        assert_eq!((after.count_between(Some(9), u64::MAX), after.total()), (2, u.total()));
        assert_eq!(
            [u.count_between(None, u64::MAX), u.count_between(Some(3), 8), u.count_between(Some(2), 3)],
            [4, 2, 0]
        );
        let mut head = Unseen::of(&records(&[5, 6]));
        assert!(!head.between(None, 5));
        head.lost_before_first();
        assert!(head.between(None, 5) && !head.between(Some(4), 5));
        assert_eq!(head.total(), 0, "counted by the check, with the copies lost after the last");
        // The switch's count, not the seqs below the first copy (which depend on the lap
        // the merge counts from: review F4).
        head.lost_before_first_exactly(300);
        assert_eq!((head.count_between(None, 6), head.count_between(Some(5), 6)), (300, 0));
        let mut s = Since::default();
        assert_eq!([1, 2, 5, 9].map(|q| s.step(&u, &records(&[q])[0])), [0, 0, 2, 2]);
    }
}
