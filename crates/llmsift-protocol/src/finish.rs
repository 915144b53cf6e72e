//! Why generation ended ([`FinishReason`]): one small enum that the wire
//! types (`wire`), the stream processor (`processor`) and every dialect
//! read, kept in a module of its own so that the wire types need nothing
//! from the processor (which reads the checked request, which reads the
//! wire types: no import cycle).
//!
//! Invariant: the wire spelling ([`FinishReason::as_str`], serde's
//! `snake_case`) and [`FinishReason::parse`] read and write the same names.

use serde::{Deserialize, Serialize};

/// Why generation ended, as reported to the client (and, for `stop`,
/// `length` and `abort`, as reported by the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A stop token or string.
    Stop,
    /// The token limit.
    Length,
    /// The model called tools (never an engine reason).
    ToolCalls,
    /// The request was cancelled.
    Abort,
}

impl FinishReason {
    /// Reads `stop`, `length`, `tool_calls`, `abort`.
    pub fn parse(s: &str) -> Option<FinishReason> {
        match s {
            "stop" => Some(FinishReason::Stop),
            "length" => Some(FinishReason::Length),
            "tool_calls" => Some(FinishReason::ToolCalls),
            "abort" => Some(FinishReason::Abort),
            _ => None,
        }
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Abort => "abort",
        }
    }
}
