//! [`MbufBurst`]: up to [`BURST_SIZE`] received mbufs in a fixed array, read from Rust.
//!
//! A burst is filled by one FFI call ([`RxQueue::rx_burst`](super::RxQueue::rx_burst) or
//! [`RingConsumer::dequeue_burst`](super::RingConsumer::dequeue_burst)) and freed by one
//! (`rte_pktmbuf_free_bulk`). In between, packet bytes and metadata are read directly from the
//! `struct rte_mbuf` fields (`buf_addr + data_off`, `data_len`, `pkt_len`, `hash.rss`) — no FFI
//! per packet. `dpdk-sys`'s tests check that the Rust layout of those fields matches C's.
//!
//! # Multi-segment packets
//! A frame larger than one mbuf's data room arrives as a chain. [`MbufRef::data`] returns the
//! first segment only (`data_len` bytes); [`MbufRef::pkt_len`] is the whole frame; walk all
//! segments with [`MbufRef::segments`]. With the default 2048-byte data room every standard
//! frame is a single segment, and the first segment always holds at least the headers.

use std::marker::PhantomData;
use std::ptr;

use dpdk_sys::rte_mbuf;

use super::{DpdkError, Mempool, Result};

/// Mbufs per burst.
pub const BURST_SIZE: usize = 32;

/// `RTE_CACHE_LINE_SIZE` on x86_64.
const CACHE_LINE: usize = 64;

/// Up to [`BURST_SIZE`] owned mbufs. No heap; lives on a worker's stack for its whole loop.
///
/// Filling calls append after the mbufs already held; [`free_all`](Self::free_all) frees
/// them, and so does drop.
pub struct MbufBurst {
    mbufs: [*mut rte_mbuf; BURST_SIZE],
    len: usize,
}

// SAFETY: the burst exclusively owns its mbufs; an mbuf may be read and freed from any thread
// (mempool puts are multi-producer safe), so ownership may move between threads.
unsafe impl Send for MbufBurst {}

impl Default for MbufBurst {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MbufBurst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MbufBurst").field("len", &self.len).finish()
    }
}

impl MbufBurst {
    /// An empty burst.
    pub const fn new() -> Self {
        MbufBurst { mbufs: [ptr::null_mut(); BURST_SIZE], len: 0 }
    }

    /// Mbufs held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// No mbufs held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// [`BURST_SIZE`].
    #[inline]
    pub const fn capacity(&self) -> usize {
        BURST_SIZE
    }

    /// Room left for filling calls.
    #[inline]
    pub fn spare(&self) -> usize {
        BURST_SIZE - self.len
    }

