//! The Anthropic Messages dialect: the same [`Step`]s as `thinking`, `text`
//! and `tool_use` content blocks, and as the Messages streaming events.
//!
//! Owns the block sequence and the stream framing, following vLLM's
//! Anthropic endpoint: `message_start`, then per block
//! `content_block_start` / `content_block_delta` (`thinking_delta`,
//! `text_delta`, `input_json_delta`; a thinking block ends with a
//! `signature_delta`) / `content_block_stop`, then `message_delta` with the
//! `stop_reason` (`end_turn`, `max_tokens`, `tool_use`) and usage, then
//! `message_stop`.
//!
//! Invariants: a new block opens whenever the kind (or the call) changes,
//! so blocks follow the model's order; the one-shot message is this stream
//! run over a single step; signatures are deterministic from the message id
//! (they are opaque markers here, not cryptographic signatures).

use crate::chat::ResponseMeta;
use crate::check::CheckedRequest;
use crate::ids::{fnv1a, mix};
use crate::processor::{ChoiceProcessor, FinishReason, Options, Step, TokenCounts};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sift_core::ParserFactory;

/// A Messages API response (`type: message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageResponse {
    /// The message id.
    pub id: String,
    /// `message`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `assistant`.
    pub role: String,
    /// The model name.
    pub model: String,
    /// The content blocks.
    pub content: Vec<ContentBlock>,
    /// `end_turn`, `max_tokens`, `tool_use`; null while streaming.
    pub stop_reason: Option<String>,
    /// Always null (stop strings are not tracked here).
    pub stop_sequence: Option<String>,
    /// Token counts.
    pub usage: MessageUsage,
}

/// Messages API usage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// A content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Reasoning.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// An opaque marker (empty until the block ends).
        signature: String,
    },
    /// Answer text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolUse {
        /// The call id.
        id: String,
        /// The function name.
        name: String,
        /// The arguments (`{}` until the block ends when streaming).
        input: Value,
    },
}

/// The `delta` of a `content_block_delta` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta {
    /// More reasoning.
    ThinkingDelta {
        /// The text.
        thinking: String,
    },
    /// More answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// More call arguments.
    InputJsonDelta {
        /// The next piece of the arguments JSON text.
        partial_json: String,
    },
    /// The thinking block's signature.
    SignatureDelta {
        /// The signature.
        signature: String,
    },
}

/// The `delta` of a `message_delta` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageDelta {
    /// The stop reason.
    pub stop_reason: Option<String>,
    /// Always null.
    pub stop_sequence: Option<String>,
}

/// A Messages API streaming event. Serialized with its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessageEvent {
    /// The message exists (no content yet).
    MessageStart {
        /// The message so far.
        message: Box<MessageResponse>,
    },
    /// A block opens.
    ContentBlockStart {
        /// The block's position.
        index: usize,
        /// The block, empty.
        content_block: ContentBlock,
    },
    /// A block grows.
    ContentBlockDelta {
        /// The block's position.
        index: usize,
        /// What it adds.
        delta: BlockDelta,
    },
    /// A block is complete.
    ContentBlockStop {
        /// The block's position.
        index: usize,
    },
    /// The stop reason and final usage.
    MessageDelta {
        /// The stop reason.
        delta: MessageDelta,
        /// Token counts.
        usage: MessageUsage,
    },
    /// The end of the stream.
    MessageStop,
}

impl MessageEvent {
    /// The event's `type` (the SSE `event:` name).
    pub fn event_type(&self) -> &'static str {
        match self {
            MessageEvent::MessageStart { .. } => "message_start",
            MessageEvent::ContentBlockStart { .. } => "content_block_start",
            MessageEvent::ContentBlockDelta { .. } => "content_block_delta",
            MessageEvent::ContentBlockStop { .. } => "content_block_stop",
            MessageEvent::MessageDelta { .. } => "message_delta",
            MessageEvent::MessageStop => "message_stop",
        }
    }
}

/// The Messages `stop_reason` for a `finish_reason` (none for an abort).
pub fn stop_reason(reason: FinishReason) -> Option<String> {
    match reason {
        FinishReason::Stop => Some("end_turn".into()),
        FinishReason::Length => Some("max_tokens".into()),
        FinishReason::ToolCalls => Some("tool_use".into()),
        FinishReason::Abort => None,
    }
}

/// Keeps signatures apart from the item ids made from the same message id.
const SIGNATURE_TAG: u64 = 0x7369_676e_6174_7572;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Thinking,
    Text,
    Call(usize),
}

/// Builds one Messages API stream (one choice).
#[derive(Debug, Clone)]
pub struct MessageStream {
    message: MessageResponse,
    open: Option<Open>,
    args: String,
    started: bool,
}

impl MessageStream {
    /// A stream for a message.
    pub fn new(meta: &ResponseMeta) -> MessageStream {
        MessageStream {
            message: MessageResponse {
                id: meta.id.clone(),
                kind: "message".into(),
                role: "assistant".into(),
                model: meta.model.clone(),
                content: Vec::new(),
                stop_reason: None,
                stop_sequence: None,
                usage: MessageUsage { input_tokens: meta.prompt_tokens, output_tokens: 0 },
            },
            open: None,
            args: String::new(),
            started: false,
        }
    }

