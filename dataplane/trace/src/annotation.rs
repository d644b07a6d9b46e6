//! What the dataplane made of each frame, carried by the frame's block in a shard (and in
//! `reconstruct`'s trace.pcapng), so tshark/Wireshark users see it and readers recover it
//! without re-parsing.
//!
//! A mirrored copy's seq is its block's packet id (`frame.packet_id`, 0 for anything else).
//! The comment (`frame.comment`) says the rest, and is left out where there is no rest: a
//! copy without an event has none. Grammar (stable; documented in docs/formats.md):
//! `mirror seq=<1..=2147483647> event=<drop|ecn|corrupt>` | `roce` | `pfc` | `pause`
//! | `other` | `malformed: <error kind>`. (`event=none` is read too: earlier shards wrote it.)

use crate::pcapng::MAX_COMMENT;
use wire::frame::FrameClass;
use wire::mirror::Event;
use wire::ErrorKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Annotation {
    /// A Lumina-mirrored RoCE copy, restored.
    Mirrored { seq: u32, event: Event },
    /// A well-formed frame that is not a mirrored copy (never `FrameClass::MirroredRoce`).
    Class(FrameClass),
    /// A frame that failed to parse; recorded as received, unrestored.
    Malformed(ErrorKind),
}

const MIRROR_PREFIX: &[u8; 11] = b"mirror seq=";
const EVENT_PREFIX: &[u8; 7] = b" event=";
const MALFORMED_PREFIX: &[u8] = b"malformed: ";

/// The manifest's `classes` key for frames that failed to parse.
pub const MALFORMED_CLASS: &str = "malformed";

impl Annotation {
    /// The manifest's `classes` key this packet counts under.
    pub fn class_name(&self) -> &'static str {
        match self {
            Annotation::Mirrored { .. } => FrameClass::MirroredRoce.name(),
            Annotation::Class(c) => c.name(),
            Annotation::Malformed(_) => MALFORMED_CLASS,
        }
    }

    /// The block comment: the rendering, or nothing for a copy without an event (the
    /// packet id is its seq; see [`Annotation::of_block`]). A copy without an event is
    /// most of a trace, and its comment would be a seventh of the trace's bytes.
    pub fn comment<'b>(&self, buf: &'b mut [u8; MAX_COMMENT]) -> &'b [u8] {
        match self {
            Annotation::Mirrored { event: Event::None, .. } => &[],
            _ => self.render(buf),
        }
    }

    /// What a block with this packet id and comment (as [`Annotation::comment`] writes
    /// them) says; `None` for a block that is not ours.
    pub fn of_block(packet_id: Option<u64>, comment: Option<&[u8]>) -> Option<Annotation> {
        match comment.filter(|c| !c.is_empty()) {
            Some(text) => Annotation::parse(text),
            None => {
                let seq = u32::try_from(packet_id?).ok().filter(|s| (1..=wire::mirror::SEQ_MAX).contains(s))?;
                Some(Annotation::Mirrored { seq, event: Event::None })
            }
        }
    }

    /// Renders into `buf` without allocating and returns the used prefix.
    pub fn render<'b>(&self, buf: &'b mut [u8; MAX_COMMENT]) -> &'b [u8] {
        let mut w = Cursor { buf, len: 0 };
        match *self {
            Annotation::Mirrored { seq, event } => return render_mirrored(seq, event, buf),
            Annotation::Class(class) => w.put(class.name().as_bytes()),
            Annotation::Malformed(kind) => {
                w.put(MALFORMED_PREFIX);
                w.put(kind.name().as_bytes());
            }
        }
        let len = w.len;
        &buf[..len]
    }

    /// Parses a comment written by [`Annotation::render`]; `None` for anything else.
    pub fn parse(text: &[u8]) -> Option<Annotation> {
        if let Some(rest) = text.strip_prefix(MIRROR_PREFIX) {
            let split = rest.iter().position(|&b| b == b' ')?;
            // A seq the switch never gives (0, past the wrap) is no copy's: ring arithmetic
            // would take it for another seq.
            let seq = std::str::from_utf8(&rest[..split]).ok()?.parse().ok()?;
            let seq = Some(seq).filter(|s| (1..=wire::mirror::SEQ_MAX).contains(s))?;
            let event = rest[split..].strip_prefix(EVENT_PREFIX)?;
            let event = Event::ALL.into_iter().find(|e| e.name().as_bytes() == event)?;
            return Some(Annotation::Mirrored { seq, event });
        }
        if let Some(kind) = text.strip_prefix(MALFORMED_PREFIX) {
            let kind = ErrorKind::ALL.into_iter().find(|k| k.name().as_bytes() == kind)?;
            return Some(Annotation::Malformed(kind));
        }
        FrameClass::ALL
            .into_iter()
            .filter(|c| *c != FrameClass::MirroredRoce)
            .find(|c| c.name().as_bytes() == text)
            .map(Annotation::Class)
    }
}

