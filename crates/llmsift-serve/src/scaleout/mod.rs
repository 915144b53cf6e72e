//! vLLM 0.34's scale-out endpoints: Sift as the GPU-less render/derender
//! tier in front of token-in/token-out workers (`docs/scale-out.md`).
//!
//! ```text
//! POST /v1/chat/completions/render   chat request → GenerateRequest (token_ids, sampling_params, …)
//! POST /v1/completions/render        completion request → [GenerateRequest]
//! POST /v1/messages/render           Anthropic request → GenerateRequest
//! POST /v1/responses/render          Responses request → GenerateRequest
//! POST /v1/chat/completions/derender generate_response → chat completion, or
//!                                    generate_chunk + stream_state → {chunk, stream_state}
//! POST /v1/completions/derender      the same for completions (no parser)
//! ```
//!
//! Owns the request and response shapes of vLLM's
//! `token_in_token_out/protocol.py` and the carried `stream_state`: vLLM's
//! own fields where they mean the same (`role_sent`, `tools_streamed`; the
//! replay buffer `output_token_ids` is read, never written) plus
//! `sift_state`, the sealed token of `llmsift_protocol::carry` holding the
//! stream processor, the detokenizer window and the chunk metadata.
//!
//! Invariants: the streaming derender keeps no state between calls (any
//! replica with the same `--state-key` serves any chunk); a bad state is a
//! 400 naming which check failed, never a 5xx; the state token never grows
//! with the output beyond an open call's held arguments (and, with
//! `vllm_one_shot` for a format that decides on the whole output, that output).

mod derender;
pub(crate) mod render;

use crate::app::AppState;
use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::routing::post;
use axum::Router;
use llmsift_protocol::carry::{CarryError, StateKey};
use serde_json::Value;

/// The scale-out routes, merged into the gateway's router by `app`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/chat/completions/render", post(render::chat))
        .route("/v1/completions/render", post(render::completions))
        .route("/v1/messages/render", post(render::messages))
        .route("/v1/responses/render", post(render::responses))
        .route("/v1/chat/completions/derender", post(derender::chat))
        .route("/v1/completions/derender", post(derender::completions))
}

/// A key for one process when none is configured: states then travel only
/// between calls to this process (random per start, never written anywhere).
pub fn process_key() -> StateKey {
    use std::hash::{BuildHasher, Hasher};
    let mut text = String::new();
    for _ in 0..4 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(std::process::id().into());
        text.push_str(&format!("{:016x}", h.finish()));
    }
    StateKey::new(&text).expect("64 characters")
}

/// A body read as a JSON object.
fn body_json(body: Result<Bytes, BytesRejection>) -> Result<serde_json::Map<String, Value>, ApiError> {
    let bytes = body.map_err(|r| ApiError::bad_request(r.body_text(), None))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(ApiError::bad_request("the request body must be a JSON object", None)),
        Err(e) => Err(ApiError::bad_request(format!("the body is not valid JSON: {e}"), None)),
    }
}

/// A refused `stream_state`: 400 whose `code`-like `param` names the check.
fn state_error(e: CarryError) -> ApiError {
    ApiError::bad_request(format!("{e} ({})", e.code()), Some("stream_state".into()))
}

/// A field that must be a list of non-negative integers fitting token ids.
fn token_ids(v: Option<&Value>, field: &str) -> Result<Option<Vec<u32>>, ApiError> {
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(None) };
    let bad = || ApiError::bad_request(format!("`{field}` must be a list of token ids"), Some(field.into()));
    let list = v.as_array().ok_or_else(bad)?;
    list.iter()
        .map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(bad))
        .collect::<Result<_, _>>()
        .map(Some)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
