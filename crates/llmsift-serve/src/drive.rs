//! One request's output: backend chunks in, the dialect's frames out.
//!
//! Owns, per request: one [`ChoiceProcessor`] and one detokenizer per
//! choice, the order of frames (opening frames, one batch per chunk, the
//! closing frames once every choice has finished) and the in-stream error:
//! when the backend fails after the stream started, every choice's held
//! text is flushed (delivered without a finish reason), then one error
//! event, then (Chat Completions) `data: [DONE]`.
//!
//! With logprobs, a chunk whose ids each have an entry is fed to the parser
//! token by token, so each entry rides on the delta its token produced
//! (the protocol layer drops reasoning's with `include_reasoning: false`);
//! the one-shot answer's entries are all of them in order, so they are the
//! stream's joined.
//!
//! Usage is the backend's own count where it gave one ([`Usage`], a chat
//! backend's: it rendered the prompt and returned no ids), else the
//! gateway's (its rendered prompt, the ids it was given): [`counted`], for
//! the stream's closing frames and the one-shot answers alike.
//!
//! With a stream interval of N > 1 (vLLM's `stream_interval`: the
//! request's, at least the model's), a choice's output is held until N
//! tokens have arrived since its last delta, then parsed as one chunk: one
//! delta (one client frame) per N tokens, as vLLM's engine sends them. The
//! first chunk and the last are never held, and nothing is held past the
//! N-th token (`Held`).
//!
//! Invariants: the text parsed is the detokenization of the backend's ids
//! when the model has a tokenizer and the backend sent ids (markers then
//! match by id), else the backend's text; the one-shot answer is built by
//! the protocol layer from the same text and ids, so it equals the folded
//! stream.

use crate::backend::{Chunk, Usage};
use crate::metrics::{Field, Metrics};
use crate::models::Model;
use llmsift_protocol::anthropic::MessageStream;
use llmsift_protocol::responses::ResponsesStream;
use llmsift_protocol::{
    sse, Api, ChatStream, CheckedRequest, ChoiceProcessor, FinishReason, ResponseMeta, Step, TokenCounts,
};
use llmsift_tokenizers::Detokenizer;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

enum Emitter {
    Chat(ChatStream),
    Responses(Box<ResponsesStream>),
    Anthropic(Box<MessageStream>),
}

struct Choice {
    processor: ChoiceProcessor,
    detok: Option<Detokenizer>,
    finish: Option<FinishReason>,
    held: Held,
}

/// A choice's output not yet parsed under a stream interval: the text, ids
/// and logprob entries of the tokens since its last delta (vLLM's
/// `OutputProcessor` rule: send on the first token, the last, and every
/// `stream_interval` tokens).
#[derive(Default)]
struct Held {
    text: String,
    /// `None` once a chunk came without ids (then the text is parsed alone).
    ids: Option<Vec<u32>>,
    lps: Option<Vec<Value>>,
    /// Backend tokens held (a chunk without ids counts one).
    tokens: u64,
    /// Whether any chunk was held since the last delta.
    any: bool,
    /// Whether a delta was parsed yet (the first is never held).
    sent: bool,
}

impl Held {
    fn add(&mut self, text: String, ids: Option<Vec<u32>>, lps: Option<Vec<Value>>, tokens: u64) {
        let first = !std::mem::replace(&mut self.any, true);
        self.text.push_str(&text);
        self.ids = match (first, self.ids.take(), ids) {
            (true, _, ids) => ids,
            (false, Some(mut a), Some(b)) => {
                a.extend(b);
                Some(a)
            }
            _ => None,
        };
        self.lps = match (first, self.lps.take(), lps) {
            (true, _, lps) => lps,
            (false, Some(mut a), Some(b)) => {
                a.extend(b);
                Some(a)
            }
            _ => None,
        };
        self.tokens += tokens;
    }

    /// Everything held, as one chunk's text, ids and entries.
    fn take(&mut self) -> (String, Option<Vec<u32>>, Option<Vec<Value>>) {
        self.sent = true;
        self.tokens = 0;
        self.any = false;
        (std::mem::take(&mut self.text), self.ids.take(), self.lps.take())
    }
}

/// The streaming state of one request.
pub struct Output {
    /// The model, for its tokenizer's special ids.
    model: Arc<Model>,
    /// vLLM's `skip_special_tokens` for this request (after the parsers' rules).
    skip: bool,
    emitter: Emitter,
    choices: Vec<Choice>,
    prompt_tokens: u64,
    /// The backend's own counts, once they came.
    usage: Option<Usage>,
    frames: u64,
    ended: bool,
    /// `top_logprobs` when the request asked for logprobs.
    top: Option<i64>,
    /// Tokens per delta at least (vLLM's `stream_interval`; 1: every chunk).
    interval: u64,
}

