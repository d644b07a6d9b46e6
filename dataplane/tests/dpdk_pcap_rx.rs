//! EAL scenario: replay a pcap through `net_pcap` and read it back through the safe layer.
//!
//! Checks byte-exact delivery (including a frame larger than one mbuf, which arrives as a
//! two-segment chain), port statistics, the typed errors the layer promises (RSS on a device
//! without it, too many queues, a second EAL init, a queue held twice, stopping under a held
//! queue), and that every mbuf returns to the pool.

mod dpdk_support;

use dataplane::dpdk::mempool::{DEFAULT_DATA_ROOM, HEADROOM};
use dataplane::dpdk::{DpdkError, Eal, MbufBurst, Mempool, Port, PortConfig, SOCKET_ID_ANY};
use dpdk_support::{eal_args, file_prefix, frame, poll_until, scratch_dir, write_pcap, RuntimeDirGuard};

const N: usize = 100;
const JUMBO_INDEX: usize = 37;
const JUMBO_LEN: usize = 3000;

#[test]
fn pcap_replay_is_byte_exact() {
    let dir = scratch_dir("pcap-rx");
    let pcap = dir.path().join("in.pcap");
    let frames: Vec<Vec<u8>> = (0..N)
        .map(|i| {
            let len = if i == JUMBO_INDEX { JUMBO_LEN } else { 60 + (i * 97) % 1455 };
            frame(7, i as u32, len)
        })
        .collect();
    write_pcap(&pcap, &frames);

    let args = eal_args("pcap-rx", "0", &[format!("net_pcap0,rx_pcap={}", pcap.display())]);
    let _runtime_dir = RuntimeDirGuard::new(file_prefix("pcap-rx"));
    let eal = Eal::init(&args).expect("EAL init");
    assert!(matches!(Eal::init(&args), Err(DpdkError::EalAlreadyInitialized)));
    assert_eq!(eal.worker_lcores(), Vec::<u32>::new());
    assert!(eal.tsc_hz() > 0);

    assert_eq!(Port::count(), 1);
    let port_id = Port::id_by_name("net_pcap0").expect("port by name");
    let info = Port::info(port_id).expect("port info");
    assert_eq!(info.driver_name, "net_pcap");
    assert_eq!(info.max_rx_queues, 1);
    assert!(matches!(Port::info(99), Err(DpdkError::NoSuchPort { port_id: 99, .. })));

    let pool = Mempool::new_pktmbuf("pcap_rx_pool", 1023, 32, DEFAULT_DATA_ROOM, SOCKET_ID_ANY).expect("mempool");
    assert_eq!(pool.available(), 1023);

    // net_pcap cannot hash: asking for RSS is a typed error, not a silent single queue.
    let rss = PortConfig { rss: true, ..PortConfig::default() };
    match Port::configure(port_id, &rss, &pool) {
        Err(DpdkError::RssUnsupported { driver, supported, .. }) => {
            assert_eq!(driver, "net_pcap");
            assert_eq!(supported, 0);
        }
        other => panic!("expected RssUnsupported, got {other:?}"),
    }
    let two = PortConfig { rx_queues: 2, ..PortConfig::default() };
    assert!(matches!(
        Port::configure(port_id, &two, &pool),
        Err(DpdkError::TooManyQueues { requested: 2, max: 1, .. })
    ));

    let mut port = Port::configure(port_id, &PortConfig::default(), &pool).expect("configure");
    assert!(matches!(Port::configure(port_id, &PortConfig::default(), &pool), Err(DpdkError::PortBusy { .. })));
    port.start().expect("start");
    let mut rxq = port.rx_queue(0).expect("queue 0");
    assert!(matches!(port.rx_queue(0), Err(DpdkError::QueueBusy { .. })));
    assert!(matches!(port.rx_queue(1), Err(DpdkError::NoSuchQueue { .. })));
    assert!(matches!(port.stop(), Err(DpdkError::QueuesInUse { held: 1, .. })));

    let mut burst = MbufBurst::new();
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut pkt_lens = Vec::new();
    let mut first_segments = Vec::new();
    let finished = poll_until(30, || {
        if rxq.rx_burst(&mut burst) == 0 {
            return got.len() >= N;
        }
        for m in burst.iter() {
            pkt_lens.push(m.pkt_len() as usize);
            first_segments.push((m.data().len(), m.nb_segs()));
            got.push(m.segments().flatten().copied().collect());
        }
        for i in 0..burst.len() {
            assert_eq!(burst.data(i).len(), burst.get(i).unwrap().data_len() as usize);
            assert_eq!(burst.rss_hash(i), 0, "net_pcap does not hash");
        }
        burst.free_all();
        false
    });
    assert!(finished, "received {} of {N} frames", got.len());
    assert_eq!(got.len(), N);
    for (i, (g, f)) in got.iter().zip(&frames).enumerate() {
        assert_eq!(g, f, "frame {i} differs");
        assert_eq!(pkt_lens[i], f.len());
    }
    // The jumbo frame spans two mbufs: data() is its first segment, pkt_len the whole frame.
    let room = usize::from(DEFAULT_DATA_ROOM - HEADROOM);
    assert_eq!(first_segments[JUMBO_INDEX], (room, 2));
    assert!(first_segments.iter().enumerate().all(|(i, s)| i == JUMBO_INDEX || s.1 == 1));

    let stats = port.stats().expect("stats");
    assert_eq!(stats.ipackets, N as u64);
    assert_eq!(stats.ibytes, frames.iter().map(|f| f.len() as u64).sum::<u64>());
    assert_eq!(stats.q_ipackets, vec![N as u64]);
    assert_eq!((stats.imissed, stats.ierrors, stats.rx_nombuf), (0, 0, 0));

    // A burst dropped with mbufs still in it frees them.
    drop(burst);
    assert_eq!(pool.available(), pool.size(), "every mbuf is back in the pool");

    drop(rxq);
    port.stop().expect("stop");
    drop(port);
    drop(pool);
    eal.shutdown().expect("EAL cleanup with nothing left alive");
}
