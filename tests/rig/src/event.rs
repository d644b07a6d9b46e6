//! What can happen next in a run.

use crate::packet::{Pkt, Side};
use crate::truth::Trigger;

#[derive(Debug, Clone, Copy)]
pub enum Ev {
    /// A host NIC's transmitter may send.
    TxReady(Side),
    /// A frame has fully arrived at the switch from `pkt.from`'s port.
    SwitchIn(Pkt),
    /// A frame has fully arrived at a host NIC.
    Deliver(Side, Pkt),
    /// A control packet (ACK, NAK, CNP) is ready to leave `side`'s NIC.
    Control(Side, Pkt),
    /// The responder's coalesced ACK for a connection is due.
    AckDue(u32),
    /// The requester reacts to a NAK or a detected READ gap: go back to
    /// `psn`.
    GoBack { conn: u32, psn: u64, trigger: Trigger },
    /// A requester QP's retransmission timer may have expired.
    Timer { conn: u32 },
}
