//! Text written after a call while the call may still grow: the rule the
//! Responses and Anthropic dialects share so that their items (blocks)
//! never overlap, as both APIs stream them one at a time.
//!
//! The core keeps a call open until the next call or the end, because a
//! format may still write its arguments after some text. A call whose
//! arguments are already a whole JSON object can take no more (the core
//! only ever appends to valid JSON), so its item ends as the text starts.
//! Otherwise the text is held, in order, and follows the call's item when
//! the call ends. The decision is a function of the bytes so far, so a
//! one-shot answer and any cut of the stream make the same items.

use serde_json::Value;

/// Held text and what is known of the open call.
#[derive(Debug, Clone, Default)]
pub(crate) struct AfterCall {
    /// Text that came while the open call could still grow (`true`: reasoning).
    held: Vec<(bool, String)>,
    /// Whether the open call's arguments are whole, once asked; reset when
    /// they grow, so held text does not reparse them on every delta.
    whole: Option<bool>,
}

impl AfterCall {
    /// Whether the open call, with arguments `args` so far, can take no more.
    pub(crate) fn call_is_whole(&mut self, args: &str) -> bool {
        *self.whole.get_or_insert_with(|| serde_json::from_str::<Value>(args).is_ok_and(|v| v.is_object()))
    }

    /// The open call's arguments grew (or another call opened).
    pub(crate) fn args_grew(&mut self) {
        self.whole = None;
    }

    /// Holds text until the open call ends.
    pub(crate) fn hold(&mut self, reasoning: bool, s: &str) {
        match self.held.last_mut() {
            Some((r, held)) if *r == reasoning => held.push_str(s),
            _ => self.held.push((reasoning, s.to_string())),
        }
    }

    /// The held text, in order; none is left.
    pub(crate) fn take(&mut self) -> Vec<(bool, String)> {
        std::mem::take(&mut self.held)
    }
}
