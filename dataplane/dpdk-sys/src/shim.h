/*
 * rocescope dpdk-sys shim: real symbols for DPDK's `static inline` fast-path functions.
 *
 * bindgen cannot bind `static inline` functions, so each one we need is wrapped here by a
 * `shim_`-prefixed function with the same arguments. Every wrapper is a single call; with
 * `-O3` they compile to the inline body. This header is also bindgen's entry point: it pulls
 * in every DPDK header whose declarations the Rust side uses.
 *
 * The doc comments below become the Rust docs of the generated functions.
 */
#ifndef ROCESCOPE_DPDK_SHIM_H
#define ROCESCOPE_DPDK_SHIM_H

#include <stdint.h>
#include <stddef.h>

#include <rte_config.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_dev.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>

/* Constants bindgen cannot evaluate from macros (typed re-exports). */

/** `RTE_ETH_RSS_IP`: hash on IPv4/IPv6 addresses (all IP flow types). */
static const uint64_t SHIM_ETH_RSS_IP = RTE_ETH_RSS_IP;
/** `RTE_ETH_RSS_UDP`: hash on UDP ports (IPv4/IPv6 UDP flow types). */
static const uint64_t SHIM_ETH_RSS_UDP = RTE_ETH_RSS_UDP;
/** `RTE_ETH_RSS_TCP`: hash on TCP ports. */
static const uint64_t SHIM_ETH_RSS_TCP = RTE_ETH_RSS_TCP;

/**
 * Byte offsets of the `rte_mbuf` fields Rust reads directly, as the C compiler lays them out.
 * Tests compare these with the Rust (bindgen) layout.
 */
struct shim_mbuf_offsets {
	size_t size;
	size_t buf_addr;
	size_t data_off;
	size_t nb_segs;
	size_t port;
	size_t ol_flags;
	size_t pkt_len;
	size_t data_len;
	size_t rss;
	size_t buf_len;
	size_t pool;
	size_t next;
};

/**
 * Fill `out` with the C layout of `struct rte_mbuf`.
 *
 * # Safety
 * `out` must be valid for a write of one `shim_mbuf_offsets`.
 */
void shim_mbuf_offsets(struct shim_mbuf_offsets *out);

/**
 * `rte_errno` of the calling thread (a thread-local in the EAL).
 *
 * # Safety
 * Always safe to call; `unsafe` only because it is an FFI function.
 */
int shim_rte_errno(void);

/**
 * Set `rte_errno` of the calling thread.
 *
 * # Safety
 * Always safe to call; `unsafe` only because it is an FFI function.
 */
void shim_rte_errno_set(int value);

/**
 * `rte_lcore_id()`: the EAL lcore id of the calling thread, or `LCORE_ID_ANY` for a thread
 * that is neither an EAL lcore nor registered with `rte_thread_register()`.
 *
 * # Safety
 * Always safe to call; `unsafe` only because it is an FFI function.
 */
unsigned int shim_rte_lcore_id(void);

/**
 * `rte_rdtsc()`: the CPU time-stamp counter.
 *
 * # Safety
 * Always safe to call; `unsafe` only because it is an FFI function.
 */
uint64_t shim_rte_rdtsc(void);

/**
 * `rte_pause()`: a CPU spin-wait hint.
 *
 * # Safety
 * Always safe to call; `unsafe` only because it is an FFI function.
 */
void shim_rte_pause(void);

/**
 * `rte_eth_rx_burst()`: receive up to `nb_pkts` mbufs from an RX queue into `rx_pkts`.
 * Returns how many were stored; the caller owns them.
 *
 * # Safety
 * The EAL is initialised, `port_id` is a started port with `queue_id` configured, no other
 * thread polls the same queue concurrently, and `rx_pkts` is valid for `nb_pkts` writes.
 */
uint16_t shim_rte_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
			       struct rte_mbuf **rx_pkts, uint16_t nb_pkts);

