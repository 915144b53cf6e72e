//! The derender endpoints: token ids from a token-in/token-out worker →
//! Chat Completions (parsed: reasoning, content, tool calls) or completions
//! (detokenized), whole or one generate chunk per call.
//!
//! A streaming call carries everything between calls in `stream_state`
//! (see the parent module): it resumes the sealed stream processor and
//! detokenizer window, feeds the chunk's ids, and answers the chunk with
//! the state sealed again, bound to the request (its `request_id`, the
//! model, `chat_request` and `prompt_token_ids`), so a state is refused for
//! any other request. A state vLLM made is read too, after which the
//! compact state travels: its parser path's replay buffer
//! (`output_token_ids` cut by `output_chunk_lens`) is replayed once; its
//! plain path's decode window (`prev_token_ids` from `prefix_offset`,
//! `read_offset`: no parser configured, and every completions stream)
//! resumes the detokenizer, the parser starting afresh as vLLM's does
//! when it has no replay buffer.

use super::render::no_tokenizer;
use super::{body_json, now, state_error, token_ids};
use crate::app::AppState;
use crate::error::ApiError;
use crate::models::Model;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use llmsift_protocol::carry::{open, seal, ProcessorState, ProcessorStateRef};
use llmsift_protocol::{
    chat, ChatCompletionRequest, ChatStream, CheckedRequest, ChoiceProcessor, FinishReason, ResponseMeta,
};
use llmsift_tokenizers::{Detokenizer, TokenizerView};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// What a streaming chat derender carries, borrowed for sealing.
#[derive(Serialize)]
struct ChatCarryRef<'a> {
    processor: ProcessorStateRef<'a>,
    window: (&'a [u32], usize),
    role_sent: bool,
    created: u64,
}

/// What a streaming chat derender carries, opened.
#[derive(Deserialize)]
struct ChatCarry {
    processor: ProcessorState,
    window: (Vec<u32>, usize),
    role_sent: bool,
    created: u64,
}

/// What a streaming completions derender carries.
#[derive(Serialize, Deserialize)]
struct TextCarry {
    window: (Vec<u32>, usize),
    created: u64,
}

fn respond(r: Result<Value, ApiError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

pub async fn chat(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(body_json(body).and_then(|b| {
        if b.get("stream").and_then(Value::as_bool) == Some(true) {
            chat_chunk(&s, &b)
        } else {
            chat_whole(&s, &b)
        }
    }))
}

pub async fn completions(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(body_json(body).and_then(|b| {
        if b.get("stream").and_then(Value::as_bool) == Some(true) {
            text_chunk(&s, &b)
        } else {
            text_whole(&s, &b)
        }
    }))
}

fn field<'a>(b: &'a Map<String, Value>, name: &str) -> Result<&'a Map<String, Value>, ApiError> {
    b.get(name)
        .and_then(Value::as_object)
        .ok_or_else(|| ApiError::bad_request(format!("`{name}` must be an object"), Some(name.into())))
}

fn choices<'a>(g: &'a Map<String, Value>, at: &str) -> Result<&'a Vec<Value>, ApiError> {
    g.get("choices").and_then(Value::as_array).ok_or_else(|| {
        ApiError::bad_request(format!("`{at}.choices` must be a list"), Some(format!("{at}.choices")))
    })
}

fn finish_of(c: &Value, at: &str) -> Result<Option<FinishReason>, ApiError> {
    match c.get("finish_reason") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(FinishReason::parse(s).unwrap_or(FinishReason::Stop))),
        Some(_) => Err(ApiError::bad_request(
            format!("`{at}.finish_reason` must be a string"),
            Some(format!("{at}.finish_reason")),
        )),
    }
}

fn model_of(s: &AppState, b: &Map<String, Value>) -> Result<(Arc<Model>, TokenizerView), ApiError> {
    let name = b.get("model").and_then(Value::as_str).or_else(|| {
        b.get("chat_request")
            .or_else(|| b.get("completion_request"))
            .and_then(|r| r.get("model"))
            .and_then(Value::as_str)
    });
    let model = s.0.models.route(name)?;
    let view = model.view.clone().ok_or_else(|| no_tokenizer(&model))?;
    Ok((model, view))
}

