//! The Responses API dialect: the same [`Step`]s as output items and
//! streaming events.
//!
//! Owns the item sequence: a `reasoning` item (its text as one
//! `reasoning_text` part), a `message` item (one `output_text` part), one
//! `function_call` item per call, in the order the model wrote them. Each
//! item opens with `response.output_item.added` (and
//! `response.content_part.added` for text items), grows by
//! `response.reasoning_text.delta` / `response.output_text.delta` /
//! `response.function_call_arguments.delta`, and closes with the matching
//! `.done` events and `response.output_item.done` when the next item
//! opens or the response ends. The stream starts with `response.created`
//! and `response.in_progress` and ends with `response.completed`.
//!
//! Invariants: `sequence_number` counts every event from 0; the response in
//! `response.completed` is exactly the one-shot response (one-shot is this
//! stream run over a single step); item ids are deterministic from the
//! response id.

use crate::chat::ResponseMeta;
use crate::check::CheckedRequest;
use crate::ids::ItemIds;
use crate::processor::{ChoiceProcessor, FinishReason, Options, Step, TokenCounts};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sift_core::{ParserFactory, Piece, ToolCallDelta};

/// A Responses API response object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseObject {
    /// The response id.
    pub id: String,
    /// `response`.
    pub object: String,
    /// Unix seconds.
    pub created_at: u64,
    /// The model name.
    pub model: String,
    /// `in_progress`, `completed`, `incomplete`, `cancelled`.
    pub status: String,
    /// Why the response is incomplete (`max_output_tokens`).
    pub incomplete_details: Option<IncompleteDetails>,
    /// The output items.
    pub output: Vec<OutputItem>,
    /// Token counts, once completed.
    pub usage: Option<ResponseUsage>,
}

/// `incomplete_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens`.
    pub reason: String,
}

/// Responses API usage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// `{"cached_tokens": 0}` (not tracked here).
    pub input_tokens_details: CachedTokens,
    /// Output tokens.
    pub output_tokens: u64,
    /// Reasoning share of the output.
    pub output_tokens_details: ReasoningTokens,
    /// The sum.
    pub total_tokens: u64,
}

/// `input_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedTokens {
    /// Prompt tokens served from cache.
    pub cached_tokens: u64,
}

/// `output_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningTokens {
    /// Output tokens spent reasoning (0 when not counted).
    pub reasoning_tokens: u64,
}

/// One output item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// The model's reasoning.
    Reasoning {
        /// `rs_…`.
        id: String,
        /// Always empty (no summaries are made).
        summary: Vec<Value>,
        /// The reasoning text, as `reasoning_text` parts.
        content: Vec<ContentPart>,
        /// `in_progress` or `completed`.
        status: String,
    },
    /// The visible answer.
    Message {
        /// `msg_…`.
        id: String,
        /// `assistant`.
        role: String,
        /// The text, as `output_text` parts.
        content: Vec<ContentPart>,
        /// `in_progress` or `completed`.
        status: String,
    },
    /// A tool call.
    FunctionCall {
        /// `fc_…`.
        id: String,
        /// The call id (the Chat Completions tool call id).
        call_id: String,
        /// The function name.
        name: String,
        /// The arguments JSON text.
        arguments: String,
        /// `in_progress` or `completed`.
        status: String,
    },
}

/// A content part of a reasoning or message item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Reasoning text.
    ReasoningText {
        /// The text.
        text: String,
    },
    /// Answer text.
    OutputText {
        /// The text.
        text: String,
        /// Always empty.
        annotations: Vec<Value>,
    },
}

