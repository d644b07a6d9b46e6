//! One capture from start to finish: EAL and port set-up, shards and writer threads,
//! lcores launched, the stats loop on the main lcore, then an orderly stop that flushes
//! every buffer and finalizes the manifest.

use crate::clock::{unix_now_ns, HostClock};
use crate::config::{Args, Balance};
use crate::counters::{Admission, Live, Stop, StopReason, Tally};
use crate::dispatch::{DispatchTally, Dispatcher};
use crate::dpdk::{self, Eal, Mempool, Port, PortConfig, Ring};
use crate::report::{self, CoreOutcome};
use crate::shard::{self, WriterReport};
use crate::worker::{Recorder, Source, Worker};
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trace::manifest::RunStatus;
use wire::frame::ClassifyConfig;

const CHUNK_BYTES: usize = 4 << 20;

/// Everything a worker core needs, prepared on the main lcore before launch.
struct CoreSlot {
    lcore: u32,
    queue: Option<u16>,
    shard: String,
    live: Arc<Live>,
    tally: Arc<Mutex<Option<Tally>>>,
    writer: Option<std::thread::JoinHandle<WriterReport>>,
}

/// Captures until a stop condition and returns the human summary.
pub fn capture(eal_args: &[String], args: &Args) -> Result<String> {
    let run_dir = prepare_run_dir(&args.out, args.force)?;
    let eal = Eal::init(eal_args).context("initializing the DPDK EAL")?;
    let lcores = eal.worker_lcores();
    let (dispatcher_lcore, worker_lcores) = assign_lcores(args.balance, &lcores)?;
    let workers = worker_lcores.len() as u16;
    let rx_queues = if args.balance == Balance::Rss { workers } else { 1 };

    let info = Port::info(args.port).with_context(|| format!("port {} (is a --vdev or NIC given to EAL?)", args.port))?;
    let rss = args.balance == Balance::Rss && rx_queues > 1 && info.rss_offloads != 0;
    if args.balance == Balance::Rss && rx_queues > 1 && !rss {
        tracing::warn!("{} has no RSS: each of its {rx_queues} queues is fed by the device itself", info.driver_name);
    }
    let socket = eal.socket_id();
    let ring_mbufs = if dispatcher_lcore.is_some() { workers as u32 * args.ring_size } else { 0 };
    let n_mbufs = rx_queues as u32 * args.rx_desc as u32 + ring_mbufs + (lcores.len() as u32 + 1) * 512 + 2048;
    let pool = Mempool::new_pktmbuf("rs_rx_pool", n_mbufs, 256, dpdk::DEFAULT_DATA_ROOM, socket)
        .context("creating the mbuf pool")?;
    let port_config = PortConfig { rx_queues, rx_desc: args.rx_desc, rss, promiscuous: args.promiscuous };
    let mut port = Port::configure(args.port, &port_config, &pool).with_context(|| {
        format!("configuring port {} ({}) with {rx_queues} RX queues; try --balance dispatch", args.port, info.driver_name)
    })?;

    let stop = Arc::new(Stop::default());
    let admission = Arc::new(Admission::new(args.max_packets));
    let classify = ClassifyConfig { mirror_port: args.mirror_port, roce_port: args.roce_port };
    let clock = HostClock::new(dpdk::rdtsc(), dpdk::tsc_hz());
    let chunks = ((args.buffer_mb << 20) as usize / CHUNK_BYTES).max(2);

    let mut manifest = report::initial_manifest(eal_args, args, &info, rx_queues, rss, chunks * CHUNK_BYTES);
    let mut slots = Vec::new();
    let mut workers_ready = Vec::new();
    let mut rings = Vec::new();
    let upstream_done = Arc::new(AtomicBool::new(false));
    for (core, &lcore) in worker_lcores.iter().enumerate() {
        let queue = (args.balance == Balance::Rss).then_some(core as u16);
        let shard_name = format!("shard-{core:03}.pcapng");
        let if_name = format!("port{}", args.port);
        let if_desc = format!("{} {} core {core}", info.driver_name, args.balance.name());
        let header = trace::pcapng::shard_header(args.snaplen, &if_name, &if_desc, &report::writer_name());
        let (buffer, writer) = shard::open(&run_dir.join(&shard_name), header, chunks, CHUNK_BYTES, stop.clone())
            .with_context(|| format!("creating {}", run_dir.join(&shard_name).display()))?;
        let source = match queue {
            Some(q) => Source::Queue { queue: port.rx_queue(q)?, admission: admission.clone() },
            None => {
                let ring = Ring::new(&format!("rs_ring_{core}"), args.ring_size, socket)
                    .with_context(|| format!("creating ring of {} for core {core}", args.ring_size))?;
                let (producer, consumer) = ring.split();
                rings.push(producer);
                Source::Ring { ring: consumer, upstream_done: upstream_done.clone() }
            }
        };
        let slot = CoreSlot {
            lcore,
            queue,
            shard: shard_name,
            live: Arc::new(Live::default()),
            tally: Arc::new(Mutex::new(None)),
            writer: Some(writer),
        };
        let worker = Worker {
            source,
            buffer,
            recorder: Recorder { classify, snaplen: args.snaplen as usize },
            clock,
            flush_after_ticks: clock.ticks(0.2),
            stop: stop.clone(),
            live: slot.live.clone(),
        };
        workers_ready.push((lcore, worker, slot.tally.clone()));
        slots.push(slot);
    }
    manifest.cores = slots.iter().enumerate().map(|(i, s)| report::core_skeleton(i, s.lcore, s.queue, &s.shard)).collect();
    manifest.store(&run_dir).context("writing the initial manifest")?;

    // Start the port before any lcore polls it; packets arriving in between wait in the queue.
    port.start().context("starting the port")?;
    for (lcore, worker, tally) in workers_ready {
        launch_worker(lcore, worker, tally)?;
    }
    let dispatch = match dispatcher_lcore {
        Some(lcore) => {
            let dispatcher = Dispatcher {
                queue: port.rx_queue(0)?,
                rings,
                admission: admission.clone(),
                stop: stop.clone(),
                done: upstream_done.clone(),
                live: Arc::new(Live::default()),
            };
            Some(launch_dispatcher(lcore, dispatcher)?)
        }
        None => None,
    };

    let started = Instant::now();
    watch(args, &stop, &slots, dispatch.as_ref().map(|d| &d.2), started);
    let exits = dpdk::lcore::wait_all();
    let elapsed = started.elapsed();
    // Counters first: some PMDs (memif) reset them when the port stops.
    let port_stats = port.stats().unwrap_or_else(|e| {
        tracing::error!("reading port counters: {e}");
        Default::default()
    });
    if let Err(e) = port.stop() {
        tracing::warn!("stopping the port: {e}");
    }

    let mut outcomes = Vec::new();
    for slot in &mut slots {
        let tally = slot.tally.lock().map(|mut t| t.take()).ok().flatten().unwrap_or_default();
        let writer = slot.writer.take().expect("joined once").join().unwrap_or_else(|_| WriterReport {
            error: Some("writer thread panicked".into()),
            ..Default::default()
        });
        outcomes.push(CoreOutcome { tally, writer });
    }
    if let Some((lcore, slot, _)) = dispatch {
        let tally = slot.lock().map(|mut t| t.take()).ok().flatten().unwrap_or_default();
        manifest.dispatcher = Some(report::dispatcher_record(lcore, &tally));
    }
    if let Some((lcore, code)) = exits.iter().find(|(_, code)| *code != 0) {
        tracing::error!("lcore {lcore} exited with {code}");
    }
    report::finish(&mut manifest, &outcomes, &port_stats, stop.reason(), unix_now_ns());
    manifest.status = RunStatus::Complete;
    manifest.store(&run_dir).context("writing the final manifest")?;
    drop(port);
    drop(pool);
    drop(eal);
    Ok(report::summary(&run_dir, &manifest, elapsed))
}

