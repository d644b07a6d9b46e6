//! Lumina's event injector (§3.3): intents with relative QPN/PSN become match-action
//! entries keyed by (src IP, dst IP, dst QPN, PSN, ITER), and ITER counts the rounds of
//! (re)transmission of each connection.

use std::net::Ipv4Addr;

use crate::config::{DataPktEvent, EventKind, Verb};
use crate::conn::Conn;

// Looked up for every data packet: a fast hasher (keys are not attacker-controlled).
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// The match key of a data packet (one direction of a connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub dst_qpn: u32,
}

/// §3.3 "Express retransmission behaviors": ITER starts at 1 with Last_PSN = IPSN − 1; a
/// packet whose PSN is not larger than Last_PSN starts a new round; Last_PSN always
/// becomes the packet's PSN. "Larger" is in 24-bit serial order, so the rule holds across
/// the PSN wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IterState {
    pub iter: u32,
    pub last_psn: u32,
}

impl IterState {
    pub fn new(ipsn: u32) -> IterState {
        IterState { iter: 1, last_psn: wire::psn::sub(ipsn, 1) }
    }

    /// Updates the state with a packet's PSN; returns the packet's ITER.
    pub fn observe(&mut self, psn: u32) -> u32 {
        if !wire::psn::gt(psn, self.last_psn) {
            self.iter += 1;
        }
        self.last_psn = psn;
        self.iter
    }
}

/// A populated entry: the event and the intent it came from.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub kind: EventKind,
    pub conn: u32,
    pub intent: DataPktEvent,
}

#[derive(Debug, Default)]
pub struct Injector {
    iter: HashMap<FlowKey, IterState>,
    table: HashMap<(FlowKey, u32, u32), Entry>,
    matched: Vec<bool>,
    intents: Vec<DataPktEvent>,
}

/// The data direction of a connection: requester → responder, except READ, whose data
/// (responses) flows back to the requester (§3.3). PSNs of both are in the requester's
/// PSN space, so the relative PSN counts from the requester's IPSN (Lumina's QP info
/// records the same for READ: `psn_snd` is the requester's PSN).
pub fn data_flow(conn: &Conn, verb: Verb) -> FlowKey {
    let (snd, rcv) =
        if verb.data_from_responder() { (conn.responder, conn.requester) } else { (conn.requester, conn.responder) };
    FlowKey { src_ip: snd.ip, dst_ip: rcv.ip, dst_qpn: rcv.qpn }
}

impl Injector {
    /// Populates the table from the runtime metadata and the intents (Lumina Figure 2).
    pub fn new(conns: &[Conn], verb: Verb, intents: &[DataPktEvent]) -> Injector {
        let mut inj = Injector { matched: vec![false; intents.len()], intents: intents.to_vec(), ..Default::default() };
        for c in conns {
            inj.iter.insert(data_flow(c, verb), IterState::new(c.requester.ipsn));
        }
        for e in intents {
            let conn = e.qpn - 1;
            let c = &conns[conn as usize];
            let psn = wire::psn::add(c.requester.ipsn, e.psn - 1);
            inj.table.insert((data_flow(c, verb), psn, e.iter), Entry { kind: e.kind, conn, intent: *e });
        }
        inj
    }

    /// A data packet of a known flow arrives: its ITER and the event to inject, if any.
    /// Packets of unknown flows get no ITER (None).
    pub fn on_data(&mut self, key: FlowKey, psn: u32) -> Option<(u32, Option<Entry>)> {
        let iter = self.iter.get_mut(&key)?.observe(psn);
        let entry = self.table.get(&(key, psn, iter)).copied();
        if let Some(e) = entry {
            if let Some(i) = self.intents.iter().position(|x| *x == e.intent) {
                self.matched[i] = true;
            }
        }
        Some((iter, entry))
    }

    /// Intents that never matched a packet.
    pub fn unmatched(&self) -> Vec<DataPktEvent> {
        self.intents.iter().zip(&self.matched).filter(|(_, m)| !**m).map(|(e, _)| *e).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lumina Figure 3: IPSN 1, four packets; drop (2, ITER 1), then (3, ITER 2).
    #[test]
    fn figure_3() {
        let mut s = IterState::new(1);
        assert_eq!(s.last_psn, 0);
        let arrivals = [1, 2, 3, 4, 2, 3, 4, 3, 4];
        let iters: Vec<u32> = arrivals.iter().map(|&p| s.observe(p)).collect();
        assert_eq!(iters, [1, 1, 1, 1, 2, 2, 2, 3, 3]);
    }

    #[test]
    fn across_the_psn_wrap() {
        let mut s = IterState::new(0xff_fffe);
        assert_eq!(s.observe(0xff_fffe), 1);
        assert_eq!(s.observe(0xff_ffff), 1);
        assert_eq!(s.observe(0), 1, "0 follows 0xffffff");
        assert_eq!(s.observe(0xff_ffff), 2, "going back across the wrap is a new round");
    }
}
