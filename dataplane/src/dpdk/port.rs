//! [`Port`]: an ethdev configured for capture — RX queues (optionally RSS-spread), statistics —
//! and [`RxQueue`], the per-queue handle a worker lcore polls.

use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use super::eal::LiveToken;
use super::error::check;
use super::mbuf::MbufBurst;
use super::{DpdkError, Mempool, Result, Ring, RingConsumer};

const MAX_PORTS: usize = dpdk_sys::RTE_MAX_ETHPORTS as usize;

/// Ports owned by a live [`Port`]: one owner per port id.
static CLAIMED: [AtomicBool; MAX_PORTS] = [const { AtomicBool::new(false) }; MAX_PORTS];

/// TX descriptors of the single TX queue some PMDs need (we never transmit).
const TX_DESC: u16 = 64;

/// The RSS hash functions rocescope asks for: IP addresses and UDP ports (a mirrored copy's
/// UDP source port is random, so this spreads one RoCE flow across queues).
pub const RSS_IP_UDP: u64 = dpdk_sys::SHIM_ETH_RSS_IP | dpdk_sys::SHIM_ETH_RSS_UDP;

/// How to set up a port for capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// RX queues, one per worker. At least 1.
    pub rx_queues: u16,
    /// RX descriptors per queue; rounded to the device's limits.
    pub rx_desc: u16,
    /// Spread flows over the queues by an IP + UDP RSS hash. Fails with
    /// [`DpdkError::RssUnsupported`] on devices that cannot hash those fields.
    pub rss: bool,
    /// Receive frames not addressed to the port's MAC (needed on a mirror port). Devices that
    /// do not support the setting (most vdevs) are left as they are, with a debug log.
    pub promiscuous: bool,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig { rx_queues: 1, rx_desc: 1024, rss: false, promiscuous: true }
    }
}

/// What a device is and can do (`rte_eth_dev_info_get`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Port id.
    pub port_id: u16,
    /// Device name, e.g. `net_pcap0` or a PCI address.
    pub name: String,
    /// PMD name, e.g. `net_pcap`.
    pub driver_name: String,
    /// NUMA socket of the device, or -1 if unknown.
    pub socket_id: i32,
    /// Maximum RX queues.
    pub max_rx_queues: u16,
    /// Maximum TX queues.
    pub max_tx_queues: u16,
    /// RSS hash functions the device supports (`flow_type_rss_offloads`, `RTE_ETH_RSS_*`).
    pub rss_offloads: u64,
    /// RX offload capabilities (`RTE_ETH_RX_OFFLOAD_*`).
    pub rx_offload_capa: u64,
    /// RSS redirection table size.
    pub reta_size: u16,
    /// RSS hash key size in bytes.
    pub hash_key_size: u8,
    /// RX descriptor limits: minimum, maximum, alignment.
    pub rx_desc_min: u16,
    /// See `rx_desc_min`.
    pub rx_desc_max: u16,
    /// See `rx_desc_min`.
    pub rx_desc_align: u16,
    /// Smallest RX buffer the device accepts.
    pub min_rx_bufsize: u32,
    /// Largest frame the device can receive.
    pub max_rx_pktlen: u32,
}

/// Port counters (`rte_eth_stats_get`). Per-queue arrays cover the configured RX queues, at
/// most 16 (`RTE_ETHDEV_QUEUE_STAT_CNTRS`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames received.
    pub ipackets: u64,
    /// Bytes received.
    pub ibytes: u64,
    /// Frames the NIC dropped because RX queues were full (the dataplane fell behind).
    pub imissed: u64,
    /// Erroneous frames received.
    pub ierrors: u64,
    /// RX mbuf allocation failures (the mempool ran dry).
    pub rx_nombuf: u64,
    /// Frames sent.
    pub opackets: u64,
    /// Bytes sent.
    pub obytes: u64,
    /// Failed transmissions.
    pub oerrors: u64,
    /// Frames received per RX queue.
    pub q_ipackets: Vec<u64>,
    /// Bytes received per RX queue.
    pub q_ibytes: Vec<u64>,
    /// Errors per RX queue.
    pub q_errors: Vec<u64>,
}