/// The checked chat request a derender parses for (`chat_request`; a
/// request without tools when absent), its prompt read from the prompt ids
/// when `prompt` (a resumed parser has read it already, unless it holds the
/// whole output for a one-shot decision that reads it again at the end).
fn chat_request(
    model: &Model,
    view: &TokenizerView,
    b: &Map<String, Value>,
    prompt: bool,
) -> Result<CheckedRequest, ApiError> {
    let req = match b.get("chat_request").filter(|v| !v.is_null()) {
        Some(v) => {
            let mut v = v.clone();
            if v.get("messages").is_none() {
                v["messages"] = json!([]);
            }
            ChatCompletionRequest::from_value(v).map_err(|e| {
                ApiError::bad_request(
                    format!("`chat_request` is not a chat request: {e}"),
                    Some("chat_request".into()),
                )
            })?
        }
        None => ChatCompletionRequest::from_value(json!({"messages": []})).expect("an empty request reads"),
    };
    let mut checked = req.check_with(&model.check)?;
    let ids = token_ids(b.get("prompt_token_ids"), "prompt_token_ids")?;
    checked.prompt = ids.filter(|_| prompt).map(|ids| view.decode(&ids));
    Ok(checked)
}

/// How many trailing ids of a choice ended generation and are left out of
/// the text (0 or 1), as vLLM's derender does (`OnlineDerenderer._drop_stop_token`,
/// the engine's detokenizer rule): with finish `stop`, the last id when it
/// is the reported integer `stop_reason`, or, none reported, the model's
/// end-of-sequence token (unless `ignore_eos`) or one of the request's
/// `stop_token_ids`; kept with `include_stop_str_in_output`. It still counts
/// as a completion token.
fn stop_id_len(model: &Model, view: &TokenizerView, req: Option<&Value>, c: &Value, ids: &[u32]) -> usize {
    let Some(&last) = ids.last() else { return 0 };
    if c.get("finish_reason").and_then(Value::as_str) != Some("stop") {
        return 0;
    }
    let flag = |name: &str| req.and_then(|r| r.get(name)).and_then(Value::as_bool).unwrap_or(false);
    let stopped = match c.get("stop_reason") {
        Some(Value::String(_)) => false,
        Some(v) if !v.is_null() => v.as_u64() == Some(u64::from(last)),
        _ => {
            let eos = model
                .templates
                .as_ref()
                .and_then(|t| t.select(None, false).ok())
                .and_then(|t| t.eos_token())
                .and_then(|e| view.token_to_id(e));
            let listed = req
                .and_then(|r| r.get("stop_token_ids"))
                .and_then(Value::as_array)
                .is_some_and(|l| l.iter().any(|v| v.as_u64() == Some(u64::from(last))));
            (!flag("ignore_eos") && eos == Some(last)) || listed
        }
    };
    usize::from(stopped && !flag("include_stop_str_in_output"))
}

/// Whether a chat derender skips special tokens. Under the vLLM-compatible
/// settings, as vLLM's derender tier decides it (`_decode_params` with
/// `preserve_special`): a model with a parser keeps them, whatever the
/// request's `skip_special_tokens` and the pair's `adjust_request` rules
/// say, so its markers reach the parser (vLLM's serving path, and Sift's
/// other routes, apply those rules and can strip a call's markers). Its
/// exception, a Mistral-mode tokenizer, never applies: Sift's tokenizers
/// are Hugging Face ones. By default, the request's and the pair's rules,
/// as on every route.
fn skips_special(model: &Model, req: &CheckedRequest) -> bool {
    let parser = model.parsers.0.is_some() || model.parsers.1.is_some();
    !(model.opts.vllm_text_loss && parser) && req.skips_special_tokens(&model.factory)
}

/// The ids the parser sees: with `skip`, special tokens removed (as the text).
fn kept(view: &TokenizerView, skip: bool, ids: &[u32]) -> Vec<u32> {
    ids.iter().copied().filter(|&i| !(skip && view.is_special(i))).collect()
}

