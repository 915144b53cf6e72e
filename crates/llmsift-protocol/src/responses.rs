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
//! opens or the response ends; one item is open at a time (text after a
//! call follows the rule of `after_call.rs`). The stream starts with `response.created`
//! and `response.in_progress` and ends with `response.completed`, or
//! `response.incomplete` when the output limit cut it. The response object
//! echoes the request's settings (`tools`, `tool_choice`, …) from the start.
//!
//! Logprobs (asked with `include: ["message.output_text.logprobs"]`): every
//! answer token's entry belongs to the first message item's `output_text`
//! part, in token order; reasoning tokens' entries are left out (the API has
//! no place for them), told apart by the reasoning counter. A
//! `response.output_text.delta` carries the entries that arrived up to it
//! (a held token's entry rides on the next delta); entries left when the
//! item closes, or of tokens after that, join the part without an event, so
//! the final part is the same however the output was cut.
//!
//! Invariants: `sequence_number` counts every event from 0; the response in
//! `response.completed` (or `response.incomplete`) is exactly the one-shot response (one-shot is this
//! stream run over a single step); item ids are deterministic from the
//! response id.

use crate::after_call::AfterCall;
use crate::chat::ResponseMeta;
use crate::check::CheckedRequest;
use crate::ids::ItemIds;
use crate::processor::{ChoiceProcessor, FinishReason, Options, Step, TokenCounts};
use llmsift_core::{ParserFactory, Piece, ToolCallDelta};
use serde_json::Value;

mod types;
pub use types::*;

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
    /// Text behind the open call.
    after_call: AfterCall,
    started: bool,
    /// Logprobs of answer tokens not yet written to an `output_text` part.
    logprobs: Vec<Value>,
    /// The output index of the first message item: every answer token's
    /// logprob belongs to its `output_text` part, so the response is the same
    /// however the output was cut into steps.
    logprobs_part: Option<usize>,
}

