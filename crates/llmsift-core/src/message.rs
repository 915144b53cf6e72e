//! The three output fields, as a whole message and as streaming deltas.
//!
//! Owns the folding rule that turns deltas into a message, the same rule an
//! OpenAI client applies: strings concatenate per field, tool calls merge by
//! `index`, a call's `id` and `name` come once in its first fragment and its
//! `arguments` fragments concatenate. Because one-shot parsing is "push
//! everything, then finish" folded by this rule, the two paths cannot drift.
//!
//! Invariant: an empty `reasoning` or `content` folds to `None` (JSON null).

use serde::Serialize;

/// One parsed assistant message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Message {
    /// The model's reasoning, `None` when there was none.
    pub reasoning: Option<String>,
    /// The visible answer, `None` when there was none.
    pub content: Option<String>,
    /// Tool calls in the order the model wrote them.
    pub tool_calls: Vec<ToolCall>,
}

/// A complete tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// The call id (`chatcmpl-tool-…`, or the model's own such as Kimi's `functions.f:0`).
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments as a JSON text (an object).
    pub arguments: String,
}

/// What one `push` or `finish` produced. Reused across calls: [`Delta::clear`]
/// keeps the allocations, so a caller that owns one `Delta` per stream does
/// not allocate per delta on the hot path.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delta {
    /// Reasoning text of this delta (empty: none).
    pub reasoning: String,
    /// Content text of this delta (empty: none).
    pub content: String,
    /// Tool call fragments, at most one per call index, in order.
    pub tool_calls: Vec<ToolCallDelta>,
    /// Argument buffers of cleared fragments, reused by the next fragments
    /// so a caller-owned `Delta` stops allocating after warm-up.
    #[serde(skip)]
    spare: Vec<String>,
    /// The order the parts were written in (see [`Delta::pieces`]); empty
    /// while the delta holds one kind of part, whose order needs no record.
    #[serde(skip)]
    runs: Vec<Run>,
    /// With the request setting `byte_spans`: the raw output this delta
    /// settled, in order (`crate::spans`); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<crate::spans::Span>,
}

/// One run of a delta's output, in the order it was written: `len` bytes of
/// reasoning or content, or the next entry of `tool_calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Run {
    Reasoning(usize),
    Content(usize),
    Call,
}

