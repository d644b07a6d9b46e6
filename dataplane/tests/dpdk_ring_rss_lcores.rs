//! EAL scenario: two RX queues, a worker lcore, and an SPSC ring back to the main lcore.
//!
//! `net_pcap` with two `rx_pcap=` files is a port with two RX queues. A closure launched on
//! worker lcore 1 owns queue 1 and pushes every mbuf through a small [`Ring`] (so it meets
//! back-pressure) to the main lcore, which also polls queue 0 itself. Every frame must arrive
//! exactly once, in order, with per-queue statistics to match, and every mbuf must go back to
//! the pool. Also: RSS configuration on `net_null` (which advertises RSS), a ring dropped with
//! mbufs inside, a panicking worker, and launch misuse.

mod dpdk_support;

use dataplane::dpdk::mempool::DEFAULT_DATA_ROOM;
use dataplane::dpdk::port::RSS_IP_UDP;
use dataplane::dpdk::{lcore, DpdkError, Eal, MbufBurst, Mempool, Port, PortConfig, Ring, SOCKET_ID_ANY};
use dpdk_support::{eal_args, file_prefix, frame, frame_id, poll_until, scratch_dir, write_pcap, RuntimeDirGuard};

const A: usize = 300; // frames on queue 0, read by the main lcore
const B: usize = 2000; // frames on queue 1, read by the worker and passed through the ring
const RING: u32 = 64;
const HANG_GUARD_SECS: u64 = 60;

fn frames(tag: u32, n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| frame(tag, i as u32, 60 + (i * 131) % 1455)).collect()
}