impl Output {
    /// The state for `n` choices of a checked request.
    pub fn new(model: &Arc<Model>, api: Api, req: &CheckedRequest, meta: &ResponseMeta) -> Output {
        let skip = req.skips_special_tokens(&model.factory);
        let emitter = match api {
            Api::Chat => Emitter::Chat(ChatStream::new(meta.clone(), req, model.opts.reasoning_field)),
            Api::Responses => Emitter::Responses(Box::new(ResponsesStream::new(meta, req))),
            Api::Anthropic => Emitter::Anthropic(Box::new(MessageStream::new(meta))),
        };
        let choices = (0..req.n.max(1))
            .map(|_| Choice {
                processor: ChoiceProcessor::new(&model.factory, req, &model.opts),
                detok: model.view.as_ref().map(|v| v.detokenizer_with(skip)),
                finish: None,
                held: Held::default(),
            })
            .collect();
        Output {
            model: model.clone(),
            skip,
            emitter,
            choices,
            prompt_tokens: meta.prompt_tokens,
            usage: None,
            frames: 0,
            ended: false,
            top: req.logprobs.then(|| req.top_logprobs.unwrap_or(0)),
            interval: 1,
        }
    }

    /// Parses (and sends) one delta per `n` tokens at most often (vLLM's
    /// `stream_interval`, settled when the request is read); 1 by default.
    pub fn set_interval(&mut self, n: u32) {
        self.interval = u64::from(n.max(1));
    }

    /// The opening frames.
    pub fn start(&mut self) -> Vec<String> {
        let out = match &mut self.emitter {
            Emitter::Chat(c) => (0..self.choices.len() as u32).map(|i| sse::data(&c.role_chunk(i))).collect(),
            Emitter::Responses(r) => r.start().iter().map(|e| sse::event(e.event_type(), e)).collect(),
            Emitter::Anthropic(a) => a.start().iter().map(|e| sse::event(e.event_type(), e)).collect(),
        };
        self.count(out)
    }

    fn count(&mut self, out: Vec<String>) -> Vec<String> {
        self.frames += out.len() as u64;
        out
    }

    /// Frames for one backend chunk (and the closing frames after the last choice finishes).
    pub fn push(&mut self, mut chunk: Chunk, metrics: &Metrics) -> Vec<String> {
        self.usage = chunk.usage.take().or(self.usage);
        let Some(choice) = self.choices.get_mut(chunk.index as usize) else {
            return Vec::new();
        };
        if choice.finish.is_some() {
            return Vec::new();
        }
        if self.top.is_none() {
            chunk.logprobs = None;
        }
        // With logprobs, token by token: each token's entry rides on the
        // delta that token produced (reasoning or content).
        let split = chunk.logprobs.as_ref().zip(chunk.ids.as_ref()).is_some_and(|(l, i)| l.len() == i.len());
        if split && choice.detok.is_some() && chunk.ids.as_ref().is_some_and(|i| i.len() > 1) {
            let (ids, lps) =
                (chunk.ids.take().unwrap_or_default(), chunk.logprobs.take().unwrap_or_default());
            let n = ids.len();
            let mut out = Vec::new();
            for (k, (id, lp)) in ids.into_iter().zip(lps).enumerate() {
                let one = Chunk {
                    ids: Some(vec![id]),
                    logprobs: Some(vec![lp]),
                    finish: if k + 1 == n { chunk.finish } else { None },
                    ..chunk.clone()
                };
                out.extend(self.push(one, metrics));
            }
            return out;
        }
        let tokens = chunk.ids.as_ref().map_or(1, |i| i.len() as u64);
        let (text, ids, lps) = match (&mut choice.detok, chunk.ids) {
            (Some(d), Some(ids)) => {
                let text = d.push_ids(&ids);
                let (ids, lps) = kept(&self.model, self.skip, ids, chunk.logprobs);
                (text, Some(ids), lps)
            }
            (_, ids) => {
                choice.detok = None;
                (chunk.text, ids, chunk.logprobs)
            }
        };
        let (text, ids, lps) = if self.interval > 1 {
            choice.held.add(text, ids, lps, tokens);
            if chunk.finish.is_none() && choice.held.sent && choice.held.tokens < self.interval {
                return Vec::new();
            }
            choice.held.take()
        } else {
            (text, ids, lps)
        };
        let lps = lps.map(|mut e| {
            crate::backend::logprobs::truncate(&mut e, self.top.unwrap_or(0));
            json!({ "content": e })
        });
        let t = Instant::now();
        let step = match chunk.finish {
            Some(reason) => {
                let rest = choice.detok.take().map(Detokenizer::finish).unwrap_or_default();
                let all = text + &rest;
                let step = choice.processor.finish_with(&all, ids.as_deref(), lps, reason);
                choice.finish = Some(step.finish_reason.unwrap_or(reason));
                Some(step)
            }
            None => choice.processor.push(&text, ids.as_deref(), lps),
        };
        metrics.parse_delta.observe(t.elapsed().as_secs_f64());
        let mut out = Vec::new();
        if let Some(step) = step {
            record(&step, metrics);
            self.emit(chunk.index, &step, &mut out);
        }
        if self.choices.iter().all(|c| c.finish.is_some()) {
            out.extend(self.end());
        }
        self.count(out)
    }