/// A part of a [`Delta`], in output order (see [`Delta::pieces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A run of reasoning text.
    Reasoning(&'a str),
    /// A run of content text.
    Content(&'a str),
    /// A tool call fragment.
    Call(&'a ToolCallDelta),
}

impl PartialEq for Delta {
    fn eq(&self, other: &Delta) -> bool {
        self.reasoning == other.reasoning
            && self.content == other.content
            && self.tool_calls == other.tool_calls
    }
}

impl Eq for Delta {}

/// A fragment of one tool call inside a [`Delta`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ToolCallDelta {
    /// Position of the call in the message (0-based).
    pub index: usize,
    /// Set in the call's first fragment only.
    pub id: Option<String>,
    /// Set in the call's first fragment only.
    pub name: Option<String>,
    /// The next piece of the arguments JSON text (may be empty).
    pub arguments: String,
}

impl Delta {
    /// Empties the delta, keeping its buffers (including the fragments'
    /// argument strings, for reuse).
    #[inline]
    pub fn clear(&mut self) {
        self.reasoning.clear();
        self.content.clear();
        self.runs.clear();
        if !self.spans.is_empty() {
            self.clear_spans();
        }
        while let Some(mut c) = self.tool_calls.pop() {
            c.arguments.clear();
            self.spare.push(c.arguments);
        }
    }

    /// Out of line: only byte accounting fills `spans`, and the drop loop
    /// would keep `clear` from inlining on the hot path.
    #[cold]
    #[inline(never)]
    fn clear_spans(&mut self) {
        self.spans.clear();
    }

    /// True when the delta carries nothing.
    pub fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.content.is_empty() && self.tool_calls.is_empty()
    }

    /// Appends reasoning text, in order after what the delta holds.
    #[inline(always)]
    pub fn push_reasoning(&mut self, s: &str) {
        self.push_text(true, s);
    }

    /// Appends content text, in order after what the delta holds.
    #[inline(always)]
    pub fn push_content(&mut self, s: &str) {
        self.push_text(false, s);
    }

    #[inline(always)]
    fn push_text(&mut self, reasoning: bool, s: &str) {
        if s.is_empty() {
            return;
        }
        let other = if reasoning { &self.content } else { &self.reasoning };
        if self.runs.is_empty() {
            if other.is_empty() && self.tool_calls.is_empty() {
                // One kind so far: its order needs no record.
                return if reasoning { self.reasoning.push_str(s) } else { self.content.push_str(s) };
            }
            self.record_order();
        }
        match (self.runs.last_mut(), reasoning) {
            (Some(Run::Reasoning(n)), true) | (Some(Run::Content(n)), false) => *n += s.len(),
            (_, true) => self.runs.push(Run::Reasoning(s.len())),
            (_, false) => self.runs.push(Run::Content(s.len())),
        }
        if reasoning {
            self.reasoning.push_str(s)
        } else {
            self.content.push_str(s)
        }
    }

    /// Starts the order record of a delta that so far held one kind of part
    /// (or text written to the fields directly, taken in the canonical order).
    fn record_order(&mut self) {
        if !self.reasoning.is_empty() {
            self.runs.push(Run::Reasoning(self.reasoning.len()));
        }
        if !self.content.is_empty() {
            self.runs.push(Run::Content(self.content.len()));
        }
        self.runs.extend(self.tool_calls.iter().map(|_| Run::Call));
    }

    /// Drops the reasoning, keeping the order of the rest.
    pub fn drop_reasoning(&mut self) {
        self.reasoning.clear();
        self.runs.retain(|r| !matches!(r, Run::Reasoning(_)));
    }

    /// Keeps the call fragments `keep` accepts, keeping the order of the rest.
    pub fn retain_calls(&mut self, mut keep: impl FnMut(&ToolCallDelta) -> bool) {
        let flags: Vec<bool> = self.tool_calls.iter().map(&mut keep).collect();
        if flags.iter().all(|&k| k) {
            return;
        }
        let mut i = 0;
        self.runs.retain(|r| {
            if *r != Run::Call {
                return true;
            }
            i += 1;
            flags.get(i - 1).copied().unwrap_or(true)
        });
        let mut j = 0;
        self.tool_calls.retain(|_| {
            j += 1;
            flags[j - 1]
        });
    }

    /// The delta's parts in the order they were written (reasoning and
    /// content in runs, call fragments between them), for dialects whose
    /// output is a sequence of items. Text written to the public fields
    /// directly, rather than by [`Delta::push_reasoning`] and
    /// [`Delta::push_content`], comes after the ordered runs: reasoning,
    /// then content, then the remaining calls.
    pub fn pieces(&self) -> impl Iterator<Item = Piece<'_>> {
        // Runs that do not add up (text written to the fields directly) are
        // not trusted: the pieces then come in the canonical order.
        let (mut rn, mut cn, mut kn) = (0, 0, 0);
        for run in &self.runs {
            match run {
                Run::Reasoning(n) => rn += n,
                Run::Content(n) => cn += n,
                Run::Call => kn += 1,
            }
        }
        let exact = rn == self.reasoning.len() && cn == self.content.len() && kn == self.tool_calls.len();
        let canonical = [Run::Reasoning(self.reasoning.len()), Run::Content(self.content.len())];
        let (own, fallback) = if exact {
            (Some(self.runs.iter().copied()), None)
        } else {
            (None, Some(canonical.into_iter().chain(self.tool_calls.iter().map(|_| Run::Call))))
        };
        let runs = own.into_iter().flatten().chain(fallback.into_iter().flatten());
        let (mut r, mut c, mut k) = (0usize, 0usize, 0usize);
        runs.filter_map(move |run| match run {
            Run::Reasoning(n) => {
                let s = &self.reasoning[r..r + n];
                r += n;
                (!s.is_empty()).then_some(Piece::Reasoning(s))
            }
            Run::Content(n) => {
                let s = &self.content[c..c + n];
                c += n;
                (!s.is_empty()).then_some(Piece::Content(s))
            }
            Run::Call => {
                k += 1;
                self.tool_calls.get(k - 1).map(Piece::Call)
            }
        })
    }

    /// Appends to the fragment of call `index`, opening one when the last
    /// fragment belongs to another call.
    pub(crate) fn call_fragment(&mut self, index: usize) -> &mut ToolCallDelta {
        if self.tool_calls.last().is_none_or(|c| c.index != index) {
            let only_calls = self.runs.is_empty() && self.reasoning.is_empty() && self.content.is_empty();
            if !only_calls && self.runs.is_empty() {
                self.record_order();
            }
            let arguments = self.spare.pop().unwrap_or_default();
            self.tool_calls.push(ToolCallDelta { index, arguments, ..Default::default() });
            if !only_calls {
                self.runs.push(Run::Call);
            }
        }
        self.tool_calls.last_mut().expect("just pushed")
    }

    /// Removes a trailing fragment that carries nothing (no id, name or text).
    pub(crate) fn drop_empty_fragment(&mut self) {
        if self
            .tool_calls
            .last()
            .is_some_and(|c| c.id.is_none() && c.name.is_none() && c.arguments.is_empty())
        {
            if let Some(c) = self.tool_calls.pop() {
                self.spare.push(c.arguments);
                if let Some(i) = self.runs.iter().rposition(|r| *r == Run::Call) {
                    self.runs.remove(i);
                }
            }
        }
    }

    /// Appends `other` after `self` (both deltas of one stream).
    pub fn append(&mut self, other: &Delta) {
        for s in &other.spans {
            crate::spans::push_span(&mut self.spans, s.clone());
        }
        for p in other.pieces() {
            match p {
                Piece::Reasoning(s) => self.push_reasoning(s),
                Piece::Content(s) => self.push_content(s),
                Piece::Call(c) => {
                    let f = self.call_fragment(c.index);
                    if c.id.is_some() {
                        f.id.clone_from(&c.id);
                    }
                    if c.name.is_some() {
                        f.name.clone_from(&c.name);
                    }
                    f.arguments.push_str(&c.arguments);
                }
            }
        }
    }
}