#[test]
fn worker_lcore_hands_mbufs_to_main_through_a_ring() {
    let dir = scratch_dir("ring-lcores");
    let (q0, q1) = (dir.path().join("q0.pcap"), dir.path().join("q1.pcap"));
    let (f0, f1) = (frames(0, A), frames(1, B));
    write_pcap(&q0, &f0);
    write_pcap(&q1, &f1);

    let vdevs = [format!("net_pcap0,rx_pcap={},rx_pcap={}", q0.display(), q1.display()), "net_null0".to_string()];
    let _runtime_dir = RuntimeDirGuard::new(file_prefix("ring-lcores"));
    let eal = Eal::init(&eal_args("ring-lcores", "0-1", &vdevs)).expect("EAL init");
    assert_eq!(eal.main_lcore(), 0);
    assert_eq!(eal.worker_lcores(), vec![1]);
    assert_eq!(lcore::current(), Some(0));

    let pool = Mempool::new_pktmbuf("ring_pool", 2047, 32, DEFAULT_DATA_ROOM, SOCKET_ID_ANY).expect("mempool");
    let pcap_id = Port::id_by_name("net_pcap0").unwrap();
    let cfg = PortConfig { rx_queues: 2, ..PortConfig::default() };
    let mut port = Port::configure(pcap_id, &cfg, &pool).expect("configure net_pcap0");
    assert_eq!(port.tx_queues(), 1);
    port.start().expect("start");
    let mut rxq0 = port.rx_queue(0).unwrap();
    let mut rxq1 = port.rx_queue(1).unwrap();
    let (mut producer, mut consumer) = Ring::new("q1_to_main", RING, SOCKET_ID_ANY).expect("ring").split();

    lcore::launch(1, move || {
        if lcore::current() != Some(1) {
            return -2;
        }
        let mut burst = MbufBurst::new();
        let mut received = 0usize;
        poll_until(HANG_GUARD_SECS, || {
            received += rxq1.rx_burst(&mut burst);
            // Back-pressure: retry until the main lcore drains the ring.
            while !burst.is_empty() {
                if producer.enqueue_burst(&mut burst) == 0 {
                    lcore::pause();
                }
            }
            received == B
        });
        received as i32
    })
    .expect("launch on lcore 1");

    let mut burst = MbufBurst::new();
    let (mut from_q0, mut from_ring) = (Vec::new(), Vec::new());
    let record = |burst: &mut MbufBurst, into: &mut Vec<(u32, u32, usize)>| {
        for m in burst.iter() {
            let (tag, index) = frame_id(m.data());
            into.push((tag, index, m.pkt_len() as usize));
        }
        burst.free_all();
    };
    let done = poll_until(HANG_GUARD_SECS, || {
        if rxq0.rx_burst(&mut burst) > 0 {
            record(&mut burst, &mut from_q0);
        }
        if consumer.dequeue_burst(&mut burst) > 0 {
            record(&mut burst, &mut from_ring);
        }
        from_q0.len() >= A && from_ring.len() >= B
    });
    assert!(done, "got {} of {A} from queue 0 and {} of {B} from the ring", from_q0.len(), from_ring.len());
    assert_eq!(lcore::wait_all(), vec![(1, B as i32)]);
    assert_eq!(lcore::wait_all(), vec![], "each launch is waited for once");

    let expect = |tag: u32, f: &[Vec<u8>]| -> Vec<(u32, u32, usize)> {
        f.iter().enumerate().map(|(i, f)| (tag, i as u32, f.len())).collect()
    };
    assert_eq!(from_q0, expect(0, &f0));
    assert_eq!(from_ring, expect(1, &f1));
    assert_eq!(consumer.count(), 0);

    let stats = port.stats().unwrap();
    assert_eq!(stats.q_ipackets, vec![A as u64, B as u64]);
    assert_eq!(stats.ipackets, (A + B) as u64);
    assert_eq!(stats.ibytes, f0.iter().chain(&f1).map(|f| f.len() as u64).sum::<u64>());
    // The worker's closure (with queue 1 and the producer) is gone; every mbuf is home.
    assert_eq!(pool.available(), pool.size());
    drop(rxq0);
    port.stop().expect("stop pcap port");

    // RSS on a vdev that advertises it: only the supported IP/UDP functions are requested.
    let null_id = Port::id_by_name("net_null0").unwrap();
    let null_info = Port::info(null_id).unwrap();
    let rss_cfg = PortConfig { rx_queues: 2, rss: true, ..PortConfig::default() };
    let mut null_port = Port::configure(null_id, &rss_cfg, &pool).expect("RSS on net_null");
    assert_eq!(null_port.rss_hf(), RSS_IP_UDP & null_info.rss_offloads);
    assert_ne!(null_port.rss_hf(), 0);
    null_port.start().unwrap();

    // A ring smaller than a burst takes what fits; the rest stays at the burst's front.
    let mut nq = null_port.rx_queue(1).unwrap();
    assert_eq!(nq.rx_burst(&mut burst), 32, "net_null fills a whole burst");
    assert!(burst.iter().all(|m| m.pkt_len() == 64 && !m.has_rss_hash()));
    let (mut small_p, small_c) = Ring::new("small", 16, SOCKET_ID_ANY).unwrap().split();
    assert_eq!(small_p.enqueue_burst(&mut burst), 16);
    assert_eq!(burst.len(), 16);
    assert_eq!(small_p.free_count(), 0);
    assert_eq!(small_c.count(), 16);
    assert_eq!(pool.in_use(), 32);
    burst.free_all();
    // Dropping both ends frees the mbufs still inside.
    drop((small_p, small_c));
    assert_eq!(pool.available(), pool.size());

    // Dealing round-robin moves mbufs without copying; a partial free keeps the head.
    assert_eq!(nq.rx_burst(&mut burst), 32);
    let mut outs = [MbufBurst::new(), MbufBurst::new(), MbufBurst::new()];
    outs[2].free_from(0);
    assert_eq!(burst.deal_round_robin(&mut outs, 1), 0, "32 mbufs from worker 1 end before worker 0");
    assert_eq!((burst.len(), outs[0].len(), outs[1].len(), outs[2].len()), (0, 10, 11, 11));
    outs[1].free_from(4);
    assert_eq!(outs[1].len(), 4);
    assert_eq!(pool.in_use(), 25);
    drop(outs);
    assert_eq!(pool.available(), pool.size());

    // A panic on a worker does not unwind into DPDK: the lcore reports -1.
    lcore::launch(1, || panic!("deliberate test panic on a worker lcore")).unwrap();
    assert_eq!(lcore::wait_all(), vec![(1, -1)]);
    // Misuse is refused with typed errors.
    assert!(matches!(lcore::launch(0, || 0), Err(DpdkError::NotAWorker { lcore: 0, .. })));
    let off_main = std::thread::spawn(|| lcore::launch(1, || 0)).join().unwrap();
    assert!(matches!(off_main, Err(DpdkError::NotMainLcore { current: None, .. })));

    drop((nq, null_port, port, consumer, burst));
    drop(pool);
    eal.shutdown().expect("EAL cleanup with nothing left alive");
}
