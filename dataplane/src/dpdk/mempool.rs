//! [`Mempool`]: a pool of packet mbufs (`rte_pktmbuf_pool_create`).

use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::Arc;

use super::eal::LiveToken;
use super::{DpdkError, Result};

/// DPDK's default mbuf data room: 2048 bytes of data after a 128-byte headroom.
pub const DEFAULT_DATA_ROOM: u16 = dpdk_sys::RTE_MBUF_DEFAULT_BUF_SIZE as u16;

/// Headroom DPDK reserves in front of received data, included in the data room.
pub const HEADROOM: u16 = dpdk_sys::RTE_PKTMBUF_HEADROOM as u16;

/// A pktmbuf pool. Cheap to clone (shared handle); the pool is freed when the last handle is
/// dropped — and every [`Port`](super::Port) using it holds a handle, so a pool always outlives
/// the ports that fill it. If mbufs are still out when the last handle goes (held in an
/// [`MbufBurst`](super::MbufBurst) or a [`Ring`](super::Ring)), the pool is leaked with a
/// warning rather than freed under them.
#[derive(Clone, Debug)]
pub struct Mempool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    ptr: NonNull<dpdk_sys::rte_mempool>,
    name: String,
    size: u32,
    data_room: u16,
    live: Option<LiveToken>,
}

// SAFETY: an rte_mempool created by rte_pktmbuf_pool_create uses the default "ring_mp_mc"
// ops, so get/put are safe from any number of threads; the Rust side only reads immutable
// fields (name, size) and calls thread-safe counters.
unsafe impl Send for Inner {}
// SAFETY: as above.
unsafe impl Sync for Inner {}

impl Mempool {
    /// Create a pool of `n_mbufs` packet mbufs named `name` (unique per process, at most 25
    /// bytes), with a per-lcore cache of `cache` mbufs (0 disables it; at most 512 and n/1.5),
    /// each with `data_room` bytes of buffer *including* the [`HEADROOM`] (use
    /// [`DEFAULT_DATA_ROOM`] for standard frames), on NUMA `socket`
    /// ([`SOCKET_ID_ANY`](super::SOCKET_ID_ANY) for any). `n_mbufs = 2^q - 1` uses memory best.
    pub fn new_pktmbuf(name: &str, n_mbufs: u32, cache: u32, data_room: u16, socket: i32) -> Result<Mempool> {
        let live = LiveToken::acquire()?;
        let cname = CString::new(name)
            .map_err(|_| DpdkError::InvalidArgument(format!("mempool name {name:?} contains NUL")))?;
        if data_room <= HEADROOM {
            return Err(DpdkError::InvalidArgument(format!(
                "mempool {name:?}: data room {data_room} must exceed the {HEADROOM}-byte headroom"
            )));
        }
        // SAFETY: the EAL is running (token held); `cname` is a valid C string for the call.
        let ptr = unsafe { dpdk_sys::rte_pktmbuf_pool_create(cname.as_ptr(), n_mbufs, cache, 0, data_room, socket) };
        let ptr = NonNull::new(ptr).ok_or_else(|| DpdkError::from_rte_errno("rte_pktmbuf_pool_create"))?;
        Ok(Mempool {
            inner: Arc::new(Inner { ptr, name: name.to_owned(), size: n_mbufs, data_room, live: Some(live) }),
        })
    }

    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Number of mbufs the pool was created with.
    pub fn size(&self) -> u32 {
        self.inner.size
    }

    /// Data room of each mbuf, headroom included.
    pub fn data_room(&self) -> u16 {
        self.inner.data_room
    }

    /// Mbufs currently free (in the pool or in per-lcore caches).
    pub fn available(&self) -> u32 {
        // SAFETY: the pool is live while `self` exists; the count is a thread-safe read.
        unsafe { dpdk_sys::rte_mempool_avail_count(self.inner.ptr.as_ptr()) }
    }

    /// Mbufs currently allocated (held by PMD descriptors, bursts, rings or the application).
    pub fn in_use(&self) -> u32 {
        // SAFETY: as for `available`.
        unsafe { dpdk_sys::rte_mempool_in_use_count(self.inner.ptr.as_ptr()) }
    }

    /// The raw pool, for FFI calls the safe layer does not wrap. It stays valid while `self`
    /// (or any clone) lives.
    pub fn as_ptr(&self) -> *mut dpdk_sys::rte_mempool {
        self.inner.ptr.as_ptr()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // SAFETY: the pool is still live (we are its last handle).
        let in_use = unsafe { dpdk_sys::rte_mempool_in_use_count(self.ptr.as_ptr()) };
        if in_use > 0 {
            // Besides a burst or ring not freed, a PMD that keeps its RX ring's mbufs after
            // close does this: DPDK's net_memif with zero-copy=yes (its rx_queue_release
            // frees the queue, not the ring_size mbufs it refilled it with). Harmless at exit.
            tracing::warn!(
                pool = %self.name,
                in_use,
                "mempool dropped while mbufs are still out (a burst or ring not freed, or a PMD \
                 that keeps its RX ring's mbufs after close, e.g. net_memif zero-copy): leaking it \
                 (and keeping DPDK up)"
            );
            // Keep the live count raised so rte_eal_cleanup never frees the leaked pool.
            std::mem::forget(self.live.take());
            return;
        }
        // SAFETY: no port uses the pool (ports hold a handle), no mbuf is out, and this is the
        // last handle, so nothing can reach the pool after this call.
        unsafe { dpdk_sys::rte_mempool_free(self.ptr.as_ptr()) };
    }
}
