// Lumina mirror format (docs/formats.md §1), shared by the switch programs in p4/ and the
// Rust code in dataplane/wire. tests/tests/p4_constants.rs checks every constant here
// against its Rust twin, so a change on one side fails the build until the other follows.

#ifndef _ROCESCOPE_LUMINA_MIRROR_P4_
#define _ROCESCOPE_LUMINA_MIRROR_P4_

// UDP destination port of RoCEv2, restored by the capture host.
const bit<16> ROCE_UDP_PORT = 4791;
// UDP destination port the egress writes into every mirrored copy (Lumina's choice).
const bit<16> LUMINA_MIRROR_UDP_PORT = 9741;

// Event type, written into the IPv4 TTL (IPv6 hop limit) of the mirrored copy.
const bit<8> LUMINA_EVENT_NONE = 0;
const bit<8> LUMINA_EVENT_DROP = 1;
const bit<8> LUMINA_EVENT_ECN = 2;
const bit<8> LUMINA_EVENT_CORRUPT = 3;

// The mirror sequence number (in the low 32 bits of the source MAC) runs 1..=MAX, then 1.
const bit<32> LUMINA_MIRROR_SEQ_MAX = 0x7fffffff;
// The switch ingress timestamp in the destination MAC is 48 bits of nanoseconds.
const bit<48> LUMINA_TIMESTAMP_MAX = 0xffffffffffff;
// A bit-error event flips the IPv4 identification with this mask.
const bit<16> LUMINA_CORRUPT_IDENT_XOR = 0xffff;

#endif