/// A Responses API streaming event. Serialized with its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ResponsesEvent {
    /// The response exists (status `in_progress`, no output).
    #[serde(rename = "response.created")]
    Created {
        /// Event counter.
        sequence_number: u64,
        /// The response so far.
        response: Box<ResponseObject>,
    },
    /// Generation is under way.
    #[serde(rename = "response.in_progress")]
    InProgress {
        /// Event counter.
        sequence_number: u64,
        /// The response so far.
        response: Box<ResponseObject>,
    },
    /// An item opens.
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded {
        /// Event counter.
        sequence_number: u64,
        /// The item's position in `output`.
        output_index: usize,
        /// The item, empty, `in_progress`.
        item: OutputItem,
    },
    /// A text part opens.
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The part, empty.
        part: ContentPart,
    },
    /// More reasoning text.
    #[serde(rename = "response.reasoning_text.delta")]
    ReasoningTextDelta {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The text.
        delta: String,
    },
    /// The reasoning text is complete.
    #[serde(rename = "response.reasoning_text.done")]
    ReasoningTextDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The whole text.
        text: String,
    },
    /// More answer text.
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The text.
        delta: String,
        /// Always empty here.
        logprobs: Vec<Value>,
    },
    /// The answer text is complete.
    #[serde(rename = "response.output_text.done")]
    OutputTextDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The whole text.
        text: String,
        /// Always empty here.
        logprobs: Vec<Value>,
    },
    /// A text part is complete.
    #[serde(rename = "response.content_part.done")]
    ContentPartDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The whole part.
        part: ContentPart,
    },
    /// More call arguments.
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The next piece of the arguments JSON text.
        delta: String,
    },
    /// The call's arguments are complete.
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The function name.
        name: String,
        /// The whole arguments JSON text.
        arguments: String,
    },
    /// An item is complete.
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        /// Event counter.
        sequence_number: u64,
        /// The item's position.
        output_index: usize,
        /// The whole item, `completed`.
        item: OutputItem,
    },
    /// The response is complete (its status says whether it was cut short).
    #[serde(rename = "response.completed")]
    Completed {
        /// Event counter.
        sequence_number: u64,
        /// The whole response.
        response: Box<ResponseObject>,
    },
}

impl ResponsesEvent {
    /// The event's `type` (the SSE `event:` name).
    pub fn event_type(&self) -> &'static str {
        match self {
            ResponsesEvent::Created { .. } => "response.created",
            ResponsesEvent::InProgress { .. } => "response.in_progress",
            ResponsesEvent::OutputItemAdded { .. } => "response.output_item.added",
            ResponsesEvent::ContentPartAdded { .. } => "response.content_part.added",
            ResponsesEvent::ReasoningTextDelta { .. } => "response.reasoning_text.delta",
            ResponsesEvent::ReasoningTextDone { .. } => "response.reasoning_text.done",
            ResponsesEvent::OutputTextDelta { .. } => "response.output_text.delta",
            ResponsesEvent::OutputTextDone { .. } => "response.output_text.done",
            ResponsesEvent::ContentPartDone { .. } => "response.content_part.done",
            ResponsesEvent::FunctionCallArgumentsDelta { .. } => "response.function_call_arguments.delta",
            ResponsesEvent::FunctionCallArgumentsDone { .. } => "response.function_call_arguments.done",
            ResponsesEvent::OutputItemDone { .. } => "response.output_item.done",
            ResponsesEvent::Completed { .. } => "response.completed",
        }
    }
}

/// Builds one Responses API stream (one choice).
#[derive(Debug, Clone)]
pub struct ResponsesStream {
    response: ResponseObject,
    prompt_tokens: u64,
    ids: ItemIds,
    seq: u64,
    /// The open reasoning (`true`) or message item, and its output index.
    text: Option<(bool, usize)>,
    /// The open call (its index) and its output index.
    call: Option<(usize, usize)>,
    /// Every call's output index, for fragments that come after other items.
    calls: Vec<(usize, usize)>,
    started: bool,
}

impl ResponsesStream {
    /// A stream for a response.
    pub fn new(meta: &ResponseMeta) -> ResponsesStream {
        ResponsesStream {
            response: ResponseObject {
                id: meta.id.clone(),
                object: "response".into(),
                created_at: meta.created,
                model: meta.model.clone(),
                status: "in_progress".into(),
                incomplete_details: None,
                output: Vec::new(),
                usage: None,
            },
            prompt_tokens: meta.prompt_tokens,
            ids: ItemIds::new(&meta.id),
            seq: 0,
            text: None,
            call: None,
            calls: Vec::new(),
            started: false,
        }
    }

