//! The per-packet comment a shard carries, so tshark/Wireshark users see what the dataplane
//! made of each frame (`frame.comment`), and readers recover it without re-parsing.
//!
//! Grammar (stable; documented in docs/formats.md):
//! `mirror seq=<1..=2147483647> event=<none|drop|ecn|corrupt>` | `roce` | `pfc` | `pause`
//! | `other` | `malformed: <error kind>`.

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

const MIRROR_PREFIX: &[u8] = b"mirror seq=";
const EVENT_PREFIX: &[u8] = b" event=";
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

    /// Renders into `buf` without allocating and returns the used prefix.
    pub fn render<'b>(&self, buf: &'b mut [u8; MAX_COMMENT]) -> &'b [u8] {
        let mut w = Cursor { buf, len: 0 };
        match *self {
            Annotation::Mirrored { seq, event } => {
                w.put(MIRROR_PREFIX);
                w.put(itoa::Buffer::new().format(seq).as_bytes());
                w.put(EVENT_PREFIX);
                w.put(event.name().as_bytes());
            }
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
            let seq = std::str::from_utf8(&rest[..split]).ok()?.parse().ok()?;
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
    fn foreign_comments_are_not_ours() {
        for text in [
            &b""[..],
            b"hello",
            b"mirror seq=x event=drop",
            b"mirror seq=5 event=boom",
            b"malformed: nope",
            b"mirrored_roce",
        ] {
            assert_eq!(Annotation::parse(text), None);
        }
    }
}