/// Non-streaming chat derender: `generate_response` → a chat completion.
fn chat_whole(s: &AppState, b: &Map<String, Value>) -> Result<Value, ApiError> {
    let (model, view) = model_of(s, b)?;
    let req = chat_request(&model, &view, b, true)?;
    let g = field(b, "generate_response")?;
    let skip = skips_special(&model, &req);
    let (mut outs, mut stop_ids) = (vec![], 0);
    for (i, c) in choices(g, "generate_response")?.iter().enumerate() {
        let at = format!("generate_response.choices[{i}]");
        let mut ids = token_ids(c.get("token_ids"), &format!("{at}.token_ids"))?.unwrap_or_default();
        let stop = stop_id_len(&model, &view, b.get("chat_request"), c, &ids);
        ids.truncate(ids.len() - stop);
        stop_ids += stop as u64;
        let text = view.decode_with(&ids, skip);
        let reason = finish_of(c, &at)?.unwrap_or(FinishReason::Stop);
        outs.push(ChoiceProcessor::new(&model.factory, &req, &model.opts).complete(
            &text,
            Some(&kept(&view, skip, &ids)),
            None,
            reason,
        ));
    }
    let meta = meta(&model, g, b, now());
    let mut resp = serde_json::to_value(chat::response(&meta, model.opts.reasoning_field, &outs))
        .expect("wire types serialize");
    // The stop tokens left out of the text were still generated.
    for k in ["completion_tokens", "total_tokens"] {
        if let Some(n) = resp["usage"][k].as_u64() {
            resp["usage"][k] = json!(n + stop_ids);
        }
    }
    Ok(resp)
}

fn meta(model: &Model, g: &Map<String, Value>, b: &Map<String, Value>, created: u64) -> ResponseMeta {
    let rid = g.get("request_id").and_then(Value::as_str).unwrap_or("derender");
    ResponseMeta {
        id: format!("chatcmpl-{rid}"),
        model: b.get("model").and_then(Value::as_str).unwrap_or(&model.name).to_string(),
        created,
        prompt_tokens: b.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
    }
}

/// What a state is bound to: the request it was made for.
fn binding(model: &Model, g: &Map<String, Value>, b: &Map<String, Value>, request_key: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(model.name.as_bytes());
    h.update([0]);
    h.update(g.get("request_id").and_then(Value::as_str).unwrap_or("").as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(b.get(request_key).unwrap_or(&Value::Null)).unwrap_or_default());
    h.update([0]);
    h.update(serde_json::to_vec(b.get("prompt_token_ids").unwrap_or(&Value::Null)).unwrap_or_default());
    h.finalize().to_vec()
}

/// A generate chunk's one choice: its index, ids, finish and the choice itself.
type ChunkChoice<'a> = (u64, Vec<u32>, Option<FinishReason>, &'a Value);

/// The one choice of a generate chunk: its index, ids and finish.
fn chunk_choice(g: &Map<String, Value>) -> Result<ChunkChoice<'_>, ApiError> {
    let list = choices(g, "generate_chunk")?;
    let [c] = list.as_slice() else {
        return Err(ApiError::bad_request(
            "a streaming derender call takes one choice per generate chunk (the state is per sequence)",
            Some("generate_chunk.choices".into()),
        ));
    };
    let at = "generate_chunk.choices[0]";
    let ids = token_ids(c.get("token_ids"), &format!("{at}.token_ids"))?.unwrap_or_default();
    Ok((c.get("index").and_then(Value::as_u64).unwrap_or(0), ids, finish_of(c, at)?, c))
}

/// vLLM's `DerenderStreamState` fields: Sift's carried token in `sift_state`.
fn stream_state(token: String, role_sent: bool, tools_streamed: bool) -> Value {
    json!({
        "prev_token_ids": [], "prefix_offset": 0, "read_offset": 0,
        "role_sent": role_sent,
        "logprob_context_token_ids": [], "logprob_text_offset": 0,
        "output_token_ids": [], "output_chunk_lens": [],
        "tools_streamed": tools_streamed, "last_tool_call_ids": [],
        "sift_state": token,
    })
}

