//! One choice from engine deltas to wire frames, in any of the three
//! dialects: the convenience a server (or the CLI) drives.
//!
//! Owns the order of a stream: the dialect's opening frames before the
//! first output, one batch of frames per engine delta, and the closing
//! frames (finish, usage, end marker) exactly once.
//!
//! Invariant: every dialect is fed the same [`crate::Step`]s from one
//! [`ChoiceProcessor`], so the three outputs always agree on reasoning,
//! content, calls and the finish reason.

use crate::anthropic::{self, MessageStream};
use crate::chat::{self, ChatStream, ResponseMeta};
use crate::check::CheckedRequest;
use crate::processor::{ChoiceProcessor, FinishReason, Options, Step};
use crate::responses::{self, ResponsesStream};
use crate::sse;
use llmsift_core::ParserFactory;
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// An output dialect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    #[default]
    Chat,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
}

impl FromStr for Api {
    type Err = String;
    fn from_str(s: &str) -> Result<Api, String> {
        match s {
            "chat" | "chat_completions" => Ok(Api::Chat),
            "responses" => Ok(Api::Responses),
            "anthropic" | "messages" => Ok(Api::Anthropic),
            other => Err(format!("unknown api `{other}` (chat, responses, anthropic)")),
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Api::Chat => "chat",
            Api::Responses => "responses",
            Api::Anthropic => "anthropic",
        })
    }
}

#[derive(Debug)]
enum Emitter {
    Chat(ChatStream),
    Responses(Box<ResponsesStream>),
    Anthropic(Box<MessageStream>),
}

/// One streamed choice: engine deltas in, SSE frames out.
#[derive(Debug)]
pub struct Session {
    processor: ChoiceProcessor,
    emitter: Emitter,
    prompt_tokens: u64,
    started: bool,
    done: bool,
}

impl Session {
    /// A session for a checked request in dialect `api`.
    pub fn new(
        api: Api,
        factory: &ParserFactory,
        req: &CheckedRequest,
        meta: &ResponseMeta,
        opts: &Options,
    ) -> Session {
        let emitter = match api {
            Api::Chat => Emitter::Chat(ChatStream::new(meta.clone(), req, opts.reasoning_field)),
            Api::Responses => Emitter::Responses(Box::new(ResponsesStream::new(meta, req))),
            Api::Anthropic => Emitter::Anthropic(Box::new(MessageStream::new(meta))),
        };
        Session {
            processor: ChoiceProcessor::new(factory, req, opts),
            emitter,
            prompt_tokens: meta.prompt_tokens,
            started: false,
            done: false,
        }
    }

    /// The opening frames (sent once, before any output; later calls give nothing).
    pub fn start(&mut self) -> Vec<String> {
        if std::mem::replace(&mut self.started, true) {
            return Vec::new();
        }
        match &mut self.emitter {
            Emitter::Chat(c) => vec![sse::data(&c.role_chunk(0))],
            Emitter::Responses(r) => r.start().iter().map(|e| sse::event(e.event_type(), e)).collect(),
            Emitter::Anthropic(a) => a.start().iter().map(|e| sse::event(e.event_type(), e)).collect(),
        }
    }

    /// Frames for one engine delta (the opening frames first, on the first call).
    pub fn push(&mut self, text: &str, ids: Option<&[u32]>, logprobs: Option<Value>) -> Vec<String> {
        let mut out = self.start();
        if self.done {
            return out;
        }
        if let Some(step) = self.processor.push(text, ids, logprobs) {
            self.emit(&step, &mut out);
        }
        out
    }

    /// The closing frames: the finish, usage when asked, the end marker.
    pub fn finish(&mut self, engine: FinishReason) -> Vec<String> {
        self.finish_with("", None, None, engine)
    }

    /// The closing frames after a last engine delta.
    pub fn finish_with(
        &mut self,
        text: &str,
        ids: Option<&[u32]>,
        logprobs: Option<Value>,
        engine: FinishReason,
    ) -> Vec<String> {
        let mut out = self.start();
        if std::mem::replace(&mut self.done, true) {
            return out;
        }
        let step = self.processor.finish_with(text, ids, logprobs, engine);
        self.emit(&step, &mut out);
        let reason = step.finish_reason.unwrap_or(engine);
        let counts = self.processor.counts();
        match &mut self.emitter {
            Emitter::Chat(c) => {
                if let Some(u) = c.usage_chunk(counts.usage(self.prompt_tokens)) {
                    out.push(sse::data(&u));
                }
                out.push(sse::DONE.to_string());
            }
            Emitter::Responses(r) => {
                out.extend(r.finish(reason, counts).iter().map(|e| sse::event(e.event_type(), e)))
            }
            Emitter::Anthropic(a) => {
                out.extend(a.finish(reason, counts).iter().map(|e| sse::event(e.event_type(), e)))
            }
        }
        out
    }

    fn emit(&mut self, step: &Step, out: &mut Vec<String>) {
        match &mut self.emitter {
            Emitter::Chat(c) => out.push(sse::data(&c.step_chunk(0, step))),
            Emitter::Responses(r) => out.extend(r.push(step).iter().map(|e| sse::event(e.event_type(), e))),
            Emitter::Anthropic(a) => out.extend(a.push(step).iter().map(|e| sse::event(e.event_type(), e))),
        }
    }

    /// The processor (finish reason, counts).
    pub fn processor(&self) -> &ChoiceProcessor {
        &self.processor
    }
}

/// The one-shot answer of one choice in dialect `api`, as JSON.
#[allow(clippy::too_many_arguments)]
pub fn complete(
    api: Api,
    factory: &ParserFactory,
    req: &CheckedRequest,
    meta: &ResponseMeta,
    opts: &Options,
    output: &str,
    ids: Option<&[u32]>,
    engine: FinishReason,
) -> Value {
    let v = match api {
        Api::Chat => serde_json::to_value(chat::complete(factory, req, meta, opts, output, ids, engine)),
        Api::Responses => {
            serde_json::to_value(responses::complete(factory, req, meta, opts, output, ids, None, engine))
        }
        Api::Anthropic => {
            serde_json::to_value(anthropic::complete(factory, req, meta, opts, output, ids, engine))
        }
    };
    v.expect("wire types serialize")
}