/**
 * `rte_eth_tx_burst()`: hand up to `nb_pkts` mbufs to a TX queue. Returns how many the PMD
 * took (it now owns them); the caller still owns `tx_pkts[ret..nb_pkts]`.
 *
 * # Safety
 * The EAL is initialised, `port_id` is a started port with `queue_id` configured as a TX
 * queue, no other thread uses the same TX queue concurrently, and `tx_pkts` holds `nb_pkts`
 * valid mbufs owned by the caller.
 */
uint16_t shim_rte_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
			       struct rte_mbuf **tx_pkts, uint16_t nb_pkts);

/**
 * `rte_pktmbuf_alloc()`: allocate one packet mbuf (reset, empty) from `mp`, or NULL.
 *
 * # Safety
 * `mp` is a live pktmbuf pool. From a non-EAL thread the per-lcore cache is bypassed.
 */
struct rte_mbuf *shim_rte_pktmbuf_alloc(struct rte_mempool *mp);

/**
 * `rte_pktmbuf_free()`: free an mbuf chain (all segments). NULL is ignored.
 *
 * # Safety
 * `m` is NULL or an mbuf the caller owns; it must not be used afterwards.
 */
void shim_rte_pktmbuf_free(struct rte_mbuf *m);

/**
 * `rte_pktmbuf_append()`: grow the packet's last segment by `len` bytes and return a pointer
 * to the new bytes, or NULL if there is not enough tailroom.
 *
 * # Safety
 * `m` is a valid mbuf the caller owns.
 */
char *shim_rte_pktmbuf_append(struct rte_mbuf *m, uint16_t len);

/**
 * `rte_ring_sp_enqueue_burst()`: single-producer enqueue of up to `n` pointers. Returns how
 * many were enqueued.
 *
 * # Safety
 * `r` is a live ring; no other thread enqueues to it concurrently; `obj_table` is valid for
 * `n` reads; `free_space` is NULL or valid for a write.
 */
unsigned int shim_rte_ring_sp_enqueue_burst(struct rte_ring *r, void *const *obj_table,
					    unsigned int n, unsigned int *free_space);

/**
 * `rte_ring_mp_enqueue_burst()`: multi-producer-safe enqueue of up to `n` pointers.
 *
 * # Safety
 * `r` is a live ring; `obj_table` is valid for `n` reads; `free_space` is NULL or valid for
 * a write.
 */
unsigned int shim_rte_ring_mp_enqueue_burst(struct rte_ring *r, void *const *obj_table,
					    unsigned int n, unsigned int *free_space);

/**
 * `rte_ring_sc_dequeue_burst()`: single-consumer dequeue of up to `n` pointers. Returns how
 * many were stored in `obj_table`.
 *
 * # Safety
 * `r` is a live ring; no other thread dequeues from it concurrently; `obj_table` is valid
 * for `n` writes; `available` is NULL or valid for a write.
 */
unsigned int shim_rte_ring_sc_dequeue_burst(struct rte_ring *r, void **obj_table,
					    unsigned int n, unsigned int *available);

/**
 * `rte_ring_mc_dequeue_burst()`: multi-consumer-safe dequeue of up to `n` pointers.
 *
 * # Safety
 * `r` is a live ring; `obj_table` is valid for `n` writes; `available` is NULL or valid for
 * a write.
 */
unsigned int shim_rte_ring_mc_dequeue_burst(struct rte_ring *r, void **obj_table,
					    unsigned int n, unsigned int *available);

/**
 * `rte_ring_count()`: entries currently in the ring.
 *
 * # Safety
 * `r` is a live ring.
 */
unsigned int shim_rte_ring_count(const struct rte_ring *r);

/**
 * `rte_ring_free_count()`: free slots in the ring.
 *
 * # Safety
 * `r` is a live ring.
 */
unsigned int shim_rte_ring_free_count(const struct rte_ring *r);

#endif /* ROCESCOPE_DPDK_SHIM_H */