/// A configured ethdev. Dropping the last handle to it (the `Port` and every [`RxQueue`]) stops
/// and closes the device; it keeps its [`Mempool`] alive until then.
#[derive(Debug)]
pub struct Port {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    port_id: u16,
    driver: String,
    rx_queues: u16,
    tx_queues: u16,
    rss_hf: u64,
    queue_held: Box<[AtomicBool]>,
    held: AtomicUsize,
    started: AtomicBool,
    // Fields drop after `Drop::drop` has closed the device: the pool and any rings backing
    // it (`from_rings`) outlive the port.
    _rings: Vec<RingConsumer>,
    _tx_ring: Option<Ring>,
    _mempool: Mempool,
    _live: LiveToken,
}

impl Port {
    /// Number of ports the EAL probed (`rte_eth_dev_count_avail`); 0 without a running EAL.
    pub fn count() -> u16 {
        let Ok(_eal) = LiveToken::acquire() else {
            return 0;
        };
        // SAFETY: the EAL is running.
        unsafe { dpdk_sys::rte_eth_dev_count_avail() }
    }

    /// Port id of the device called `name` (e.g. `net_pcap0`).
    pub fn id_by_name(name: &str) -> Result<u16> {
        let _eal = LiveToken::acquire()?;
        let cname = std::ffi::CString::new(name)
            .map_err(|_| DpdkError::InvalidArgument(format!("port name {name:?} contains NUL")))?;
        let mut id = 0u16;
        // SAFETY: the EAL is running; `cname` and `id` are valid for the call.
        let ret = unsafe { dpdk_sys::rte_eth_dev_get_port_by_name(cname.as_ptr(), &mut id) };
        check("rte_eth_dev_get_port_by_name", ret)?;
        Ok(id)
    }

    /// Describe port `port_id`.
    pub fn info(port_id: u16) -> Result<PortInfo> {
        let _eal = LiveToken::acquire()?;
        let raw = dev_info(port_id)?;
        let mut name = [0 as c_char; dpdk_sys::RTE_ETH_NAME_MAX_LEN as usize];
        // SAFETY: the port is valid (dev_info succeeded); `name` has RTE_ETH_NAME_MAX_LEN bytes.
        let ret = unsafe { dpdk_sys::rte_eth_dev_get_name_by_port(port_id, name.as_mut_ptr()) };
        check("rte_eth_dev_get_name_by_port", ret)?;
        // SAFETY: the EAL is running and the port id valid.
        let socket_id = unsafe { dpdk_sys::rte_eth_dev_socket_id(port_id) };
        Ok(PortInfo {
            port_id,
            // SAFETY: rte_eth_dev_get_name_by_port wrote a NUL-terminated name into the buffer.
            name: unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned(),
            driver_name: driver_name(&raw),
            socket_id,
            max_rx_queues: raw.max_rx_queues,
            max_tx_queues: raw.max_tx_queues,
            rss_offloads: raw.flow_type_rss_offloads,
            rx_offload_capa: raw.rx_offload_capa,
            reta_size: raw.reta_size,
            hash_key_size: raw.hash_key_size,
            rx_desc_min: raw.rx_desc_lim.nb_min,
            rx_desc_max: raw.rx_desc_lim.nb_max,
            rx_desc_align: raw.rx_desc_lim.nb_align,
            min_rx_bufsize: raw.min_rx_bufsize,
            max_rx_pktlen: raw.max_rx_pktlen,
        })
    }