    /// The `i`th mbuf, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<MbufRef<'_>> {
        (i < self.len).then(|| MbufRef { m: self.mbufs[i], _burst: PhantomData })
    }

    /// The held mbufs in order.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = MbufRef<'_>> + '_ {
        self.mbufs[..self.len].iter().map(|&m| MbufRef { m, _burst: PhantomData })
    }

    /// First-segment bytes of mbuf `i` (see the module docs on multi-segment packets).
    ///
    /// # Panics
    /// If `i >= self.len()`, like slice indexing.
    #[inline]
    pub fn data(&self, i: usize) -> &[u8] {
        self.at(i).data()
    }

    /// Total frame length of mbuf `i`, all segments. Panics like [`data`](Self::data).
    #[inline]
    pub fn pkt_len(&self, i: usize) -> u32 {
        self.at(i).pkt_len()
    }

    /// RSS hash of mbuf `i` (0 unless the port hashes; see [`MbufRef::rss_hash`]).
    /// Panics like [`data`](Self::data).
    #[inline]
    pub fn rss_hash(&self, i: usize) -> u32 {
        self.at(i).rss_hash()
    }

    /// Starts loading the first `bytes` of mbuf `i`'s data into this core's cache and
    /// returns at once; does nothing past the end. With memif zero-copy the data was written
    /// by the peer's core, so each packet's first touch is a cross-core miss; asking for a
    /// few packets ahead overlaps those misses instead of taking them one by one.
    #[inline]
    pub fn prefetch_data(&self, i: usize, bytes: usize) {
        let Some(m) = self.get(i) else { return };
        // SAFETY: `m.m` is a valid mbuf held by this burst; only the pointer to its data is
        // computed here (`wrapping_add`, no dereference of the data).
        let start = unsafe { (*m.m).buf_addr.cast::<u8>().wrapping_add(usize::from((*m.m).data_off)) };
        let skew = start as usize % CACHE_LINE;
        let mut line = 0;
        while line < skew + bytes {
            prefetch(start.wrapping_sub(skew).wrapping_add(line));
            line += CACHE_LINE;
        }
    }

    #[inline]
    fn at(&self, i: usize) -> MbufRef<'_> {
        match self.get(i) {
            Some(m) => m,
            None => panic!("mbuf index {i} out of range for a burst of {}", self.len),
        }
    }

    /// Append a new single-segment mbuf from `pool` holding a copy of `frame` (for injecting
    /// traffic in tests and tools; one allocation per call, not a fast path).
    pub fn push_copy(&mut self, pool: &Mempool, frame: &[u8]) -> Result<()> {
        if self.len == BURST_SIZE {
            return Err(DpdkError::InvalidArgument("push_copy into a full burst".into()));
        }
        let room = usize::from(pool.data_room().saturating_sub(super::mempool::HEADROOM));
        if frame.len() > room {
            return Err(DpdkError::InvalidArgument(format!(
                "frame of {} bytes exceeds the {room}-byte data room of pool {}",
                frame.len(),
                pool.name()
            )));
        }
        // SAFETY: the pool is a live pktmbuf pool (held by `pool`).
        let m = unsafe { dpdk_sys::shim_rte_pktmbuf_alloc(pool.as_ptr()) };
        if m.is_null() {
            return Err(DpdkError::Call {
                call: "rte_pktmbuf_alloc",
                errno: libc::ENOBUFS,
                message: format!("mempool {} is empty", pool.name()),
            });
        }
        // SAFETY: `m` is a fresh, empty mbuf we own with at least `room` bytes of tailroom
        // (data room minus headroom), and frame.len() <= room < 2^16.
        let dst = unsafe { dpdk_sys::shim_rte_pktmbuf_append(m, frame.len() as u16) };
        if dst.is_null() {
            // SAFETY: `m` is ours and not stored anywhere.
            unsafe { dpdk_sys::shim_rte_pktmbuf_free(m) };
            return Err(DpdkError::InvalidArgument("mbuf tailroom smaller than its data room".into()));
        }
        // SAFETY: `dst` points to frame.len() writable bytes inside `m`'s buffer, which cannot
        // overlap `frame` (a Rust slice outside any mbuf we own).
        unsafe { ptr::copy_nonoverlapping(frame.as_ptr(), dst.cast::<u8>(), frame.len()) };
        self.mbufs[self.len] = m;
        self.len += 1;
        Ok(())
    }

    /// Free every held mbuf with one `rte_pktmbuf_free_bulk` call.
    #[inline]
    pub fn free_all(&mut self) {
        if self.len == 0 {
            return;
        }
        // SAFETY: mbufs[..len] are valid mbufs this burst exclusively owns; after the call we
        // forget them by setting len to 0.
        unsafe { dpdk_sys::rte_pktmbuf_free_bulk(self.mbufs.as_mut_ptr(), self.len as u32) };
        self.len = 0;
    }

    /// Free the mbufs from index `start` on (one `rte_pktmbuf_free_bulk` call), keeping the
    /// first `start`. E.g. after admitting only part of a burst.
    #[inline]
    pub fn free_from(&mut self, start: usize) {
        if start >= self.len {
            return;
        }
        let tail = self.len - start;
        // SAFETY: mbufs[start..len] are valid mbufs this burst exclusively owns; after the call
        // we forget them by truncating len to `start`.
        unsafe { dpdk_sys::rte_pktmbuf_free_bulk(self.mbufs[start..].as_mut_ptr(), tail as u32) };
        self.len = start;
    }

    /// Deal the held mbufs round-robin into `outs` (moving, not copying: no FFI), the first
    /// to `outs[start % outs.len()]`; returns the index the next deal should start at. Mbufs
    /// that meet a full output stay in `self` (at its front), for the caller to free and
    /// count. With no outputs nothing moves.
    pub fn deal_round_robin(&mut self, outs: &mut [MbufBurst], start: usize) -> usize {
        let n = outs.len();
        if n == 0 {
            return start;
        }
        let mut next = start % n;
        let mut kept = 0;
        for i in 0..self.len {
            let m = self.mbufs[i];
            let out = &mut outs[next];
            if out.len < BURST_SIZE {
                out.mbufs[out.len] = m;
                out.len += 1;
            } else {
                self.mbufs[kept] = m;
                kept += 1;
            }
            next = (next + 1) % n;
        }
        self.len = kept;
        next
    }

    /// Drop the first `n` mbufs from the burst *without freeing them* (their ownership went
    /// elsewhere, e.g. into a ring), moving the rest to the front.
    pub(crate) fn forget_front(&mut self, n: usize) {
        let n = n.min(self.len);
        self.mbufs.copy_within(n..self.len, 0);
        self.len -= n;
    }

    /// Pointer to the held mbufs, for calls that take ownership of a prefix of them.
    pub(crate) fn held_ptr(&self) -> *const *mut rte_mbuf {
        self.mbufs.as_ptr()
    }

    /// Pointer to the first free slot and how many slots are free, for filling calls.
    pub(crate) fn spare_ptr(&mut self) -> (*mut *mut rte_mbuf, usize) {
        // `len <= BURST_SIZE`, so the pointer is at most one past the end.
        (self.mbufs[self.len..].as_mut_ptr(), BURST_SIZE - self.len)
    }

    /// Record that a filling call wrote `n` mbufs at [`spare_ptr`](Self::spare_ptr).
    ///
    /// # Safety
    /// The `n` slots after the held ones now hold valid mbufs owned by this burst, and
    /// `n <= self.spare()`.
    pub(crate) unsafe fn assume_filled(&mut self, n: usize) {
        debug_assert!(n <= self.spare());
        self.len += n;
    }
}

