//! Sift's pure core: splits one LLM output stream into the three fields of a
//! Chat Completions message — `reasoning`, `content`, `tool_calls` — in one
//! shot and delta by delta, for formats described as data.
//!
//! No I/O, no async. A [`Registry`] maps vLLM's parser names to format files;
//! a [`ParserFactory`] holds one pair's compiled formats (immutable, shared);
//! a [`Parser`] is the small per-request state.
//!
//! ```
//! use llmsift_core::{Registry, Request};
//! let f = Registry::builtin().factory(Some("qwen3"), Some("hermes")).unwrap();
//! let m = f.parse(&Request::default(),
//!     "Let me look.</think><tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call>", None);
//! assert_eq!(m.reasoning.as_deref(), Some("Let me look."));
//! assert_eq!(m.tool_calls[0].arguments, "{\"x\": 1}");
//! ```

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod account;
mod coerce;
mod engine;
mod entities;
pub mod error;
pub mod format;
pub mod json;
pub mod limits;
pub mod message;
pub mod parser;
mod post;
mod pylit;
pub mod registry;
mod request;
pub mod schema;
mod schema_resolve;
pub mod spans;
pub mod special;
pub mod state;
pub mod token;
mod whole;

pub use error::FormatError;
pub use format::{Format, FormatSpec};
pub use limits::{Exceeded, Limits};
pub use limits::{MAX_HELD_BYTES, MAX_MARKER_LEN};
pub use message::{Delta, Folder, Message, Piece, ToolCall, ToolCallDelta};
pub use parser::{Parser, ParserFactory, Request, ToolChoice};
pub use registry::{detection_text, Detection, Registry};
pub use schema::{ParamType, Tools};
pub use spans::{Reason, Span, SpanKind};
pub use state::{ParserState, ParserStateRef, ResumeError};
pub use token::{ReasoningCounter, Vocab};
