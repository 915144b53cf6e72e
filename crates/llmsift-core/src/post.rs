//! Message-level filters applied to the engine's deltas, between the engine
//! and the caller: behaviours that depend on the whole message rather than on
//! the text at hand. Each is a format option, off by default; a parser whose
//! format uses none of them never goes through this module.
//!
//! - `[vllm.text_loss] text_around_calls` (tool formats), with the request's
//!   `vllm_text_loss` (the parser's policy, `Text::Lost`, settled when it
//!   is built): the text around calls is dropped when the output has
//!   a call (vLLM's answer; by default Sift keeps it). Content is held until the output
//!   ends or the first call appears (then the held text is discarded and
//!   later content dropped as it comes).
//! - `recover_newlines` (reasoning formats): literal escapes (`\n`, `\r`,
//!   `\r\n`) in reasoning and content become newlines, except inside code
//!   spans, code blocks, LaTeX spans and runs of backslashes. A proper prefix
//!   of an escape or of a closing marker is held until the next delta.
//! - `force_content` (reasoning formats): a message with blank (or, with
//!   `only_absent`, no) content and no calls answers with its reasoning as content. Reasoning (and blank
//!   content) is held until non-blank content or a call shows the swap
//!   cannot happen; at the end the held reasoning becomes content.
//!
//! Invariant: every filter is a function of the concatenated input so far
//! (never of how it was cut), so streaming still equals one-shot. Held text
//! is released, never lost, except where an option says it is dropped.

use crate::engine::Text;
use crate::message::{Delta, Piece, ToolCallDelta};

/// The filters one request runs.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Post {
    drop_text_with_calls: Option<DropText>,
    newlines: Option<(Unescape, Unescape)>,
    force: Option<Force>,
    #[serde(skip)]
    scratch: Delta,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct DropText {
    called: bool,
    held: String,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Force {
    /// Whitespace-only content counts as content (no swap).
    only_absent: bool,
    /// `include_reasoning: false`: reasoning is dropped unless it is swapped.
    hide: bool,
    released: bool,
    reasoning: String,
    content: String,
}

impl Post {
    /// The filters a format and request ask for; `None` when there are none.
    /// `force_content` is `Some((only_absent, hide_reasoning))` when on; with
    /// `hide_reasoning` (`include_reasoning: false`) the reasoning only ever
    /// shows as the swapped content.
    pub fn new(
        text_with_calls: Text,
        recover_newlines: bool,
        force_content: Option<(bool, bool)>,
    ) -> Option<Post> {
        let drop_text_with_calls = text_with_calls == Text::Lost;
        if !drop_text_with_calls && !recover_newlines && force_content.is_none() {
            return None;
        }
        Some(Post {
            drop_text_with_calls: drop_text_with_calls.then(DropText::default),
            newlines: recover_newlines.then(Default::default),
            force: force_content.map(|(only_absent, hide)| Force { only_absent, hide, ..Force::default() }),
            scratch: Delta::default(),
        })
    }

    /// A buffer for the engine to write one delta into.
    pub fn scratch(&mut self) -> Delta {
        let mut d = std::mem::take(&mut self.scratch);
        d.clear();
        d
    }

    /// Filters what the engine wrote into `d` and appends the result to `out`.
    /// The parts go through the filters one by one in the order they were
    /// written, so the output keeps that order (see [`Delta::pieces`]).
    pub fn apply(&mut self, d: Delta, last: bool, out: &mut Delta) {
        let mut parts: Vec<Part> = d
            .pieces()
            .map(|p| match p {
                Piece::Reasoning(s) => Part::Reasoning(s.to_string()),
                Piece::Content(s) => Part::Content(s.to_string()),
                Piece::Call(c) => Part::Call(c.clone()),
            })
            .collect();
        if let Some(t) = &mut self.drop_text_with_calls {
            parts = t.run(parts, last);
        }
        if let Some((r, c)) = &mut self.newlines {
            parts = unescape(r, c, parts, last);
        }
        if let Some(f) = &mut self.force {
            parts = f.run(parts, last);
        }
        for p in parts {
            match p {
                Part::Reasoning(s) => out.push_reasoning(&s),
                Part::Content(s) => out.push_content(&s),
                Part::Call(c) => {
                    let mut one = Delta::default();
                    let f = one.call_fragment(c.index);
                    *f = c;
                    out.append(&one);
                }
            }
        }
        self.scratch = d;
    }
}

/// A part of a delta on its way through the filters.
enum Part {
    Reasoning(String),
    Content(String),
    Call(ToolCallDelta),
}

impl DropText {
    fn run(&mut self, parts: Vec<Part>, last: bool) -> Vec<Part> {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            match p {
                Part::Call(c) => {
                    self.called = true;
                    self.held.clear();
                    out.push(Part::Call(c));
                }
                Part::Content(s) => {
                    if !self.called {
                        self.held.push_str(&s);
                    }
                }
                r => out.push(r),
            }
        }
        if last && !self.called && !self.held.is_empty() {
            out.push(Part::Content(std::mem::take(&mut self.held)));
        }
        out
    }
}