    fn seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq - 1
    }

    /// `response.created` and `response.in_progress` (once; later calls give nothing).
    pub fn start(&mut self) -> Vec<ResponsesEvent> {
        if std::mem::replace(&mut self.started, true) {
            return Vec::new();
        }
        let r = Box::new(self.response.clone());
        let a = ResponsesEvent::Created { sequence_number: self.seq(), response: r.clone() };
        vec![a, ResponsesEvent::InProgress { sequence_number: self.seq(), response: r }]
    }

    /// The events of one step (starting the stream first if needed).
    pub fn push(&mut self, step: &Step) -> Vec<ResponsesEvent> {
        let mut ev = self.start();
        // Items follow the order the parser wrote the parts in, so one-shot
        // and streamed responses list the same items in the same order.
        for piece in step.delta.pieces() {
            match piece {
                Piece::Reasoning(s) => self.text(true, s, &mut ev),
                Piece::Content(s) => self.text(false, s, &mut ev),
                Piece::Call(c) => self.call(c, &mut ev),
            }
        }
        ev
    }

    fn text(&mut self, reasoning: bool, s: &str, ev: &mut Vec<ResponsesEvent>) {
        let idx = match self.text {
            Some((r, idx)) if r == reasoning => idx,
            _ => {
                self.close_text(ev);
                self.open_text(reasoning, ev)
            }
        };
        if let OutputItem::Reasoning { content, .. } | OutputItem::Message { content, .. } =
            &mut self.response.output[idx]
        {
            if let Some(ContentPart::ReasoningText { text } | ContentPart::OutputText { text, .. }) =
                content.first_mut()
            {
                text.push_str(s);
            }
        }
        let id = self.item_id(idx);
        let e = if reasoning {
            ResponsesEvent::ReasoningTextDelta {
                sequence_number: self.seq(),
                item_id: id,
                output_index: idx,
                content_index: 0,
                delta: s.to_string(),
            }
        } else {
            ResponsesEvent::OutputTextDelta {
                sequence_number: self.seq(),
                item_id: id,
                output_index: idx,
                content_index: 0,
                delta: s.to_string(),
                logprobs: Vec::new(),
            }
        };
        ev.push(e);
    }

    /// A call fragment. A new call closes the open items; text after a call
    /// leaves it open, so its later arguments still go to its own item.
    fn call(&mut self, c: &ToolCallDelta, ev: &mut Vec<ResponsesEvent>) {
        let known = self.calls.iter().find(|(i, _)| *i == c.index).map(|&(_, idx)| idx);
        let idx = match known {
            Some(idx) => idx,
            None => {
                self.close_text(ev);
                self.close_call(ev);
                let item = OutputItem::FunctionCall {
                    id: self.ids.next("fc"),
                    call_id: c.id.clone().unwrap_or_default(),
                    name: c.name.clone().unwrap_or_default(),
                    arguments: String::new(),
                    status: "in_progress".into(),
                };
                self.response.output.push(item.clone());
                let idx = self.response.output.len() - 1;
                self.call = Some((c.index, idx));
                self.calls.push((c.index, idx));
                ev.push(ResponsesEvent::OutputItemAdded {
                    sequence_number: self.seq(),
                    output_index: idx,
                    item,
                });
                idx
            }
        };
        if c.arguments.is_empty() {
            return;
        }
        if let OutputItem::FunctionCall { arguments, .. } = &mut self.response.output[idx] {
            arguments.push_str(&c.arguments);
        }
        let e = ResponsesEvent::FunctionCallArgumentsDelta {
            sequence_number: self.seq(),
            item_id: self.item_id(idx),
            output_index: idx,
            delta: c.arguments.clone(),
        };
        ev.push(e);
    }

    /// Closes the open item and completes the response.
    pub fn finish(&mut self, reason: FinishReason, counts: TokenCounts) -> Vec<ResponsesEvent> {
        let mut ev = self.start();
        // The open items end in output order.
        if self.call.is_some_and(|(_, c)| self.text.is_some_and(|(_, t)| c < t)) {
            self.close_call(&mut ev);
        }
        self.close_text(&mut ev);
        self.close_call(&mut ev);
        let r = &mut self.response;
        match reason {
            FinishReason::Length => {
                r.status = "incomplete".into();
                r.incomplete_details = Some(IncompleteDetails { reason: "max_output_tokens".into() });
            }
            FinishReason::Abort => r.status = "cancelled".into(),
            FinishReason::Stop | FinishReason::ToolCalls => r.status = "completed".into(),
        }
        r.usage = Some(ResponseUsage {
            input_tokens: self.prompt_tokens,
            input_tokens_details: CachedTokens::default(),
            output_tokens: counts.completion_tokens,
            output_tokens_details: ReasoningTokens { reasoning_tokens: counts.reasoning_tokens.unwrap_or(0) },
            total_tokens: self.prompt_tokens + counts.completion_tokens,
        });
        let response = Box::new(self.response.clone());
        ev.push(ResponsesEvent::Completed { sequence_number: self.seq(), response });
        ev
    }

    /// The response as it stands (complete after [`ResponsesStream::finish`]).
    pub fn response(&self) -> &ResponseObject {
        &self.response
    }

    fn item_id(&self, idx: usize) -> String {
        match &self.response.output[idx] {
            OutputItem::Reasoning { id, .. }
            | OutputItem::Message { id, .. }
            | OutputItem::FunctionCall { id, .. } => id.clone(),
        }
    }

    /// Adds a reasoning or message item; returns its output index.
    fn open_text(&mut self, reasoning: bool, ev: &mut Vec<ResponsesEvent>) -> usize {
        let (item, part) = if reasoning {
            let id = self.ids.next("rs");
            let part = ContentPart::ReasoningText { text: String::new() };
            let item = OutputItem::Reasoning {
                id,
                summary: Vec::new(),
                content: Vec::new(),
                status: "in_progress".into(),
            };
            (item, part)
        } else {
            let id = self.ids.next("msg");
            let part = ContentPart::OutputText { text: String::new(), annotations: Vec::new() };
            let item = OutputItem::Message {
                id,
                role: "assistant".into(),
                content: Vec::new(),
                status: "in_progress".into(),
            };
            (item, part)
        };
        self.response.output.push(item.clone());
        let idx = self.response.output.len() - 1;
        let id = self.item_id(idx);
        self.text = Some((reasoning, idx));
        ev.push(ResponsesEvent::OutputItemAdded { sequence_number: self.seq(), output_index: idx, item });
        ev.push(ResponsesEvent::ContentPartAdded {
            sequence_number: self.seq(),
            item_id: id,
            output_index: idx,
            content_index: 0,
            part: part.clone(),
        });
        if let OutputItem::Reasoning { content, .. } | OutputItem::Message { content, .. } =
            &mut self.response.output[idx]
        {
            content.push(part);
        }
        idx
    }

    fn close_text(&mut self, ev: &mut Vec<ResponsesEvent>) {
        if let Some((_, idx)) = self.text.take() {
            self.close(idx, ev);
        }
    }

    fn close_call(&mut self, ev: &mut Vec<ResponsesEvent>) {
        if let Some((_, idx)) = self.call.take() {
            self.close(idx, ev);
        }
    }

    /// The done events of item `idx`.
    fn close(&mut self, idx: usize, ev: &mut Vec<ResponsesEvent>) {
        let id = self.item_id(idx);
        match &self.response.output[idx] {
            OutputItem::Reasoning { content, .. } | OutputItem::Message { content, .. } => {
                let part = content[0].clone();
                let done = match &part {
                    ContentPart::ReasoningText { text } => ResponsesEvent::ReasoningTextDone {
                        sequence_number: self.seq(),
                        item_id: id.clone(),
                        output_index: idx,
                        content_index: 0,
                        text: text.clone(),
                    },
                    ContentPart::OutputText { text, .. } => ResponsesEvent::OutputTextDone {
                        sequence_number: self.seq(),
                        item_id: id.clone(),
                        output_index: idx,
                        content_index: 0,
                        text: text.clone(),
                        logprobs: Vec::new(),
                    },
                };
                ev.push(done);
                ev.push(ResponsesEvent::ContentPartDone {
                    sequence_number: self.seq(),
                    item_id: id,
                    output_index: idx,
                    content_index: 0,
                    part,
                });
            }
            OutputItem::FunctionCall { name, arguments, .. } => {
                let (name, arguments) = (name.clone(), arguments.clone());
                ev.push(ResponsesEvent::FunctionCallArgumentsDone {
                    sequence_number: self.seq(),
                    item_id: id,
                    output_index: idx,
                    name,
                    arguments,
                });
            }
        }
        match &mut self.response.output[idx] {
            OutputItem::Reasoning { status, .. }
            | OutputItem::Message { status, .. }
            | OutputItem::FunctionCall { status, .. } => *status = "completed".into(),
        }
        let item = self.response.output[idx].clone();
        ev.push(ResponsesEvent::OutputItemDone { sequence_number: self.seq(), output_index: idx, item });
    }
}

/// One-shot Responses API answer for one choice.
pub fn complete(
    factory: &ParserFactory,
    req: &CheckedRequest,
    meta: &ResponseMeta,
    opts: &Options,
    output: &str,
    ids: Option<&[u32]>,
    engine: FinishReason,
) -> ResponseObject {
    let mut p = ChoiceProcessor::new(factory, req, opts);
    let step = p.finish_with(output, ids, None, engine);
    let mut s = ResponsesStream::new(meta);
    s.push(&step);
    s.finish(step.finish_reason.unwrap_or(engine), p.counts());
    s.response
}
