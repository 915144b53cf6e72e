//! One backend stream frame's JSON read into [`Chunk`]s.
//!
//! Owns what a frame means in each wire protocol: an OpenAI-style frame's
//! `choices` (`text`, or `delta.content` for a chat backend; `token_ids`,
//! else SGLang's `output_ids`; `finish_reason`, `length` or anything else),
//! a llama.cpp frame (`content`, `tokens`, `stop`, `stop_type: limit` or
//! `stopped_limit`), and an `error` key in either; log probabilities, when
//! a frame has them, through [`super::logprobs`]; a chat backend's `usage`
//! (the frame with empty `choices` that `stream_options.include_usage`
//! asks for, or a `usage` on any frame) as a typed [`Usage`].
//!
//! A frame is read twice over only when it is odd: frames of the expected
//! shape are deserialized straight into borrowed types (no JSON tree per
//! frame: this runs once per token); anything else (a field of another
//! type, a frame that is not an object, an `error` key) is read leniently
//! through a `serde_json::Value`, where a field of the wrong type counts as
//! absent.
//!
//! Invariant: for every frame the typed reading accepts, it gives exactly
//! the chunks and usage the lenient reading gives.

use super::{logprobs, Chunk, Usage};
use crate::config::BackendKind;
use llmsift_protocol::FinishReason;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::time::Instant;

/// Why a frame gave no chunks.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Bad {
    /// Not JSON (serde's message).
    Json(String),
    /// An error frame (its message).
    Error(String),
}

/// What one frame holds.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Frame {
    /// Its choices' chunks.
    pub chunks: Vec<Chunk>,
    /// A chat backend's counts for the whole request.
    pub usage: Option<Usage>,
}

/// The chunks (stamped `received`) and usage of one frame's `data`.
pub(super) fn frame(kind: BackendKind, data: &str, received: Instant) -> Result<Frame, Bad> {
    // serde reads a struct from a JSON array too (by position); the lenient
    // reading sees no field in an array, so only objects take the fast path.
    let typed = match data.trim_start().starts_with('{') {
        true if kind == BackendKind::Llamacpp => typed_llamacpp(data),
        true => typed_openai(kind, data),
        false => None,
    };
    let mut out = match typed {
        Some(f) => f,
        None => lenient(kind, data)?,
    };
    for c in &mut out.chunks {
        c.received = Some(received);
    }
    Ok(out)
}

/// A chat backend's `usage` object; one with a count missing or of the
/// wrong type is no usage (the gateway's own counts stand).
fn usage(kind: BackendKind, u: Option<&Value>) -> Option<Usage> {
    let u = u.filter(|_| kind == BackendKind::Chat)?;
    Some(Usage {
        prompt_tokens: u.get("prompt_tokens")?.as_u64()?,
        completion_tokens: u.get("completion_tokens")?.as_u64()?,
        reasoning_tokens: u.pointer("/completion_tokens_details/reasoning_tokens").and_then(Value::as_u64),
    })
}

fn finish_reason(f: &str) -> FinishReason {
    if f == "length" {
        FinishReason::Length
    } else {
        FinishReason::Stop
    }
}

/// Any value: the key is there (`"error": null` included, as in the lenient reading).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// `Some` for any value, `null` included, so a missing key and `null` differ.
fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct OpenAiFrame<'a> {
    #[serde(default, deserialize_with = "present")]
    error: bool,
    #[serde(default, borrow)]
    choices: Vec<OpenAiChoice<'a>>,
    /// Once per response (when asked for): read as a tree.
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct OpenAiChoice<'a> {
    index: Option<u64>,
    text: Option<String>,
    delta: Option<ChatDelta>,
    /// `null` hides `output_ids` in the lenient reading too.
    #[serde(default, deserialize_with = "some")]
    token_ids: Option<Option<Vec<u32>>>,
    output_ids: Option<Vec<u32>>,
    finish_reason: Option<&'a str>,
    /// Rare (only when asked for): read as a tree.
    logprobs: Option<Value>,
}

#[derive(Deserialize)]
struct ChatDelta {
    content: Option<String>,
}