/// The carried token of a `stream_state`, or a state vLLM made.
enum Carried<'a> {
    Fresh {
        role_sent: bool,
    },
    Sift(&'a str),
    /// vLLM's parser path: every output id so far, cut as it arrived.
    Replay {
        ids: Vec<u32>,
        lens: Vec<usize>,
        role_sent: bool,
    },
    /// vLLM's plain path: its detokenizer window, rebased to
    /// `prefix_offset` (the ids before it are never read again).
    Window {
        ids: Vec<u32>,
        read: usize,
        role_sent: bool,
    },
}

fn carried(b: &Map<String, Value>) -> Result<Carried<'_>, ApiError> {
    let Some(st) = b.get("stream_state").filter(|v| !v.is_null()) else {
        return Ok(Carried::Fresh { role_sent: false });
    };
    let bad =
        |what: &str| ApiError::bad_request(format!("`stream_state` {what}"), Some("stream_state".into()));
    let st = st.as_object().ok_or_else(|| bad("must be an object"))?;
    if let Some(t) = st.get("sift_state").filter(|v| !v.is_null()) {
        return t.as_str().map(Carried::Sift).ok_or_else(|| bad("has a `sift_state` that is not a string"));
    }
    let role_sent = st.get("role_sent").and_then(Value::as_bool).unwrap_or(false);
    let ids = token_ids(st.get("output_token_ids"), "stream_state.output_token_ids")?.unwrap_or_default();
    if ids.is_empty() {
        return plain_window(st, role_sent);
    }
    let lens: Vec<usize> = match st.get("output_chunk_lens").and_then(Value::as_array) {
        Some(l) => l
            .iter()
            .map(|n| n.as_u64().filter(|n| *n > 0).map(|n| n as usize))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("has an `output_chunk_lens` entry that is not a positive integer"))?,
        None => vec![ids.len()],
    };
    if lens.iter().sum::<usize>() != ids.len() {
        return Err(bad("has `output_chunk_lens` that do not sum to len(output_token_ids)"));
    }
    Ok(Carried::Replay { ids, lens, role_sent })
}

/// vLLM's plain-path state (`_detokenize_delta`): the window
/// `prev_token_ids`, of which `[prefix_offset..read_offset]` is the last
/// released text and the rest is held; vLLM rebases it after every id
/// (`prefix_offset` 0) and seeds it with the prompt's tail on the first
/// call. An empty window is a fresh start.
fn plain_window(st: &Map<String, Value>, role_sent: bool) -> Result<Carried<'_>, ApiError> {
    let mut ids = token_ids(st.get("prev_token_ids"), "stream_state.prev_token_ids")?.unwrap_or_default();
    if ids.is_empty() {
        return Ok(Carried::Fresh { role_sent });
    }
    let offset = |name: &str| -> Result<usize, ApiError> {
        match st.get(name) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().map(|n| n as usize).ok_or_else(|| {
                ApiError::bad_request(
                    format!("`stream_state.{name}` must be a non-negative integer"),
                    Some("stream_state".into()),
                )
            }),
        }
    };
    let (prefix, read) = (offset("prefix_offset")?, offset("read_offset")?);
    if prefix > read || read > ids.len() {
        return Err(ApiError::bad_request(
            "`stream_state` has offsets outside `prev_token_ids` (prefix_offset <= read_offset <= its length)",
            Some("stream_state".into()),
        ));
    }
    ids.drain(..prefix);
    Ok(Carried::Window { ids, read: read - prefix, role_sent })
}