    /// Configure port `port_id` per `config`, with RX buffers from `mempool`, and set up its
    /// queues. The port is left stopped: call [`start`](Self::start).
    ///
    /// One TX queue is set up as well whenever the device has any: several PMDs refuse to
    /// start with none. rocescope never transmits on it.
    pub fn configure(port_id: u16, config: &PortConfig, mempool: &Mempool) -> Result<Port> {
        let live = LiveToken::acquire()?;
        let info = dev_info(port_id)?;
        let driver = driver_name(&info);
        if config.rx_queues == 0 {
            return Err(DpdkError::InvalidArgument(format!("port {port_id}: rx_queues must be at least 1")));
        }
        if config.rx_queues > info.max_rx_queues {
            return Err(DpdkError::TooManyQueues {
                port_id,
                driver,
                requested: config.rx_queues,
                max: info.max_rx_queues,
            });
        }
        // SAFETY: `rte_eth_conf` is a plain C struct for which all-zero is the documented
        // default ("no offloads, no multi-queue mode").
        let mut conf: dpdk_sys::rte_eth_conf = unsafe { std::mem::zeroed() };
        let mut rss_hf = 0;
        if config.rss {
            rss_hf = RSS_IP_UDP & info.flow_type_rss_offloads;
            if rss_hf == 0 {
                return Err(DpdkError::RssUnsupported {
                    port_id,
                    driver,
                    requested: RSS_IP_UDP,
                    supported: info.flow_type_rss_offloads,
                });
            }
            conf.rxmode.mq_mode = dpdk_sys::RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
            // A NULL key keeps the device's default key.
            conf.rx_adv_conf.rss_conf.rss_key = std::ptr::null_mut();
            let rss_hash = u64::from(dpdk_sys::RTE_ETH_RX_OFFLOAD_RSS_HASH);
            if info.rx_offload_capa & rss_hash != 0 {
                conf.rxmode.offloads |= rss_hash;
            }
        }
        let tx_queues = u16::from(info.max_tx_queues > 0);
        let claim = Claim::take(port_id)?;
        // SAFETY: the EAL is running, the port is valid and stopped or never started (we own
        // it now), and `conf` is a fully initialised rte_eth_conf.
        let ret = unsafe { dpdk_sys::rte_eth_dev_configure(port_id, config.rx_queues, tx_queues, &conf) };
        check("rte_eth_dev_configure", ret)?;

        let mut rx_desc = config.rx_desc;
        let mut tx_desc = TX_DESC;
        // SAFETY: valid port; the two counts are valid for read and write.
        let ret = unsafe { dpdk_sys::rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &mut rx_desc, &mut tx_desc) };
        check("rte_eth_dev_adjust_nb_rx_tx_desc", ret)?;
        // SAFETY: valid port.
        let socket = unsafe { dpdk_sys::rte_eth_dev_socket_id(port_id) };
        let socket = if socket < 0 { dpdk_sys::SOCKET_ID_ANY } else { socket };
        for q in 0..config.rx_queues {
            // SAFETY: the port is configured with rx_queues queues and q is one of them; a
            // NULL rxconf selects the device defaults; the mempool is live and the port keeps
            // a handle to it for as long as the queue can use it.
            let ret = unsafe {
                dpdk_sys::rte_eth_rx_queue_setup(port_id, q, rx_desc, socket as u32, std::ptr::null(), mempool.as_ptr())
            };
            check("rte_eth_rx_queue_setup", ret)?;
        }
        for q in 0..tx_queues {
            // SAFETY: the port is configured with tx_queues queues; NULL txconf = defaults.
            let ret = unsafe { dpdk_sys::rte_eth_tx_queue_setup(port_id, q, tx_desc, socket as u32, std::ptr::null()) };
            check("rte_eth_tx_queue_setup", ret)?;
        }
        if config.promiscuous {
            // SAFETY: valid, configured port.
            let ret = unsafe { dpdk_sys::rte_eth_promiscuous_enable(port_id) };
            if ret < 0 {
                tracing::debug!(port_id, %driver, "promiscuous mode not set: {}", super::error::strerror(-ret));
            }
        }
        tracing::debug!(port_id, %driver, rx_queues = config.rx_queues, rx_desc, tx_queues, rss_hf, "port configured");
        claim.keep();
        Ok(Port {
            inner: Arc::new(Inner {
                port_id,
                driver,
                rx_queues: config.rx_queues,
                tx_queues,
                rss_hf,
                queue_held: (0..config.rx_queues).map(|_| AtomicBool::new(false)).collect(),
                held: AtomicUsize::new(0),
                started: AtomicBool::new(false),
                _rings: Vec::new(),
                _tx_ring: None,
                _mempool: mempool.clone(),
                _live: live,
            }),
        })
    }

    /// A `net_ring` ethdev named `name` whose RX queue `i` receives what is enqueued on the
    /// producer end of `rings[i]` (`rte_eth_from_rings`): in-process injection for tests and
    /// tools (fill with [`MbufBurst::push_copy`], send with
    /// [`RingProducer::enqueue_burst`](super::RingProducer::enqueue_burst)). The port is
    /// configured with one RX queue per ring and no RSS, and left stopped; it owns the
    /// consumer ends and releases them after closing the device. `name` is at most 19 bytes.
    ///
    /// net_ring cannot be created without a TX ring, so the port also owns a small private
    /// one (nothing transmits on it).
    pub fn from_rings(name: &str, rings: Vec<RingConsumer>, mempool: &Mempool) -> Result<Port> {
        let _eal = LiveToken::acquire()?;
        let cname = std::ffi::CString::new(name)
            .map_err(|_| DpdkError::InvalidArgument(format!("port name {name:?} contains NUL")))?;
        let rx_queues = u16::try_from(rings.len())
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| DpdkError::InvalidArgument(format!("{name}: from_rings needs 1..=65535 rings")))?;
        let ptrs: Vec<*mut dpdk_sys::rte_ring> = rings.iter().map(RingConsumer::as_ptr).collect();
        let numa = u32::try_from(super::lcore::socket_id()).unwrap_or(0);
        static TX_RINGS: AtomicUsize = AtomicUsize::new(0);
        let tx_name = format!("rs_ringport_tx{}", TX_RINGS.fetch_add(1, Ordering::Relaxed));
        let tx_ring = Ring::new(&tx_name, 32, dpdk_sys::SOCKET_ID_ANY)?;
        let tx_ptr = tx_ring.as_ptr();
        // SAFETY: the EAL is running; `cname` is a valid C string; `ptrs` holds rx_queues live
        // rings and `tx_ptr` one more, which the returned port keeps alive (it owns `rings`
        // and `tx_ring`) until after the device is closed. The PMD becomes each RX ring's only
        // consumer: the RingConsumer ends are moved into the port and never dequeue again.
        let ret = unsafe {
            dpdk_sys::rte_eth_from_rings(cname.as_ptr(), ptrs.as_ptr(), u32::from(rx_queues), &tx_ptr, 1, numa)
        };
        if ret < 0 {
            return Err(DpdkError::from_rte_errno("rte_eth_from_rings"));
        }
        let port_id = ret as u16;
        let config = PortConfig { rx_queues, rss: false, promiscuous: false, ..PortConfig::default() };
        match Port::configure(port_id, &config, mempool) {
            Ok(mut port) => {
                let inner = Arc::get_mut(&mut port.inner).expect("a new port has no other handle");
                inner._rings = rings;
                inner._tx_ring = Some(tx_ring);
                Ok(port)
            }
            Err(e) => {
                // SAFETY: the device we just created is not started and nothing else knows its
                // id; close it before the rings it reads are dropped.
                unsafe { dpdk_sys::rte_eth_dev_close(port_id) };
                Err(e)
            }
        }
    }

    /// Port id.
    pub fn id(&self) -> u16 {
        self.inner.port_id
    }

    /// PMD name.
    pub fn driver_name(&self) -> &str {
        &self.inner.driver
    }

    /// Configured RX queues.
    pub fn rx_queues(&self) -> u16 {
        self.inner.rx_queues
    }

    /// Configured TX queues (0 or 1; see [`configure`](Self::configure)).
    pub fn tx_queues(&self) -> u16 {
        self.inner.tx_queues
    }

    /// RSS hash functions enabled (`RTE_ETH_RSS_*`), 0 without RSS.
    pub fn rss_hf(&self) -> u64 {
        self.inner.rss_hf
    }

    /// Start receiving.
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: the port is configured with its queues set up; `&mut self` excludes a
        // concurrent start/stop of this port.
        let ret = unsafe { dpdk_sys::rte_eth_dev_start(self.inner.port_id) };
        check("rte_eth_dev_start", ret)?;
        self.inner.started.store(true, Ordering::Release);
        Ok(())
    }

    /// Stop receiving. Refused with [`DpdkError::QueuesInUse`] while any [`RxQueue`] handle
    /// exists: stopping under a polling worker is a data race in DPDK.
    pub fn stop(&mut self) -> Result<()> {
        let held = self.inner.held.load(Ordering::Acquire);
        if held > 0 {
            return Err(DpdkError::QueuesInUse { port_id: self.inner.port_id, held });
        }
        self.inner.stop()
    }

    /// Current counters.
    pub fn stats(&self) -> Result<PortStats> {
        let mut raw = dpdk_sys::rte_eth_stats::default();
        // SAFETY: the port is configured (we own it) and `raw` is valid for writes.
        let ret = unsafe { dpdk_sys::rte_eth_stats_get(self.inner.port_id, &mut raw) };
        check("rte_eth_stats_get", ret)?;
        let n = usize::from(self.inner.rx_queues).min(dpdk_sys::RTE_ETHDEV_QUEUE_STAT_CNTRS as usize);
        Ok(PortStats {
            ipackets: raw.ipackets,
            ibytes: raw.ibytes,
            imissed: raw.imissed,
            ierrors: raw.ierrors,
            rx_nombuf: raw.rx_nombuf,
            opackets: raw.opackets,
            obytes: raw.obytes,
            oerrors: raw.oerrors,
            q_ipackets: raw.q_ipackets[..n].to_vec(),
            q_ibytes: raw.q_ibytes[..n].to_vec(),
            q_errors: raw.q_errors[..n].to_vec(),
        })
    }

    /// Whether the link is up (`rte_eth_link_get_nowait`; for net_memif: a peer is connected).
    pub fn link_up(&self) -> Result<bool> {
        let mut link = dpdk_sys::rte_eth_link::default();
        // SAFETY: the port is configured (we own it) and `link` is valid for writes.
        let ret = unsafe { dpdk_sys::rte_eth_link_get_nowait(self.inner.port_id, &mut link) };
        check("rte_eth_link_get_nowait", ret)?;
        Ok(link.link_status() != 0)
    }

    /// Zero the counters.
    pub fn reset_stats(&self) -> Result<()> {
        // SAFETY: the port is configured (we own it).
        let ret = unsafe { dpdk_sys::rte_eth_stats_reset(self.inner.port_id) };
        check("rte_eth_stats_reset", ret).map(drop)
    }

    /// The handle to RX queue `queue`. One handle per queue exists at a time
    /// ([`DpdkError::QueueBusy`] otherwise); it is `Send`, so a worker lcore can own it.
    pub fn rx_queue(&self, queue: u16) -> Result<RxQueue> {
        let inner = &self.inner;
        let Some(flag) = inner.queue_held.get(usize::from(queue)) else {
            return Err(DpdkError::NoSuchQueue { port_id: inner.port_id, queue, configured: inner.rx_queues });
        };
        if flag.swap(true, Ordering::AcqRel) {
            return Err(DpdkError::QueueBusy { port_id: inner.port_id, queue });
        }
        inner.held.fetch_add(1, Ordering::AcqRel);
        Ok(RxQueue { port: Arc::clone(inner), port_id: inner.port_id, queue })
    }
}

