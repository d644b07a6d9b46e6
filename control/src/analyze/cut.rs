//! Fields a snap length cut, read from the packets that answer them. A capture that ends
//! inside the extension headers (RETH at a 64-byte snap length) keeps a READ request's
//! BTH but not its DMA length (`flag::HEADERS_CUT`), and every analyzer needs that length
//! for the PSNs the request covers. The responses that answer the request tell it
//! exactly: a First response carries one path MTU at the request's PSN, and the Last
//! response of that message carries the rest (IBA 9.7.2; its PadCnt pad bytes are not
//! data). A request no First (or Only) and Last answer keeps its length unknown, and so
//! does one whose First and Last have a copy missing between them: the Last of its message
//! and the First of the next may be in it (READ responses of consecutive requests have
//! consecutive PSNs), and the message found would be two.

use rustc_hash::FxHashMap;
use trace::record::Record;
use wire::bth::Opcode;
use wire::psn;

use super::conn::{Connections, Role};
use super::transport::is_read_request;
use super::unseen::Unseen;

/// Whether any READ request's RETH was cut (what [`infer_read_lengths`] fills in).
pub fn any_read_cut(records: &[Record]) -> bool {
    records.iter().any(|r| r.reth_cut() && is_read_request(r))
}

/// Fills in the DMA length of every READ request whose RETH was cut and whose responses
/// tell it, in place. Returns how many cut READ requests no response told. O(n): one pass
/// over each connection's packets.
pub fn infer_read_lengths(records: &mut [Record], conns: &Connections) -> u64 {
    let mut unknown = 0;
    for c in &conns.list {
        unknown += fill_connection(records, &conns.unseen, c.packets.iter().map(|&(i, to)| (i as usize, to)));
    }
    unknown
}

/// One connection's packets in trace order: requests waiting for their answer by PSN,
/// answered by the next response message starting at that PSN. Returns how many cut
/// requests stayed unknown.
fn fill_connection(records: &mut [Record], unseen: &Unseen, packets: impl Iterator<Item = (usize, Role)>) -> u64 {
    let mut waiting: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    // The response message being received: its first PSN, the First's payload (the MTU),
    // and the First's trace order.
    let mut open: Option<(u32, u32, u64)> = None;
    for (i, to) in packets {
        let r = records[i];
        if to == Role::Responder {
            if r.reth_cut() && is_read_request(&r) {
                waiting.entry(r.psn()).or_default().push(i);
            }
            continue;
        }
        let (first, mtu) = match Opcode(r.opcode()) {
            Opcode::RC_READ_RESPONSE_FIRST => {
                open = Some((r.psn(), u32::from(r.payload_len), r.seq()));
                continue;
            }
            Opcode::RC_READ_RESPONSE_ONLY => (r.psn(), 0),
            Opcode::RC_READ_RESPONSE_LAST => match open.take() {
                Some((first, mtu, order)) if !unseen.between(Some(order), r.seq()) => (first, mtu),
                _ => continue,
            },
            _ => continue,
        };
        let data = u64::from(r.payload_len).saturating_sub(u64::from(r.bth_flags >> 4 & 0b11));
        // A DMA length is 32 bits: a longer span is no message of one request.
        let Ok(len) = u32::try_from(u64::from(psn::distance(first, r.psn())) * u64::from(mtu) + data) else {
            continue;
        };
        for j in waiting.remove(&first).unwrap_or_default() {
            records[j] = records[j].with_reth(len);
        }
    }
    waiting.values().map(|v| v.len() as u64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::record::{flag, Kind};

    fn rec(opcode: Opcode, psn: u32, payload: u16) -> Record {
        let mut r = Record::default().with_opcode(opcode.0).with_psn(psn).with_kind(Kind::of(Some(opcode.0)));
        r.payload_len = payload;
        r
    }

    fn cut(mut r: Record) -> Record {
        r.flags |= flag::HEADERS_CUT;
        r
    }

    #[test]
    fn a_cut_read_request_takes_its_length_from_its_responses() {
        let mut last = rec(Opcode::RC_READ_RESPONSE_LAST, 12, 100);
        last.bth_flags = 2 << 4; // 2 pad bytes: 98 bytes of data
        let mut records = vec![
            cut(rec(Opcode::RC_READ_REQUEST, 10, 0)),
            cut(rec(Opcode::RC_READ_REQUEST, 13, 0)),
            rec(Opcode::RC_READ_RESPONSE_FIRST, 10, 1024),
            rec(Opcode::RC_READ_RESPONSE_MIDDLE, 11, 1024),
            last,
            rec(Opcode::RC_READ_RESPONSE_ONLY, 13, 7),
            cut(rec(Opcode::RC_READ_REQUEST, 14, 0)),
            // Its First is missing: the Last alone does not tell.
            rec(Opcode::RC_READ_RESPONSE_LAST, 15, 9),
        ];
        let roles = [Role::Responder, Role::Responder, Role::Requester, Role::Requester, Role::Requester];
        let roles = roles.into_iter().chain([Role::Requester, Role::Responder, Role::Requester]);
        let unknown = fill_connection(&mut records, &Unseen::default(), roles.enumerate());
        assert_eq!((records[0].dma_len(), records[0].reth_cut()), (2 * 1024 + 98, false));
        assert_eq!(records[1].dma_len(), 7);
        assert!(records[6].reth_cut() && unknown == 1);
    }

    /// Code review (session 23): a Last far past its First overflowed the length (a panic
    /// in debug builds, a wrapped length in release); and a First and a Last with copies
    /// missing between them (the First's message's Last and the next one's First among
    /// them) made one message of two.
    #[test]
    fn a_length_no_message_can_have_stays_unknown() {
        let far = || {
            let mut records = vec![
                cut(rec(Opcode::RC_READ_REQUEST, 0, 0)),
                rec(Opcode::RC_READ_RESPONSE_FIRST, 0, 4096),
                rec(Opcode::RC_READ_RESPONSE_LAST, 1 << 20, 100),
            ];
            for (i, r) in records.iter_mut().enumerate() {
                *r = r.with_seq(i as u64 + 1);
            }
            records
        };
        let roles = || [Role::Responder, Role::Requester, Role::Requester].into_iter().enumerate();
        let mut records = far();
        assert_eq!(fill_connection(&mut records, &Unseen::default(), roles()), 1);
        assert!(records[0].reth_cut());
        // Small enough to fit, but with a copy missing between First and Last.
        let mut records = far();
        records[2] = rec(Opcode::RC_READ_RESPONSE_LAST, 3, 100).with_seq(5);
        let unseen = Unseen::of(&records);
        assert_eq!(fill_connection(&mut records, &unseen, roles()), 1, "seqs 3 and 4 are missing");
        assert!(records[0].reth_cut());
        let mut records = far();
        records[2] = rec(Opcode::RC_READ_RESPONSE_LAST, 3, 100).with_seq(3);
        let unseen = Unseen::of(&records);
        assert_eq!(fill_connection(&mut records, &unseen, roles()), 0);
        assert_eq!(records[0].dma_len(), 3 * 4096 + 100);
    }
}