impl Drop for MbufBurst {
    fn drop(&mut self) {
        self.free_all();
    }
}

/// A borrowed view of one mbuf in an [`MbufBurst`]; reads fields straight from the struct.
#[derive(Clone, Copy)]
pub struct MbufRef<'a> {
    m: *mut rte_mbuf,
    _burst: PhantomData<&'a MbufBurst>,
}

impl<'a> MbufRef<'a> {
    /// First-segment bytes: `buf_addr + data_off`, `data_len` long.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        // SAFETY: `m` is a valid mbuf owned by the borrowed burst, which can neither free nor
        // refill it while this borrow lives. Its first segment holds `data_len` initialised
        // bytes at buf_addr + data_off (the PMD wrote them before handing us the mbuf).
        unsafe { segment_bytes(self.m) }
    }

    /// Total frame length, all segments (`pkt_len`).
    #[inline]
    pub fn pkt_len(&self) -> u32 {
        // SAFETY: valid mbuf owned by the borrowed burst (see `data`).
        unsafe { (*self.m).pkt_len }
    }

    /// Bytes in the first segment (`data_len`).
    #[inline]
    pub fn data_len(&self) -> u16 {
        // SAFETY: valid mbuf owned by the borrowed burst (see `data`).
        unsafe { (*self.m).data_len }
    }

    /// Number of segments (`nb_segs`).
    #[inline]
    pub fn nb_segs(&self) -> u16 {
        // SAFETY: valid mbuf owned by the borrowed burst (see `data`).
        unsafe { (*self.m).nb_segs }
    }

    /// Port the mbuf was received on.
    #[inline]
    pub fn port(&self) -> u16 {
        // SAFETY: valid mbuf owned by the borrowed burst (see `data`).
        unsafe { (*self.m).port }
    }

    /// Offload flags (`ol_flags`, `RTE_MBUF_F_*`).
    #[inline]
    pub fn ol_flags(&self) -> u64 {
        // SAFETY: valid mbuf owned by the borrowed burst (see `data`).
        unsafe { (*self.m).ol_flags }
    }

    /// The NIC's RSS hash (`hash.rss`). Meaningful only if [`has_rss_hash`](Self::has_rss_hash);
    /// virtual devices leave it 0.
    #[inline]
    pub fn rss_hash(&self) -> u32 {
        // SAFETY: valid mbuf owned by the borrowed burst (see `data`); every variant of the
        // `hash` union is plain integers, so reading `rss` is always defined.
        unsafe { (*self.m).__bindgen_anon_2.hash.rss }
    }

    /// The PMD set `RTE_MBUF_F_RX_RSS_HASH`: [`rss_hash`](Self::rss_hash) is valid.
    #[inline]
    pub fn has_rss_hash(&self) -> bool {
        self.ol_flags() & u64::from(dpdk_sys::RTE_MBUF_F_RX_RSS_HASH) != 0
    }

    /// Every segment's bytes, in order (one item for a single-segment packet).
    pub fn segments(&self) -> Segments<'a> {
        Segments { next: self.m, left: self.nb_segs(), _burst: PhantomData }
    }

    /// The raw mbuf, valid while the burst holds it.
    pub fn as_ptr(&self) -> *mut rte_mbuf {
        self.m
    }
}

impl std::fmt::Debug for MbufRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MbufRef")
            .field("pkt_len", &self.pkt_len())
            .field("data_len", &self.data_len())
            .field("nb_segs", &self.nb_segs())
            .field("rss_hash", &self.rss_hash())
            .finish()
    }
}

/// Iterator over the segments of one packet; see [`MbufRef::segments`].
pub struct Segments<'a> {
    next: *mut rte_mbuf,
    // Bounded by nb_segs so a corrupt chain cannot loop forever.
    left: u16,
    _burst: PhantomData<&'a MbufBurst>,
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.next.is_null() || self.left == 0 {
            return None;
        }
        let m = self.next;
        // SAFETY: `m` is the head mbuf or a `next` link of a chain owned by the borrowed burst;
        // the chain's segments stay valid and unmodified while the burst is borrowed.
        let (bytes, next) = unsafe { (segment_bytes(m), (*m).next) };
        self.next = next;
        self.left -= 1;
        Some(bytes)
    }
}

/// A hint to load the cache line holding `p`; never faults, whatever `p` is.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 has no architectural effect and cannot fault, so any address is fine.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The bytes of one segment.
///
/// # Safety
/// `m` is a valid mbuf that nobody frees or writes during `'a`.
#[inline]
unsafe fn segment_bytes<'a>(m: *const rte_mbuf) -> &'a [u8] {
    // SAFETY: per the contract, `m` is valid; buf_addr + data_off .. + data_len lies inside its
    // data buffer and was written by the producer of the mbuf.
    unsafe {
        let len = usize::from((*m).data_len);
        if len == 0 {
            return &[];
        }
        let start = (*m).buf_addr.cast::<u8>().add(usize::from((*m).data_off));
        std::slice::from_raw_parts(start, len)
    }
}
