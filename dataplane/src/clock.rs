//! Host time for frames that carry no switch timestamp: one TSC read per burst, converted
//! to Unix nanoseconds against a reference taken at start-up (no syscall per packet).

#[derive(Debug, Clone, Copy)]
pub struct HostClock {
    base_unix_ns: u64,
    base_tsc: u64,
    tsc_hz: u64,
}

impl HostClock {
    pub fn new(tsc_now: u64, tsc_hz: u64) -> Self {
        HostClock { base_unix_ns: unix_now_ns(), base_tsc: tsc_now, tsc_hz: tsc_hz.max(1) }
    }

    /// Signed: another core's TSC may read slightly below the reference taken here.
    pub fn unix_ns(&self, tsc: u64) -> u64 {
        let elapsed = tsc.wrapping_sub(self.base_tsc) as i64 as i128;
        let ns = elapsed * 1_000_000_000 / self.tsc_hz as i128;
        (self.base_unix_ns as i128 + ns).max(0) as u64
    }

    pub fn ticks(&self, seconds: f64) -> u64 {
        (seconds * self.tsc_hz as f64) as u64
    }

    /// A span of TSC ticks in nanoseconds.
    pub fn ns(&self, ticks: u64) -> u64 {
        (ticks as u128 * 1_000_000_000 / self.tsc_hz as u128) as u64
    }
}

pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_ticks_to_ns_from_the_reference() {
        let c = HostClock { base_unix_ns: 1_000, base_tsc: 500, tsc_hz: 2_000_000_000 };
        assert_eq!(c.unix_ns(500), 1_000);
        assert_eq!(c.unix_ns(2_500), 2_000);
        assert_eq!(c.unix_ns(500 + 2_000_000_000 * 3600), 1_000 + 3_600_000_000_000);
        assert_eq!(c.ticks(0.5), 1_000_000_000);
        assert_eq!(c.ns(3_000_000_000), 1_500_000_000);
        assert_eq!(c.unix_ns(300), 900, "a TSC slightly behind the reference");
    }
}