fn typed_openai(kind: BackendKind, data: &str) -> Option<Frame> {
    let frame: OpenAiFrame = serde_json::from_str(data).ok()?;
    if frame.error {
        return None;
    }
    let usage = usage(kind, frame.usage.as_ref());
    let chunks = frame.choices.into_iter().map(|c| {
        let text = match kind {
            BackendKind::Chat => c.delta.and_then(|d| d.content),
            _ => c.text,
        };
        Chunk {
            index: c.index.unwrap_or(0) as u32,
            text: text.unwrap_or_default(),
            ids: c.token_ids.unwrap_or(c.output_ids),
            finish: c.finish_reason.map(finish_reason),
            logprobs: c.logprobs.as_ref().and_then(|l| logprobs::entries(kind, l)),
            received: None,
            usage: None,
        }
    });
    Some(Frame { chunks: chunks.collect(), usage })
}

#[derive(Deserialize)]
struct LlamacppFrame<'a> {
    #[serde(default, deserialize_with = "present")]
    error: bool,
    content: Option<String>,
    tokens: Option<Vec<u32>>,
    stop: Option<bool>,
    stop_type: Option<&'a str>,
    stopped_limit: Option<bool>,
    completion_probabilities: Option<Value>,
}

fn typed_llamacpp(data: &str) -> Option<Frame> {
    let f: LlamacppFrame = serde_json::from_str(data).ok()?;
    if f.error {
        return None;
    }
    let finish = f.stop.unwrap_or(false).then(|| {
        if f.stop_type == Some("limit") || f.stopped_limit == Some(true) {
            FinishReason::Length
        } else {
            FinishReason::Stop
        }
    });
    let logprobs =
        f.completion_probabilities.as_ref().and_then(|l| logprobs::entries(BackendKind::Llamacpp, l));
    let chunk = Chunk {
        index: 0,
        text: f.content.unwrap_or_default(),
        ids: f.tokens,
        finish,
        logprobs,
        ..Chunk::default()
    };
    Some(Frame { chunks: vec![chunk], usage: None })
}

