//! `mkfeed`: writes a classic pcap of Lumina-mirrored RoCEv2 frames, the feed the memif
//! benchmark (`bench/memif.sh`) replays with `dpdk-testpmd` (`net_pcap,infinite_rx=1`).
//!
//! What is in it, by default: 8192 frames of RDMA WRITE Middle traffic with 1024-byte
//! payloads (1082-byte frames: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 1024 + ICRC 4) on 8
//! RC QPs interleaved round-robin, each QP with its own consecutive PSNs; every frame then
//! turned into the mirrored copy a Lumina switch sends (`wire::mirror::MirrorRepr::apply`):
//! consecutive mirror sequence numbers from `--first-seq`, switch timestamps spaced by the
//! frame's serialization time at `--link-gbps`, a random UDP source port per copy and, every
//! `--event-every` frames, an injected event (drop, ECN mark, bit error in turn).
//!
//! Frames are built with `wire::build::RoceFrameRepr` (so the ICRC is right) and each one is
//! checked before it is written: it must classify as a mirrored copy with its seq and
//! event, and, restored (`wire::mirror::restore`), verify its ICRC again unless its event
//! is a bit error. Note that every RoCEv2-over-IPv4 frame without a VLAN tag is 2 mod 4
//! bytes long (58 bytes of headers + 4-byte-aligned payload); a requested `--frame-len`
//! must satisfy that.

use anyhow::{bail, ensure, Context, Result};
use clap::Parser;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::io::BufWriter;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;
use wire::bth::{self, Opcode};
use wire::build::{IpRepr, Payload, RoceFrameRepr};
use wire::ethernet::{self, Vlans};
use wire::frame::{classify, ClassifyConfig, FrameClass};
use wire::mirror::{self, Event, MirrorMeta, MirrorRepr};
use wire::{icrc, ipv4, roce, udp};

/// Ethernet + IPv4 + UDP + BTH + ICRC around a WRITE Middle payload.
const OVERHEAD: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + udp::HEADER_LEN + bth::HEADER_LEN + roce::ICRC_LEN;

#[derive(Debug, Parser)]
#[command(
    name = "mkfeed",
    version,
    about = "Write a pcap of Lumina-mirrored RoCEv2 WRITE traffic for the dataplane benchmarks"
)]
struct Args {
    /// Output pcap.
    #[arg(short, long)]
    out: PathBuf,
    /// Frames in the file (the benchmark replays it in a loop).
    #[arg(short = 'n', long, default_value_t = 8192)]
    count: u64,
    /// RoCE payload bytes per WRITE Middle packet (a multiple of 4).
    #[arg(long, default_value_t = 1024, conflicts_with = "frame_len")]
    payload: usize,
    /// Whole frame length instead of --payload (without FCS; must be 2 mod 4, >= 62).
    #[arg(long)]
    frame_len: Option<usize>,
    /// RC queue pairs, interleaved round-robin.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=65536))]
    qps: u32,
    /// Every this many frames carry an injected event (drop, ecn, corrupt in turn); 0 = none.
    #[arg(long, default_value_t = 1000)]
    event_every: u64,
    /// Mirror sequence number of the first frame (the counter wraps from 0x7fffffff to 1).
    #[arg(long, default_value_t = 1)]
    first_seq: u32,
    /// UDP dst port of the mirrored copies (Lumina: 9741).
    #[arg(long, default_value_t = udp::LUMINA_MIRROR_PORT)]
    mirror_port: u16,
    /// Link speed that spaces the switch timestamps (serialization time + 20 B preamble/IFG).
    #[arg(long, default_value_t = 100.0)]
    link_gbps: f64,
    /// Seed of the random UDP source ports.
    #[arg(long, default_value_t = 0x5eed)]
    seed: u64,
}

/// xorshift64*: reproducible random source ports without another dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn payload_len(args: &Args) -> Result<usize> {
    let payload = match args.frame_len {
        Some(len) => {
            ensure!(len >= OVERHEAD + 4, "--frame-len {len} is shorter than {} (headers + 4 bytes)", OVERHEAD + 4);
            if (len - OVERHEAD) % 4 != 0 {
                let below = len - (len - OVERHEAD) % 4;
                bail!(
                    "--frame-len {len}: an untagged RoCEv2/IPv4 frame is {OVERHEAD} bytes of headers plus a 4-byte \
                     aligned payload, so its length is 2 mod 4 (try {below} or {})",
                    below + 4
                );
            }
            len - OVERHEAD
        }
        None => args.payload,
    };
    ensure!(payload >= 4 && payload % 4 == 0, "payload {payload} must be a positive multiple of 4");
    Ok(payload)
}