    fn emit(&mut self, index: u32, step: &Step, out: &mut Vec<String>) {
        match &mut self.emitter {
            Emitter::Chat(c) => {
                // The envelope is serialized once per stream (`ChatStream::step_frame`).
                let mut frame = Vec::with_capacity(256);
                c.step_frame(index, step, &mut frame);
                out.push(String::from_utf8(frame).expect("serde_json writes UTF-8"));
            }
            Emitter::Responses(r) => out.extend(r.push(step).iter().map(|e| sse::event(e.event_type(), e))),
            Emitter::Anthropic(a) => out.extend(a.push(step).iter().map(|e| sse::event(e.event_type(), e))),
        }
    }

    /// Whether the closing frames were sent.
    pub fn ended(&self) -> bool {
        self.ended
    }

    fn end(&mut self) -> Vec<String> {
        if std::mem::replace(&mut self.ended, true) {
            return Vec::new();
        }
        let own = self.choices.iter().fold(TokenCounts::default(), |a, c| a + c.processor.counts());
        let (prompt, counts) = counted(self.prompt_tokens, own, self.usage);
        let reason = self.choices[0].finish.unwrap_or(FinishReason::Stop);
        match &mut self.emitter {
            Emitter::Chat(c) => {
                let mut out = Vec::new();
                if let Some(u) = c.usage_chunk(counts.usage(prompt)) {
                    out.push(sse::data(&u));
                }
                out.push(sse::DONE.to_string());
                out
            }
            Emitter::Responses(r) => {
                r.set_prompt_tokens(prompt);
                r.finish(reason, counts).iter().map(|e| sse::event(e.event_type(), e)).collect()
            }
            Emitter::Anthropic(a) => {
                a.set_input_tokens(prompt);
                a.finish(reason, counts).iter().map(|e| sse::event(e.event_type(), e)).collect()
            }
        }
    }

    /// The backend failed mid-stream: flush every open choice, then the error event.
    pub fn fail(&mut self, message: &str, metrics: &Metrics) -> Vec<String> {
        if self.ended {
            return Vec::new();
        }
        self.ended = true;
        let mut out = Vec::new();
        for i in 0..self.choices.len() {
            let c = &mut self.choices[i];
            if c.finish.is_some() {
                continue;
            }
            // What a stream interval held is delivered first.
            let (mut rest, ids, _) = c.held.take();
            rest += &c.detok.take().map(Detokenizer::finish).unwrap_or_default();
            let ids = ids.unwrap_or_default();
            let mut step = c.processor.finish_with(&rest, Some(&ids), None, FinishReason::Stop);
            c.finish = step.finish_reason;
            // The output was cut by a failure, not finished: no finish reason is claimed.
            step.finish_reason = None;
            if !step.delta.is_empty() {
                record(&step, metrics);
                self.emit(i as u32, &step, &mut out);
            }
        }
        match &self.emitter {
            Emitter::Chat(_) => {
                out.push(sse::data(&json!({"error": {"message": message, "type": "BadGatewayError", "param": Value::Null, "code": 502}})));
                out.push(sse::DONE.to_string());
            }
            Emitter::Responses(_) => {
                let seq = self.frames + out.len() as u64;
                out.push(sse::event(
                    "error",
                    &json!({"type": "error", "code": "backend_error", "message": message, "param": Value::Null, "sequence_number": seq}),
                ));
            }
            Emitter::Anthropic(_) => out.push(sse::event(
                "error",
                &json!({"type": "error", "error": {"type": "api_error", "message": message}}),
            )),
        }
        self.count(out)
    }
}

