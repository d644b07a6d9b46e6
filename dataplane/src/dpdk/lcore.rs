//! EAL lcores: run closures on worker lcores, identify the current lcore, read the TSC.
//!
//! Worker lcores are EAL threads pinned to the cores given with `-l`/`--lcores`. The main
//! lcore (the thread that called [`Eal::init`](super::Eal::init)) launches a closure on each
//! worker with [`launch`] and collects their return values with [`wait_all`]. Threads that
//! are not lcores may still touch mbufs and mempools after [`register_thread`].

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use super::eal::{worker_lcores, LiveToken};
use super::{DpdkError, Result};

const MAX_LCORE: usize = dpdk_sys::RTE_MAX_LCORE as usize;

/// Lcores launched and not yet waited for.
static LAUNCHED: [AtomicBool; MAX_LCORE] = [const { AtomicBool::new(false) }; MAX_LCORE];

type Job = Box<dyn FnOnce() -> i32 + Send + 'static>;

/// Run `f` on worker lcore `lcore_id`. Must be called from the main lcore.
///
/// The closure's return value is collected by [`wait_all`] (or [`wait`]). A panic inside `f`
/// does not unwind into DPDK's C code: it is caught, logged, and the lcore returns -1. (With
/// `panic = "abort"`, as in release builds, the process aborts instead.)
pub fn launch(lcore_id: u32, f: impl FnOnce() -> i32 + Send + 'static) -> Result<()> {
    let _eal = LiveToken::acquire()?;
    // SAFETY: the EAL is running (token held).
    let main = unsafe { dpdk_sys::rte_get_main_lcore() };
    let current = current();
    if current != Some(main) {
        return Err(DpdkError::NotMainLcore { what: "lcore::launch", current });
    }
    let workers = worker_lcores();
    if !workers.contains(&lcore_id) {
        return Err(DpdkError::NotAWorker { lcore: lcore_id, main, workers });
    }
    let job: Box<Job> = Box::new(Box::new(f));
    let arg = Box::into_raw(job).cast::<c_void>();
    // SAFETY: we are on the main lcore of a running EAL and lcore_id is an enabled worker;
    // `trampoline` has the lcore_function_t signature and takes ownership of `arg` (a leaked
    // Box<Job>) exactly once when it runs.
    let ret = unsafe { dpdk_sys::rte_eal_remote_launch(Some(trampoline), arg, lcore_id) };
    if ret < 0 {
        // SAFETY: the launch failed, so the trampoline will never run and `arg` is still the
        // unique owner of the Box we leaked above.
        drop(unsafe { Box::from_raw(arg.cast::<Job>()) });
        if ret == -libc::EBUSY {
            return Err(DpdkError::LcoreBusy(lcore_id));
        }
        return Err(DpdkError::from_ret("rte_eal_remote_launch", ret));
    }
    LAUNCHED[lcore_id as usize].store(true, Ordering::Release);
    Ok(())
}

extern "C" fn trampoline(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the Box<Job> leaked by `launch`, handed to exactly one trampoline call.
    let job = unsafe { Box::from_raw(arg.cast::<Job>()) };
    match catch_unwind(AssertUnwindSafe(job)) {
        Ok(ret) => ret,
        Err(payload) => {
            tracing::error!(
                lcore = ?current(),
                "panic on DPDK worker lcore: {}",
                panic_message(&payload)
            );
            -1
        }
    }
}

fn panic_message(payload: &Box<dyn Any + Send>) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "non-string panic payload"
    }
}

/// Wait for every lcore launched with [`launch`] and not yet waited for; returns
/// `(lcore_id, return value)` in lcore order (-1 for a closure that panicked). Returns an
/// empty list when nothing was launched or the EAL is not running.
pub fn wait_all() -> Vec<(u32, i32)> {
    let Ok(_eal) = LiveToken::acquire() else {
        return Vec::new();
    };
    (0..MAX_LCORE as u32).filter_map(wait_launched).collect()
}

