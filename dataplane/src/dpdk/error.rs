//! [`DpdkError`]: every failure of the DPDK layer, with DPDK's own errno text.

use std::ffi::CStr;

/// A failed DPDK call or a misuse the safe layer refused.
#[derive(Debug, thiserror::Error)]
pub enum DpdkError {
    /// `rte_eal_init` failed.
    #[error(
        "DPDK EAL initialisation failed: {message} (rte_errno {errno}); EAL arguments: {args:?}. \
         Without hugepages or a NIC use `--no-huge --no-pci --file-prefix=<unique> -m 1024` \
         (not --in-memory) plus --vdev devices; PMD plugins load from {pmd_dir}"
    )]
    EalInit {
        /// `rte_errno` after the call.
        errno: i32,
        /// `rte_strerror(errno)`.
        message: String,
        /// The arguments given to the EAL.
        args: Vec<String>,
        /// The PMD plugin directory.
        pmd_dir: &'static str,
    },
    /// The EAL starts once per process; a second `Eal::init` is refused.
    #[error("the DPDK EAL was already initialised in this process (it starts once per process)")]
    EalAlreadyInitialized,
    /// `rte_eal_cleanup` was skipped because DPDK objects are still alive.
    #[error(
        "{live} DPDK port(s)/mempool(s)/ring(s) still alive at EAL shutdown: rte_eal_cleanup \
         skipped, DPDK stays up until the process exits (drop them before the Eal)"
    )]
    ObjectsAlive {
        /// Live objects (including mempools leaked because mbufs were still out).
        live: usize,
    },
    /// A DPDK object was requested without a running EAL.
    #[error("the DPDK EAL is not running (call Eal::init first; DPDK cannot restart after cleanup)")]
    EalNotRunning,
    /// A DPDK call returned an error.
    #[error("{call} failed: {message} (errno {errno})")]
    Call {
        /// The DPDK function.
        call: &'static str,
        /// Positive errno (from the return value or `rte_errno`).
        errno: i32,
        /// `rte_strerror(errno)`.
        message: String,
    },
    /// An argument the safe layer can check itself was out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// No ethdev with this id.
    #[error("no DPDK port {port_id} ({available} ports exist; check the --vdev / -a EAL arguments)")]
    NoSuchPort {
        /// Requested port id.
        port_id: u16,
        /// How many ports the EAL probed.
        available: u16,
    },
    /// Another live [`Port`](super::Port) already owns this port id.
    #[error("DPDK port {port_id} is already configured by another Port handle")]
    PortBusy {
        /// Port id.
        port_id: u16,
    },
    /// RSS was requested but the device cannot hash IP/UDP flows.
    #[error(
        "port {port_id} ({driver}) cannot spread flows by RSS: IP/UDP hash {requested:#x} requested, \
         the device supports {supported:#x}; use one RX queue per port or a NIC with RSS"
    )]
    RssUnsupported {
        /// Port id.
        port_id: u16,
        /// PMD name.
        driver: String,
        /// The hash functions asked for.
        requested: u64,
        /// `dev_info.flow_type_rss_offloads`.
        supported: u64,
    },
    /// More RX queues requested than the device has.
    #[error("port {port_id} ({driver}) has at most {max} RX queues, {requested} requested")]
    TooManyQueues {
        /// Port id.
        port_id: u16,
        /// PMD name.
        driver: String,
        /// Requested queue count.
        requested: u16,
        /// `dev_info.max_rx_queues`.
        max: u16,
    },
    /// The queue id is not configured on the port.
    #[error("RX queue {queue} does not exist on port {port_id} ({configured} configured)")]
    NoSuchQueue {
        /// Port id.
        port_id: u16,
        /// Requested queue.
        queue: u16,
        /// Configured RX queues.
        configured: u16,
    },
    /// Another [`RxQueue`](super::RxQueue) handle holds this queue (queues are single-poller).
    #[error("RX queue {queue} of port {port_id} is already held by another RxQueue handle")]
    QueueBusy {
        /// Port id.
        port_id: u16,
        /// Queue id.
        queue: u16,
    },
    /// `Port::stop` while workers still hold RX queue handles.
    #[error("port {port_id} cannot stop while {held} RX queue handle(s) are held; stop the workers first")]
    QueuesInUse {
        /// Port id.
        port_id: u16,
        /// Outstanding handles.
        held: usize,
    },
    /// An EAL call that only the main lcore may make.
    #[error("{what} must be called from the main lcore (called from lcore {current:?})")]
    NotMainLcore {
        /// The operation.
        what: &'static str,
        /// The caller's lcore id, if it has one.
        current: Option<u32>,
    },
    /// `lcore::launch` on an lcore that is not an enabled worker.
    #[error(
        "lcore {lcore} is not an enabled worker lcore (main {main}, workers {workers:?}; set them with -l/--lcores)"
    )]
    NotAWorker {
        /// Requested lcore.
        lcore: u32,
        /// The main lcore.
        main: u32,
        /// Enabled workers.
        workers: Vec<u32>,
    },
    /// The worker lcore is still running an earlier function.
    #[error("lcore {0} is busy running an earlier function")]
    LcoreBusy(u32),
}

impl DpdkError {
    /// A call that failed with `rte_errno` set (functions returning NULL or -1).
    pub(crate) fn from_rte_errno(call: &'static str) -> Self {
        // SAFETY: reading the calling thread's rte_errno has no preconditions.
        let errno = unsafe { dpdk_sys::shim_rte_errno() };
        Self::call(call, errno)
    }

    /// A call that returned `-errno`.
    pub(crate) fn from_ret(call: &'static str, ret: i32) -> Self {
        Self::call(call, ret.saturating_abs())
    }

    fn call(call: &'static str, errno: i32) -> Self {
        DpdkError::Call { call, errno, message: strerror(errno) }
    }
}

/// `rte_strerror`, copied out (it may return a per-lcore buffer).
pub(crate) fn strerror(errno: i32) -> String {
    // SAFETY: rte_strerror accepts any int and returns a NUL-terminated string (static or in a
    // thread-local buffer), which we copy before any other DPDK call can overwrite it.
    unsafe {
        let p = dpdk_sys::rte_strerror(errno);
        if p.is_null() {
            return format!("errno {errno}");
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Check a DPDK return code: negative is `-errno`.
pub(crate) fn check(call: &'static str, ret: i32) -> Result<i32, DpdkError> {
    if ret < 0 {
        Err(DpdkError::from_ret(call, ret))
    } else {
        Ok(ret)
    }
}
