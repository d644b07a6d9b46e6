//! Who should have had a missing copy: Lumina's switch deals copies to the dump hosts by
//! (weighted) round robin on the mirror seq (§3.4), so the pattern learned from the copies
//! present names the dump host or core each missing range was sent to.

use super::Balance;

/// Learns which source each seq goes to: Lumina's switch spreads copies over dump hosts by
/// (weighted) round robin on the seq, so `source = pattern[seq % period]`. Learned on the
/// first copies, then verified on all.
pub(super) struct BalanceInference {
    /// Source → capture host, for the host-level fallback.
    hosts: Vec<usize>,
    learn: Vec<(u64, u16)>,
    candidates: Option<[Option<Candidate>; 2]>,
}

#[derive(Clone)]
struct Candidate {
    period: u64,
    pattern: Vec<u16>,
    by_host: bool,
    holds: bool,
    /// The seq of the first copy that broke it.
    broke_at: Option<u64>,
}

pub(super) const LEARN: usize = 1 << 16;
const MAX_PERIOD: u64 = 64;
/// A pattern's entry for a residue no source given holds: a dump host or core whose
/// capture is not among the inputs (`null` in `balance.pattern`).
const ABSENT: u16 = u16::MAX;
/// Seqs a residue must span, all missing, to be taken as an absent source's.
const MIN_EMPTY_RESIDUE: u64 = 8;

/// How many of `lo..=hi` are `r` modulo `period`.
pub(super) fn residue_count(lo: u64, hi: u64, period: u64, r: u64) -> u64 {
    let first = lo + (r + period - lo % period) % period;
    if first > hi {
        0
    } else {
        (hi - first) / period + 1
    }
}

impl BalanceInference {
    pub(super) fn new(hosts: &[usize]) -> Self {
        BalanceInference { hosts: hosts.to_vec(), learn: Vec::with_capacity(LEARN), candidates: None }
    }

    /// Whether the pattern is still being learned (from the first copies).
    pub(super) fn learning(&self) -> bool {
        self.candidates.is_none()
    }

    /// Whether some copy broke a candidate pattern.
    #[cfg(test)]
    pub(super) fn any_broken(&self) -> bool {
        self.candidates.iter().flatten().flatten().any(|c| !c.holds)
    }

    /// An inference for the copies after these, holding the pattern learned here.
    pub(super) fn fork(&self) -> BalanceInference {
        BalanceInference { hosts: self.hosts.clone(), learn: Vec::new(), candidates: self.candidates.clone() }
    }

    #[inline]
    pub(super) fn observe(&mut self, seq: u64, source: u16) {
        if let Some(cands) = &mut self.candidates {
            for c in cands.iter_mut().flatten().filter(|c| c.holds) {
                let id =
                    if c.by_host { self.hosts.get(usize::from(source)).copied().unwrap_or(0) as u16 } else { source };
                if c.pattern[(seq % c.period) as usize] != id {
                    (c.holds, c.broke_at) = (false, Some(seq));
                }
            }
            return;
        }
        self.learn.push((seq, source));
        if self.learn.len() == LEARN {
            self.settle();
        }
    }

    fn settle(&mut self) {
        let by_source = self.fit(false);
        // By host only when that groups some sources and tells more than one host apart.
        let hosts: std::collections::BTreeSet<usize> = self.hosts.iter().copied().collect();
        let grouped = hosts.len() > 1 && hosts.len() < self.hosts.len();
        let by_host = if grouped { self.fit(true) } else { None };
        self.candidates = Some([by_source, by_host]);
        self.learn = Vec::new();
    }

    /// The period under which the learned copies agree and the fewest missing seqs are
    /// unexplained losses (the smallest such). Residues no copy came with are the share of
    /// a source that captured nothing (a dumper that never started) when exactly one
    /// source has no copies, else of a source that is not among the inputs (a dump host's
    /// directory left out), [`ABSENT`]. Lumina §3.4: the switch's WRR sends every seq of a
    /// residue to one dump host, so a residue none of the inputs holds is one host's,
    /// however many of the others' copies were also lost.
    fn fit(&self, by_host: bool) -> Option<Candidate> {
        let id = |s: u16| if by_host { self.hosts.get(usize::from(s)).copied().unwrap_or(0) as u16 } else { s };
        let distinct: std::collections::BTreeSet<u16> = self.learn.iter().map(|&(_, s)| id(s)).collect();
        let all: std::collections::BTreeSet<u16> = (0..self.hosts.len() as u16).map(id).collect();
        let silent = match all.difference(&distinct).copied().collect::<Vec<_>>()[..] {
            [one] => one,
            _ => ABSENT,
        };
        let (lo, hi) = self.span()?;
        let mut best: Option<(u64, Candidate)> = None;
        for period in (2..=MAX_PERIOD).take_while(|&p| self.learn.len() as u64 >= 4 * p) {
            let Some((pattern, present)) = self.pattern(period, hi, id) else { continue };
            let count = |r: usize| residue_count(lo, hi, period, r as u64);
            let holes: Vec<usize> = (0..pattern.len()).filter(|&r| pattern[r] == ABSENT).collect();
            // A residue with no copies is nobody's by the pattern only when it spans enough
            // seqs that losses alone are no explanation.
            if holes.iter().any(|&r| count(r) < MIN_EMPTY_RESIDUE) {
                continue;
            }
            let sources = pattern.iter().filter(|&&s| s != ABSENT).collect::<std::collections::BTreeSet<_>>().len();
            if sources + usize::from(!holes.is_empty()) < 2 {
                continue;
            }
            let lost: u64 =
                (0..pattern.len()).filter(|&r| pattern[r] != ABSENT).map(|r| count(r).saturating_sub(present[r])).sum();
            if best.as_ref().is_none_or(|(l, _)| lost < *l) {
                let pattern = pattern.iter().map(|&s| if s == ABSENT { silent } else { s }).collect();
                best = Some((lost, Candidate { period, pattern, by_host, holds: true, broke_at: None }));
            }
            if lost == 0 {
                break; // no longer period explains more
            }
        }
        best.map(|(_, c)| c)
    }

