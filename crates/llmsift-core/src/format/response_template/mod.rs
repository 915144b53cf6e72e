//! Response templates: the parsing spec a model ships in its
//! `tokenizer_config.json` (`response_template`, transformers ≥ 5.13's
//! `tokenizer.parse_response`, vLLM's `hf` parser), read whole: regions
//! with literal or regex anchors, `start_anchor`/`start_anchor_pattern`, the
//! implicit field, `repeats`/`join`, every content parser, transforms, and
//! argument casting by the request's tool schemas.
//!
//! A template compiles once ([`Template`], shared behind `Arc`); each request
//! runs a small region machine over it (`stream.rs`) that streams text as
//! soon as no delimiter can claim it and writes a call when its region
//! closes. Streaming equals one-shot because every decision waits until no
//! later text can change it (see `regex.rs`).
//!
//! The answer is transformers' `parse_response`, mapped to a Chat
//! Completions message (`thinking`/`reasoning_content`/`reasoning` →
//! reasoning, `content`, `tool_calls`), except where that answer is a
//! function of the whole output and so cannot be streamed (a field written
//! twice keeps both values, in order; a malformed or non-call tool region
//! writes no call instead of failing the whole parse; prompt text is never
//! written), and where vLLM's `hf` serving keeps text transformers drops (a
//! template without an implicit field gets one named `content`).
//! `docs/format-language.md` lists these.
//!
//! Invariant: a template is either expressed exactly or refused with a
//! [`TemplateError`] that says why; it is never approximated.

mod content;
mod load;
mod pattern;
mod pycall;
mod regex;
mod stream;
mod transform;

pub use load::{load, Role, Template};
pub(crate) use stream::{Stream, StreamCarry, StreamSettings};

use std::fmt;

/// Why a response template is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// transformers refuses it too (its own message).
    Invalid {
        /// What is wrong.
        message: String,
    },
    /// Valid for transformers, but Sift cannot give its answer exactly (or
    /// the answer has no place in a chat message).
    Unsupported {
        /// What cannot be expressed, and why.
        message: String,
    },
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Invalid { message } => write!(f, "invalid response_template: {message}"),
            TemplateError::Unsupported { message } => write!(f, "response_template not supported: {message}"),
        }
    }
}

impl std::error::Error for TemplateError {}

impl From<TemplateError> for crate::FormatError {
    fn from(e: TemplateError) -> Self {
        crate::FormatError::Syntax { message: e.to_string() }
    }
}

/// A `tokenizer_config.json`'s own `response_template`, when it has one.
pub fn of_config(config: &serde_json::Value) -> Option<&serde_json::Value> {
    config.get("response_template").filter(|t| t.is_object())
}

/// The parser pair a model's own template is served under (vLLM's name
/// for response-template parsing).
pub const PARSER: &str = "hf";

#[cfg(test)]
mod tests;
