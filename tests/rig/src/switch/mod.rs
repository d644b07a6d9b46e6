//! The Lumina switch (§3.3–3.4, §5 Figure 6): per packet, in this order — count at
//! ingress, timestamp, ITER and event lookup, mirror the packet as it entered (before the
//! event) to a dump host by weighted round-robin, then apply the event (drop, ECN mark,
//! bit error) and forward to the other host.

pub mod injector;
pub mod mirror;

use serde::Serialize;

use crate::config::RigConfig;
use crate::conn::Conn;
use crate::packet::{Pkt, Side};
use crate::sim::{ns, to_ns, Ps};
use injector::{Entry, FlowKey, Injector};
use mirror::{EgressPort, Wrr};

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PortCounters {
    pub switch_port: u16,
    /// RoCE packets received on the port.
    pub ingress: u64,
    /// Packets sent out of the port (forwarded RoCE, or mirrored copies on a mirror port).
    pub egress: u64,
    /// Packets the event injector dropped (counted on the ingress port).
    pub injected_drops: u64,
    /// Mirrored copies dropped because the mirror port's buffer was full.
    pub buffer_drops: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SwitchCounters {
    pub requester: PortCounters,
    pub responder: PortCounters,
    pub mirrors: Vec<PortCounters>,
    /// The first and last mirror seq the switch gave a packet (its seq register read at the
    /// start and the end), so that a check can name copies lost at either end of a trace.
    pub mirror_seq: Option<SeqSpan>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct SeqSpan {
    pub first: u32,
    pub last: u32,
}

/// A mirrored copy leaving for a dump host.
#[derive(Debug, Clone, Copy)]
pub struct MirrorOut {
    pub dump_host: usize,
    pub seq: u32,
    /// When its last bit reaches the dump host.
    pub arrive: Ps,
}

#[derive(Debug, Clone, Copy)]
pub struct Ingress {
    /// ITER of a data packet (None for ACK/NAK, CNP and READ requests).
    pub iter: Option<u32>,
    pub event: Option<Entry>,
    /// None when the mirror port's buffer was full (the packet still has its seq).
    pub mirror: Option<MirrorOut>,
    /// When the packet reaches the other host; None when dropped by an event.
    pub forward: Option<Ps>,
}

pub struct Switch {
    pub injector: Injector,
    next_seq: u32,
    clock_start_ns: u64,
    wrr: Wrr,
    host_ports: [EgressPort; 2],
    mirror_ports: Vec<EgressPort>,
    pub counters: SwitchCounters,
    pipeline: Ps,
    link_delay: Ps,
}

impl Switch {
    pub fn new(cfg: &RigConfig, conns: &[Conn], host_gbps: [f64; 2]) -> Switch {
        let r = &cfg.rig;
        let weights: Vec<u32> = r.dump_hosts.iter().map(|d| d.weight).collect();
        let mirror_ports = r
            .dump_hosts
            .iter()
            .map(|d| EgressPort::new(d.link_gbps.unwrap_or(host_gbps[0]), r.mirror_buffer_bytes))
            .collect();
        let port = |p: u16| PortCounters { switch_port: p, ..PortCounters::default() };
        let first_mirror_port = cfg.requester.nic.switch_port.max(cfg.responder.nic.switch_port) + 8;
        Switch {
            injector: Injector::new(conns, cfg.traffic.rdma_verb, &cfg.traffic.data_pkt_events),
            next_seq: r.first_mirror_seq,
            clock_start_ns: r.switch_clock_start_ns,
            wrr: Wrr::new(&weights),
            host_ports: [EgressPort::new(host_gbps[0], 0), EgressPort::new(host_gbps[1], 0)],
            mirror_ports,
            counters: SwitchCounters {
                requester: port(cfg.requester.nic.switch_port),
                responder: port(cfg.responder.nic.switch_port),
                mirrors: r
                    .dump_hosts
                    .iter()
                    .enumerate()
                    .map(|(i, d)| port(d.switch_port.unwrap_or(first_mirror_port + 8 * i as u16)))
                    .collect(),
                mirror_seq: None,
            },
            pipeline: ns(r.switch_latency_ns),
            link_delay: ns(r.link_delay_ns),
        }
    }

    fn host(&mut self, side: Side) -> &mut PortCounters {
        match side {
            Side::Requester => &mut self.counters.requester,
            Side::Responder => &mut self.counters.responder,
        }
    }

    /// The switch's 48-bit nanosecond clock at `now`.
    pub fn clock_ns(&self, now: Ps) -> u64 {
        (self.clock_start_ns + to_ns(now)) & wire::mirror::TIMESTAMP_MAX
    }

    /// A frame from `pkt.from` has fully arrived at `now`. Stamps `pkt` with its mirror
    /// seq and switch time and applies the event.
    pub fn ingress(&mut self, now: Ps, pkt: &mut Pkt, conn: &Conn) -> Ingress {
        let (src, dst) = (conn.end(pkt.from), conn.end(pkt.from.other()));
        self.host(pkt.from).ingress += 1;
        pkt.switch_ts_ns = self.clock_ns(now);
        let (iter, event) = if pkt.is_data() {
            let key = FlowKey { src_ip: src.ip, dst_ip: dst.ip, dst_qpn: dst.qpn };
            self.injector.on_data(key, conn.wire_psn(pkt.psn)).map_or((None, None), |(i, e)| (Some(i), e))
        } else {
            (None, None)
        };
        let ready = now + self.pipeline;
        let len = pkt.wire_len as usize;
        let (seq, mirror) = self.mirror(ready, len);
        pkt.seq = seq;
        let mut forward = true;
        if let Some(e) = event {
            match e.kind {
                crate::config::EventKind::Drop => {
                    forward = false;
                    self.host(pkt.from).injected_drops += 1;
                }
                crate::config::EventKind::Ecn => pkt.ecn = wire::ipv4::ecn::CE,
                crate::config::EventKind::Corrupt => pkt.corrupt = true,
            }
        }
        let forward = forward.then(|| {
            self.host(pkt.from.other()).egress += 1;
            self.host_ports[pkt.from.other().idx()].enqueue(ready, len).expect("host ports are unbounded")
                + self.link_delay
        });
        Ingress { iter, event, mirror, forward }
    }

    /// Mirrors the packet: it takes the next mirror seq in the ingress pipeline (as
    /// Lumina's P4 does), then its copy queues at the dump host's mirror port — so a copy
    /// the full buffer drops leaves a gap in the seqs.
    fn mirror(&mut self, ready: Ps, len: usize) -> (u32, Option<MirrorOut>) {
        let seq = self.next_seq;
        self.next_seq = wire::mirror::next_seq(seq);
        let span = self.counters.mirror_seq.get_or_insert(SeqSpan { first: seq, last: seq });
        span.last = seq;
        let dump_host = self.wrr.pick();
        let Some(done) = self.mirror_ports[dump_host].enqueue(ready, len) else {
            self.counters.mirrors[dump_host].buffer_drops += 1;
            return (seq, None);
        };
        self.counters.mirrors[dump_host].egress += 1;
        (seq, Some(MirrorOut { dump_host, seq, arrive: done + self.link_delay }))
    }
}