/// `mirror seq=<seq> event=<event>`, with fixed-size copies only. When every copy had a
/// comment, perf put the small variable-length copies this replaces (a libc call each) and
/// itoa at ~7 % of `reconstruct`'s CPU samples.
fn render_mirrored(seq: u32, event: Event, buf: &mut [u8; MAX_COMMENT]) -> &[u8] {
    let start = MIRROR_PREFIX.len();
    buf[..start].copy_from_slice(MIRROR_PREFIX);
    let end = start + seq.checked_ilog10().unwrap_or(0) as usize + 1;
    let mut rest = seq;
    for digit in buf[start..end].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let (suffix, len) = &EVENT_SUFFIXES[event.index()];
    buf[end..end + SUFFIX_ROOM].copy_from_slice(suffix);
    &buf[..end + len]
}

/// Room for ` event=<name>` in [`EVENT_SUFFIXES`].
const SUFFIX_ROOM: usize = 16;

/// ` event=<name>` for each event (by [`Event::index`]), zero-padded, and its length.
const EVENT_SUFFIXES: [([u8; SUFFIX_ROOM], usize); Event::COUNT] = {
    let mut table = [([0u8; SUFFIX_ROOM], 0); Event::COUNT];
    let mut e = 0;
    while e < Event::COUNT {
        let name = Event::ALL[e].name().as_bytes();
        assert!(Event::ALL[e].index() == e && EVENT_PREFIX.len() + name.len() <= SUFFIX_ROOM);
        let (text, len) = &mut table[e];
        let mut i = 0;
        while i < EVENT_PREFIX.len() + name.len() {
            text[i] = if i < EVENT_PREFIX.len() { EVENT_PREFIX[i] } else { name[i - EVENT_PREFIX.len()] };
            i += 1;
        }
        *len = i;
        e += 1;
    }
    table
};

/// Bounded writer into the comment buffer; silently stops at [`MAX_COMMENT`] (all our
/// renderings are far shorter, which the tests pin down).
struct Cursor<'b> {
    buf: &'b mut [u8; MAX_COMMENT],
    len: usize,
}

impl Cursor<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(MAX_COMMENT - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_annotations() -> Vec<Annotation> {
        let mut all = Vec::new();
        for event in Event::ALL {
            for seq in [1, 9, 1_000_000, wire::mirror::SEQ_MAX] {
                all.push(Annotation::Mirrored { seq, event });
            }
        }
        for class in FrameClass::ALL {
            if class != FrameClass::MirroredRoce {
                all.push(Annotation::Class(class));
            }
        }
        for kind in ErrorKind::ALL {
            all.push(Annotation::Malformed(kind));
        }
        all
    }

    #[test]
    fn render_and_parse_are_inverse_and_never_truncate() {
        for a in all_annotations() {
            let mut buf = [0u8; MAX_COMMENT];
            let text = a.render(&mut buf).to_vec();
            assert!(text.len() < MAX_COMMENT, "{a:?} renders too long");
            assert_eq!(Annotation::parse(&text), Some(a), "{}", String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn mirrored_rendering_is_the_documented_text() {
        let mut buf = [0u8; MAX_COMMENT];
        let a = Annotation::Mirrored { seq: 42, event: Event::Ecn };
        assert_eq!(a.render(&mut buf), b"mirror seq=42 event=ecn");
    }

    #[test]
    fn mirrored_rendering_has_every_digit_at_every_width() {
        let mut seqs = vec![1, wire::mirror::SEQ_MAX, u32::MAX];
        for p in 1..=9 {
            let ten = 10u32.pow(p);
            seqs.extend([ten - 1, ten, ten + 1, ten / 10 * 7 + 3]);
        }
        let mut buf = [b'#'; MAX_COMMENT];
        for seq in seqs {
            for event in Event::ALL {
                let want = format!("mirror seq={seq} event={}", event.name());
                let got = Annotation::Mirrored { seq, event }.render(&mut buf);
                assert_eq!(String::from_utf8_lossy(got), want);
            }
        }
    }

    #[test]
    fn foreign_comments_are_not_ours() {
        for text in [
            &b""[..],
            b"hello",
            b"mirror seq=x event=drop",
            b"mirror seq=5 event=boom",
            b"mirror seq=0 event=drop",
            b"mirror seq=2147483648 event=none",
            b"malformed: nope",
            b"mirrored_roce",
        ] {
            assert_eq!(Annotation::parse(text), None);
        }
    }
}