/// Folds deltas into a message the way an OpenAI client does.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    reasoning: String,
    content: String,
    calls: Vec<ToolCall>,
    spans: Vec<crate::spans::Span>,
}

impl Folder {
    /// Folds one delta in.
    pub fn push(&mut self, d: &Delta) {
        for s in &d.spans {
            crate::spans::push_span(&mut self.spans, s.clone());
        }
        self.reasoning.push_str(&d.reasoning);
        self.content.push_str(&d.content);
        for c in &d.tool_calls {
            while self.calls.len() <= c.index {
                self.calls.push(ToolCall::default());
            }
            let call = &mut self.calls[c.index];
            if let Some(id) = &c.id {
                call.id.push_str(id);
            }
            if let Some(name) = &c.name {
                call.name.push_str(name);
            }
            call.arguments.push_str(&c.arguments);
        }
    }

    /// Folds one delta in, taking its strings where nothing came before
    /// them (a one-shot parse's single delta becomes the message without
    /// copying its text).
    pub fn push_owned(&mut self, d: Delta) {
        fn join(to: &mut String, s: String) {
            if to.is_empty() {
                *to = s;
            } else {
                to.push_str(&s);
            }
        }
        for s in d.spans {
            crate::spans::push_span(&mut self.spans, s);
        }
        join(&mut self.reasoning, d.reasoning);
        join(&mut self.content, d.content);
        for c in d.tool_calls {
            while self.calls.len() <= c.index {
                self.calls.push(ToolCall::default());
            }
            let call = &mut self.calls[c.index];
            if let Some(id) = c.id {
                join(&mut call.id, id);
            }
            if let Some(name) = c.name {
                join(&mut call.name, name);
            }
            join(&mut call.arguments, c.arguments);
        }
    }

