//! [`Eal`]: DPDK's Environment Abstraction Layer, started once per process.
//!
//! Without a NIC or hugepages (tests, CI, the emulator) the EAL needs
//! `--no-huge --no-pci --file-prefix=<unique> -m 1024` plus `--vdev` devices; see
//! [`Eal::no_huge_args`]. In DPDK 22.11 `--no-huge` must not be combined with `--in-memory`.
//! PMD plugins are found without `-d`: a shared librte_eal loads its built-in plugin
//! directory ([`PMD_DIR`](super::PMD_DIR)).

use std::ffi::{c_char, c_int, CString};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use super::error::{check, strerror};
use super::{DpdkError, Result};

const UNINIT: u8 = 0;
const INITIALIZING: u8 = 1;
const RUNNING: u8 = 2;
const FINISHED: u8 = 3;

static STATE: AtomicU8 = AtomicU8::new(UNINIT);

/// Live ports, mempools and rings: `rte_eal_cleanup` must not run while any exists.
static LIVE_OBJECTS: AtomicUsize = AtomicUsize::new(0);

/// The program name given to the EAL as `argv[0]` when the caller gives none.
const ARGV0: &str = "rocescope";

/// Proof that the EAL is running, held by every port, mempool and ring (and briefly by
/// free-standing calls such as `Port::info`): `rte_eal_cleanup` does not run while any exists.
///
/// Acquiring counts first and checks the state second, and [`Eal`]'s drop sets the state
/// first and checks the count second (both `SeqCst`), so either the new object sees the EAL
/// finished, or the drop sees the object and skips cleanup.
#[derive(Debug)]
pub(crate) struct LiveToken(());

impl LiveToken {
    /// A token, or [`DpdkError::EalNotRunning`].
    pub(crate) fn acquire() -> Result<Self> {
        LIVE_OBJECTS.fetch_add(1, Ordering::SeqCst);
        let token = LiveToken(());
        if STATE.load(Ordering::SeqCst) == RUNNING {
            Ok(token)
        } else {
            Err(DpdkError::EalNotRunning)
        }
    }
}

impl Drop for LiveToken {
    fn drop(&mut self) {
        LIVE_OBJECTS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The running EAL. Create it first, on the thread that becomes the main lcore; drop it last.
///
/// `Eal` is neither `Send` nor `Sync`: DPDK requires `rte_eal_cleanup` (its drop) to run on
/// the main lcore, which is the thread that called `rte_eal_init`.
#[derive(Debug)]
pub struct Eal {
    // rte_eal_init permutes argv and the EAL may keep pointers into it: both live as long as
    // the EAL does.
    _args: Vec<CString>,
    _argv: Vec<*mut c_char>,
    torn_down: bool,
    _not_send: PhantomData<*mut ()>,
}

impl Eal {
    /// Start the EAL with `args`, the EAL's command line. `args[0]` is the program name when
    /// it does not start with `-` (as `std::env::args()` gives it); otherwise — a list of EAL
    /// flags only — the program name `rocescope` is prepended. (The EAL takes no positional
    /// arguments, so the two cases cannot be confused.) Application arguments, and `--`
    /// before them, do not belong here.
    ///
    /// The calling thread becomes the main lcore. Fails with
    /// [`DpdkError::EalAlreadyInitialized`] on a second call in the same process (also after a
    /// previous `Eal` was dropped, or a failed init: DPDK cannot restart).
    pub fn init<S: AsRef<str>>(args: &[S]) -> Result<Eal> {
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_owned()).collect();
        let has_program = args.first().is_some_and(|a| !a.starts_with('-'));
        let argv0 = (!has_program).then_some(ARGV0);
        let mut owned = Vec::with_capacity(args.len() + 1);
        for a in argv0.into_iter().chain(args.iter().map(String::as_str)) {
            owned.push(
                CString::new(a)
                    .map_err(|_| DpdkError::InvalidArgument(format!("EAL argument {a:?} contains a NUL byte")))?,
            );
        }
        if STATE.compare_exchange(UNINIT, INITIALIZING, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return Err(DpdkError::EalAlreadyInitialized);
        }
        let mut argv: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr().cast_mut()).collect();
        argv.push(std::ptr::null_mut());
        let argc = (argv.len() - 1) as c_int;
        // SAFETY: argv holds argc valid NUL-terminated strings followed by NULL, all owned by
        // `owned`/`argv`, which the returned Eal keeps alive for as long as the EAL runs. The
        // STATE guard ensures this is the process's only rte_eal_init call.
        let ret = unsafe { dpdk_sys::rte_eal_init(argc, argv.as_mut_ptr()) };
        if ret < 0 {
            // SAFETY: reading rte_errno of this thread has no preconditions.
            let errno = unsafe { dpdk_sys::shim_rte_errno() };
            // The EAL cannot be initialised again after a failure either.
            STATE.store(FINISHED, Ordering::SeqCst);
            return Err(DpdkError::EalInit { errno, message: strerror(errno), args, pmd_dir: super::PMD_DIR });
        }
        STATE.store(RUNNING, Ordering::SeqCst);
        tracing::debug!(?args, "DPDK EAL initialised");
        Ok(Eal { _args: owned, _argv: argv, torn_down: false, _not_send: PhantomData })
    }