/// Escaped-newline recovery on reasoning and content. Reasoning's held tail
/// is released as soon as content or a call follows it.
fn unescape(r: &mut Unescape, c: &mut Unescape, parts: Vec<Part>, last: bool) -> Vec<Part> {
    let mut out = Vec::with_capacity(parts.len() + 2);
    let emit = |out: &mut Vec<Part>, reasoning: bool, s: String| {
        if !s.is_empty() {
            out.push(if reasoning { Part::Reasoning(s) } else { Part::Content(s) });
        }
    };
    for p in parts {
        match p {
            Part::Reasoning(text) => {
                let mut s = String::new();
                r.feed(&text, false, &mut s);
                emit(&mut out, true, s);
            }
            other => {
                let mut s = String::new();
                r.feed("", true, &mut s);
                emit(&mut out, true, s);
                match other {
                    Part::Content(text) => {
                        let mut s = String::new();
                        c.feed(&text, false, &mut s);
                        emit(&mut out, false, s);
                    }
                    call => out.push(call),
                }
            }
        }
    }
    if last {
        let (mut a, mut b) = (String::new(), String::new());
        r.feed("", true, &mut a);
        c.feed("", true, &mut b);
        emit(&mut out, true, a);
        emit(&mut out, false, b);
    }
    out
}

impl Force {
    fn run(&mut self, parts: Vec<Part>, last: bool) -> Vec<Part> {
        let mut out = Vec::with_capacity(parts.len() + 2);
        for p in parts {
            if self.released {
                match p {
                    Part::Reasoning(_) if self.hide => {}
                    p => out.push(p),
                }
                continue;
            }
            match p {
                Part::Reasoning(s) => self.reasoning.push_str(&s),
                Part::Content(s) => {
                    self.content.push_str(&s);
                    let real = if self.only_absent {
                        !self.content.is_empty()
                    } else {
                        !self.content.trim().is_empty()
                    };
                    if real {
                        self.release(&mut out);
                    }
                }
                call => {
                    self.release(&mut out);
                    out.push(call);
                }
            }
        }
        if last && !self.released {
            // Swapped: the reasoning answers, the blank content is reasoning.
            let (r, c) = (std::mem::take(&mut self.content), std::mem::take(&mut self.reasoning));
            if !self.hide && !r.is_empty() {
                out.push(Part::Reasoning(r));
            }
            if !c.is_empty() {
                out.push(Part::Content(c));
            }
        }
        out
    }

    /// Lets what was held go, and everything after it.
    fn release(&mut self, out: &mut Vec<Part>) {
        self.released = true;
        let (r, c) = (std::mem::take(&mut self.reasoning), std::mem::take(&mut self.content));
        if !self.hide && !r.is_empty() {
            out.push(Part::Reasoning(r));
        }
        if !c.is_empty() {
            out.push(Part::Content(c));
        }
    }
}

/// One stream's escaped-newline recovery (reasoning and content each have one).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Unescape {
    /// The marker that closes the code or LaTeX span we are in.
    #[serde(with = "closing")]
    closing: closing::Marker,
    /// A tail that may still become an escape or a marker.
    pending: String,
    /// The text so far ends in a run of two or more backslashes, emitted as
    /// written: backslashes the next delta starts with belong to it (fuzz:
    /// a run cut in two read its second half as an escape).
    in_run: bool,
}