impl ResponsesStream {
    /// A stream for a response to `req` (whose settings the response echoes).
    pub fn new(meta: &ResponseMeta, req: &CheckedRequest) -> ResponsesStream {
        ResponsesStream {
            response: ResponseObject::new(&meta.id, &meta.model, meta.created, req),
            prompt_tokens: meta.prompt_tokens,
            ids: ItemIds::new(&meta.id),
            seq: 0,
            text: None,
            call: None,
            calls: Vec::new(),
            after_call: AfterCall::default(),
            started: false,
            logprobs: Vec::new(),
            logprobs_part: None,
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
        self.take_logprobs(step);
        // Items follow the order the parser wrote the parts in, so one-shot
        // and streamed responses list the same items in the same order.
        for piece in step.delta.pieces() {
            match piece {
                Piece::Reasoning(s) => self.text(true, s, &mut ev),
                Piece::Content(s) => self.text(false, s, &mut ev),
                Piece::Call(c) => self.call(c, &mut ev),
            }
        }
        // Entries of tokens that wrote no text of the first message wait for
        // its next delta while it is open; once it has closed, they join its
        // part without an event.
        if let Some(idx) = self.logprobs_part {
            if self.text != Some((false, idx)) {
                self.flush_logprobs(idx);
            }
        }
        ev
    }

    fn flush_logprobs(&mut self, idx: usize) {
        let lp = std::mem::take(&mut self.logprobs);
        if let Some(part) = self.part_logprobs(idx) {
            part.extend(lp);
        }
    }

    /// Queues the step's logprob entries that are not reasoning's: the
    /// Responses API has no place for reasoning tokens' logprobs.
    fn take_logprobs(&mut self, step: &Step) {
        let Some(entries) = step.logprobs.as_ref().and_then(|l| l.get("content")).and_then(Value::as_array)
        else {
            return;
        };
        match step.reasoning_mask.as_deref().filter(|m| m.len() == entries.len()) {
            Some(mask) => self.logprobs.extend(
                entries.iter().zip(mask).filter(|(_, reasoning)| !**reasoning).map(|(e, _)| e.clone()),
            ),
            None => self.logprobs.extend(entries.iter().cloned()),
        }
    }

    /// The `output_text` logprobs of message item `idx` (`None` for another kind).
    fn part_logprobs(&mut self, idx: usize) -> Option<&mut Vec<Value>> {
        match self.response.output.get_mut(idx)? {
            OutputItem::Message { content, .. } => match content.first_mut()? {
                ContentPart::OutputText { logprobs, .. } => Some(logprobs),
                ContentPart::ReasoningText { .. } => None,
            },
            _ => None,
        }
    }

    fn text(&mut self, reasoning: bool, s: &str, ev: &mut Vec<ResponsesEvent>) {
        if let Some((_, idx)) = self.call {
            let args = match &self.response.output[idx] {
                OutputItem::FunctionCall { arguments, .. } => arguments.as_str(),
                _ => "",
            };
            if !self.after_call.call_is_whole(args) {
                self.after_call.hold(reasoning, s);
                return;
            }
            self.close_call(ev);
        }
        self.write_text(reasoning, s, ev);
    }

    fn write_text(&mut self, reasoning: bool, s: &str, ev: &mut Vec<ResponsesEvent>) {
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
        let mut logprobs = Vec::new();
        if !reasoning {
            if self.logprobs_part.is_none() {
                self.logprobs_part = Some(idx);
            }
            if self.logprobs_part == Some(idx) && !self.logprobs.is_empty() {
                logprobs = std::mem::take(&mut self.logprobs);
                if let Some(part) = self.part_logprobs(idx) {
                    part.extend(logprobs.iter().cloned());
                }
            }
        }
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
                logprobs,
            }
        };
        ev.push(e);
    }

    /// A call fragment. A new call closes the open items; text after a call
    /// follows the rule of `after_call.rs`, so items never overlap.
    fn call(&mut self, c: &ToolCallDelta, ev: &mut Vec<ResponsesEvent>) {
        let known = self.calls.iter().find(|(i, _)| *i == c.index).map(|&(_, idx)| idx);
        let idx = match known {
            Some(idx) => idx,
            None => {
                self.close_call(ev);
                self.close_text(ev);
                self.after_call.args_grew();
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
        self.after_call.args_grew();
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

    /// The prompt size the final usage reports, when a count truer than
    /// the one the stream was made with arrived meanwhile (a backend's own).
    pub fn set_prompt_tokens(&mut self, prompt_tokens: u64) {
        self.prompt_tokens = prompt_tokens;
    }

    /// Closes the open item and completes the response.
    pub fn finish(&mut self, reason: FinishReason, counts: TokenCounts) -> Vec<ResponsesEvent> {
        let mut ev = self.start();
        // At most one item is open; a call's held text follows it.
        self.close_call(&mut ev);
        self.close_text(&mut ev);
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
        let sequence_number = self.seq();
        // As the Responses API (and vLLM) do, a response cut by the output
        // limit ends with `response.incomplete`, not `response.completed`.
        ev.push(if reason == FinishReason::Length {
            ResponsesEvent::Incomplete { sequence_number, response }
        } else {
            ResponsesEvent::Completed { sequence_number, response }
        });
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
            let part = ContentPart::OutputText {
                text: String::new(),
                annotations: Vec::new(),
                logprobs: Vec::new(),
            };
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

    /// Closes the open call's item; the text held behind it follows.
    fn close_call(&mut self, ev: &mut Vec<ResponsesEvent>) {
        if let Some((_, idx)) = self.call.take() {
            self.close(idx, ev);
            for (reasoning, s) in self.after_call.take() {
                self.write_text(reasoning, &s, ev);
            }
        }
    }

    /// The done events of item `idx`.
    fn close(&mut self, idx: usize, ev: &mut Vec<ResponsesEvent>) {
        if self.logprobs_part == Some(idx) {
            self.flush_logprobs(idx);
        }
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
                    ContentPart::OutputText { text, logprobs, .. } => ResponsesEvent::OutputTextDone {
                        sequence_number: self.seq(),
                        item_id: id.clone(),
                        output_index: idx,
                        content_index: 0,
                        text: text.clone(),
                        logprobs: logprobs.clone(),
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

#[allow(clippy::too_many_arguments)]
/// One-shot Responses API answer for one choice (`logprobs`: the whole
/// output's `{"content": [...]}`, when asked for).
pub fn complete(
    factory: &ParserFactory,
    req: &CheckedRequest,
    meta: &ResponseMeta,
    opts: &Options,
    output: &str,
    ids: Option<&[u32]>,
    logprobs: Option<Value>,
    engine: FinishReason,
) -> ResponseObject {
    let mut p = ChoiceProcessor::new(factory, req, opts);
    let step = p.finish_with(output, ids, logprobs, engine);
    let mut s = ResponsesStream::new(meta, req);
    s.push(&step);
    s.finish(step.finish_reason.unwrap_or(engine), p.counts());
    s.response
}