    /// `message_start` (once; later calls give nothing).
    pub fn start(&mut self) -> Vec<MessageEvent> {
        if std::mem::replace(&mut self.started, true) {
            return Vec::new();
        }
        vec![MessageEvent::MessageStart { message: Box::new(self.message.clone()) }]
    }

    /// The events of one step (starting the stream first if needed).
    pub fn push(&mut self, step: &Step) -> Vec<MessageEvent> {
        let mut ev = self.start();
        let d = &step.delta;
        if !d.reasoning.is_empty() {
            self.switch(
                Open::Thinking,
                ContentBlock::Thinking { thinking: String::new(), signature: String::new() },
                &mut ev,
            );
            if let Some(ContentBlock::Thinking { thinking, .. }) = self.message.content.last_mut() {
                thinking.push_str(&d.reasoning);
            }
            let index = self.message.content.len() - 1;
            ev.push(MessageEvent::ContentBlockDelta {
                index,
                delta: BlockDelta::ThinkingDelta { thinking: d.reasoning.clone() },
            });
        }
        if !d.content.is_empty() {
            self.switch(Open::Text, ContentBlock::Text { text: String::new() }, &mut ev);
            if let Some(ContentBlock::Text { text }) = self.message.content.last_mut() {
                text.push_str(&d.content);
            }
            let index = self.message.content.len() - 1;
            ev.push(MessageEvent::ContentBlockDelta {
                index,
                delta: BlockDelta::TextDelta { text: d.content.clone() },
            });
        }
        for c in &d.tool_calls {
            let block = ContentBlock::ToolUse {
                id: c.id.clone().unwrap_or_default(),
                name: c.name.clone().unwrap_or_default(),
                input: Value::Object(Default::default()),
            };
            self.switch(Open::Call(c.index), block, &mut ev);
            if c.arguments.is_empty() {
                continue;
            }
            self.args.push_str(&c.arguments);
            let index = self.message.content.len() - 1;
            ev.push(MessageEvent::ContentBlockDelta {
                index,
                delta: BlockDelta::InputJsonDelta { partial_json: c.arguments.clone() },
            });
        }
        ev
    }

    /// Closes the open block and ends the message.
    pub fn finish(&mut self, reason: FinishReason, counts: TokenCounts) -> Vec<MessageEvent> {
        let mut ev = self.start();
        self.close(&mut ev);
        self.message.stop_reason = stop_reason(reason);
        self.message.usage.output_tokens = counts.completion_tokens;
        ev.push(MessageEvent::MessageDelta {
            delta: MessageDelta { stop_reason: self.message.stop_reason.clone(), stop_sequence: None },
            usage: self.message.usage.clone(),
        });
        ev.push(MessageEvent::MessageStop);
        ev
    }

    /// The message as it stands (complete after [`MessageStream::finish`]).
    pub fn message(&self) -> &MessageResponse {
        &self.message
    }

    fn switch(&mut self, to: Open, empty: ContentBlock, ev: &mut Vec<MessageEvent>) {
        if self.open == Some(to) {
            return;
        }
        self.close(ev);
        self.open = Some(to);
        self.message.content.push(empty.clone());
        ev.push(MessageEvent::ContentBlockStart {
            index: self.message.content.len() - 1,
            content_block: empty,
        });
    }

    fn close(&mut self, ev: &mut Vec<MessageEvent>) {
        let Some(open) = self.open.take() else { return };
        let index = self.message.content.len() - 1;
        match (&mut self.message.content[index], open) {
            (ContentBlock::Thinking { signature, .. }, Open::Thinking) => {
                let h = mix(fnv1a(self.message.id.as_bytes()) ^ SIGNATURE_TAG ^ index as u64);
                *signature = format!("{:016x}{:016x}", h, mix(h));
                ev.push(MessageEvent::ContentBlockDelta {
                    index,
                    delta: BlockDelta::SignatureDelta { signature: signature.clone() },
                });
            }
            (ContentBlock::ToolUse { input, .. }, Open::Call(_)) => {
                let args = std::mem::take(&mut self.args);
                // The core guarantees valid JSON arguments; `{}` guards the impossible.
                *input = serde_json::from_str(&args).unwrap_or_else(|_| Value::Object(Default::default()));
            }
            _ => {}
        }
        ev.push(MessageEvent::ContentBlockStop { index });
    }
}

/// One-shot Messages API answer for one choice.
pub fn complete(
    factory: &ParserFactory,
    req: &CheckedRequest,
    meta: &ResponseMeta,
    opts: &Options,
    output: &str,
    ids: Option<&[u32]>,
    engine: FinishReason,
) -> MessageResponse {
    let mut p = ChoiceProcessor::new(factory, req, opts);
    let step = p.finish_with(output, ids, None, engine);
    let mut s = MessageStream::new(meta);
    s.push(&step);
    s.finish(step.finish_reason.unwrap_or(engine), p.counts());
    s.message
}
