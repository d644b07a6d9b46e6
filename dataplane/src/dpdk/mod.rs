//! The safe layer over our `dpdk-sys` binding: the only place in the dataplane with `unsafe`.
//!
//! Folders per DPDK concept, in the order a packet meets them:
//! - [`eal`]: [`Eal`] starts the Environment Abstraction Layer once per process;
//! - [`mempool`]: [`Mempool`], the pktmbuf pool a port's RX queues fill;
//! - [`port`]: [`Port`] configures and starts an ethdev (RSS, queues, stats) and hands out one
//!   [`RxQueue`] per queue, which a worker lcore owns;
//! - [`mbuf`]: [`MbufBurst`], a fixed `[*mut rte_mbuf; 32]` filled by one `rx_burst` FFI call
//!   and read field by field from Rust (no FFI per packet), freed with one bulk call;
//! - [`ring`]: [`Ring`], a single-producer/single-consumer `rte_ring` of mbufs between lcores;
//! - [`lcore`]: launching closures on EAL worker lcores, TSC helpers.
//!
//! # Lifetimes and teardown
//! DPDK objects hold each other alive so that no drop order can free memory that is in use:
//! an [`RxQueue`] keeps its port open, a [`Port`] keeps its [`Mempool`], and a [`Mempool`] whose
//! mbufs are still out (in a burst or a ring) is leaked with a warning instead of freed. One
//! PMD always causes it: DPDK's net_memif in zero-copy mode does not give back the mbufs
//! of its RX rings when the port is closed (a ring's worth per RX queue, `in_use=1024` for
//! one queue by default).
//! [`Eal`]'s drop waits for all worker lcores, then calls `rte_eal_cleanup()` only when no
//! port, mempool or ring is left (otherwise it logs and leaves DPDK running until exit).
//! The intended order is therefore: stop workers (`lcore::wait_all`), drop queues and ports,
//! drop rings and mempools, drop the [`Eal`] last.

//!
//! # EAL flags without NIC or hugepages
//! `--no-huge --no-pci --file-prefix=<unique> -m 1024` ([`Eal::no_huge_args`]) plus `-l` and
//! `--vdev` flags. Not `--in-memory` (DPDK 22.11 rejects it together with `--no-huge`). The
//! file prefix must be unique per concurrent process; DPDK leaves `/var/run/dpdk/<prefix>`
//! behind even after cleanup. Without `-l` the EAL takes every CPU as an lcore.
//!
//! # Virtual devices (checked by the `dpdk_*` integration tests)
//! - PMDs are plugins `dlopen()`ed from [`PMD_DIR`]; the shared librte_eal does so by default,
//!   no `-d` needed. A `--vdev` whose PMD is missing fails `Eal::init`.
//! - `net_pcap,rx_pcap=F[,rx_pcap=G...]`: one RX queue per `rx_pcap`, read once then idle; no
//!   RSS (`flow_type_rss_offloads == 0`, so `rss: true` is [`DpdkError::RssUnsupported`]);
//!   frames larger than the mbuf data room arrive as multi-segment chains.
//! - `net_null`: endless 64-byte frames; advertises RSS (configuring it succeeds) but never
//!   sets a hash (`has_rss_hash() == false`).
//! - `net_ring` ([`Port::from_rings`]): in-process injection; `rte_eth_from_rings` needs at
//!   least one TX ring, so the port owns a private one.
//! - `net_memif`: the server links up only when its queue counts mirror the client's (e.g.
//!   stock testpmd: 1 RX + 1 TX), which is one reason [`Port::configure`] always sets up one
//!   TX queue; its counters reset when the peer disconnects; max frame 1518.

pub mod eal;
mod error;
pub mod lcore;
pub mod mbuf;
pub mod mempool;
pub mod port;
pub mod ring;

pub use eal::{tsc_hz, Eal};
pub use error::DpdkError;
pub use lcore::rdtsc;
pub use mbuf::{prefetch, MbufBurst, MbufRef, BURST_SIZE};
pub use mempool::{Mempool, DEFAULT_DATA_ROOM};
pub use port::{Port, PortConfig, PortInfo, PortStats, RxQueue};
pub use ring::{Ring, RingConsumer, RingProducer};

/// Where DPDK loads PMD plugins (net_pcap, net_null, net_ring, net_memif, ...) from, found at
/// build time. The EAL uses it by default; it is only needed as `-d` with a static EAL.
pub const PMD_DIR: &str = dpdk_sys::PMD_DIR;

/// "Any NUMA socket", for [`Mempool::new_pktmbuf`] and [`Ring::new`].
pub const SOCKET_ID_ANY: i32 = dpdk_sys::SOCKET_ID_ANY;

/// Result of the DPDK layer.
pub type Result<T> = std::result::Result<T, DpdkError>;