/// Wait for one launched lcore; `None` if it was not launched (or already waited for).
pub fn wait(lcore_id: u32) -> Option<i32> {
    let _eal = LiveToken::acquire().ok()?;
    if lcore_id as usize >= MAX_LCORE {
        return None;
    }
    wait_launched(lcore_id).map(|(_, r)| r)
}

fn wait_launched(lcore_id: u32) -> Option<(u32, i32)> {
    if !LAUNCHED[lcore_id as usize].swap(false, Ordering::AcqRel) {
        return None;
    }
    // SAFETY: the EAL is running (callers hold a token) and lcore_id < RTE_MAX_LCORE is a
    // worker we launched; rte_eal_wait_lcore spins until it is idle.
    let ret = unsafe { dpdk_sys::rte_eal_wait_lcore(lcore_id) };
    Some((lcore_id, ret))
}

/// Called by `Eal`'s drop after `rte_eal_mp_wait_lcore`.
pub(crate) fn forget_launched() {
    for l in &LAUNCHED {
        l.store(false, Ordering::Release);
    }
}

/// The calling thread's lcore id, or `None` for a thread that is neither an EAL lcore nor
/// registered with [`register_thread`].
pub fn current() -> Option<u32> {
    // SAFETY: reads a thread-local; no preconditions.
    let id = unsafe { dpdk_sys::shim_rte_lcore_id() };
    (id != dpdk_sys::LCORE_ID_ANY).then_some(id)
}

/// NUMA socket of the calling thread (`rte_socket_id()`): 0 on single-socket machines,
/// [`SOCKET_ID_ANY`](super::SOCKET_ID_ANY) (-1) for a thread not tied to one socket.
pub fn socket_id() -> i32 {
    // SAFETY: reads a thread-local; no preconditions.
    let id = unsafe { dpdk_sys::rte_socket_id() };
    i32::try_from(id).unwrap_or(dpdk_sys::SOCKET_ID_ANY)
}

/// The CPU time-stamp counter (`rte_rdtsc()`); convert with [`Eal::tsc_hz`](super::Eal::tsc_hz).
#[inline]
pub fn rdtsc() -> u64 {
    // The intrinsic inlines to one instruction; the shim costs a call per burst and idle poll.
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC has no preconditions and is available on every x86_64 CPU.
    return unsafe { core::arch::x86_64::_rdtsc() };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: reads the TSC; no preconditions.
    return unsafe { dpdk_sys::shim_rte_rdtsc() };
}

/// A spin-wait hint (`rte_pause()`), for idle polling loops.
#[inline]
pub fn pause() {
    // SAFETY: a CPU hint instruction; no preconditions.
    unsafe { dpdk_sys::shim_rte_pause() }
}

/// A non-EAL thread registered with the EAL (`rte_thread_register`), so it gets an lcore id
/// and per-lcore mempool caches. Unregisters on drop; not `Send` (registration is per thread).
#[derive(Debug)]
pub struct RegisteredThread {
    lcore_id: u32,
    _eal: LiveToken,
    _not_send: std::marker::PhantomData<*mut ()>,
}

impl RegisteredThread {
    /// The lcore id the EAL assigned.
    pub fn lcore_id(&self) -> u32 {
        self.lcore_id
    }
}

/// Register the calling (non-EAL) thread before it touches mbufs or mempools, e.g. a thread
/// pinned with `core_affinity`. Fails when no lcore id is free (see `--lcores`).
pub fn register_thread() -> Result<RegisteredThread> {
    let eal = LiveToken::acquire()?;
    // SAFETY: the EAL is running; registering the calling thread has no other precondition.
    let ret = unsafe { dpdk_sys::rte_thread_register() };
    if ret < 0 {
        return Err(DpdkError::from_rte_errno("rte_thread_register"));
    }
    Ok(RegisteredThread {
        lcore_id: current().unwrap_or(dpdk_sys::LCORE_ID_ANY),
        _eal: eal,
        _not_send: std::marker::PhantomData,
    })
}

impl Drop for RegisteredThread {
    fn drop(&mut self) {
        // SAFETY: this thread registered itself (RegisteredThread is !Send, so we are on it).
        unsafe { dpdk_sys::rte_thread_unregister() };
    }
}
