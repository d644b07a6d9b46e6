//! [`Ring`]: a single-producer/single-consumer `rte_ring` of mbuf pointers, for handing
//! packets from one lcore to another.
//!
//! The SPSC discipline is enforced by types: [`Ring::split`] gives one [`RingProducer`] and one
//! [`RingConsumer`]; each is `Send` (move it to its lcore) but neither is `Clone`, and both
//! operations take `&mut self`, so at most one thread enqueues and one dequeues.

use std::ffi::{c_void, CString};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use super::eal::LiveToken;
use super::mbuf::{MbufBurst, BURST_SIZE};
use super::{DpdkError, Result};

/// A new ring, before it is split into its two ends.
#[derive(Debug)]
pub struct Ring {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    ptr: NonNull<dpdk_sys::rte_ring>,
    name: String,
    capacity: u32,
    _live: LiveToken,
}

// SAFETY: the ring is created RING_F_SP_ENQ | RING_F_SC_DEQ and only the unique producer
// enqueues and the unique consumer dequeues (enforced by the non-Clone, &mut halves); counts
// are atomic reads; drop runs once, when neither half exists.
unsafe impl Send for Inner {}
// SAFETY: as above.
unsafe impl Sync for Inner {}

impl Ring {
    /// Create a ring named `name` (unique per process, at most 29 bytes) holding up to `size`
    /// mbufs (exactly; any size from 1 to 2^28 - 1) on NUMA `socket`
    /// ([`SOCKET_ID_ANY`](super::SOCKET_ID_ANY) for any).
    pub fn new(name: &str, size: u32, socket: i32) -> Result<Ring> {
        let live = LiveToken::acquire()?;
        let cname =
            CString::new(name).map_err(|_| DpdkError::InvalidArgument(format!("ring name {name:?} contains NUL")))?;
        if size == 0 {
            return Err(DpdkError::InvalidArgument(format!("ring {name:?}: size 0")));
        }
        let flags = dpdk_sys::RING_F_SP_ENQ | dpdk_sys::RING_F_SC_DEQ | dpdk_sys::RING_F_EXACT_SZ;
        // SAFETY: the EAL is running (token held); `cname` is a valid C string for the call.
        let ptr = unsafe { dpdk_sys::rte_ring_create(cname.as_ptr(), size, socket, flags) };
        let ptr = NonNull::new(ptr).ok_or_else(|| DpdkError::from_rte_errno("rte_ring_create"))?;
        Ok(Ring { inner: Arc::new(Inner { ptr, name: name.to_owned(), capacity: size, _live: live }) })
    }

    /// The ring's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Maximum mbufs in flight.
    pub fn capacity(&self) -> u32 {
        self.inner.capacity
    }

    /// The raw ring (for a PMD's TX queue that is never used; see `Port::from_rings`).
    pub(crate) fn as_ptr(&self) -> *mut dpdk_sys::rte_ring {
        self.inner.ptr.as_ptr()
    }

    /// Split into the producer and consumer ends. The ring (and any mbufs still in it, which
    /// are freed) goes away when both ends are dropped.
    pub fn split(self) -> (RingProducer, RingConsumer) {
        (RingProducer { inner: Arc::clone(&self.inner) }, RingConsumer { inner: self.inner })
    }
}

impl Inner {
    fn count(&self) -> u32 {
        // SAFETY: the ring is live while `self` is; the count is an atomic read.
        unsafe { dpdk_sys::shim_rte_ring_count(self.ptr.as_ptr()) }
    }
}

/// The enqueue end of a [`Ring`]. `Send`, not `Clone`.
#[derive(Debug)]
pub struct RingProducer {
    inner: Arc<Inner>,
}

impl RingProducer {
    /// Move as many mbufs from the front of `burst` into the ring as fit (one FFI call) and
    /// return how many moved. The ones that did not fit stay in `burst`, moved to its front:
    /// the caller frees them ([`MbufBurst::free_all`]) and counts a drop, or retries.
    #[inline]
    pub fn enqueue_burst(&mut self, burst: &mut MbufBurst) -> usize {
        if burst.is_empty() {
            return 0;
        }
        // SAFETY: we are the ring's only producer (&mut self of the unique RingProducer); the
        // first burst.len() entries are valid owned mbuf pointers; the ring takes ownership of
        // the first `n`, which we then forget from the burst.
        let n = unsafe {
            dpdk_sys::shim_rte_ring_sp_enqueue_burst(
                self.inner.ptr.as_ptr(),
                burst.held_ptr().cast::<*mut c_void>(),
                burst.len() as u32,
                ptr::null_mut(),
            )
        } as usize;
        burst.forget_front(n);
        n
    }

    /// Free slots.
    pub fn free_count(&self) -> u32 {
        self.inner.capacity.saturating_sub(self.inner.count())
    }
}

/// The dequeue end of a [`Ring`]. `Send`, not `Clone`.
#[derive(Debug)]
pub struct RingConsumer {
    inner: Arc<Inner>,
}

impl RingConsumer {
    /// Append up to `burst.spare()` mbufs from the ring to `burst` (one FFI call); returns
    /// how many were added.
    #[inline]
    pub fn dequeue_burst(&mut self, burst: &mut MbufBurst) -> usize {
        let (slots, room) = burst.spare_ptr();
        if room == 0 {
            return 0;
        }
        // SAFETY: we are the ring's only consumer (&mut self of the unique RingConsumer);
        // `slots` is valid for `room` writes; every pointer in the ring is an owned mbuf.
        let n = unsafe {
            dpdk_sys::shim_rte_ring_sc_dequeue_burst(
                self.inner.ptr.as_ptr(),
                slots.cast::<*mut c_void>(),
                room as u32,
                ptr::null_mut(),
            )
        } as usize;
        // SAFETY: the ring wrote `n <= room` owned mbufs into the spare slots.
        unsafe { burst.assume_filled(n) };
        n
    }

    /// Mbufs waiting in the ring.
    pub fn count(&self) -> u32 {
        self.inner.count()
    }

    /// The raw ring, for handing this consumer end to a PMD (`Port::from_rings`).
    pub(crate) fn as_ptr(&self) -> *mut dpdk_sys::rte_ring {
        self.inner.ptr.as_ptr()
    }

    /// No mbuf is waiting.
    pub fn is_empty(&self) -> bool {
        self.inner.count() == 0
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let mut burst = MbufBurst::new();
        let mut leftover = 0;
        loop {
            let (slots, room) = burst.spare_ptr();
            // SAFETY: neither end exists any more, so this is the only thread touching the
            // ring; `slots` is valid for `room` writes.
            let n = unsafe {
                dpdk_sys::shim_rte_ring_sc_dequeue_burst(
                    self.ptr.as_ptr(),
                    slots.cast::<*mut c_void>(),
                    room as u32,
                    ptr::null_mut(),
                )
            } as usize;
            // SAFETY: the ring wrote `n` owned mbufs into the spare slots.
            unsafe { burst.assume_filled(n) };
            burst.free_all();
            leftover += n;
            if n < BURST_SIZE {
                break;
            }
        }
        if leftover > 0 {
            // Packets nobody dequeued are lost to the capture: say so loudly.
            tracing::warn!("ring {}: freed {leftover} mbufs that were never dequeued", self.name);
        }
        // SAFETY: the ring is empty and nothing else references it.
        unsafe { dpdk_sys::rte_ring_free(self.ptr.as_ptr()) };
    }
}
