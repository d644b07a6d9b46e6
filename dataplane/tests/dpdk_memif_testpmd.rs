//! EAL scenario: stock `dpdk-testpmd` feeds us over `net_memif`.
//!
//! We are the memif server; testpmd (a second DPDK process) connects as the client and, once
//! the link is up, sends 4 bursts of its default `txonly` packet (`start tx_first 4`). Every
//! packet testpmd reports as sent must arrive, as the 64-byte IPv4/UDP frame testpmd builds.
//! Skips with a note when `dpdk-testpmd` is not installed.

mod dpdk_support;

use std::io::{Read, Write};

use dataplane::dpdk::mempool::DEFAULT_DATA_ROOM;
use dataplane::dpdk::{Eal, MbufBurst, Mempool, Port, PortConfig, SOCKET_ID_ANY};
use dpdk_support::{
    eal_args, file_prefix, poll_until, scratch_dir, testpmd_available, testpmd_memif_client, testpmd_tx_packets,
    RuntimeDirGuard, TESTPMD,
};

const HANG_GUARD_SECS: u64 = 60;

#[test]
fn testpmd_txonly_over_memif_arrives_complete() {
    if !testpmd_available() {
        eprintln!("note: {TESTPMD} not found; skipping the memif feed test (install dpdk)");
        return;
    }
    let dir = scratch_dir("memif");
    let sock = dir.path().join("memif.sock");
    let vdev = format!("net_memif0,role=server,socket={},socket-abstract=no", sock.display());
    let _runtime_dir = RuntimeDirGuard::new(file_prefix("memif"));
    let _testpmd_runtime_dir = RuntimeDirGuard::new(file_prefix("memif-tp"));
    let eal = Eal::init(&eal_args("memif", "0", &[vdev])).expect("EAL init");
    let pool = Mempool::new_pktmbuf("memif_pool", 4095, 32, DEFAULT_DATA_ROOM, SOCKET_ID_ANY).unwrap();
    let port_id = Port::id_by_name("net_memif0").unwrap();
    assert_eq!(Port::info(port_id).unwrap().driver_name, "net_memif");
    let mut port = Port::configure(port_id, &PortConfig::default(), &pool).expect("configure memif");
    port.start().expect("start memif");
    let mut rxq = port.rx_queue(0).unwrap();

    let mut testpmd = testpmd_memif_client(&sock, &file_prefix("memif-tp"));
    let mut stdin = testpmd.stdin.take().unwrap();

    let mut burst = MbufBurst::new();
    let mut frames = Vec::new();
    let linked = poll_until(HANG_GUARD_SECS, || port.link_up().unwrap());
    assert!(linked, "testpmd never connected to the memif socket");
    stdin.write_all(b"start tx_first 4\n").unwrap();
    stdin.flush().unwrap();
    // testpmd sends at most 4 x 32; stop early once they are all here.
    poll_until(20, || {
        rxq.rx_burst(&mut burst);
        frames.extend(burst.iter().map(|m| (m.pkt_len(), m.data().to_vec())));
        burst.free_all();
        frames.len() >= 128
    });
    // Read the counters while the peer is connected: net_memif resets them on disconnect.
    let ipackets = port.stats().unwrap().ipackets;
    assert_eq!(ipackets, frames.len() as u64);
    stdin.write_all(b"stop\nquit\n").unwrap();
    drop(stdin);
    let mut out = String::new();
    testpmd.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = testpmd.wait().unwrap();
    assert!(status.success(), "testpmd failed: {status}\n{out}");
    // Anything still in flight after `stop`.
    rxq.rx_burst(&mut burst);
    frames.extend(burst.iter().map(|m| (m.pkt_len(), m.data().to_vec())));
    burst.free_all();

    let sent = testpmd_tx_packets(&out).unwrap_or_else(|| panic!("no TX-packets in testpmd output:\n{out}"));
    assert!(sent > 0, "testpmd sent nothing:\n{out}");
    assert_eq!(frames.len() as u64, sent, "testpmd sent {sent}, we received {}", frames.len());
    for (len, data) in &frames {
        assert_eq!(*len, 64, "testpmd txonly frames are 64 bytes");
        assert_eq!(&data[12..14], &[0x08, 0x00], "IPv4");
        assert_eq!(data[23], 17, "UDP");
    }

    drop(rxq);
    drop(port);
    assert_eq!(pool.available(), pool.size());
    drop(pool);
    eal.shutdown().expect("EAL cleanup");
}