    /// The folded byte spans (`crate::spans`), adjacent spans of one kind
    /// merged: a stream's fold equals the one-shot spans.
    pub fn spans(&self) -> &[crate::spans::Span] {
        &self.spans
    }

    /// The folded message.
    pub fn finish(self) -> Message {
        let opt = |s: String| if s.is_empty() { None } else { Some(s) };
        Message { reasoning: opt(self.reasoning), content: opt(self.content), tool_calls: self.calls }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(d: &Delta) -> Vec<String> {
        d.pieces()
            .map(|p| match p {
                Piece::Reasoning(s) => format!("r:{s}"),
                Piece::Content(s) => format!("c:{s}"),
                Piece::Call(c) => format!("call:{}:{}", c.index, c.arguments),
            })
            .collect()
    }

    #[test]
    fn pieces_keep_the_written_order() {
        let mut d = Delta::default();
        d.push_reasoning("a");
        d.push_reasoning("b");
        d.call_fragment(0).arguments.push_str("{}");
        d.push_content("x");
        d.push_reasoning("c");
        assert_eq!(kinds(&d), ["r:ab", "call:0:{}", "c:x", "r:c"]);

        // Appending keeps both orders, and merges a run across the seam.
        let mut e = Delta::default();
        e.push_reasoning("d");
        e.call_fragment(1);
        d.append(&e);
        assert_eq!(kinds(&d), ["r:ab", "call:0:{}", "c:x", "r:cd", "call:1:"]);

        d.clear();
        assert_eq!(kinds(&d), Vec::<String>::new());
    }

    #[test]
    fn text_written_to_the_fields_comes_in_the_canonical_order() {
        let mut d = Delta::default();
        d.call_fragment(0);
        d.content.push('x');
        d.reasoning.push('r');
        assert_eq!(kinds(&d), ["r:r", "c:x", "call:0:"]);
        d.clear();
        d.call_fragment(2);
        d.drop_empty_fragment();
        d.push_content("y");
        assert_eq!(kinds(&d), ["c:y"]);
    }

    #[test]
    fn filtering_keeps_the_order_of_the_rest() {
        let mut d = Delta::default();
        d.push_reasoning("r");
        d.call_fragment(0);
        d.push_content("x");
        d.call_fragment(1);
        d.push_content("y");
        d.retain_calls(|c| c.index == 1);
        d.drop_reasoning();
        assert_eq!(kinds(&d), ["c:x", "call:1:", "c:y"]);
    }
}

/// A [`Delta`] in a carried parser state (`crate::state`), with the order
/// of its parts: a held group's buffer is released with it later.
pub(crate) mod full_delta {
    use super::{Delta, Run, ToolCallDelta};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Ref<'a>(&'a str, &'a str, &'a [ToolCallDelta], &'a [Run]);

    #[derive(Deserialize)]
    struct Owned(String, String, Vec<ToolCallDelta>, Vec<Run>);

    pub fn serialize<S: Serializer>(d: &Delta, s: S) -> Result<S::Ok, S::Error> {
        Ref(&d.reasoning, &d.content, &d.tool_calls, &d.runs).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Delta, D::Error> {
        let Owned(reasoning, content, tool_calls, runs) = Owned::deserialize(d)?;
        Ok(Delta { reasoning, content, tool_calls, spare: Vec::new(), runs, spans: Vec::new() })
    }
}
