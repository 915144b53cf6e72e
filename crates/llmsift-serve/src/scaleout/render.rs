//! The render endpoints: a client request in any dialect → vLLM's
//! `GenerateRequest` (the prompt rendered with the model's chat template and
//! tokenized), for a token-in/token-out worker's `/inference/v1/generate`.
//!
//! Owns the mapping of request fields to `sampling_params` (the keys a
//! request sets, under vLLM's `SamplingParams` names, and the decoding
//! constraint as `structured_outputs`, from `crate::outbound`) and `reasoning_ended`
//! (whether the rendered prompt already left reasoning, as the pair's
//! parser reads the prompt's tail).

use super::body_json;
use crate::app::AppState;
use crate::error::ApiError;
use crate::inbound;
use crate::models::Model;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use llmsift_protocol::{Api, CheckedRequest};
use serde_json::{json, Map, Value};

/// Request fields copied into `sampling_params` under vLLM's names.
const SAMPLING: [(&str, &str); 14] = [
    ("n", "n"),
    ("temperature", "temperature"),
    ("top_p", "top_p"),
    ("top_k", "top_k"),
    ("min_p", "min_p"),
    ("seed", "seed"),
    ("stop", "stop"),
    ("stop_token_ids", "stop_token_ids"),
    ("presence_penalty", "presence_penalty"),
    ("frequency_penalty", "frequency_penalty"),
    ("repetition_penalty", "repetition_penalty"),
    ("min_tokens", "min_tokens"),
    ("ignore_eos", "ignore_eos"),
    ("include_stop_str_in_output", "include_stop_str_in_output"),
];