/// Streaming chat derender: one generate chunk → `{chunk, stream_state}`.
fn chat_chunk(s: &AppState, b: &Map<String, Value>) -> Result<Value, ApiError> {
    let (model, view) = model_of(s, b)?;
    let carry = carried(b)?;
    let resumed = matches!(carry, Carried::Sift(_)) && !model.opts.vllm_one_shot;
    let req = chat_request(&model, &view, b, !resumed)?;
    let g = field(b, "generate_chunk")?;
    let (index, mut ids, finish, choice) = chunk_choice(g)?;
    let stop = stop_id_len(&model, &view, b.get("chat_request"), choice, &ids);
    ids.truncate(ids.len() - stop);
    let skip = skips_special(&model, &req);
    let bind = binding(&model, g, b, "chat_request");
    let key = &s.0.state_key;
    let (mut proc, mut detok, mut role_sent, created) = match carry {
        Carried::Sift(t) => {
            let c: ChatCarry = open(key, &bind, t).map_err(state_error)?;
            let p = ChoiceProcessor::resume(&model.factory, &req, &model.opts, c.processor)
                .map_err(state_error)?;
            let d = Detokenizer::resume(&view, skip, c.window.0, c.window.1)
                .ok_or_else(|| state_error(llmsift_protocol::carry::CarryError::Mismatch("window")))?;
            (p, d, c.role_sent, c.created)
        }
        Carried::Fresh { role_sent } => (
            ChoiceProcessor::new(&model.factory, &req, &model.opts),
            Detokenizer::with_skip(&view, skip),
            role_sent,
            now(),
        ),
        Carried::Replay { ids, lens, role_sent } => {
            // vLLM's replay buffer, read once: the same deltas, discarded.
            let mut p = ChoiceProcessor::new(&model.factory, &req, &model.opts);
            let mut d = Detokenizer::with_skip(&view, skip);
            let mut at = 0;
            for n in lens {
                let part = &ids[at..at + n];
                at += n;
                let text = d.push_ids(part);
                p.push(&text, Some(&kept(&view, skip, part)), None);
            }
            (p, d, role_sent, now())
        }
        Carried::Window { ids, read, role_sent } => (
            ChoiceProcessor::new(&model.factory, &req, &model.opts),
            resumed_window(&view, skip, ids, read)?,
            role_sent,
            now(),
        ),
    };
    let mut text = detok.push_ids(&ids);
    let kept_ids = kept(&view, skip, &ids);
    let step = match finish {
        Some(reason) => {
            let held = std::mem::replace(&mut detok, Detokenizer::with_skip(&view, skip));
            text.push_str(&held.finish());
            Some(proc.finish_with(&text, Some(&kept_ids), None, reason))
        }
        None => proc.push(&text, Some(&kept_ids), None),
    };
    let meta = meta(&model, g, b, created);
    let stream = ChatStream::new(meta.clone(), &req, model.opts.reasoning_field);
    let mut chunk = match &step {
        Some(step) => {
            serde_json::to_value(stream.step_chunk(index as u32, step)).expect("wire types serialize")
        }
        None => {
            let mut c = serde_json::to_value(stream.role_chunk(index as u32)).expect("wire types serialize");
            c["choices"][0]["delta"] = json!({});
            c
        }
    };
    if !std::mem::replace(&mut role_sent, true) {
        chunk["choices"][0]["delta"]["role"] = json!("assistant");
    }
    if finish.is_some() && req_include_usage(b) {
        let mut counts = proc.counts();
        counts.completion_tokens += stop as u64;
        chunk["usage"] = serde_json::to_value(counts.usage(meta.prompt_tokens)).expect("usage serializes");
    }
    let token = seal(
        key,
        &bind,
        &ChatCarryRef { processor: proc.snapshot(), window: detok.window(), role_sent, created },
    );
    Ok(json!({"chunk": chunk, "stream_state": stream_state(token, role_sent, proc.calls_sent())}))
}

/// A detokenizer resumed from vLLM's window (checked by [`plain_window`]).
fn resumed_window(
    view: &TokenizerView,
    skip: bool,
    ids: Vec<u32>,
    read: usize,
) -> Result<Detokenizer, ApiError> {
    Detokenizer::resume(view, skip, ids, read)
        .ok_or_else(|| state_error(llmsift_protocol::carry::CarryError::Mismatch("window")))
}

