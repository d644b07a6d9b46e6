//! Writing frames as a classic pcap (what `net_pcap` replays and Lumina's dumper writes).

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::path::Path;
use std::time::Duration;

/// Writes `frames` with nanosecond timestamps 1 µs apart.
pub fn write(path: &Path, frames: &[Vec<u8>]) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let header =
        PcapHeader { datalink: DataLink::ETHERNET, ts_resolution: TsResolution::NanoSecond, ..Default::default() };
    let mut w = PcapWriter::with_header(file, header).map_err(std::io::Error::other)?;
    for (i, f) in frames.iter().enumerate() {
        let p = PcapPacket::new(Duration::from_micros(i as u64), f.len() as u32, f);
        w.write_packet(&p).map_err(std::io::Error::other)?;
    }
    Ok(())
}
