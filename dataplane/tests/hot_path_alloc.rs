//! The hot-path rule "no heap allocation per packet", measured: recording tens of thousands
//! of frames of every class (mirrored copies of every event, plain RoCE, PFC, PAUSE, other,
//! malformed) through the worker's `Recorder`, including many buffer hand-offs to the writer
//! thread, allocates nothing on the worker's thread. (The drop path on a full buffer is a
//! failed `try_recv`; `shard`'s unit tests cover it.)

use dataplane::counters::{Stop, Tally};
use dataplane::shard;
use dataplane::worker::Recorder;
use rocescope_tests::scenario::Scenario;
use std::sync::Arc;
use wire::frame::ClassifyConfig;

#[test]
fn recording_frames_allocates_nothing_on_the_worker_thread() {
    let frames = Scenario::lumina_with_truncations().frames;
    let header = trace::pcapng::shard_header(128, "p", "d", "a");
    // Small chunks so the loop hands many of them to the writer, and enough of them (~5 MB
    // of records need ~75) that no packet waits on the writer being scheduled: the hand-off
    // count is then the same on every run, and nothing is dropped.
    let (mut buffer, writer) =
        shard::open(std::path::Path::new("/dev/null"), header, 128, 64 << 10, Arc::new(Stop::default()), None).unwrap();
    let recorder = Recorder { classify: ClassifyConfig::default(), snaplen: 128 };
    let mut tally = Tally::default();
    let rounds = 200;
    let info = allocation_counter::measure(|| {
        for round in 0..rounds {
            for f in &frames {
                recorder.record(f, f.len() as u32, round, &mut buffer, &mut tally);
            }
        }
        buffer.flush();
    });
    let handoffs = buffer.handoffs();
    drop(buffer);
    let report = writer.join().unwrap();
    let n = (frames.len() * rounds as usize) as u64;
    assert_eq!(info.count_total, 0, "allocations while recording {n} frames");
    assert_eq!((tally.written, tally.buffer_drops), (n, 0));
    assert_eq!(report.packets_written, tally.written);
    assert!(handoffs > 20, "the buffer was handed over many times ({handoffs})");
}
