//! Where the grammar starts: at the first output token, or once the
//! reasoning parser's end marker has been written.
//!
//! vLLM constrains from the first generated token when reasoning is hidden
//! (`include_reasoning: false`), and otherwise asks the reasoning parser
//! whether the prompt already closed reasoning (a template that renders
//! `<think>\n\n</think>\n\n` when thinking is off): if it did, the grammar
//! starts now; if not, the output begins inside reasoning and the grammar
//! starts after the end marker. Without a reasoning parser there is no
//! reasoning to wait for.
//!
//! Invariant: the answer depends only on the marker, the prompt text and
//! `include_reasoning`, never on the output.

use serde::{Deserialize, Serialize};

/// Where the constraint starts applying to the output.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrammarStart {
    /// At the first generated token.
    Now,
    /// After the output writes this marker (the reasoning parser's end).
    AfterMarker(String),
}

impl GrammarStart {
    /// The marker to wait for, if any.
    pub fn marker(&self) -> Option<&str> {
        match self {
            GrammarStart::Now => None,
            GrammarStart::AfterMarker(m) => Some(m),
        }
    }
}

/// Where the grammar starts, given the reasoning parser's end marker
/// (`None`: no reasoning parser), the tail of the rendered prompt (its last
/// turn, from the assistant's turn start on) and `include_reasoning`.
///
/// The prompt closed reasoning when its tail holds the end marker.
///
/// ```
/// use llmsift_grammar::{grammar_start, GrammarStart};
/// assert_eq!(grammar_start(Some("</think>"), "<|im_start|>assistant\n<think>\n", true),
///            GrammarStart::AfterMarker("</think>".into()));
/// assert_eq!(grammar_start(Some("</think>"), "<|im_start|>assistant\n<think>\n\n</think>\n\n", true),
///            GrammarStart::Now);
/// assert_eq!(grammar_start(Some("</think>"), "<|im_start|>assistant\n<think>\n", false), GrammarStart::Now);
/// assert_eq!(grammar_start(None, "<|im_start|>assistant\n", true), GrammarStart::Now);
/// ```
pub fn grammar_start(
    reasoning_end: Option<&str>,
    prompt_tail: &str,
    include_reasoning: bool,
) -> GrammarStart {
    grammar_start_scan(None, reasoning_end, prompt_tail, include_reasoning)
}

/// As [`grammar_start`], for a whole prompt: scanning back from its end,
/// the prompt closed reasoning when the end marker comes before any start
/// marker (vLLM's `is_reasoning_end` over the prompt ids). Without a start
/// marker, any end marker in `prompt` counts.
///
/// ```
/// use llmsift_grammar::{grammar_start_scan, GrammarStart};
/// let earlier_turn = "<think>a</think>b<|im_end|><|im_start|>assistant\n<think>\n";
/// assert_eq!(grammar_start_scan(Some("<think>"), Some("</think>"), earlier_turn, true),
///            GrammarStart::AfterMarker("</think>".into()));
/// ```
pub fn grammar_start_scan(
    reasoning_start: Option<&str>,
    reasoning_end: Option<&str>,
    prompt: &str,
    include_reasoning: bool,
) -> GrammarStart {
    let Some(end) = reasoning_end.filter(|e| !e.is_empty()) else {
        return GrammarStart::Now;
    };
    if !include_reasoning {
        return GrammarStart::Now;
    }
    let last_end = prompt.rfind(end);
    let last_start = reasoning_start.filter(|s| !s.is_empty()).and_then(|s| prompt.rfind(s));
    let closed = match (last_end, last_start) {
        (Some(e), Some(s)) => e > s,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if closed {
        GrammarStart::Now
    } else {
        GrammarStart::AfterMarker(end.to_string())
    }
}