fn req_include_usage(b: &Map<String, Value>) -> bool {
    let r = b.get("chat_request").or_else(|| b.get("completion_request"));
    r.and_then(|r| r.get("stream_options"))
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Non-streaming completions derender: plain detokenization of each response.
fn text_whole(s: &AppState, b: &Map<String, Value>) -> Result<Value, ApiError> {
    let (model, view) = model_of(s, b)?;
    let gens = b.get("generate_responses").and_then(Value::as_array).ok_or_else(|| {
        ApiError::bad_request("`generate_responses` must be a list", Some("generate_responses".into()))
    })?;
    let prompt_tokens: Vec<u64> = match b.get("prompt_tokens").and_then(Value::as_array) {
        Some(l) if l.len() != gens.len() => {
            return Err(ApiError::bad_request(
                "`prompt_tokens` must have one entry per generate response",
                Some("prompt_tokens".into()),
            ))
        }
        Some(l) => l.iter().map(|v| v.as_u64().unwrap_or(0)).collect(),
        None => vec![0; gens.len()],
    };
    let skip = skip_special(b);
    let (mut choices, mut completion) = (vec![], 0u64);
    let mut rid = String::from("derender");
    for (k, g) in gens.iter().enumerate() {
        let g = g.as_object().ok_or_else(|| {
            ApiError::bad_request(
                "each generate response must be an object",
                Some(format!("generate_responses[{k}]")),
            )
        })?;
        if k == 0 {
            rid = g.get("request_id").and_then(Value::as_str).unwrap_or("derender").to_string();
        }
        for (i, c) in self::choices(g, &format!("generate_responses[{k}]"))?.iter().enumerate() {
            let at = format!("generate_responses[{k}].choices[{i}]");
            let mut ids = token_ids(c.get("token_ids"), &format!("{at}.token_ids"))?.unwrap_or_default();
            completion += ids.len() as u64;
            ids.truncate(ids.len() - stop_id_len(&model, &view, b.get("completion_request"), c, &ids));
            choices.push(json!({
                "index": choices.len(), "text": view.decode_with(&ids, skip), "logprobs": null,
                "finish_reason": finish_of(c, &at)?.map(FinishReason::as_str), "stop_reason": null,
            }));
        }
    }
    let prompt: u64 = prompt_tokens.iter().sum();
    Ok(json!({
        "id": format!("cmpl-{rid}"), "object": "text_completion", "created": now(),
        "model": b.get("model").and_then(Value::as_str).unwrap_or(&model.name),
        "choices": choices,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }))
}

fn skip_special(b: &Map<String, Value>) -> bool {
    b.get("completion_request")
        .and_then(|r| r.get("skip_special_tokens"))
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// Streaming completions derender: the detokenizer window carried.
fn text_chunk(s: &AppState, b: &Map<String, Value>) -> Result<Value, ApiError> {
    let (model, view) = model_of(s, b)?;
    let g = field(b, "generate_chunk")?;
    let (index, mut ids, finish, choice) = chunk_choice(g)?;
    ids.truncate(ids.len() - stop_id_len(&model, &view, b.get("completion_request"), choice, &ids));
    let skip = skip_special(b);
    let bind = binding(&model, g, b, "completion_request");
    let key = &s.0.state_key;
    let (mut detok, created) = match carried(b)? {
        Carried::Sift(t) => {
            let c: TextCarry = open(key, &bind, t).map_err(state_error)?;
            let d = Detokenizer::resume(&view, skip, c.window.0, c.window.1)
                .ok_or_else(|| state_error(llmsift_protocol::carry::CarryError::Mismatch("window")))?;
            (d, c.created)
        }
        Carried::Fresh { .. } => (Detokenizer::with_skip(&view, skip), now()),
        Carried::Replay { ids, .. } => {
            let mut d = Detokenizer::with_skip(&view, skip);
            d.push_ids(&ids);
            (d, now())
        }
        Carried::Window { ids, read, .. } => (resumed_window(&view, skip, ids, read)?, now()),
    };
    let mut text = detok.push_ids(&ids);
    if finish.is_some() {
        let held = std::mem::replace(&mut detok, Detokenizer::with_skip(&view, skip));
        text.push_str(&held.finish());
    }
    let rid = g.get("request_id").and_then(Value::as_str).unwrap_or("derender");
    let chunk = json!({
        "id": format!("cmpl-{rid}"), "object": "text_completion", "created": created,
        "model": b.get("model").and_then(Value::as_str).unwrap_or(&model.name),
        "choices": [{"index": index, "text": text, "logprobs": null, "finish_reason": finish.map(FinishReason::as_str)}],
    });
    let (w, r) = detok.window();
    let token = seal(key, &bind, &TextCarry { window: (w.to_vec(), r), created });
    Ok(json!({"chunk": chunk, "stream_state": stream_state(token, true, false)}))
}