impl Inner {
    fn stop(&self) -> Result<()> {
        if !self.started.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        // SAFETY: the port is started and no RxQueue is polling it (callers check `held`, or
        // this is the last handle being dropped).
        let ret = unsafe { dpdk_sys::rte_eth_dev_stop(self.port_id) };
        check("rte_eth_dev_stop", ret).map(drop)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::warn!(port_id = self.port_id, "{e}");
        }
        // SAFETY: last handle: no RxQueue exists, the port is stopped; after close the port id
        // is not used again by this handle. The mempool (a field) is released after this.
        let ret = unsafe { dpdk_sys::rte_eth_dev_close(self.port_id) };
        if ret < 0 {
            tracing::warn!(port_id = self.port_id, "rte_eth_dev_close: {}", super::error::strerror(-ret));
        }
        CLAIMED[usize::from(self.port_id)].store(false, Ordering::Release);
    }
}

/// One RX queue of a started [`Port`], polled by exactly one thread. Keeps the port open.
#[derive(Debug)]
pub struct RxQueue {
    port: Arc<Inner>,
    port_id: u16,
    queue: u16,
}

impl RxQueue {
    /// Port id.
    pub fn port_id(&self) -> u16 {
        self.port_id
    }

    /// Queue id.
    pub fn queue_id(&self) -> u16 {
        self.queue
    }

