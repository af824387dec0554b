//! Python positions count characters; the engine's count bytes.

/// The character boundaries of a text (none kept for ASCII text, where
/// the two counts agree).
pub(crate) struct Offsets {
    /// Byte offset of each character, then the text's length.
    starts: Option<Vec<usize>>,
    len: usize,
}

impl Offsets {
    pub(crate) fn new(text: &str) -> Offsets {
        let starts = (!text.is_ascii()).then(|| {
            text.char_indices()
                .map(|(b, _)| b)
                .chain([text.len()])
                .collect()
        });
        Offsets {
            starts,
            len: text.len(),
        }
    }

    fn chars_len(&self) -> usize {
        self.starts.as_ref().map_or(self.len, |s| s.len() - 1)
    }

    fn byte(&self, char_pos: usize) -> usize {
        match &self.starts {
            None => char_pos,
            Some(s) => s[char_pos],
        }
    }

    fn char(&self, byte_pos: usize) -> usize {
        match &self.starts {
            None => byte_pos,
            Some(s) => s
                .binary_search(&byte_pos)
                .expect("matches end on character boundaries"),
        }
    }

    /// `pos`/`endpos` (characters, clamped as Python clamps them) in bytes.
    pub(crate) fn window(&self, pos: usize, endpos: usize) -> (usize, usize) {
        let n = self.chars_len();
        let end = endpos.min(n);
        let start = pos.min(end);
        (self.byte(start), self.byte(end))
    }

    /// Character spans as byte spans.
    pub(crate) fn bytes(&self, spans: &[Option<(usize, usize)>]) -> Vec<Option<(usize, usize)>> {
        spans
            .iter()
            .map(|s| s.map(|(a, b)| (self.byte(a), self.byte(b))))
            .collect()
    }

    /// Byte spans as character spans.
    pub(crate) fn chars(&self, spans: &[Option<(usize, usize)>]) -> Vec<Option<(usize, usize)>> {
        spans
            .iter()
            .map(|s| s.map(|(a, b)| (self.char(a), self.char(b))))
            .collect()
    }
}
