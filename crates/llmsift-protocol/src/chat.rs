//! The Chat Completions dialect: [`Step`]s to `chat.completion.chunk`s, and
//! one-shot choices to a `chat.completion`.
//!
//! Owns the chunk sequence of a stream, as vLLM sends it: first a chunk per
//! choice with `role: assistant` and empty content, then one chunk per
//! non-empty step, the choice's last chunk carrying `finish_reason`, then
//! (with `stream_options.include_usage`) a chunk with no choices and the
//! usage, then `data: [DONE]`.
//!
//! Invariant: a chunk's delta writes only the fields the step carries, and
//! a call's `id`, `type` and `name` appear in its first fragment only.
//!
//! A step's SSE frame ([`ChatStream::step_frame`]) is written from an
//! envelope serialized once per stream (`data: {"id":…,"object":…,
//! "created":…,"model":…,"choices":[` and `]}` + a blank line) around the
//! choice's JSON: byte for byte `sse::data(&step_chunk(..))`, without
//! cloning the id and model and serializing them again per token.

use crate::check::CheckedRequest;
use crate::processor::{ChoiceOutput, ChoiceProcessor, FinishReason, Options, Step};
use crate::wire::{
    AssistantMessage, ChatCompletionChunk, ChatCompletionResponse, Choice, ChunkChoice, ChunkDelta,
    ChunkFunction, ChunkToolCall, FunctionCall, ReasoningField, ToolCall, Usage,
};
use llmsift_core::{Delta, Message, ParserFactory};

/// What a response says about itself: ids, model, time, prompt size. The
/// protocol layer does no I/O and reads no clock, so the caller supplies them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseMeta {
    /// The response id (`chatcmpl-…`; the Responses and Anthropic dialects use it too).
    pub id: String,
    /// The model name.
    pub model: String,
    /// Unix seconds.
    pub created: u64,
    /// Prompt tokens, for usage.
    pub prompt_tokens: u64,
}

/// Builds the chunks of one Chat Completions stream.
#[derive(Debug, Clone)]
pub struct ChatStream {
    meta: ResponseMeta,
    field: ReasoningField,
    include_usage: bool,
    /// `data: ` and a chunk's JSON up to its choices' opening `[`.
    head: Vec<u8>,
}

/// What closes a one-choice chunk's frame (no `usage`: only the usage chunk has it).
const TAIL: &[u8] = b"]}\n\n";

impl ChatStream {
    /// A chunk builder for a request.
    pub fn new(meta: ResponseMeta, req: &CheckedRequest, field: ReasoningField) -> ChatStream {
        let mut stream = ChatStream { meta, field, include_usage: req.include_usage, head: Vec::new() };
        // The empty chunk's JSON ends in `"choices":[]}`: its head is all but `]}`.
        let empty = crate::sse::data(&stream.chunk(Vec::new(), None));
        let cut = empty.len() - TAIL.len();
        debug_assert_eq!(&empty.as_bytes()[cut..], TAIL);
        stream.head = empty.as_bytes()[..cut].to_vec();
        stream
    }

    /// The SSE frame of [`ChatStream::step_chunk`], appended to `out`.
    pub fn step_frame(&self, index: u32, step: &Step, out: &mut Vec<u8>) {
        let choice = ChunkChoice {
            index,
            delta: chunk_delta(&step.delta, self.field),
            logprobs: step.logprobs.clone(),
            finish_reason: step.finish_reason,
            token_ids: step.token_ids.clone(),
        };
        out.extend_from_slice(&self.head);
        serde_json::to_writer(&mut *out, &choice).expect("wire types serialize");
        out.extend_from_slice(TAIL);
    }

    fn chunk(&self, choices: Vec<ChunkChoice>, usage: Option<Usage>) -> ChatCompletionChunk {
        ChatCompletionChunk {
            id: self.meta.id.clone(),
            object: "chat.completion.chunk".into(),
            created: self.meta.created,
            model: self.meta.model.clone(),
            choices,
            usage,
        }
    }

    /// The first chunk of choice `index`: `{"role": "assistant", "content": ""}`.
    pub fn role_chunk(&self, index: u32) -> ChatCompletionChunk {
        let delta = ChunkDelta {
            role: Some("assistant".into()),
            content: Some(String::new()),
            reasoning_field: self.field,
            ..ChunkDelta::default()
        };
        self.chunk(
            vec![ChunkChoice { index, delta, logprobs: None, finish_reason: None, token_ids: None }],
            None,
        )
    }

    /// The chunk for one step of choice `index`.
    pub fn step_chunk(&self, index: u32, step: &Step) -> ChatCompletionChunk {
        let choice = ChunkChoice {
            index,
            delta: chunk_delta(&step.delta, self.field),
            logprobs: step.logprobs.clone(),
            finish_reason: step.finish_reason,
            token_ids: step.token_ids.clone(),
        };
        self.chunk(vec![choice], None)
    }

