//! One capture from start to finish: EAL and port set-up, shards and writer threads,
//! lcores launched, the stats loop on the main lcore, then an orderly stop that flushes
//! every buffer and finalizes the manifest.
//!
//! Everything that can fail happens before the first lcore is launched; after that a
//! [`Launched`] guard makes sure that any early return still stops and joins every lcore
//! (otherwise EAL teardown would wait forever on workers nobody told to stop).

use crate::clock::HostClock;
use crate::config::{Args, Balance};
use crate::counters::{Admission, Live, Stop, StopReason, Tally};
use crate::dispatch::{DispatchTally, Dispatcher};
use crate::dpdk::{self, Eal, Mempool, Port, PortConfig, PortInfo, Ring};
use crate::report::{self, CoreOutcome};
use crate::shard::{self, WriterReport};
use crate::worker::{Recorder, Source, Worker};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trace::manifest::{Manifest, RunStatus};
use wire::frame::ClassifyConfig;

const CHUNK_BYTES: usize = 4 << 20;

/// Captures until a stop condition; returns the human summary, or an error if the capture
/// could not start or could not write everything it received.
pub fn capture(eal_args: &[String], args: &Args) -> Result<String> {
    let signalled = register_signals();
    let run_dir = prepare_run_dir(&args.out, args.force)?;
    let eal = Eal::init(eal_args).context("initializing the DPDK EAL")?;
    // One clock for the host timestamps and the run's start and finish in the manifest, so
    // every host-stamped packet falls within the run even if the TSC rate estimate is off.
    let clock = HostClock::new(dpdk::rdtsc(), dpdk::tsc_hz());
    let (dispatcher_lcore, worker_lcores) = assign_lcores(args.balance, &eal.worker_lcores())?;
    let stop = Arc::new(Stop::default());
    // `--max-packets` is enforced by whichever stage receives from the port.
    let admission = Arc::new(Admission::new(args.max_packets));
    let mut port = open_port(args, &eal, worker_lcores.len(), dispatcher_lcore.is_some())?;
    let mut cores = prepare_cores(args, &port, &run_dir, &worker_lcores, &stop, &admission, clock)?;
    let dispatcher = match dispatcher_lcore {
        Some(lcore) => Some(prepare_dispatcher(lcore, &port, &mut cores, &stop, admission)?),
        None => None,
    };
    let mut manifest = report::initial_manifest(
        eal_args,
        args,
        &port.info,
        port.rx_queues,
        port.rss,
        &cores.slots,
        clock.unix_ns(dpdk::rdtsc()),
    );
    manifest.store(&run_dir).context("writing the initial manifest")?;

    // Start the port before any lcore polls it; packets arriving in between wait in the queue.
    port.port.start().context("starting the port")?;
    let launched = Launched::launch(cores.workers, dispatcher, stop.clone(), cores.upstream_done.clone())?;
    let started = Instant::now();
    let link_up = || port.port.link_up().unwrap_or(true);
    watch(args, &stop, &signalled, &cores.slots, launched.dispatcher_live(), started, link_up);
    let finished = launched.join();
    let elapsed = started.elapsed();
    let outcome = finish(&mut manifest, &run_dir, &mut port, cores.slots, finished, &stop, &clock)?;
    drop(port);
    drop(eal);
    let summary = report::summary(&run_dir, &manifest, elapsed);
    match outcome {
        Ok(()) => Ok(summary),
        Err(problem) => {
            print!("{summary}");
            bail!("{problem}")
        }
    }
}

/// The shard buffer of each core: whole chunks, at least two (one filling, one writing).
pub fn buffer_bytes_per_core(args: &Args) -> usize {
    ((args.buffer_mb << 20) as usize / CHUNK_BYTES).max(2) * CHUNK_BYTES
}

/// SIGINT/SIGTERM set a flag the stats loop turns into a stop; registered first so a
/// signal during start-up also ends in an orderly stop. A second signal exits at once.
fn register_signals() -> Arc<AtomicBool> {
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, signalled.clone());
        let _ = signal_hook::flag::register(sig, signalled.clone());
    }
    signalled
}

