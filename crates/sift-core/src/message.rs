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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
    pub fn clear(&mut self) {
        self.reasoning.clear();
        self.content.clear();
        while let Some(mut c) = self.tool_calls.pop() {
            c.arguments.clear();
            self.spare.push(c.arguments);
        }
    }

    /// True when the delta carries nothing.
    pub fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.content.is_empty() && self.tool_calls.is_empty()
    }

    /// Appends to the fragment of call `index`, opening one when the last
    /// fragment belongs to another call.
    pub(crate) fn call_fragment(&mut self, index: usize) -> &mut ToolCallDelta {
        if self.tool_calls.last().is_none_or(|c| c.index != index) {
            let arguments = self.spare.pop().unwrap_or_default();
            self.tool_calls.push(ToolCallDelta { index, arguments, ..Default::default() });
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
            }
        }
    }

    /// Appends `other` after `self` (both deltas of one stream).
    pub fn append(&mut self, other: &Delta) {
        self.reasoning.push_str(&other.reasoning);
        self.content.push_str(&other.content);
        for c in &other.tool_calls {
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

/// Folds deltas into a message the way an OpenAI client does.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    reasoning: String,
    content: String,
    calls: Vec<ToolCall>,
}

impl Folder {
    /// Folds one delta in.
    pub fn push(&mut self, d: &Delta) {
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

    /// The folded message.
    pub fn finish(self) -> Message {
        let opt = |s: String| if s.is_empty() { None } else { Some(s) };
        Message { reasoning: opt(self.reasoning), content: opt(self.content), tool_calls: self.calls }
    }
}
