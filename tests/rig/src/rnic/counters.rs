//! RNIC counters under their vendors' names (Lumina §4 "Hardware network stack counter",
//! §6.2.4), as Lumina reads them: NVIDIA `hw_counters` and port counters, Intel irdma hw
//! stats.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::profile::{NicKind, Vendor};

/// What the RNIC model counts, by meaning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub tx_packets: u64,
    pub rx_packets: u64,
    /// NAK-sequence-error packets received (requester).
    pub packet_seq_err: u64,
    /// Out-of-sequence requests received and dropped (responder).
    pub out_of_sequence: u64,
    pub duplicate_request: u64,
    /// Out-of-sequence READ responses detected (requester).
    pub implied_nak_seq_err: u64,
    /// Retransmission timer expiries after which the QP retried (NVIDIA: "the QP retry
    /// limit was not exceeded").
    pub local_ack_timeout_err: u64,
    /// The expiry that exhausted the retry count and errored the QP.
    pub req_transport_retries_exceeded: u64,
    pub np_cnp_sent: u64,
    pub np_ecn_marked_roce_packets: u64,
    /// CNPs received with the reaction point enabled (acted on) or disabled.
    pub rp_cnp_handled: u64,
    pub rp_cnp_ignored: u64,
    pub rx_icrc_encapsulated: u64,
    pub rx_read_requests: u64,
    pub rx_write_requests: u64,
    pub rx_send_requests: u64,
}

/// A counter that a NIC model fails to count (Lumina §6.2.4), when the paper's counter
/// bugs are turned on.
pub fn paper_bug(kind: NicKind, counter: &str) -> bool {
    matches!((kind, counter), (NicKind::E810, "cnpSent") | (NicKind::Cx4Lx, "implied_nak_seq_err"))
}

impl Counters {
    /// The counters as the vendor names them, with the paper's bugs when `bugs`.
    pub fn named(&self, kind: NicKind, bugs: bool) -> BTreeMap<String, u64> {
        let list: Vec<(&str, u64)> = match kind.vendor() {
            Vendor::Nvidia => vec![
                ("port_xmit_packets", self.tx_packets),
                ("port_rcv_packets", self.rx_packets),
                ("packet_seq_err", self.packet_seq_err),
                ("out_of_sequence", self.out_of_sequence),
                ("duplicate_request", self.duplicate_request),
                ("implied_nak_seq_err", self.implied_nak_seq_err),
                ("local_ack_timeout_err", self.local_ack_timeout_err),
                ("req_transport_retries_exceeded", self.req_transport_retries_exceeded),
                ("np_cnp_sent", self.np_cnp_sent),
                ("np_ecn_marked_roce_packets", self.np_ecn_marked_roce_packets),
                ("rp_cnp_handled", self.rp_cnp_handled),
                ("rp_cnp_ignored", self.rp_cnp_ignored),
                ("rx_icrc_encapsulated", self.rx_icrc_encapsulated),
                ("rx_read_requests", self.rx_read_requests),
                ("rx_write_requests", self.rx_write_requests),
                ("rx_discards_phy", 0),
                ("tx_discards_phy", 0),
            ],
            Vendor::Intel => vec![
                ("ip4OutPkts", self.tx_packets),
                ("ip4InPkts", self.rx_packets),
                ("RxUDP", self.rx_packets),
                ("TxUDP", self.tx_packets),
                ("cnpSent", self.np_cnp_sent),
                ("cnpHandled", self.rp_cnp_handled),
                ("cnpIgnored", self.rp_cnp_ignored),
                ("RxECNMrkd", self.np_ecn_marked_roce_packets),
                ("InRdmaReads", self.rx_read_requests),
                ("InRdmaWrites", self.rx_write_requests),
                ("InRdmaSends", self.rx_send_requests),
                ("ip4InDiscards", self.rx_icrc_encapsulated),
            ],
        };
        list.into_iter()
            .map(|(name, v)| (name.to_string(), if bugs && paper_bug(kind, name) { 0 } else { v }))
            .collect()
    }
}

/// Which section of Lumina's counter dump a name belongs to (`port-counters` are NVIDIA's
/// IB port counters; everything else is `hw-counters`).
pub fn lumina_section(name: &str) -> &'static str {
    if name.starts_with("port_") {
        "port-counters"
    } else if name.ends_with("_discards_phy") {
        "ethtool-counters"
    } else {
        "hw-counters"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_names_and_bugs() {
        let c = Counters { np_cnp_sent: 3, implied_nak_seq_err: 2, rp_cnp_ignored: 4, ..Counters::default() };
        assert_eq!(c.named(NicKind::Cx5, false)["np_cnp_sent"], 3);
        assert_eq!(c.named(NicKind::E810, false)["cnpSent"], 3);
        assert_eq!(c.named(NicKind::E810, false)["cnpIgnored"], 4);
        assert_eq!(c.named(NicKind::Cx4Lx, false)["rp_cnp_ignored"], 4);
        assert_eq!(c.named(NicKind::E810, true)["cnpSent"], 0);
        assert_eq!(c.named(NicKind::Cx4Lx, true)["implied_nak_seq_err"], 0);
        assert_eq!(c.named(NicKind::Cx5, true)["implied_nak_seq_err"], 2);
        assert_eq!(lumina_section("port_rcv_packets"), "port-counters");
        assert_eq!(lumina_section("rx_discards_phy"), "ethtool-counters");
        assert_eq!(lumina_section("np_cnp_sent"), "hw-counters");
    }
}
