//! Byte accounting (the request setting `byte_spans`): where every byte of
//! the raw output went. A parser asked for it adds to each delta, in output
//! order, the spans of raw output the delta settled: runs copied verbatim
//! into `reasoning` or `content`, the raw text of tool calls (markers,
//! envelope and converted arguments together, named by the call's index),
//! and dropped bytes with a [`Reason`]. Field bytes the output never wrote
//! (a format's content prefix, a recovered newline) are [`SpanKind::Added`],
//! empty in the raw output.
//!
//! Owns the span types, the folding rule ([`push_span`]: adjacent spans of
//! one kind merge, so the folded spans of a stream equal the one-shot spans
//! however the output was cut) and [`reconstruct`], which rebuilds the raw
//! output from a message's text fields and its spans.
//!
//! Invariants: spans are contiguous from offset 0 and cover the raw output
//! exactly once; `Reasoning`/`Content` spans, with `Added` spans of that
//! field, consume the field's text in order and whole; `Call` and
//! `Dropped` spans carry their raw text; every offset is a char boundary.

use serde::{Deserialize, Serialize};

/// A text field of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// `reasoning`.
    Reasoning,
    /// `content`.
    Content,
}

/// Why raw bytes went to no field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A marker of the format (`<think>`, `<|im_end|>`), outside any call.
    Marker,
    /// Text the format's grammar reads as no field: white space around
    /// markers, a header's words, a state that drops its text.
    Framing,
    /// The text of a call that never became one (no name, a suppressed or
    /// limited call) where the format drops it.
    NotACall,
    /// Reasoning hidden by `include_reasoning: false`.
    Hidden,
    /// Text the vLLM-compatible settings (`vllm_text_loss`,
    /// `vllm_one_shot`) put in no field, as vLLM's answer does.
    VllmLoss,
}

/// What a span of the raw output became.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SpanKind {
    /// Copied verbatim into `reasoning`.
    Reasoning,
    /// Copied verbatim into `content`.
    Content,
    /// The raw text of tool call `index` (and of the calls after it that no
    /// other byte separates from it): markers, envelope, arguments as written.
    Call {
        /// The call's position in `tool_calls`.
        index: usize,
    },
    /// Bytes that went to no field.
    Dropped {
        /// Why.
        reason: Reason,
    },
    /// Bytes of a field that are not in the raw output (`start == end`).
    Added {
        /// The field they are in.
        field: Field,
    },
}

/// One span: raw bytes `[start, end)` of the output and what they became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First raw byte (absolute offset in the output).
    pub start: usize,
    /// One past the last raw byte.
    pub end: usize,
    /// What the bytes became.
    #[serde(flatten)]
    pub kind: SpanKind,
    /// The raw text of a `Call` or `Dropped` span, the field text of an
    /// `Added` one; empty for `Reasoning` and `Content` (the field holds it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
}

/// Appends `s` to `to`, merged with the last span when it is of the same
/// kind and follows it: the one folding rule, so a stream's spans fold to
/// the one-shot spans.
pub fn push_span(to: &mut Vec<Span>, s: Span) {
    if s.start == s.end && s.text.is_empty() {
        return;
    }
    if let Some(last) = to.last_mut() {
        if last.kind == s.kind && last.end == s.start {
            last.end = s.end;
            last.text.push_str(&s.text);
            return;
        }
    }
    to.push(s);
}

/// Why spans do not rebuild an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReconstructError {
    /// A span does not start where the one before it ended.
    Gap {
        /// The span's position in the list.
        span: usize,
    },
    /// A span's text or length disagrees with its offsets, or a field span
    /// runs past its field or off a char boundary.
    Span {
        /// The span's position in the list.
        span: usize,
    },
    /// A field has text no span accounts for.
    Unaccounted(Field),
}

impl std::fmt::Display for ReconstructError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReconstructError::Gap { span } => write!(f, "span {span} does not follow the one before it"),
            ReconstructError::Span { span } => write!(f, "span {span} disagrees with its text or field"),
            ReconstructError::Unaccounted(fl) => write!(f, "the {fl:?} field has text no span accounts for"),
        }
    }
}

impl std::error::Error for ReconstructError {}

/// Rebuilds the raw output from a message's `reasoning` and `content` and
/// its spans, checking that the spans account for both fields whole.
pub fn reconstruct(reasoning: &str, content: &str, spans: &[Span]) -> Result<String, ReconstructError> {
    let mut raw = String::new();
    let (mut r, mut c) = (0usize, 0usize);
    for (i, s) in spans.iter().enumerate() {
        if s.start != raw.len() {
            return Err(ReconstructError::Gap { span: i });
        }
        let bad = ReconstructError::Span { span: i };
        let take = |field: &str, at: &mut usize, n: usize| -> Option<String> {
            let t = field.get(*at..*at + n)?.to_string();
            *at += n;
            Some(t)
        };
        let n = s.end.checked_sub(s.start).ok_or(bad.clone())?;
        match s.kind {
            SpanKind::Reasoning => raw.push_str(&take(reasoning, &mut r, n).ok_or(bad)?),
            SpanKind::Content => raw.push_str(&take(content, &mut c, n).ok_or(bad)?),
            SpanKind::Call { .. } | SpanKind::Dropped { .. } => {
                if s.text.len() != n {
                    return Err(bad);
                }
                raw.push_str(&s.text);
            }
            SpanKind::Added { field } => {
                let (f, at) = match field {
                    Field::Reasoning => (reasoning, &mut r),
                    Field::Content => (content, &mut c),
                };
                if n != 0 || take(f, at, s.text.len()).as_deref() != Some(s.text.as_str()) {
                    return Err(bad);
                }
            }
        }
    }
    if r != reasoning.len() {
        return Err(ReconstructError::Unaccounted(Field::Reasoning));
    }
    if c != content.len() {
        return Err(ReconstructError::Unaccounted(Field::Content));
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: usize, end: usize, kind: SpanKind, text: &str) -> Span {
        Span { start, end, kind, text: text.into() }
    }

    #[test]
    fn spans_rebuild_the_output_and_check_the_fields() {
        let mut v = Vec::new();
        push_span(&mut v, span(0, 7, SpanKind::Dropped { reason: Reason::Marker }, "<think>"));
        push_span(&mut v, span(7, 8, SpanKind::Reasoning, ""));
        push_span(&mut v, span(8, 9, SpanKind::Reasoning, ""));
        push_span(&mut v, span(9, 9, SpanKind::Added { field: Field::Content }, "\n"));
        push_span(&mut v, span(9, 12, SpanKind::Call { index: 0 }, "f()"));
        assert_eq!(v.len(), 4, "adjacent reasoning spans merge");
        assert_eq!(reconstruct("ab", "\n", &v).as_deref(), Ok("<think>abf()"));
        assert_eq!(reconstruct("abc", "\n", &v), Err(ReconstructError::Unaccounted(Field::Reasoning)));
        assert_eq!(reconstruct("ab", "x", &v), Err(ReconstructError::Span { span: 2 }));
        v.remove(1);
        assert_eq!(reconstruct("", "\n", &v), Err(ReconstructError::Gap { span: 1 }));
    }
}
