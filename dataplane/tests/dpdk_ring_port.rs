//! EAL scenario: in-process injection through an `rte_ring`-backed port (`Port::from_rings`).
//!
//! Frames copied into mbufs with `MbufBurst::push_copy` and enqueued on a ring arrive on the
//! port's RX queue unchanged and counted (prefetching them changes nothing). Also: the teardown guard — a mempool dropped while
//! one of its mbufs is still out is leaked, not freed, and `Eal::shutdown` then refuses to
//! clean DPDK up under it.

mod dpdk_support;

use dataplane::dpdk::{DpdkError, Eal, MbufBurst, Mempool, Port, Ring, DEFAULT_DATA_ROOM, SOCKET_ID_ANY};
use dpdk_support::{eal_args, file_prefix, frame, poll_until, RuntimeDirGuard};

const N: usize = 200;

#[test]
fn frames_pushed_into_a_ring_port_arrive_unchanged() {
    let _runtime_dir = RuntimeDirGuard::new(file_prefix("ring-port"));
    // The argv form, program name first (as std::env::args() gives it), is accepted too.
    let argv: Vec<String> =
        std::iter::once("dpdk_ring_port".to_string()).chain(eal_args("ring-port", "0", &[])).collect();
    let eal = Eal::init(&argv).expect("EAL init");
    assert_eq!(Port::count(), 0);
    let pool = Mempool::new_pktmbuf("inject_pool", 511, 0, DEFAULT_DATA_ROOM, SOCKET_ID_ANY).unwrap();
    let (mut producer, consumer) = Ring::new("inject", 256, SOCKET_ID_ANY).unwrap().split();
    let mut port = Port::from_rings("net_ring_inject", vec![consumer], &pool).expect("ring port");
    assert_eq!(Port::count(), 1);
    assert_eq!(Port::info(port.id()).unwrap().driver_name, "net_ring");
    assert_eq!((port.rx_queues(), port.tx_queues()), (1, 1), "net_ring needs a TX ring");
    port.start().unwrap();
    let mut rxq = port.rx_queue(0).unwrap();

    let frames: Vec<Vec<u8>> = (0..N).map(|i| frame(3, i as u32, 60 + (i * 53) % 1455)).collect();
    let mut out = MbufBurst::new();
    let mut burst = MbufBurst::new();
    let mut got: Vec<Vec<u8>> = Vec::new();
    for chunk in frames.chunks(32) {
        for f in chunk {
            out.push_copy(&pool, f).unwrap();
        }
        assert_eq!(producer.enqueue_burst(&mut out), chunk.len());
        assert!(out.is_empty());
        rxq.rx_burst(&mut burst);
        // The worker's read-ahead: any index (past the end too), any length; a hint only.
        for i in 0..burst.capacity() + 4 {
            burst.prefetch_data(i, 256);
        }
        got.extend(burst.iter().map(|m| m.data().to_vec()));
        burst.free_all();
    }
    poll_until(10, || {
        rxq.rx_burst(&mut burst);
        got.extend(burst.iter().map(|m| m.data().to_vec()));
        burst.free_all();
        got.len() >= N
    });
    assert_eq!(got, frames);
    assert_eq!(port.stats().unwrap().ipackets, N as u64);

    // Misuse: a frame beyond the data room, a full burst.
    let too_big = vec![0u8; usize::from(DEFAULT_DATA_ROOM)];
    assert!(matches!(out.push_copy(&pool, &too_big), Err(DpdkError::InvalidArgument(_))));
    for _ in 0..out.capacity() {
        out.push_copy(&pool, &frames[0]).unwrap();
    }
    assert!(matches!(out.push_copy(&pool, &frames[0]), Err(DpdkError::InvalidArgument(_))));
    out.free_all();

    drop(rxq);
    drop(port);
    drop(producer);
    assert_eq!(pool.available(), pool.size());

    // Teardown guard: the pool goes while one of its mbufs is still held.
    burst.push_copy(&pool, &frames[1]).unwrap();
    drop(pool);
    assert_eq!(burst.data(0), &frames[1][..], "the leaked pool's mbuf is still readable");
    assert!(matches!(eal.shutdown(), Err(DpdkError::ObjectsAlive { live: 1 })));
    // Freeing the mbuf afterwards is still sound: DPDK was left up.
    drop(burst);
}
