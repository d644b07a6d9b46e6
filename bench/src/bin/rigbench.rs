//! Testbed emulator generation benchmark: `rocescope-rig` scale mode against writing the
//! same bytes with nothing else to do (the reference, measured in the same run).
//!
//! Per repetition: (1) the rig generates a scale run into DIR/rig (pcaps written by its
//! background writers; the ground truth and counters are not part of the timing); (2) the
//! reference writes as many bytes as those pcaps hold, in 4 MiB writes, into DIR/ref. The
//! ratio reference time ÷ rig time says how close generation gets to the cost of merely
//! writing its output (1.0: generation is free). The rig's single generator thread's rate
//! is reported from its CPU time too.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use rig::scale::Scale;
use rig::{Capture, Rig};

#[derive(Parser)]
#[command(about = "Benchmark rocescope-rig's scale mode against raw sequential writes of the same bytes")]
struct Args {
    #[arg(long, default_value = "/tmp/rigbench")]
    dir: PathBuf,
    #[arg(long, default_value_t = 10_000_000)]
    packets: u64,
    #[arg(long, default_value_t = 4096)]
    qps: u32,
    #[arg(long, default_value_t = 3)]
    reps: u32,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let cfg = Scale { qps: args.qps, packets: args.packets, ..Scale::default() }.config()?;
    println!("| rep | packets | rig wall s | rig Mpps (wall) | generator thread CPU s | generator Mpps (CPU) | bytes written | reference wall s | ratio ref/rig |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for rep in 1..=args.reps {
        let rig_dir = args.dir.join("rig");
        let _ = std::fs::remove_dir_all(&args.dir);
        std::fs::create_dir_all(&rig_dir).with_context(|| format!("creating {}", rig_dir.display()))?;
        let (cpu0, t0) = (cpu_time::ThreadTime::now(), Instant::now());
        let run = Rig::new(&cfg, Capture::Pcap(&rig_dir), false)?.run()?;
        let (rig_wall, rig_cpu) = (t0.elapsed().as_secs_f64(), cpu0.elapsed().as_secs_f64());
        let bytes: u64 = (0..cfg.rig.dump_hosts.len())
            .map(|i| std::fs::metadata(rig_dir.join(rig::rig::dump_file_name(i))).map(|m| m.len()))
            .sum::<std::io::Result<u64>>()?;

        let ref_file = args.dir.join("ref");
        let chunk = vec![0x5au8; 4 << 20];
        let t1 = Instant::now();
        let mut f = std::fs::File::create(&ref_file)?;
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        f.flush()?;
        drop(f);
        let ref_wall = t1.elapsed().as_secs_f64();
        let pkts = run.stats.packets as f64;
        let ratio = ref_wall / rig_wall;
        ratios.push(ratio);
        println!(
            "| {rep} | {} | {rig_wall:.2} | {:.2} | {rig_cpu:.2} | {:.2} | {bytes} | {ref_wall:.2} | {ratio:.2} |",
            run.stats.packets,
            pkts / rig_wall / 1e6,
            pkts / rig_cpu / 1e6
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!("median ratio ref/rig: {:.2}", ratios[ratios.len() / 2]);
    let _ = std::fs::remove_dir_all(&args.dir);
    Ok(())
}
