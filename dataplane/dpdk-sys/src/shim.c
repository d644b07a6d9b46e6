/* See shim.h: each function is a one-line, non-inline wrapper of a DPDK inline function. */
#include "shim.h"

void shim_mbuf_offsets(struct shim_mbuf_offsets *out)
{
	out->size = sizeof(struct rte_mbuf);
	out->buf_addr = offsetof(struct rte_mbuf, buf_addr);
	out->data_off = offsetof(struct rte_mbuf, data_off);
	out->nb_segs = offsetof(struct rte_mbuf, nb_segs);
	out->port = offsetof(struct rte_mbuf, port);
	out->ol_flags = offsetof(struct rte_mbuf, ol_flags);
	out->pkt_len = offsetof(struct rte_mbuf, pkt_len);
	out->data_len = offsetof(struct rte_mbuf, data_len);
	out->rss = offsetof(struct rte_mbuf, hash.rss);
	out->buf_len = offsetof(struct rte_mbuf, buf_len);
	out->pool = offsetof(struct rte_mbuf, pool);
	out->next = offsetof(struct rte_mbuf, next);
}

int shim_rte_errno(void) { return rte_errno; }
void shim_rte_errno_set(int value) { rte_errno = value; }
unsigned int shim_rte_lcore_id(void) { return rte_lcore_id(); }
uint64_t shim_rte_rdtsc(void) { return rte_rdtsc(); }
void shim_rte_pause(void) { rte_pause(); }

uint16_t shim_rte_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
			       struct rte_mbuf **rx_pkts, uint16_t nb_pkts)
{
	return rte_eth_rx_burst(port_id, queue_id, rx_pkts, nb_pkts);
}

uint16_t shim_rte_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
			       struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return rte_eth_tx_burst(port_id, queue_id, tx_pkts, nb_pkts);
}

struct rte_mbuf *shim_rte_pktmbuf_alloc(struct rte_mempool *mp) { return rte_pktmbuf_alloc(mp); }
void shim_rte_pktmbuf_free(struct rte_mbuf *m) { rte_pktmbuf_free(m); }
char *shim_rte_pktmbuf_append(struct rte_mbuf *m, uint16_t len) { return rte_pktmbuf_append(m, len); }

unsigned int shim_rte_ring_sp_enqueue_burst(struct rte_ring *r, void *const *obj_table,
					    unsigned int n, unsigned int *free_space)
{
	return rte_ring_sp_enqueue_burst(r, obj_table, n, free_space);
}

unsigned int shim_rte_ring_mp_enqueue_burst(struct rte_ring *r, void *const *obj_table,
					    unsigned int n, unsigned int *free_space)
{
	return rte_ring_mp_enqueue_burst(r, obj_table, n, free_space);
}

unsigned int shim_rte_ring_sc_dequeue_burst(struct rte_ring *r, void **obj_table,
					    unsigned int n, unsigned int *available)
{
	return rte_ring_sc_dequeue_burst(r, obj_table, n, available);
}

unsigned int shim_rte_ring_mc_dequeue_burst(struct rte_ring *r, void **obj_table,
					    unsigned int n, unsigned int *available)
{
	return rte_ring_mc_dequeue_burst(r, obj_table, n, available);
}

unsigned int shim_rte_ring_count(const struct rte_ring *r) { return rte_ring_count(r); }
unsigned int shim_rte_ring_free_count(const struct rte_ring *r) { return rte_ring_free_count(r); }