fn prepare_run_dir(out: &Path, force: bool) -> Result<PathBuf> {
    let manifest = out.join(trace::manifest::FILE_NAME);
    if manifest.exists() && !force {
        bail!("{} already holds a run (manifest.json); choose another --out or pass --force", out.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    if force {
        // A smaller run must not leave an earlier run's extra shards beside its manifest.
        for entry in std::fs::read_dir(out)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == trace::manifest::FILE_NAME || (name.starts_with("shard-") && name.ends_with(".pcapng")) {
                std::fs::remove_file(entry.path()).with_context(|| format!("removing {name}"))?;
            }
        }
    }
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

/// The configured port and the pool its queues fill.
struct OpenPort {
    port: Port,
    _pool: Mempool,
    info: PortInfo,
    rx_queues: u16,
    rss: bool,
    socket: i32,
}

/// A pcap vdev's RX queues each carry an input of their own (one `rx_pcap=` file), rather
/// than a share of one link: all of them must be read, or their frames go unread and
/// uncounted. (A `net_ring` vdev offers 16 queues whatever feeds them: not counted here.)
fn input_queues(info: &PortInfo) -> Option<u16> {
    (info.driver_name == "net_pcap").then_some(info.max_rx_queues)
}

fn open_port(args: &Args, eal: &Eal, workers: usize, dispatch: bool) -> Result<OpenPort> {
    let info =
        Port::info(args.port).with_context(|| format!("port {} (is a --vdev or NIC given to EAL?)", args.port))?;
    let inputs = input_queues(&info);
    let rx_queues = match (dispatch, inputs) {
        (true, Some(n)) => n.max(1),
        (true, None) => 1,
        (false, _) => workers as u16,
    };
    if let Some(n) = inputs.filter(|&n| !dispatch && n > rx_queues) {
        bail!(
            "{} ({}) has {n} inputs, one per RX queue, and {rx_queues} worker{} would read only {rx_queues} of them: \
             give it {n} workers, or --balance dispatch (one dispatcher reads them all)",
            info.name,
            info.driver_name,
            if rx_queues == 1 { "" } else { "s" }
        );
    }
    let rss = !dispatch && rx_queues > 1 && info.rss_offloads != 0;
    if !dispatch && rx_queues > 1 && !rss {
        tracing::warn!("{} has no RSS: each of its {rx_queues} queues is fed by the device itself", info.driver_name);
    }
    let socket = eal.socket_id();
    let ring_mbufs = if dispatch { workers as u64 * args.ring_size as u64 } else { 0 };
    let n_mbufs = rx_queues as u64 * args.rx_desc as u64 + ring_mbufs + (workers as u64 + 2) * 512 + 2048;
    let n_mbufs = u32::try_from(n_mbufs).ok().filter(|&n| n < 1 << 30).with_context(|| {
        format!("{n_mbufs} mbufs needed for {workers} rings of {} and {rx_queues} queues: too many", args.ring_size)
    })?;
    let pool = Mempool::new_pktmbuf("rs_rx_pool", n_mbufs, 256, dpdk::DEFAULT_DATA_ROOM, socket)
        .with_context(|| format!("creating a pool of {n_mbufs} mbufs (is -m large enough?)"))?;
    let config = PortConfig { rx_queues, rx_desc: args.rx_desc, rss, promiscuous: args.promiscuous };
    let port = Port::configure(args.port, &config, &pool).with_context(|| {
        format!(
            "configuring port {} ({}) with {rx_queues} RX queues; try --balance dispatch",
            args.port, info.driver_name
        )
    })?;
    Ok(OpenPort { port, _pool: pool, info, rx_queues, rss, socket })
}

/// What the main lcore keeps of each worker core.
pub struct CoreSlot {
    pub lcore: u32,
    pub queue: Option<u16>,
    pub shard: String,
    pub live: Arc<Live>,
    tally: TallySlot,
    writer: std::thread::JoinHandle<WriterReport>,
}

/// A worker ready to launch on its lcore, and where it will leave its tally.
struct ReadyWorker {
    lcore: u32,
    worker: Worker,
    tally: TallySlot,
}

type TallySlot = Arc<Mutex<Option<Tally>>>;

struct Cores {
    slots: Vec<CoreSlot>,
    workers: Vec<ReadyWorker>,
    /// Producer ends of the workers' rings, for the dispatcher.
    rings: Vec<dpdk::RingProducer>,
    upstream_done: Arc<AtomicBool>,
}

fn prepare_cores(
    args: &Args,
    port: &OpenPort,
    run_dir: &Path,
    lcores: &[u32],
    stop: &Arc<Stop>,
    admission: &Arc<Admission>,
    clock: HostClock,
) -> Result<Cores> {
    let recorder = Recorder {
        classify: ClassifyConfig { mirror_port: args.mirror_port, roce_port: args.roce_port },
        snaplen: args.snaplen as usize,
    };
    let chunks = buffer_bytes_per_core(args) / CHUNK_BYTES;
    let upstream_done = Arc::new(AtomicBool::new(false));
    let mut cores = Cores { slots: Vec::new(), workers: Vec::new(), rings: Vec::new(), upstream_done };
    for (core, &lcore) in lcores.iter().enumerate() {
        let queue = (args.balance == Balance::Rss).then_some(core as u16);
        let shard_name = format!("shard-{core:03}.pcapng");
        let if_desc = format!("{} {} core {core}", port.info.driver_name, args.balance.name());
        let header =
            trace::pcapng::shard_header(args.snaplen, &format!("port{}", args.port), &if_desc, &report::writer_name());
        let path = run_dir.join(&shard_name);
        let writer_cpu = (!args.writer_cpus.is_empty()).then(|| args.writer_cpus[core % args.writer_cpus.len()]);
        let (buffer, writer) = shard::open(&path, header, chunks, CHUNK_BYTES, stop.clone(), writer_cpu)
            .with_context(|| format!("creating {}", path.display()))?;
        let source = match queue {
            Some(q) => Source::Queue { queue: port.port.rx_queue(q)?, admission: admission.clone() },
            None => {
                let ring = Ring::new(&format!("rs_ring_{core}"), args.ring_size, port.socket)
                    .with_context(|| format!("creating a ring of {} for core {core}", args.ring_size))?;
                let (producer, consumer) = ring.split();
                cores.rings.push(producer);
                Source::Ring { ring: consumer, upstream_done: cores.upstream_done.clone() }
            }
        };
        let live = Arc::new(Live::default());
        let tally = Arc::new(Mutex::new(None));
        let worker = Worker {
            source,
            buffer,
            recorder,
            clock,
            flush_after_ticks: clock.ticks(0.2),
            pending_since: None,
            stop: stop.clone(),
            live: live.clone(),
        };
        cores.workers.push(ReadyWorker { lcore, worker, tally: tally.clone() });
        cores.slots.push(CoreSlot { lcore, queue, shard: shard_name, live, tally, writer });
    }
    Ok(cores)
}

fn prepare_dispatcher(
    lcore: u32,
    port: &OpenPort,
    cores: &mut Cores,
    stop: &Arc<Stop>,
    admission: Arc<Admission>,
) -> Result<(u32, Dispatcher)> {
    let dispatcher = Dispatcher {
        queues: (0..port.rx_queues).map(|q| port.port.rx_queue(q)).collect::<Result<_, _>>()?,
        rings: std::mem::take(&mut cores.rings),
        admission,
        stop: stop.clone(),
        done: cores.upstream_done.clone(),
        live: Arc::new(Live::default()),
    };
    Ok((lcore, dispatcher))
}

/// Lcores that are running. Dropping it without [`Launched::join`] (an error on the way)
/// stops them and waits for them, so EAL teardown never hangs.
struct Launched {
    stop: Arc<Stop>,
    upstream_done: Arc<AtomicBool>,
    dispatcher: Option<LaunchedDispatcher>,
    joined: bool,
}

struct LaunchedDispatcher {
    lcore: u32,
    /// Filled by the dispatcher when it returns.
    tally: Arc<Mutex<Option<DispatchTally>>>,
    live: Arc<Live>,
}

/// What the lcores left behind.
struct Finished {
    exits: Vec<(u32, i32)>,
    dispatcher: Option<(u32, DispatchTally)>,
}

impl Launched {
    fn launch(
        workers: Vec<ReadyWorker>,
        dispatcher: Option<(u32, Dispatcher)>,
        stop: Arc<Stop>,
        upstream_done: Arc<AtomicBool>,
    ) -> Result<Launched> {
        let mut launched = Launched { stop, upstream_done, dispatcher: None, joined: false };
        for ReadyWorker { lcore, worker, tally: slot } in workers {
            let stop = launched.stop.clone();
            run_on(lcore, stop, move || {
                let tally = worker.run();
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(tally);
            })
            .with_context(|| format!("launching the worker on lcore {lcore}"))?;
        }
        if let Some((lcore, dispatcher)) = dispatcher {
            let out = Arc::new(Mutex::new(None));
            let (slot, live) = (out.clone(), dispatcher.live.clone());
            run_on(lcore, launched.stop.clone(), move || {
                let tally = dispatcher.run();
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(tally);
            })
            .with_context(|| format!("launching the dispatcher on lcore {lcore}"))?;
            launched.dispatcher = Some(LaunchedDispatcher { lcore, tally: out, live });
        }
        Ok(launched)
    }

    fn dispatcher_live(&self) -> Option<&Live> {
        self.dispatcher.as_ref().map(|d| d.live.as_ref())
    }

    fn join(mut self) -> Finished {
        self.joined = true;
        let exits = dpdk::lcore::wait_all();
        let dispatcher = self
            .dispatcher
            .take()
            .map(|d| (d.lcore, d.tally.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default()));
        Finished { exits, dispatcher }
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        if !self.joined {
            self.stop.request(StopReason::LcoreFailed);
            self.upstream_done.store(true, Ordering::Release);
            dpdk::lcore::wait_all();
        }
    }
}

/// Launches `job` on `lcore`; if it panics (debug builds unwind), every other lcore is told
/// to stop too, so the capture ends in an orderly way instead of running on short a core.
fn run_on(lcore: u32, stop: Arc<Stop>, job: impl FnOnce() + Send + 'static) -> Result<(), dpdk::DpdkError> {
    dpdk::lcore::launch(lcore, move || {
        let guard = StopOnPanic(stop);
        job();
        std::mem::forget(guard);
        0
    })
}

struct StopOnPanic(Arc<Stop>);

impl Drop for StopOnPanic {
    fn drop(&mut self) {
        self.0.request(StopReason::LcoreFailed);
    }
}

/// The main lcore's loop: stats line, and the stop conditions that are about time.
/// `--stop-when-idle` counts from the first packet or, before that, from the moment the link
/// is up: a memif peer can take seconds to connect (zero-copy maps all our memory first).
fn watch(
    args: &Args,
    stop: &Stop,
    signalled: &AtomicBool,
    slots: &[CoreSlot],
    dispatcher: Option<&Live>,
    t0: Instant,
    link_up: impl Fn() -> bool,
) {
    let mut stats = report::LiveLine::new(slots.len());
    let lives: Vec<&Live> = slots.iter().map(|s| s.live.as_ref()).collect();
    let mut last_rx = (0u64, Instant::now());
    while !stop.requested() {
        std::thread::sleep(Duration::from_millis(10));
        let rx: u64 = match dispatcher {
            Some(d) => d.rx.load(Ordering::Relaxed),
            None => lives.iter().map(|l| l.rx.load(Ordering::Relaxed)).sum(),
        };
        if rx != last_rx.0 || (rx == 0 && !link_up()) {
            last_rx = (rx, Instant::now());
        }
        if signalled.load(Ordering::Relaxed) {
            stop.request(StopReason::Signal);
        }
        if args.duration.is_some_and(|d| t0.elapsed().as_secs_f64() >= d) {
            stop.request(StopReason::Duration);
        }
        if args.stop_when_idle.is_some_and(|idle| last_rx.1.elapsed().as_secs_f64() >= idle) {
            stop.request(StopReason::Idle);
        }
        if args.stats_interval > 0.0 && stats.due(args.stats_interval) {
            eprintln!("{}", stats.line(&lives, dispatcher, t0.elapsed()));
        }
    }
}

/// Collects tallies and writer reports, reads the NIC counters and writes the final
/// manifest. The inner result says whether every received packet reached the disk.
fn finish(
    manifest: &mut Manifest,
    run_dir: &Path,
    port: &mut OpenPort,
    slots: Vec<CoreSlot>,
    finished: Finished,
    stop: &Stop,
    clock: &HostClock,
) -> Result<Result<(), String>> {
    // Counters before stopping: some PMDs (memif) reset them when the port stops.
    let port_stats = port.port.stats().unwrap_or_else(|e| {
        tracing::error!("reading port counters: {e}");
        Default::default()
    });
    if let Err(e) = port.port.stop() {
        tracing::warn!("stopping the port: {e}");
    }
    let outcomes: Vec<CoreOutcome> = slots
        .into_iter()
        .map(|slot| {
            let tally = slot.tally.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default();
            let writer = slot.writer.join().unwrap_or_else(|_| WriterReport {
                error: Some("writer thread panicked".into()),
                ..Default::default()
            });
            CoreOutcome { tally, writer }
        })
        .collect();
    if let Some((lcore, tally)) = &finished.dispatcher {
        manifest.dispatcher = Some(report::dispatcher_record(*lcore, tally));
    }
    report::finish(manifest, &outcomes, &port_stats, stop.reason(), clock.unix_ns(dpdk::rdtsc()));
    manifest.status = RunStatus::Complete;
    manifest.store(run_dir).context("writing the final manifest")?;

    let failed: Vec<String> =
        finished.exits.iter().filter(|(_, rc)| *rc != 0).map(|(l, rc)| format!("lcore {l} exited {rc}")).collect();
    let write_errors: Vec<String> = outcomes.iter().filter_map(|o| o.writer.error.clone()).collect();
    Ok(match (failed.is_empty(), write_errors.is_empty()) {
        (true, true) => Ok(()),
        _ => Err(format!("the capture is incomplete: {}", [failed, write_errors].concat().join("; "))),
    })
}