fn original(qp: u32, psn: u32, payload: usize) -> RoceFrameRepr {
    let host = |side: u8| -> [u8; 6] { [0x02, 0x00, side, 0x00, (qp >> 8) as u8, qp as u8] };
    let b = bth::Repr::new(Opcode::RC_WRITE_MIDDLE, 0x100 + qp, psn);
    RoceFrameRepr {
        eth: ethernet::Repr { dst_addr: host(2), src_addr: host(1), vlans: Vlans::Untagged, ethertype: 0 },
        ip: IpRepr::V4(ipv4::Repr {
            src_addr: Ipv4Addr::new(10, 1, (qp >> 8) as u8, qp as u8),
            dst_addr: Ipv4Addr::new(10, 2, (qp >> 8) as u8, qp as u8),
            protocol: 0,
            payload_len: 0,
            dscp: 26,
            ecn: ipv4::ecn::ECT0,
            ident: psn as u16,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            ttl: 64,
        }),
        // RNICs pick one UDP source port per QP.
        udp: udp::Repr { src_port: 0xc000 | (qp as u16 & 0x3fff), dst_port: udp::ROCE_PORT, payload_len: 0 },
        roce: roce::Repr::new(b, payload),
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let payload = payload_len(&args)?;
    ensure!((1..=mirror::SEQ_MAX).contains(&args.first_seq), "--first-seq must be in 1..=0x7fffffff");
    ensure!(args.link_gbps > 0.0, "--link-gbps must be positive");
    let cfg = ClassifyConfig { mirror_port: args.mirror_port, roce_port: udp::ROCE_PORT };
    let file = std::fs::File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let header =
        PcapHeader { datalink: DataLink::ETHERNET, ts_resolution: TsResolution::NanoSecond, ..Default::default() };
    let mut writer = PcapWriter::with_header(BufWriter::new(file), header).context("writing the pcap header")?;

    let mut rng = Rng(args.seed | 1);
    let mut psns: Vec<u32> = (0..args.qps).map(|qp| (qp * 0x1_0000) & 0xff_ffff).collect();
    // Switch time in ns since its clock started (48 bits); starting at 1000 s keeps the
    // first byte of the dst MAC 0, i.e. the group bit clear, for the feed's whole length.
    let mut ts_ns: u64 = 1_000_000_000_000;
    let mut seq = args.first_seq;
    let mut events = [0u64; Event::COUNT];
    let mut frame = Vec::new();
    let mut frame_len = 0;
    for i in 0..args.count {
        let qp = (i % u64::from(args.qps)) as u32;
        let psn = psns[qp as usize];
        psns[qp as usize] = (psn + 1) & 0xff_ffff;
        let repr = original(qp, psn, payload);
        frame.clear();
        repr.emit_vec(Payload::Fill(qp as u8), &mut frame).context("building a RoCE frame")?;
        let event = if args.event_every > 0 && (i + 1) % args.event_every == 0 {
            [Event::Drop, Event::Ecn, Event::Corrupt][((i + 1) / args.event_every % 3) as usize]
        } else {
            Event::None
        };
        let meta = MirrorMeta { seq, timestamp_ns: ts_ns, event };
        let udp_src_port = (rng.next() >> 48) as u16 | 0x400; // avoid the well-known range
        MirrorRepr { meta, mirror_port: args.mirror_port, udp_src_port }.apply(&mut frame).context("mirroring")?;
        check(&frame, &meta, &cfg).with_context(|| format!("self-check of frame {i} (seq {seq})"))?;
        writer
            .write_packet(&PcapPacket::new(Duration::from_nanos(ts_ns), frame.len() as u32, &frame))
            .context("writing a packet")?;
        events[event.index()] += 1;
        frame_len = frame.len();
        ts_ns += ((frame.len() + 24) as f64 * 8.0 / args.link_gbps).round() as u64; // + FCS, preamble, IFG
        seq = mirror::next_seq(seq);
    }
    writer.into_writer().into_inner().context("flushing the pcap")?.sync_all()?;
    let names: Vec<String> = Event::ALL.iter().map(|e| format!("{} {}", e.name(), events[e.index()])).collect();
    println!(
        "mkfeed: {} frames of {frame_len} bytes (RC WRITE Middle, {payload} B payload) on {} QPs, mirror seq {}.., events: {} -> {}",
        args.count,
        args.qps,
        args.first_seq,
        names.join(", "),
        args.out.display()
    );
    Ok(())
}

/// The frame is what the dataplane will see: a mirrored copy with this metadata, which,
/// restored, is a valid RoCEv2 packet again (unless the switch corrupted it on purpose).
fn check(frame: &[u8], meta: &MirrorMeta, cfg: &ClassifyConfig) -> Result<()> {
    let info = classify(frame, cfg).map_err(|e| anyhow::anyhow!("classify: {e}"))?;
    ensure!(info.class == FrameClass::MirroredRoce, "classified as {:?}", info.class);
    ensure!(info.mirror.as_ref() == Some(meta), "metadata {:?} != {:?}", info.mirror, meta);
    let mut restored = frame.to_vec();
    mirror::restore(&mut restored, &info, cfg);
    let valid = icrc::verify_frame(&restored).map_err(|e| anyhow::anyhow!("icrc: {e}"))?;
    ensure!(valid == (meta.event != Event::Corrupt), "restored ICRC valid = {valid} for event {:?}", meta.event);
    Ok(())
}
