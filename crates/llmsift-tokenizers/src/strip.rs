//! [`MarkerStrip`]: `skip_special_tokens` for text without a tokenizer.
//!
//! With token ids, a detokenizer skips the tokens its vocabulary marks
//! special. Text alone does not say which spellings were special tokens, so
//! Sift never guesses: the caller lists the spellings to remove (a
//! deployment setting), and they are removed wherever they occur, exactly
//! as written. Nothing else is touched.
//!
//! Streaming: a tail that is a proper prefix of a listed spelling is held
//! until the next delta decides it (`[TOOL_` before `CALLS]`), so at most
//! the longest spelling's length minus one byte is held. At each position
//! the longest listed spelling wins, and a position is decided only once
//! enough bytes are there to tell, so the output does not depend on how the
//! text was cut: pushing everything then finishing gives the one-shot text.

/// Removes listed marker spellings from a text stream.
#[derive(Debug, Clone, Default)]
pub struct MarkerStrip {
    /// Longest first, so the longest spelling at a position wins.
    markers: Vec<String>,
    held: String,
}

impl MarkerStrip {
    /// A stripper for these spellings (empty ones are ignored).
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(markers: I) -> Self {
        let mut markers: Vec<String> =
            markers.into_iter().map(Into::into).filter(|m| !m.is_empty()).collect();
        markers.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        markers.dedup();
        MarkerStrip { markers, held: String::new() }
    }

    /// Whether there is nothing to strip.
    pub fn is_empty(&self) -> bool {
        self.markers.is_empty()
    }

    /// The text of one delta with the spellings removed; a possible start of
    /// a spelling at its end is held for the next delta.
    pub fn push(&mut self, text: &str) -> String {
        let mut buf = std::mem::take(&mut self.held);
        buf.push_str(text);
        self.run(&buf, false)
    }

    /// Releases what is held (the output ended: it was no spelling).
    pub fn finish(&mut self) -> String {
        let buf = std::mem::take(&mut self.held);
        self.run(&buf, true)
    }

    fn run(&mut self, buf: &str, at_end: bool) -> String {
        let mut out = String::with_capacity(buf.len());
        let mut i = 0;
        while i < buf.len() {
            let rest = &buf[i..];
            if !at_end && self.markers.iter().any(|m| m.len() > rest.len() && m.starts_with(rest)) {
                self.held.push_str(rest);
                return out;
            }
            if let Some(m) = self.markers.iter().find(|m| rest.starts_with(m.as_str())) {
                i += m.len();
                continue;
            }
            let ch = rest.chars().next().expect("non-empty rest");
            out.push(ch);
            i += ch.len_utf8();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::MarkerStrip;

    fn cut_everywhere(markers: &[&str], text: &str, want: &str) {
        let mut one = MarkerStrip::new(markers.iter().copied());
        let mut whole = one.push(text);
        whole.push_str(&one.finish());
        assert_eq!(whole, want);
        for cut in (1..text.len()).filter(|c| text.is_char_boundary(*c)) {
            let mut s = MarkerStrip::new(markers.iter().copied());
            let mut got = s.push(&text[..cut]);
            got.push_str(&s.push(&text[cut..]));
            got.push_str(&s.finish());
            assert_eq!(got, want, "cut at {cut}");
        }
    }

    #[test]
    fn removes_listed_spellings_under_every_cut() {
        cut_everywhere(&["[TOOL_CALLS]", "[ARGS]"], "a[TOOL_CALLS]f[ARGS]{}[TOOL_", "af{}[TOOL_");
        cut_everywhere(&["<|a|>", "<|a|>b"], "x<|a|>by<|a|>", "xy");
        cut_everywhere(&["<|end|>"], "日本<|end|>語", "日本語");
        cut_everywhere(&[], "<|end|>", "<|end|>");
    }
}