fn prepare_run_dir(out: &Path, force: bool) -> Result<std::path::PathBuf> {
    if out.join(trace::manifest::FILE_NAME).exists() && !force {
        bail!("{} already holds a run (manifest.json); choose another --out or pass --force", out.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    Ok(out.to_path_buf())
}

/// rss: every non-main lcore is a worker. dispatch: the first is the dispatcher.
fn assign_lcores(balance: Balance, lcores: &[u32]) -> Result<(Option<u32>, Vec<u32>)> {
    match balance {
        Balance::Rss if lcores.is_empty() => {
            bail!("no worker lcore: give EAL at least two lcores (e.g. -l 0-1); the main lcore only prints stats")
        }
        Balance::Rss => Ok((None, lcores.to_vec())),
        Balance::Dispatch if lcores.len() < 2 => {
            bail!("dispatch mode needs a dispatcher and at least one worker lcore besides the main one (e.g. -l 0-2)")
        }
        Balance::Dispatch => Ok((Some(lcores[0]), lcores[1..].to_vec())),
    }
}

fn launch_worker(lcore: u32, worker: Worker, out: Arc<Mutex<Option<Tally>>>) -> Result<()> {
    dpdk::lcore::launch(lcore, move || {
        let tally = worker.run();
        if let Ok(mut slot) = out.lock() {
            *slot = Some(tally);
        }
        0
    })
    .with_context(|| format!("launching the worker on lcore {lcore}"))
}

type DispatchHandle = (u32, Arc<Mutex<Option<DispatchTally>>>, Arc<Live>);

fn launch_dispatcher(lcore: u32, dispatcher: Dispatcher) -> Result<DispatchHandle> {
    let out = Arc::new(Mutex::new(None));
    let live = dispatcher.live.clone();
    let slot = out.clone();
    dpdk::lcore::launch(lcore, move || {
        let tally = dispatcher.run();
        if let Ok(mut s) = slot.lock() {
            *s = Some(tally);
        }
        0
    })
    .with_context(|| format!("launching the dispatcher on lcore {lcore}"))?;
    Ok((lcore, out, live))
}

/// The main lcore's loop: stats line, and the stop conditions that are about time.
fn watch(args: &Args, stop: &Stop, slots: &[CoreSlot], dispatcher: Option<&Arc<Live>>, started: Instant) {
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping exits at once, like most capture tools.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, signalled.clone());
        let _ = signal_hook::flag::register(sig, signalled.clone());
    }
    let mut stats = report::LiveLine::new(slots.len());
    let mut last_rx = (0u64, Instant::now());
    let tick = Duration::from_millis(10);
    while !stop.requested() {
        std::thread::sleep(tick);
        let lives: Vec<&Live> = slots.iter().map(|s| s.live.as_ref()).collect();
        let rx: u64 = dispatcher.map_or_else(|| lives.iter().map(|l| l.rx.load(Relaxed)).sum(), |d| d.rx.load(Relaxed));
        if rx != last_rx.0 {
            last_rx = (rx, Instant::now());
        }
        if signalled.load(Relaxed) {
            stop.request(StopReason::Signal);
        }
        if args.duration.is_some_and(|d| started.elapsed().as_secs_f64() >= d) {
            stop.request(StopReason::Duration);
        }
        if args.stop_when_idle.is_some_and(|idle| last_rx.1.elapsed().as_secs_f64() >= idle) {
            stop.request(StopReason::Idle);
        }
        if args.stats_interval > 0.0 && stats.due(args.stats_interval) {
            eprintln!("{}", stats.line(&lives, dispatcher.map(|d| d.as_ref()), started.elapsed()));
        }
    }
}
