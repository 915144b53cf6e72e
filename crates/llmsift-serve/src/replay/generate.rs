//! The replay backend as a vLLM 0.34 token-in/token-out worker:
//! `POST /inference/v1/generate` with a `GenerateRequest` (`token_ids`,
//! `sampling_params`, `stream`), answered with the recording's ids.
//!
//! Owns the worker's response shapes, as `ServingTokens` writes them:
//! whole, a `GenerateResponse` (`request_id`, `choices[]` of `index`,
//! `token_ids`, `finish_reason`, `logprobs`; `usage`); streamed,
//! `GenerateStreamResponse` frames, one per group of `--chunk-tokens` ids
//! and choice, the finish reason on the frame of the last ids (no frame
//! for an output without ids, as vLLM skips empty deltas), a usage frame
//! with `stream_options.include_usage`, then `data: [DONE]`. Logprobs
//! (`sampling_params.logprobs`: alternatives per token, at least one) are
//! vLLM's `ChatCompletionLogProbs` with every token written `token_id:ID`,
//! the values the other wires get (`super::logprob_frames`).
//!
//! The prompt is the ids decoded: the recording's tool variant is picked
//! when it mentions one of its tools, as for `/v1/completions`. Faults and
//! pacing are the other wires' (`model` suffix, `x-replay-fault`).
//!
//! Invariant: the frames' ids, concatenated per choice, are exactly the
//! recording's (cut at `sampling_params.max_tokens`).

use super::{error, header_fault, keep, split_model, stream, Fault, ReplayState};
use crate::recording::replay_ids;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use llmsift_tokenizers::TokenizerView;
use serde_json::{json, Value};

/// The worker's path.
pub(super) const PATH: &str = "/inference/v1/generate";

pub(super) async fn answer(State(s): State<ReplayState>, headers: HeaderMap, body: Bytes) -> Response {
    let req: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("replay: body is not JSON: {e}")),
    };
    keep(&s, PATH, &req);
    let (model, fault, pace) = match split_model(req.get("model").and_then(Value::as_str), &s.opts) {
        Ok(x) => x,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let fault = match header_fault(&headers, fault) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    if fault == Fault::Status500 {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "replay: injected internal error");
    }
    let Some(rec) = s.recording(model) else {
        return error(StatusCode::NOT_FOUND, "replay: no such recording");
    };
    let view = match s.view(rec) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, &e),
    };
    let prompt: Option<Vec<u32>> = req.get("token_ids").and_then(|t| serde_json::from_value(t.clone()).ok());
    let Some(prompt) = prompt.filter(|p| !p.is_empty()) else {
        return error(StatusCode::BAD_REQUEST, "replay: `token_ids` must be a non-empty list of token ids");
    };
    let sp = &req["sampling_params"];
    let tools = rec.prompt_has_tools(&view.decode(&prompt));
    let (ids, cut) = replay_ids(&view, rec.output(tools), sp.get("max_tokens").and_then(Value::as_u64));
    let n = sp.get("n").and_then(Value::as_u64).unwrap_or(1).max(1) as u32;
    let top = sp.get("logprobs").and_then(Value::as_i64).map(|k| k.clamp(1, 20) as usize);
    let rid =
        format!("generate-tokens-{}", req.get("request_id").and_then(Value::as_str).unwrap_or("replay"));
    let finish = if cut { "length" } else { "stop" };
    let usage = json!({"prompt_tokens": prompt.len(), "completion_tokens": ids.len() * n as usize,
        "total_tokens": prompt.len() + ids.len() * n as usize});
    let choice = |i: u32, part: &[u32], at: usize, finish: Option<&str>| {
        json!({"index": i, "logprobs": top.map(|t| logprobs(&view, part, at, t)),
            "finish_reason": finish, "token_ids": part})
    };
    if req.get("stream").and_then(Value::as_bool) != Some(true) {
        let choices: Vec<Value> = (0..n).map(|i| choice(i, &ids, 0, Some(finish))).collect();
        return axum::Json(json!({"request_id": rid, "choices": choices, "usage": usage,
            "prompt_logprobs": null, "kv_transfer_params": null}))
        .into_response();
    }
    let per = s.opts.chunk_tokens.max(1);
    let mut frames = Vec::new();
    let mut at = 0;
    let groups: Vec<&[u32]> = ids.chunks(per).collect();
    for (k, g) in groups.iter().enumerate() {
        let last = k + 1 == groups.len();
        for i in 0..n {
            let c = choice(i, g, at, last.then_some(finish));
            frames.push(format!("data: {}\n\n", json!({"request_id": rid, "choices": [c], "usage": null})));
        }
        at += g.len();
    }
    let include_usage = req.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true);
    if include_usage {
        frames.push(format!("data: {}\n\n", json!({"request_id": rid, "choices": [], "usage": usage})));
    }
    frames.push("data: [DONE]\n\n".to_string());
    let seed = sp.get("seed").and_then(Value::as_u64).unwrap_or(0);
    stream(&s, frames, fault, pace, seed)
}

/// vLLM's `ChatCompletionLogProbs` for the output's tokens `ids` from
/// position `at` on: `top` alternatives each, tokens written `token_id:ID`.
fn logprobs(view: &TokenizerView, ids: &[u32], at: usize, top: usize) -> Value {
    let ask = super::LogprobAsk { top, as_ids: true };
    // The completions wire's values, re-shaped.
    let c = super::logprob_frames(super::Wire::Chat, view, ids, at, ask);
    let content: Vec<Value> = c["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let alt = |a: &Value| json!({"token": a["token"], "logprob": a["logprob"], "bytes": null});
            let tops: Vec<Value> = e["top_logprobs"].as_array().into_iter().flatten().map(alt).collect();
            json!({"token": e["token"], "logprob": e["logprob"], "bytes": null, "top_logprobs": tops})
        })
        .collect();
    json!({ "content": content })
}
