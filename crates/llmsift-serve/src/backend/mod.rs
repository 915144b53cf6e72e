//! Backends: where the raw model output comes from.
//!
//! Owns the one shape every backend is reduced to: [`Backend::start`] either
//! fails before any output ([`BackendError`], answered as 502/504) or gives
//! a stream of [`Chunk`]s per choice, which may end in a `BackendError`
//! (answered in-stream). Three wire protocols over HTTP ([`http`]), vLLM's
//! token-in/token-out workers ([`generate`]) and the built-in replay
//! ([`demo`]).
//!
//! Invariant: a stream either ends with every choice finished (a
//! [`Chunk::finish`]) or with an error; a backend that closes early never
//! looks like a normal end. A backend's own token counts ([`Usage`]), when
//! it reports them, ride on the chunk that finishes the last choice, so
//! they are known before the answer's closing frames are written.

mod chat_calls;
mod conn;
pub mod demo;
pub mod generate;
pub mod http;
pub mod logprobs;
mod sse;
mod wire;

use futures_util::Stream;
use llmsift_protocol::FinishReason;
use serde_json::{Map, Value};
use std::fmt;
use std::pin::Pin;
use std::time::Instant;

/// What the gateway asks a backend for.
#[derive(Debug, Clone, Default)]
pub struct GenRequest {
    /// The backend's model name.
    pub model: String,
    /// The rendered prompt (completions, llama.cpp, demo).
    pub prompt: Option<String>,
    /// The rendered prompt's token ids, as the gateway counted them
    /// (llama.cpp: sent instead of the text, which llama.cpp would prefix
    /// with a BOS of its own, a second one after a template's `<bos>`).
    pub prompt_ids: Option<Vec<u32>>,
    /// The conversation as the client sent it (chat backends).
    pub messages: Vec<Value>,
    /// The request's tools, as the client sent them.
    pub tools: Option<Vec<Value>>,
    /// The token limit.
    pub max_tokens: Option<u64>,
    /// Choices.
    pub n: u32,
    /// Sampling fields passed through unchanged (`temperature`, `seed`, `stop`, …).
    pub sampling: Map<String, Value>,
    /// `chat_template_kwargs` (chat backends render the prompt themselves).
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// The `generate` backend: the rendered `GenerateRequest` (token ids,
    /// `sampling_params`), as `/v1/chat/completions/render` answers it.
    pub generate: Option<Value>,
}

/// A piece of one choice's output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chunk {
    /// The choice.
    pub index: u32,
    /// Text as the backend detokenized it.
    pub text: String,
    /// The token ids, when the backend returns them.
    pub ids: Option<Vec<u32>>,
    /// Set on the choice's last chunk.
    pub finish: Option<FinishReason>,
    /// Chat Completions logprob entries, one per token of the chunk, when
    /// the backend sent them ([`logprobs`]).
    pub logprobs: Option<Vec<Value>>,
    /// When the backend's bytes holding this chunk arrived (the relay-time
    /// metric and `--stamps` measure from here).
    pub received: Option<Instant>,
    /// The backend's own counts for the whole request (all choices); set
    /// on the last chunk only, when the backend reported them.
    pub usage: Option<Usage>,
}

/// Token counts as the backend reported them (a chat backend's `usage`).
///
/// A chat backend renders the prompt itself and returns text without ids,
/// so its counts are the only true ones: they win over the gateway's own
/// (the prompt the gateway rendered, the ids it was given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// The prompt as the backend tokenized it.
    pub prompt_tokens: u64,
    /// Output tokens of all choices.
    pub completion_tokens: u64,
    /// `completion_tokens_details.reasoning_tokens`, when the backend counted them.
    pub reasoning_tokens: Option<u64>,
}

/// Why a backend failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// It could not be reached.
    Connect(String),
    /// It answered with an error status (its message).
    Status {
        /// The backend's status.
        status: u16,
        /// The backend's message.
        message: String,
    },
    /// It did not answer in time.
    Timeout(String),
    /// It sent something that is not its protocol.
    Protocol(String),
    /// It closed the stream before the output was finished.
    Dropped(String),
}

impl BackendError {
    /// The metrics label.
    pub fn label(&self) -> &'static str {
        match self {
            BackendError::Connect(_) => "backend_connect",
            BackendError::Status { .. } => "backend_status",
            BackendError::Timeout(_) => "backend_timeout",
            BackendError::Protocol(_) => "backend_protocol",
            BackendError::Dropped(_) => "backend_dropped",
        }
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Connect(m) => write!(f, "backend unreachable: {m}"),
            BackendError::Status { status, message } => write!(f, "backend answered {status}: {message}"),
            BackendError::Timeout(m) => write!(f, "backend timed out: {m}"),
            BackendError::Protocol(m) => write!(f, "backend sent an invalid stream: {m}"),
            BackendError::Dropped(m) => write!(f, "backend stream ended early: {m}"),
        }
    }
}

impl std::error::Error for BackendError {}

/// A backend's output.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<Chunk, BackendError>> + Send>>;

/// A configured backend.
#[derive(Debug, Clone)]
pub enum Backend {
    /// One of the HTTP protocols.
    Http(http::HttpBackend),
    /// The built-in replay.
    Demo(demo::DemoBackend),
    /// vLLM's token-in/token-out workers.
    Generate(generate::GenerateBackend),
}

impl Backend {
    /// Starts a generation.
    pub async fn start(&self, req: GenRequest) -> Result<ChunkStream, BackendError> {
        match self {
            Backend::Http(b) => b.start(req).await,
            Backend::Demo(b) => Ok(b.start(req)),
            Backend::Generate(b) => b.start(req).await,
        }
    }

    /// Whether the backend can make `n` > 1 choices.
    pub fn supports_n(&self) -> bool {
        match self {
            Backend::Http(b) => b.supports_n(),
            Backend::Demo(_) | Backend::Generate(_) => true,
        }
    }
}