    /// Receive into `burst`'s free slots with one `rte_eth_rx_burst` call; returns how many
    /// mbufs were appended (0 when the queue is empty, the burst is full, or the port is
    /// stopped).
    #[inline]
    pub fn rx_burst(&mut self, burst: &mut MbufBurst) -> usize {
        let (slots, room) = burst.spare_ptr();
        if room == 0 {
            return 0;
        }
        // SAFETY: the port is configured with this queue and stays open while we hold `port`;
        // this handle is the queue's only poller (unique per queue, &mut self); `slots` is
        // valid for `room` (<= 32) writes. A stopped port's RX function returns 0.
        let n = unsafe { dpdk_sys::shim_rte_eth_rx_burst(self.port_id, self.queue, slots, room as u16) };
        // SAFETY: the PMD wrote `n <= room` mbufs that we now own into the spare slots.
        unsafe { burst.assume_filled(usize::from(n)) };
        usize::from(n)
    }
}

impl Drop for RxQueue {
    fn drop(&mut self) {
        self.port.queue_held[usize::from(self.queue)].store(false, Ordering::Release);
        self.port.held.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Exclusive ownership of a port id while a `Port` is being built; released on failure.
struct Claim(u16, bool);

impl Claim {
    fn take(port_id: u16) -> Result<Claim> {
        let flag = CLAIMED
            .get(usize::from(port_id))
            .ok_or_else(|| DpdkError::NoSuchPort { port_id, available: Port::count() })?;
        if flag.swap(true, Ordering::AcqRel) {
            return Err(DpdkError::PortBusy { port_id });
        }
        Ok(Claim(port_id, false))
    }

    fn keep(mut self) {
        self.1 = true;
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.1 {
            CLAIMED[usize::from(self.0)].store(false, Ordering::Release);
        }
    }
}

/// `rte_eth_dev_info_get`, with a typed error for an unknown port.
fn dev_info(port_id: u16) -> Result<dpdk_sys::rte_eth_dev_info> {
    // SAFETY: the EAL is running (callers hold a token).
    if unsafe { dpdk_sys::rte_eth_dev_is_valid_port(port_id) } == 0 {
        return Err(DpdkError::NoSuchPort { port_id, available: Port::count() });
    }
    // SAFETY: all-zero is a valid rte_eth_dev_info (plain integers and nullable pointers).
    let mut info: dpdk_sys::rte_eth_dev_info = unsafe { std::mem::zeroed() };
    // SAFETY: valid port; `info` is valid for writes.
    let ret = unsafe { dpdk_sys::rte_eth_dev_info_get(port_id, &mut info) };
    check("rte_eth_dev_info_get", ret)?;
    Ok(info)
}

fn driver_name(info: &dpdk_sys::rte_eth_dev_info) -> String {
    if info.driver_name.is_null() {
        return String::from("unknown");
    }
    // SAFETY: a non-NULL driver_name points to the PMD's static NUL-terminated name.
    unsafe { CStr::from_ptr(info.driver_name) }.to_string_lossy().into_owned()
}