/// The lenient reading: a field of the wrong type counts as absent.
fn lenient(kind: BackendKind, data: &str) -> Result<Frame, Bad> {
    let v: Value = serde_json::from_str(data).map_err(|e| {
        let shown: String = data.chars().take(80).collect();
        Bad::Json(format!("{e} in {shown:?}"))
    })?;
    if let Some(err) = v.get("error") {
        let message =
            err.get("message").and_then(Value::as_str).map_or_else(|| err.to_string(), str::to_string);
        return Err(Bad::Error(message));
    }
    let ids = |x: Option<&Value>| {
        x.and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_u64().map(|x| x as u32)).collect())
    };
    if kind == BackendKind::Llamacpp {
        let stop = v.get("stop").and_then(Value::as_bool).unwrap_or(false);
        let finish = stop.then(|| {
            let limit = v.get("stop_type").and_then(Value::as_str) == Some("limit")
                || v.get("stopped_limit").and_then(Value::as_bool) == Some(true);
            if limit {
                FinishReason::Length
            } else {
                FinishReason::Stop
            }
        });
        let text = v.get("content").and_then(Value::as_str).unwrap_or_default().to_string();
        let logprobs =
            v.get("completion_probabilities").and_then(|l| logprobs::entries(BackendKind::Llamacpp, l));
        let chunk = Chunk { index: 0, text, ids: ids(v.get("tokens")), finish, logprobs, ..Chunk::default() };
        return Ok(Frame { chunks: vec![chunk], usage: None });
    }
    let choices = v.get("choices").and_then(Value::as_array).into_iter().flatten();
    let chunks = choices.map(|c| {
        let text = match kind {
            BackendKind::Chat => c.pointer("/delta/content").and_then(Value::as_str),
            _ => c.get("text").and_then(Value::as_str),
        };
        Chunk {
            index: c.get("index").and_then(Value::as_u64).unwrap_or(0) as u32,
            text: text.unwrap_or_default().to_string(),
            ids: ids(c.get("token_ids").or_else(|| c.get("output_ids"))),
            finish: c.get("finish_reason").and_then(Value::as_str).map(finish_reason),
            logprobs: c.get("logprobs").and_then(|l| logprobs::entries(kind, l)),
            ..Chunk::default()
        }
    });
    Ok(Frame { chunks: chunks.collect(), usage: usage(kind, v.get("usage")) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames of every shape: the typed reading, where it applies, agrees
    /// with the lenient one.
    #[test]
    fn typed_equals_lenient() {
        let openai = [
            r#"{"choices":[{"index":0,"text":"a\"b","token_ids":[1,2],"finish_reason":null}]}"#,
            r#"{"choices":[{"index":1,"text":"x","output_ids":[7],"finish_reason":"length"}]}"#,
            r#"{"choices":[{"index":0,"text":"x","token_ids":null,"output_ids":[7]}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"é"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":null,"text":"t"}],"usage":{"a":1}}"#,
            r#"{"id":"x","choices":[],"usage":{"prompt_tokens":164,"completion_tokens":9,"total_tokens":173}}"#,
            r#"{"choices":[{"index":0,"text":"a","token_ids":[1],"logprobs":{"tokens":["a"],"token_logprobs":[-1.5],"top_logprobs":[{"a":-1.5}]}}]}"#,
            r#"{"id":"x","choices":[]}"#,
            r#"{"choices":[{"index":-1,"text":5,"token_ids":[1,"x"],"finish_reason":3}]}"#,
            r#"{"choices":[{"index":0,"finish_reason":"le\u006egth"}]}"#,
            r#"{"choices":null}"#,
            r#"{"choices":[{"token_ids":[4294967296]}]}"#,
            r#"{"error":null}"#,
            r#"[false,[{"text":"positional"}]]"#,
        ];
        let llama = [
            r#"{"content":"a","tokens":[1],"stop":false}"#,
            r#"{"content":"","tokens":[],"stop":true,"stop_type":"limit"}"#,
            r#"{"content":"","stop":true,"stopped_limit":true}"#,
            r#"{"content":"","stop":true,"stop_type":"eos"}"#,
            r#"{"content":"a","tokens":[1],"stop":false,"completion_probabilities":[{"id":1,"token":"a","logprob":-0.1,"bytes":[97],"top_logprobs":[]}]}"#,
            r#"{"content":null,"tokens":null,"stop":"yes"}"#,
            r#"{"error":{"message":"no"}}"#,
        ];
        let cases = openai
            .iter()
            .flat_map(|d| [(BackendKind::Completions, d), (BackendKind::Chat, d)])
            .chain(llama.iter().map(|d| (BackendKind::Llamacpp, d)));
        let mut fast = 0;
        for (kind, data) in cases {
            let typed = match kind {
                BackendKind::Llamacpp => typed_llamacpp(data),
                _ => typed_openai(kind, data),
            };
            if let (Some(typed), true) = (typed, data.starts_with('{')) {
                assert_eq!(Ok(typed), lenient(kind, data), "{kind:?} {data}");
                fast += 1;
            }
        }
        // The first eight OpenAI frames (both kinds) and five llama.cpp frames are the usual shape.
        assert_eq!(fast, 21);
        assert_eq!(lenient(BackendKind::Completions, r#"{"error":null}"#), Err(Bad::Error("null".into())));
        // Usage is a chat backend's, and only whole.
        let u = |kind, d| frame(kind, d, Instant::now()).unwrap().usage;
        let d = r#"{"choices":[],"usage":{"prompt_tokens":164,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":4}}}"#;
        let want = Usage { prompt_tokens: 164, completion_tokens: 9, reasoning_tokens: Some(4) };
        assert_eq!(u(BackendKind::Chat, d), Some(want));
        assert_eq!(u(BackendKind::Completions, d), None);
        assert_eq!(u(BackendKind::Chat, r#"{"choices":[],"usage":{"prompt_tokens":1}}"#), None);
        assert_eq!(u(BackendKind::Chat, r#"{"choices":[],"usage":null}"#), None);
    }
}
