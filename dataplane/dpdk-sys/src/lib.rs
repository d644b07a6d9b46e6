//! Raw bindings to the system DPDK (Debian's `libdpdk-dev` 22.11), for rocescope's dataplane.
//!
//! Two sources feed this crate:
//! - **bindgen** over an allowlist of the EAL, ethdev, mbuf, mempool, ring and lcore APIs
//!   (`build.rs`), with the full `pkg-config --cflags libdpdk` so struct layouts match the
//!   installed build (notably `struct rte_mbuf`, whose fields the dataplane reads directly);
//! - a small C **shim** (`src/shim.c`, docs in `src/shim.h`) that gives DPDK's `static inline`
//!   fast-path functions real symbols: `shim_rte_eth_rx_burst`, `shim_rte_eth_tx_burst`,
//!   `shim_rte_pktmbuf_alloc`/`free`/`append`, `shim_rte_ring_{sp,mp}_enqueue_burst`,
//!   `shim_rte_ring_{sc,mc}_dequeue_burst`, `shim_rte_ring_count`/`free_count`,
//!   `shim_rte_errno`, `shim_rte_lcore_id`, `shim_rte_rdtsc`, `shim_rte_pause`.
//!   (`rte_pktmbuf_free_bulk` is a real function in 22.11 and is bound directly.)
//!
//! Everything here is `unsafe` FFI; the safe layer is `dataplane::dpdk`. The generated
//! functions follow DPDK's own contracts (see the DPDK API docs of the same name); the shim
//! functions document theirs in a `# Safety` section.
//!
//! PMDs (net_pcap, net_ring, net_memif, net_null, ...) are not linked: the EAL `dlopen()`s
//! them from [`PMD_DIR`], its built-in default plugin path when librte_eal is a shared
//! library, as here. `librte_net_ring` is linked as well, for [`rte_eth_from_rings`].

#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    unnecessary_transmutes,
    missing_docs,
    clippy::all,
    clippy::pedantic,
    clippy::restriction,
    rustdoc::all
)]
mod bindings {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}
pub use bindings::*;

/// The directory DPDK loads PMD plugins from (`<libdir>/dpdk/pmds-<ABI>`), found at build time
/// from `pkg-config --variable=libdir libdpdk`. Pass it to the EAL as `-d PMD_DIR` only if the
/// EAL's built-in default does not apply (e.g. a static librte_eal).
pub const PMD_DIR: &str = env!("DPDK_SYS_PMD_DIR");

/// The DPDK version pkg-config reported at build time (e.g. `22.11.11`).
pub const DPDK_VERSION: &str = env!("DPDK_SYS_VERSION");

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The Rust view of `struct rte_mbuf` must match the C compiler's, field by field: the
    /// dataplane reads these fields without FFI.
    #[test]
    fn mbuf_layout_matches_c() {
        let mut c = shim_mbuf_offsets::default();
        // SAFETY: `c` is a valid, writable shim_mbuf_offsets.
        unsafe { shim_mbuf_offsets(&mut c) };
        assert_eq!(c.size, size_of::<rte_mbuf>());
        assert_eq!(c.buf_addr, offset_of!(rte_mbuf, buf_addr));
        assert_eq!(c.data_off, offset_of!(rte_mbuf, data_off));
        assert_eq!(c.nb_segs, offset_of!(rte_mbuf, nb_segs));
        assert_eq!(c.port, offset_of!(rte_mbuf, port));
        assert_eq!(c.ol_flags, offset_of!(rte_mbuf, ol_flags));
        assert_eq!(c.pkt_len, offset_of!(rte_mbuf, pkt_len));
        assert_eq!(c.data_len, offset_of!(rte_mbuf, data_len));
        assert_eq!(c.buf_len, offset_of!(rte_mbuf, buf_len));
        assert_eq!(c.pool, offset_of!(rte_mbuf, pool));
        assert_eq!(c.next, offset_of!(rte_mbuf, next));
        assert_eq!(c.rss, offset_of!(rte_mbuf, __bindgen_anon_2.hash.rss));
    }

    #[test]
    fn rss_constants_are_nonzero_and_cover_udp() {
        assert_ne!(SHIM_ETH_RSS_IP, 0);
        assert_ne!(SHIM_ETH_RSS_UDP & (RTE_ETH_RSS_NONFRAG_IPV4_UDP as u64), 0);
    }

    #[test]
    fn pmd_dir_holds_the_vdev_plugins() {
        let dir = std::path::Path::new(PMD_DIR);
        for pmd in ["librte_net_pcap.so", "librte_net_null.so", "librte_net_ring.so"] {
            assert!(dir.join(pmd).exists(), "{} missing from {PMD_DIR}", pmd);
        }
    }
}
