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
//! so blocks follow the model's order; at most one block is open at a time,
//! as the Messages API streams them (a block stops before the next starts);
//! the one-shot message is this stream run over a single step; signatures
//! are deterministic from the message id (they are opaque markers here, not
//! cryptographic signatures).
//! Text after a call follows the rule of `after_call.rs`.

use crate::after_call::AfterCall;
use crate::chat::ResponseMeta;
use crate::check::CheckedRequest;
use crate::ids::{fnv1a, mix};
use crate::processor::{ChoiceProcessor, FinishReason, Options, Step, TokenCounts};
use llmsift_core::{ParserFactory, Piece, ToolCallDelta};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// Builds one Messages API stream (one choice).
#[derive(Debug, Clone)]
pub struct MessageStream {
    message: MessageResponse,
    /// The open thinking (`true`) or text block, and its index.
    text: Option<(bool, usize)>,
    /// The open call (its index) and its block index.
    call: Option<(usize, usize)>,
    /// Every call: its index, block index and arguments so far.
    calls: Vec<(usize, usize, String)>,
    /// Text behind the open call.
    after_call: AfterCall,
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
            text: None,
            call: None,
            calls: Vec::new(),
            after_call: AfterCall::default(),
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
        // Blocks follow the order the parser wrote the parts in, so one-shot
        // and streamed messages hold the same blocks in the same order.
        for piece in step.delta.pieces() {
            match piece {
                Piece::Reasoning(s) => self.text(true, s, &mut ev),
                Piece::Content(s) => self.text(false, s, &mut ev),
                Piece::Call(c) => self.call(c, &mut ev),
            }
        }
        ev
    }

    fn text(&mut self, thinking: bool, s: &str, ev: &mut Vec<MessageEvent>) {
        if let Some((call, _)) = self.call {
            let args = self.calls.iter().find(|(i, _, _)| *i == call).map_or("", |(_, _, a)| a.as_str());
            if !self.after_call.call_is_whole(args) {
                self.after_call.hold(thinking, s);
                return;
            }
            self.close_call(ev);
        }
        self.write_text(thinking, s, ev);
    }

    fn write_text(&mut self, thinking: bool, s: &str, ev: &mut Vec<MessageEvent>) {
        let index = match self.text {
            Some((t, i)) if t == thinking => i,
            _ => {
                self.close_text(ev);
                let empty = if thinking {
                    ContentBlock::Thinking { thinking: String::new(), signature: String::new() }
                } else {
                    ContentBlock::Text { text: String::new() }
                };
                let i = self.open_block(empty, ev);
                self.text = Some((thinking, i));
                i
            }
        };
        let delta = match &mut self.message.content[index] {
            ContentBlock::Thinking { thinking, .. } => {
                thinking.push_str(s);
                BlockDelta::ThinkingDelta { thinking: s.to_string() }
            }
            ContentBlock::Text { text } => {
                text.push_str(s);
                BlockDelta::TextDelta { text: s.to_string() }
            }
            ContentBlock::ToolUse { .. } => unreachable!("a text block"),
        };
        ev.push(MessageEvent::ContentBlockDelta { index, delta });
    }

    /// A call fragment. A new call closes the open blocks; text after a call
    /// leaves it open, so its later arguments still go to its own block.
    fn call(&mut self, c: &ToolCallDelta, ev: &mut Vec<MessageEvent>) {
        let k = match self.calls.iter().position(|(i, _, _)| *i == c.index) {
            Some(k) => k,
            None => {
                self.close_call(ev);
                self.close_text(ev);
                self.after_call.args_grew();
                let block = ContentBlock::ToolUse {
                    id: c.id.clone().unwrap_or_default(),
                    name: c.name.clone().unwrap_or_default(),
                    input: Value::Object(Default::default()),
                };
                let i = self.open_block(block, ev);
                self.call = Some((c.index, i));
                self.calls.push((c.index, i, String::new()));
                self.calls.len() - 1
            }
        };
        if c.arguments.is_empty() {
            return;
        }
        self.after_call.args_grew();
        let (_, index, args) = &mut self.calls[k];
        args.push_str(&c.arguments);
        let index = *index;
        if self.call.is_none_or(|(i, _)| i != c.index) {
            // A call closed before these arguments came: its input follows them.
            self.set_input(k);
        }
        ev.push(MessageEvent::ContentBlockDelta {
            index,
            delta: BlockDelta::InputJsonDelta { partial_json: c.arguments.clone() },
        });
    }

    /// The prompt size the closing `message_delta` reports (its
    /// `usage.input_tokens`, which clients take over `message_start`'s),
    /// when a truer count arrived after the start (a backend's own).
    pub fn set_input_tokens(&mut self, input_tokens: u64) {
        self.message.usage.input_tokens = input_tokens;
    }

    /// Closes the open block and ends the message.
    pub fn finish(&mut self, reason: FinishReason, counts: TokenCounts) -> Vec<MessageEvent> {
        let mut ev = self.start();
        self.close_call(&mut ev);
        self.close_text(&mut ev);
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

    /// Starts a block; returns its index.
    fn open_block(&mut self, empty: ContentBlock, ev: &mut Vec<MessageEvent>) -> usize {
        self.message.content.push(empty.clone());
        let index = self.message.content.len() - 1;
        ev.push(MessageEvent::ContentBlockStart { index, content_block: empty });
        index
    }

    fn close_text(&mut self, ev: &mut Vec<MessageEvent>) {
        let Some((thinking, index)) = self.text.take() else { return };
        if thinking {
            if let ContentBlock::Thinking { signature, .. } = &mut self.message.content[index] {
                let h = mix(fnv1a(self.message.id.as_bytes()) ^ SIGNATURE_TAG ^ index as u64);
                *signature = format!("{:016x}{:016x}", h, mix(h));
                ev.push(MessageEvent::ContentBlockDelta {
                    index,
                    delta: BlockDelta::SignatureDelta { signature: signature.clone() },
                });
            }
        }
        ev.push(MessageEvent::ContentBlockStop { index });
    }

    /// Stops the open call's block; the text held behind it follows.
    fn close_call(&mut self, ev: &mut Vec<MessageEvent>) {
        let Some((call, index)) = self.call.take() else { return };
        if let Some(k) = self.calls.iter().position(|(i, _, _)| *i == call) {
            self.set_input(k);
        }
        ev.push(MessageEvent::ContentBlockStop { index });
        for (thinking, s) in self.after_call.take() {
            self.write_text(thinking, &s, ev);
        }
    }

    /// The `tool_use` input of call `k` from its arguments so far.
    fn set_input(&mut self, k: usize) {
        let (_, index, args) = &self.calls[k];
        if let ContentBlock::ToolUse { input, .. } = &mut self.message.content[*index] {
            // The core guarantees valid JSON arguments; `{}` guards the impossible.
            *input = serde_json::from_str(args).unwrap_or_else(|_| Value::Object(Default::default()));
        }
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