    /// The learned copies' span of seqs, a last one more than [`crate::merge::LAP_MARGIN`]
    /// past the one before left out (a corrupted seq: the reconstruction's seq-outlier).
    fn span(&self) -> Option<(u64, u64)> {
        let lo = self.learn.iter().map(|&(seq, _)| seq).min()?;
        let mut seqs: Vec<u64> = self.learn.iter().map(|&(seq, _)| seq).collect();
        seqs.sort_unstable();
        let hi = match seqs[..] {
            [.., a, b] if b - a > u64::from(crate::merge::LAP_MARGIN) => a,
            [.., b] => b,
            [] => return None,
        };
        Some((lo, hi))
    }

    /// The source of each residue of `period` (ABSENT: no copy came with it) and how many
    /// copies came with each, over the learned copies up to `hi`; `None` when two sources
    /// share a residue.
    fn pattern(&self, period: u64, hi: u64, id: impl Fn(u16) -> u16) -> Option<(Vec<u16>, Vec<u64>)> {
        let mut pattern = vec![ABSENT; period as usize];
        let mut present = vec![0u64; period as usize];
        for &(seq, s) in self.learn.iter().filter(|&&(seq, _)| seq <= hi) {
            let r = (seq % period) as usize;
            if pattern[r] != ABSENT && pattern[r] != id(s) {
                return None;
            }
            pattern[r] = id(s);
            present[r] += 1;
        }
        Some((pattern, present))
    }

    /// A pattern holds over two parts when it holds over each.
    pub(super) fn join(&mut self, later: BalanceInference) {
        let (Some(mine), Some(theirs)) = (&mut self.candidates, later.candidates) else { return };
        for (c, t) in mine.iter_mut().zip(theirs) {
            // Broken here, it stays broken where it first was.
            if let (Some(c), Some(t)) = (c.as_mut().filter(|c| c.holds), t) {
                (c.holds, c.broke_at) = (t.holds, t.broke_at);
            }
        }
    }

    /// The pattern that holds, but for the trace's seq-outlier (`set_aside`), the last
    /// copy, which comes with a corrupted seq.
    pub(super) fn result(&mut self, set_aside: Option<u64>) -> Option<Balance> {
        if self.candidates.is_none() {
            self.settle();
        }
        let holds = |c: &&Candidate| c.holds || set_aside.is_some() && c.broke_at == set_aside;
        let c = self.candidates.as_ref()?.iter().flatten().find(holds)?;
        let level = if c.by_host { "host" } else { "source" };
        let pattern = c.pattern.iter().map(|&s| (s != ABSENT).then_some(s)).collect();
        Some(Balance { period: c.period, pattern, level: level.into() })
    }
}

/// Who should have had the unwrapped seqs `first..=last`: the sources the pattern assigns
/// them to. The pattern was learned on unwrapped seqs, so it is applied to them too (a lap
/// is 0x7fffffff seqs, no multiple of the period).
pub(super) fn expected_at(
    first: i128,
    last: i128,
    balance: Option<&Balance>,
    names: &[String],
    hosts: &[String],
) -> Vec<String> {
    let Some(b) = balance else { return Vec::new() };
    let period = i128::from(b.period);
    let mut seen = std::collections::BTreeSet::new();
    for seq in first..=last.min(first + period - 1) {
        seen.insert(b.pattern[seq.rem_euclid(period) as usize]);
    }
    seen.into_iter()
        .map(|s| match (s, b.level.as_str()) {
            (None, _) => NOT_AN_INPUT.to_string(),
            (Some(s), "host") => hosts.get(usize::from(s)).map_or_else(|| format!("host {s}"), |h| format!("host {h}")),
            (Some(s), _) => names.get(usize::from(s)).cloned().unwrap_or_else(|| format!("source {s}")),
        })
        .collect()
}

/// `expected_at` for seqs that go to a residue no input holds.
pub const NOT_AN_INPUT: &str = "a dump host or core not among the inputs";