impl Unescape {
    fn feed(&mut self, text: &str, last: bool, out: &mut String) {
        if text.is_empty() && (self.pending.is_empty() || !last) {
            return;
        }
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(text);
        let s = buf.as_str();
        let mut i = 0;
        if std::mem::take(&mut self.in_run) {
            i = s.bytes().take_while(|b| *b == b'\\').count();
            out.push_str(&s[..i]);
            if i == s.len() && !last {
                self.in_run = true;
                return;
            }
        }
        while i < s.len() {
            let rest = &s[i..];
            if let Some(m) = self.closing {
                if rest.starts_with(m) {
                    out.push_str(m);
                    i += m.len();
                    self.closing = None;
                } else if !last && m.starts_with(rest) {
                    self.pending.push_str(rest);
                    return;
                } else {
                    let n = rest.chars().next().map_or(1, char::len_utf8);
                    out.push_str(&rest[..n]);
                    i += n;
                }
                continue;
            }
            match rest.as_bytes()[0] {
                b'`' => {
                    if !last && (rest == "`" || rest == "``") {
                        self.pending.push_str(rest);
                        return;
                    }
                    let m = if rest.starts_with("```") { "```" } else { "`" };
                    out.push_str(m);
                    i += m.len();
                    self.closing = Some(m);
                }
                b'$' => {
                    if !last && rest == "$" {
                        self.pending.push_str(rest);
                        return;
                    }
                    let m = if rest.starts_with("$$") { "$$" } else { "$" };
                    out.push_str(m);
                    i += m.len();
                    self.closing = Some(m);
                }
                b'\\' => {
                    let run = rest.bytes().take_while(|b| *b == b'\\').count();
                    if run > 1 {
                        out.push_str(&rest[..run]);
                        i += run;
                        self.in_run = i == s.len() && !last;
                        continue;
                    }
                    if !last && (rest == "\\" || rest == "\\r" || rest == "\\r\\") {
                        self.pending.push_str(rest);
                        return;
                    }
                    if rest.starts_with("\\r\\n") {
                        out.push('\n');
                        i += 4;
                    } else if rest.starts_with("\\n") || rest.starts_with("\\r") {
                        out.push('\n');
                        i += 2;
                    } else if rest.starts_with("\\(") {
                        out.push_str("\\(");
                        i += 2;
                        self.closing = Some("\\)");
                    } else if rest.starts_with("\\[") {
                        out.push_str("\\[");
                        i += 2;
                        self.closing = Some("\\]");
                    } else {
                        out.push('\\');
                        i += 1;
                    }
                }
                _ => {
                    // Up to the next byte that can start something.
                    let n = rest
                        .bytes()
                        .position(|b| matches!(b, b'`' | b'$' | b'\\'))
                        .unwrap_or(rest.len())
                        .max(1);
                    let n = (n..=rest.len()).find(|k| rest.is_char_boundary(*k)).unwrap_or(rest.len());
                    out.push_str(&rest[..n]);
                    i += n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(parts: &[&str]) -> String {
        let mut u = Unescape::default();
        let mut out = String::new();
        for (k, p) in parts.iter().enumerate() {
            u.feed(p, k + 1 == parts.len(), &mut out);
        }
        out
    }

    #[test]
    fn escapes_recovered_outside_code_in_any_split() {
        let text = "a\\nb `x\\ny` c\\r\\nd $m\\n$ e\\\\n ```\\n``` f\\\\\\\\n g\\";
        let want = "a\nb `x\\ny` c\nd $m\\n$ e\\\\n ```\\n``` f\\\\\\\\n g\\";
        assert_eq!(run(&[text]), want);
        for cut in 0..=text.len() {
            if !text.is_char_boundary(cut) {
                continue;
            }
            assert_eq!(run(&[&text[..cut], &text[cut..], ""]), want, "cut at {cut}");
        }
        for k in 1..text.len() {
            let parts: Vec<&str> =
                (0..text.len()).step_by(k).map(|i| &text[i..(i + k).min(text.len())]).collect();
            let mut parts = parts;
            parts.push("");
            assert_eq!(run(&parts), want, "chunks of {k}");
        }
    }

    #[test]
    fn force_content_swaps_only_when_content_is_blank() {
        let mut p = Post::new(Text::Kept, false, Some((false, false))).expect("filter");
        let mut out = Delta::default();
        let mut d = p.scratch();
        d.reasoning.push_str("think");
        p.apply(d, false, &mut out);
        let mut d = p.scratch();
        d.content.push('\n');
        p.apply(d, true, &mut out);
        assert_eq!((out.reasoning.as_str(), out.content.as_str()), ("\n", "think"));

        let mut p = Post::new(Text::Kept, false, Some((false, false))).expect("filter");
        let mut out = Delta::default();
        let mut d = p.scratch();
        d.reasoning.push_str("think");
        d.content.push_str(" answer");
        p.apply(d, false, &mut out);
        assert_eq!((out.reasoning.as_str(), out.content.as_str()), ("think", " answer"));
    }
}

/// `Unescape::closing` in a carried state (`crate::state`): the marker's
/// text, read back as the one static marker it names.
mod closing {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Named, so serde's derive does not take the field for borrowed text.
    pub type Marker = Option<&'static str>;

    /// Every marker `Unescape` closes a span with.
    const MARKERS: [&str; 6] = ["```", "`", "$$", "$", "\\)", "\\]"];

    pub fn serialize<S: Serializer>(m: &Option<&'static str>, s: S) -> Result<S::Ok, S::Error> {
        m.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(m) => MARKERS
                .iter()
                .find(|k| **k == m)
                .map(|k| Some(*k))
                .ok_or_else(|| serde::de::Error::custom("unknown span marker")),
        }
    }
}