    /// EAL flags for a machine without NIC or hugepages: `--no-huge --no-pci
    /// --file-prefix=<file_prefix> -m <mem_mb>`. Append `-l`/`--lcores` and `--vdev` flags.
    /// `file_prefix` must be unique among concurrently running DPDK processes.
    pub fn no_huge_args(file_prefix: &str, mem_mb: u32) -> Vec<String> {
        vec![
            "--no-huge".into(),
            "--no-pci".into(),
            format!("--file-prefix={file_prefix}"),
            "-m".into(),
            mem_mb.to_string(),
        ]
    }

    /// The main lcore's id (the thread that called [`Eal::init`]).
    pub fn main_lcore(&self) -> u32 {
        // SAFETY: the EAL is running (self exists).
        unsafe { dpdk_sys::rte_get_main_lcore() }
    }

    /// Enabled worker lcores (all lcores but the main one), in id order.
    pub fn worker_lcores(&self) -> Vec<u32> {
        worker_lcores()
    }

    /// Number of enabled lcores, main included.
    pub fn lcore_count(&self) -> u32 {
        // SAFETY: the EAL is running.
        unsafe { dpdk_sys::rte_lcore_count() }
    }

    /// TSC ticks per second, as calibrated by the EAL.
    pub fn tsc_hz(&self) -> u64 {
        tsc_hz()
    }

    /// The CPU time-stamp counter (see [`lcore::rdtsc`](super::lcore::rdtsc)).
    pub fn rdtsc() -> u64 {
        super::lcore::rdtsc()
    }

    /// NUMA socket of the calling thread (see [`lcore::socket_id`](super::lcore::socket_id)),
    /// ready to pass to [`Mempool::new_pktmbuf`](super::Mempool::new_pktmbuf).
    pub fn socket_id(&self) -> i32 {
        super::lcore::socket_id()
    }
}

/// TSC ticks per second as calibrated by `rte_eal_init`; 0 before the EAL has started.
pub fn tsc_hz() -> u64 {
    // SAFETY: rte_get_tsc_hz reads a global the EAL sets once during init; it has no
    // preconditions (it returns 0 before init).
    unsafe { dpdk_sys::rte_get_tsc_hz() }
}

/// Enabled worker lcores, in id order. Empty when the EAL is not running.
pub(crate) fn worker_lcores() -> Vec<u32> {
    let Ok(_eal) = LiveToken::acquire() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let max = dpdk_sys::RTE_MAX_LCORE;
    // SAFETY: the EAL is running; rte_get_next_lcore(-1 as unsigned, skip_main=1, wrap=0)
    // iterates enabled lcores and returns RTE_MAX_LCORE when done.
    let mut i = unsafe { dpdk_sys::rte_get_next_lcore(u32::MAX, 1, 0) };
    while i < max {
        out.push(i);
        // SAFETY: as above, continuing from a valid lcore id.
        i = unsafe { dpdk_sys::rte_get_next_lcore(i, 1, 0) };
    }
    out
}

impl Eal {
    /// Shut DPDK down now: wait for every worker lcore, then `rte_eal_cleanup()`. Fails with
    /// [`DpdkError::ObjectsAlive`] (and leaves DPDK up until exit) if a port, mempool or ring
    /// still exists. Dropping an `Eal` does the same, logging instead of returning the error.
    pub fn shutdown(mut self) -> Result<()> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.torn_down, true) {
            return Ok(());
        }
        // SAFETY: the EAL is running and this is the main lcore (Eal is !Send); waiting for
        // workers has no other precondition.
        unsafe { dpdk_sys::rte_eal_mp_wait_lcore() };
        super::lcore::forget_launched();
        STATE.store(FINISHED, Ordering::SeqCst);
        let live = LIVE_OBJECTS.load(Ordering::SeqCst);
        if live > 0 {
            return Err(DpdkError::ObjectsAlive { live });
        }
        // SAFETY: on the main lcore, all workers have returned, and no DPDK object owned by
        // the safe layer is alive (LIVE_OBJECTS == 0) or can be created (STATE == FINISHED).
        let ret = unsafe { dpdk_sys::rte_eal_cleanup() };
        check("rte_eal_cleanup", ret).map(drop)
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            tracing::warn!("{e}");
        }
    }
}