    /// The usage chunk (no choices), when the request asked for it.
    pub fn usage_chunk(&self, usage: Usage) -> Option<ChatCompletionChunk> {
        self.include_usage.then(|| self.chunk(Vec::new(), Some(usage)))
    }

    /// The prompt size this stream reports.
    pub fn prompt_tokens(&self) -> u64 {
        self.meta.prompt_tokens
    }
}

/// A core delta as a chunk delta.
pub fn chunk_delta(d: &Delta, field: ReasoningField) -> ChunkDelta {
    let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
    ChunkDelta {
        role: None,
        content: opt(&d.content),
        reasoning: opt(&d.reasoning),
        tool_calls: d
            .tool_calls
            .iter()
            .map(|c| ChunkToolCall {
                index: c.index,
                id: c.id.clone(),
                kind: c.id.as_ref().map(|_| "function".to_string()),
                function: ChunkFunction { name: c.name.clone(), arguments: c.arguments.clone() },
            })
            .collect(),
        reasoning_field: field,
    }
}

/// A folded message as the response's assistant message.
pub fn assistant_message(m: &Message, field: ReasoningField) -> AssistantMessage {
    AssistantMessage {
        role: "assistant".into(),
        content: m.content.clone(),
        reasoning: m.reasoning.clone(),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                kind: "function".into(),
                function: FunctionCall { name: c.name.clone(), arguments: c.arguments.clone() },
            })
            .collect(),
        reasoning_field: field,
    }
}

/// A `chat.completion` from one-shot choices (usage summed over them).
pub fn response(
    meta: &ResponseMeta,
    field: ReasoningField,
    choices: &[ChoiceOutput],
) -> ChatCompletionResponse {
    let counts = choices.iter().fold(crate::TokenCounts::default(), |a, c| a + c.counts);
    ChatCompletionResponse {
        id: meta.id.clone(),
        object: "chat.completion".into(),
        created: meta.created,
        model: meta.model.clone(),
        choices: choices
            .iter()
            .enumerate()
            .map(|(i, c)| Choice {
                index: i as u32,
                message: assistant_message(&c.message, field),
                logprobs: c.logprobs.clone(),
                finish_reason: c.finish_reason,
                stop_reason: None,
                token_ids: c.token_ids.clone(),
            })
            .collect(),
        usage: counts.usage(meta.prompt_tokens),
    }
}

/// One-shot Chat Completions answer for one choice: parse `output` (with
/// its ids when known), apply the protocol rules, build the response.
pub fn complete(
    factory: &ParserFactory,
    req: &CheckedRequest,
    meta: &ResponseMeta,
    opts: &Options,
    output: &str,
    ids: Option<&[u32]>,
    engine: FinishReason,
) -> ChatCompletionResponse {
    let choice = ChoiceProcessor::new(factory, req, opts).complete(output, ids, None, engine);
    response(meta, opts.reasoning_field, &[choice])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChatCompletionRequest;
    use llmsift_core::ToolCallDelta;

    /// A step's frame written around the envelope is byte for byte the
    /// frame of its chunk, for every kind of step and both reasoning fields.
    #[test]
    fn a_step_frame_is_its_chunks_frame() {
        let req =
            ChatCompletionRequest::from_value(serde_json::json!({"messages": []})).unwrap().check().unwrap();
        let meta = ResponseMeta {
            id: "chatcmpl-\"quoted\" é".into(),
            model: "a/model\\name".into(),
            created: 1_700_000_000,
            prompt_tokens: 3,
        };
        let mut steps = vec![Step::default()];
        let mut s = Step::default();
        s.delta.reasoning = "think \"hard\"\n".into();
        s.delta.content = "ünï 🦀".into();
        s.token_ids = Some(vec![1, 2, 3]);
        s.logprobs = Some(serde_json::json!({"content": [{"token": "a", "logprob": -0.5}]}));
        steps.push(s);
        let mut s = Step::default();
        s.delta.tool_calls.push(ToolCallDelta {
            index: 0,
            id: Some("call_1".into()),
            name: Some("get_weather".into()),
            arguments: "{\"city\": \"Paris\"}".into(),
        });
        s.finish_reason = Some(FinishReason::ToolCalls);
        steps.push(s);
        for field in [ReasoningField::Reasoning, ReasoningField::ReasoningContent] {
            let c = ChatStream::new(meta.clone(), &req, field);
            for (i, step) in steps.iter().enumerate() {
                let mut out = Vec::new();
                c.step_frame(i as u32, step, &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), crate::sse::data(&c.step_chunk(i as u32, step)));
            }
        }
    }
}
