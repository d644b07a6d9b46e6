//! `c2c`: core-to-core round-trip latency between two CPUs (one cache line bounced by two
//! pinned threads). memif throughput is bounded by how fast cache lines move between the
//! feeder's and the client's cores; on a VM that figure changes with where the host places
//! the vCPUs, so `bench/memif.sh` records it next to every run to explain regime changes.

use anyhow::{ensure, Result};
use clap::Parser;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Parser)]
#[command(name = "c2c", version, about = "Core-to-core cache-line round-trip latency")]
struct Args {
    /// The two CPUs.
    #[arg(default_values_t = [0, 1], num_args = 2)]
    cpus: Vec<usize>,
    /// Round trips to time.
    #[arg(short = 'n', long, default_value_t = 200_000)]
    rounds: u64,
}

#[repr(align(128))]
struct Line(AtomicU64);

fn main() -> Result<()> {
    let args = Args::parse();
    let (a, b) = (args.cpus[0], args.cpus[1]);
    let line = Arc::new(Line(AtomicU64::new(0)));
    let rounds = args.rounds;
    let peer = {
        let line = line.clone();
        std::thread::spawn(move || {
            let pinned = core_affinity::set_for_current(core_affinity::CoreId { id: b });
            // Answers every odd value with the next even one.
            for i in 0..rounds {
                while line.0.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                line.0.store(2 * i + 2, Ordering::Release);
            }
            pinned
        })
    };
    ensure!(core_affinity::set_for_current(core_affinity::CoreId { id: a }), "cannot pin to CPU {a}");
    let start = Instant::now();
    for i in 0..rounds {
        line.0.store(2 * i + 1, Ordering::Release);
        while line.0.load(Ordering::Acquire) != 2 * i + 2 {
            std::hint::spin_loop();
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / rounds as f64;
    ensure!(peer.join().map_err(|_| anyhow::anyhow!("peer thread panicked"))?, "cannot pin to CPU {b}");
    println!("c2c: CPU {a} <-> CPU {b}: {ns:.0} ns per round trip");
    Ok(())
}
