//! The OpenAI protocol layer between Sift's parser and the wire, as vLLM's
//! OpenAI-compatible server behaves.
//!
//! Pure: no I/O, no async, no clock (the caller supplies ids, model names
//! and timestamps in a [`ResponseMeta`]). The pipeline:
//!
//! ```text
//! request JSON → ChatCompletionRequest (wire)         serde, unknown fields ignored
//!              → CheckedRequest (check)               vLLM's 400s, tool_choice resolved
//!              → llmsift_core::Request (to_core)
//! engine delta → ChoiceProcessor (processor)          one per choice: rules, ids, usage
//!              → Step                                 the unit every dialect is built from
//!              → ChatStream | ResponsesStream | MessageStream
//!              → SSE frames (sse) or one-shot JSON
//! ```
//!
//! ```
//! use llmsift_protocol::{Api, ChatCompletionRequest, FinishReason, Options, ResponseMeta, Session};
//! let factory = llmsift_core::Registry::builtin().factory(Some("qwen3"), Some("hermes")).unwrap();
//! let req = ChatCompletionRequest::from_json(r#"{"messages": [], "stream": true,
//!     "tools": [{"type": "function", "function": {"name": "f"}}]}"#).unwrap().check().unwrap();
//! let meta = ResponseMeta { id: "chatcmpl-1".into(), model: "m".into(), ..Default::default() };
//! let mut s = Session::new(Api::Chat, &factory, &req, &meta, &Options::default());
//! let mut frames = s.push("Hm.</think><tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", None, None);
//! frames.extend(s.finish(FinishReason::Stop));
//! assert!(frames[0].contains(r#""role":"assistant""#));
//! assert!(frames[frames.len() - 2].contains(r#""finish_reason":"tool_calls""#));
//! assert_eq!(frames.last().unwrap(), "data: [DONE]\n\n");
//! ```

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod after_call;
pub mod anthropic;
pub mod carry;
pub mod chat;
pub mod check;
pub mod error;
pub mod finish;
pub mod ids;
pub mod processor;
pub mod responses;
pub mod session;
pub mod sse;
pub mod wire;

pub use chat::{ChatStream, ResponseMeta};
pub use check::{CheckOptions, CheckedRequest, ToolChoiceMode};
pub use error::ProtocolError;
pub use ids::IdStyle;
pub use processor::{ChoiceOutput, ChoiceProcessor, FinishReason, Options, Step, TokenCounts};
pub use session::{complete, Api, Session};
pub use wire::{
    ChatCompletionChunk, ChatCompletionRequest, ChatCompletionResponse, ReasoningField, ToolChoiceParam,
    Usage,
};