fn respond(r: Result<Value, ApiError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

pub async fn chat(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(dialect(&s, Api::Chat, body))
}

pub async fn messages(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(dialect(&s, Api::Anthropic, body))
}

pub async fn responses(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(dialect(&s, Api::Responses, body))
}

pub async fn completions(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(completion(&s, body))
}

/// `sampling_params` of a request body (Chat Completions field names).
fn sampling(
    body: &Map<String, Value>,
    max_tokens: Option<u64>,
    skip_special: bool,
    logprobs: Option<Value>,
) -> Value {
    let mut sp = Map::new();
    for (from, to) in SAMPLING {
        if let Some(v) = body.get(from).filter(|v| !v.is_null()) {
            sp.insert(to.into(), v.clone());
        }
    }
    if let Some(m) = max_tokens {
        sp.insert("max_tokens".into(), json!(m));
    }
    if let Some(l) = logprobs {
        sp.insert("logprobs".into(), l);
    }
    sp.insert("skip_special_tokens".into(), json!(skip_special));
    Value::Object(sp)
}

/// A chat-shaped request (any dialect) rendered into one `GenerateRequest`.
fn dialect(s: &AppState, api: Api, body: Result<Bytes, BytesRejection>) -> Result<Value, ApiError> {
    let bytes = body.map_err(|r| ApiError::bad_request(r.body_text(), None))?;
    let (req, chat) = inbound::read(api, &bytes)?;
    let model = s.0.models.route(req.model.as_deref())?;
    let mut checked = req.check_with(&model.check)?;
    let messages = chat.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let tools: Option<Vec<Value>> =
        chat.get("tools").and_then(Value::as_array).filter(|t| !t.is_empty()).cloned();
    let prompt = crate::app::render(&model, &messages, tools.as_ref(), &checked, &chat)?
        .ok_or_else(|| no_template(&model))?;
    let view = model.view.as_ref().ok_or_else(|| no_tokenizer(&model))?;
    let ids = view.encode(&prompt).map_err(|e| {
        ApiError::bad_request(format!("the prompt does not tokenize: {e}"), Some("messages".into()))
    })?;
    checked.prompt = Some(prompt);
    let obj = chat.as_object().cloned().unwrap_or_default();
    generate_body(&model, &checked, &obj, ids, s.next_id("chatcmpl"))
}

/// vLLM's `GenerateRequest` for a checked chat-shaped request (Chat
/// Completions field names in `obj`) whose rendered prompt
/// (`checked.prompt`) tokenized to `ids`: `sampling_params` with the
/// decoding constraint, `reasoning_ended`. The render endpoints answer it;
/// the `generate` backend sends it to its worker.
pub(crate) fn generate_body(
    model: &Model,
    checked: &CheckedRequest,
    obj: &Map<String, Value>,
    ids: Vec<u32>,
    request_id: String,
) -> Result<Value, ApiError> {
    let logprobs =
        checked.logprobs.then(|| json!(obj.get("top_logprobs").and_then(Value::as_u64).unwrap_or(0)));
    let skip = checked.skips_special_tokens(&model.factory);
    let mut sp = sampling(obj, checked.max_tokens, skip, logprobs);
    // The same decoding constraint the gateway sends a completions backend.
    if let Some(so) = crate::outbound::render_structured_outputs(model, checked, obj)? {
        sp["structured_outputs"] = so;
    }
    Ok(generate_request(model, ids, sp, checked, obj, request_id))
}

/// vLLM's `GenerateRequest` for rendered prompt ids.
fn generate_request(
    model: &Model,
    ids: Vec<u32>,
    sampling_params: Value,
    checked: &CheckedRequest,
    body: &Map<String, Value>,
    request_id: String,
) -> Value {
    let mut g = json!({
        "request_id": request_id,
        "token_ids": ids,
        "sampling_params": sampling_params,
        "model": model.name,
        "stream": checked.stream,
        "output_mode": "tokens",
        "priority": body.get("priority").cloned().unwrap_or(json!(0)),
    });
    if let Some(o) = body.get("stream_options").filter(|v| !v.is_null()) {
        g["stream_options"] = o.clone();
    }
    if model.parsers.0.is_some() {
        // The prompt's tail decides whether output starts inside reasoning.
        let parser = model.factory.parser(&checked.to_core());
        g["reasoning_ended"] = json!(!parser.in_reasoning());
        let kwargs = checked.chat_template_kwargs.clone().unwrap_or_default();
        g["reasoning_parser_kwargs"] = json!({"chat_template_kwargs": kwargs});
    }
    g
}

/// `/v1/completions/render`: one `GenerateRequest` per prompt (text or ids).
fn completion(s: &AppState, body: Result<Bytes, BytesRejection>) -> Result<Value, ApiError> {
    let body = body_json(body)?;
    let model = s.0.models.route(body.get("model").and_then(Value::as_str))?;
    let bad = || {
        ApiError::bad_request(
            "`prompt` must be a string, a list of strings, a list of token ids or a list of such lists",
            Some("prompt".into()),
        )
    };
    let prompts: Vec<Value> = match body.get("prompt") {
        Some(Value::String(t)) => vec![Value::String(t.clone())],
        Some(Value::Array(a)) if !a.is_empty() && a.iter().all(Value::is_u64) => {
            vec![Value::Array(a.clone())]
        }
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => return Err(bad()),
    };
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64);
    let skip = body.get("skip_special_tokens").and_then(Value::as_bool).unwrap_or(true);
    let logprobs = body.get("logprobs").filter(|v| !v.is_null()).cloned();
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let mut out = vec![];
    for p in prompts {
        let ids = match p {
            Value::String(t) => {
                let view = model.view.as_ref().ok_or_else(|| no_tokenizer(&model))?;
                view.encode(&t).map_err(|e| {
                    ApiError::bad_request(format!("the prompt does not tokenize: {e}"), Some("prompt".into()))
                })?
            }
            v => super::token_ids(Some(&v), "prompt")?.filter(|ids| !ids.is_empty()).ok_or_else(bad)?,
        };
        let mut g = json!({
            "request_id": s.next_id("cmpl"),
            "token_ids": ids,
            "sampling_params": sampling(&body, max_tokens.or(Some(16)), skip, logprobs.clone()),
            "model": model.name,
            "stream": stream,
            "output_mode": "tokens",
            "priority": body.get("priority").cloned().unwrap_or(json!(0)),
        });
        if let Some(o) = body.get("stream_options").filter(|v| !v.is_null()) {
            g["stream_options"] = o.clone();
        }
        out.push(g);
    }
    Ok(Value::Array(out))
}

fn no_template(model: &Model) -> ApiError {
    ApiError::bad_request(
        format!("model `{}` has no chat template to render with", model.name),
        Some("model".into()),
    )
}

pub(super) fn no_tokenizer(model: &Model) -> ApiError {
    ApiError::bad_request(format!("model `{}` has no tokenizer", model.name), Some("model".into()))
}