/// The prompt size and output counts an answer reports: the backend's own
/// where it gave them (reasoning tokens too, when it counted them), else
/// the gateway's `prompt` and `own` counts.
pub fn counted(prompt: u64, own: TokenCounts, backend: Option<Usage>) -> (u64, TokenCounts) {
    match backend {
        None => (prompt, own),
        Some(u) => (
            u.prompt_tokens,
            TokenCounts {
                completion_tokens: u.completion_tokens,
                reasoning_tokens: u.reasoning_tokens.or(own.reasoning_tokens),
            },
        ),
    }
}

fn record(step: &Step, metrics: &Metrics) {
    metrics.output(Field::Reasoning, step.delta.reasoning.len());
    metrics.output(Field::Content, step.delta.content.len());
    let calls: usize = step
        .delta
        .tool_calls
        .iter()
        .map(|c| c.arguments.len() + c.name.as_ref().map_or(0, String::len))
        .sum();
    metrics.output(Field::ToolCalls, calls);
}

/// One choice's whole output, collected for a one-shot answer.
#[derive(Debug, Default)]
pub struct Collected {
    /// The text (detokenized from ids when there are some).
    pub text: String,
    /// The ids, when the backend sent them and the model has a tokenizer.
    pub ids: Option<Vec<u32>>,
    /// The engine's finish reason.
    pub finish: Option<FinishReason>,
    /// Logprob entries, one per id (or per backend token without ids).
    pub logprobs: Vec<Value>,
    /// Whether some chunk had none (then none are returned).
    pub logprobs_missing: bool,
    /// The backend's own counts (for the whole request), when it gave them.
    pub usage: Option<Usage>,
}

impl Collected {
    /// Adds a chunk.
    pub fn push(&mut self, model: &Model, chunk: Chunk) {
        self.usage = chunk.usage.or(self.usage);
        match chunk.logprobs {
            Some(l) => self.logprobs.extend(l),
            None => self.logprobs_missing |= chunk.ids.as_ref().is_some_and(|i| !i.is_empty()),
        }
        match (&model.view, chunk.ids) {
            (Some(_), Some(ids)) if self.ids.is_some() || self.text.is_empty() => {
                self.ids.get_or_insert_with(Vec::new).extend(ids)
            }
            _ => {
                self.ids = None;
                self.text.push_str(&chunk.text)
            }
        }
        if chunk.finish.is_some() {
            self.finish = chunk.finish;
        }
    }

    /// The text and ids to parse, special tokens skipped when `skip` (vLLM's
    /// `skip_special_tokens` for the request) says so.
    pub fn output(&self, model: &Model, skip: bool) -> (String, Option<Vec<u32>>) {
        match (&model.view, &self.ids) {
            (Some(v), Some(ids)) => (v.decode_with(ids, skip), Some(kept(model, skip, ids.clone(), None).0)),
            _ => (self.text.clone(), None),
        }
    }

    /// The logprobs to answer with (`{"content": [...]}`), the first `top`
    /// alternatives of each, following the ids the parser sees.
    pub fn logprobs(&self, model: &Model, skip: bool, top: i64) -> Option<Value> {
        if self.logprobs_missing {
            return None;
        }
        let mut e = match (&model.view, &self.ids) {
            (Some(_), Some(ids)) => kept(model, skip, ids.clone(), Some(self.logprobs.clone())).1?,
            _ => self.logprobs.clone(),
        };
        crate::backend::logprobs::truncate(&mut e, top);
        Some(json!({ "content": e }))
    }
}

/// The ids the parser sees: with `skip`, the special tokens the detokenizer
/// removed from the text are removed from the ids too, as in vLLM's engine;
/// their logprob entries (one per id, when they match) go with them.
fn kept(model: &Model, skip: bool, ids: Vec<u32>, lps: Option<Vec<Value>>) -> (Vec<u32>, Option<Vec<Value>>) {
    let Some(v) = model.view.as_ref().filter(|_| skip) else { return (ids, lps) };
    let lps = lps
        .filter(|l| l.len() == ids.len())
        .map(|l| l.into_iter().zip(&ids).filter(|(_, i)| !v.is_special(**i)).map(|(e, _)| e).collect());
    (ids.into_iter().filter(|&i| !v.is_special(i)).collect(), lps)
}
