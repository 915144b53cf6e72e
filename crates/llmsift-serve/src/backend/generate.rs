//! The `generate` backend: vLLM 0.34's token-in/token-out workers
//! (`POST /inference/v1/generate`), with the gateway as the whole
//! OpenAI-compatible frontend in front of them.
//!
//! Owns the worker's request body and the reading of its stream. The body
//! is what `/v1/chat/completions/render` answers for the same request
//! (`scaleout::render::generate_body`: the prompt rendered and tokenized
//! in process, `sampling_params` with the decoding constraint,
//! `reasoning_ended`), with the forwarded fields placed where vLLM's
//! `GenerateRequest` has them ([`place`]), and always `stream: true`: the
//! gateway reads one stream whatever the client asked, as for every backend.
//! The stream is vLLM's `GenerateStreamResponse` frames (`choices[]` of
//! `index`, `token_ids`, `finish_reason`, `logprobs`) and `data: [DONE]`;
//! the ids are then detokenized and parsed exactly as a `completions`
//! backend's (`crate::drive`).
//!
//! Invariants: a choice vLLM ends without a frame of its own (it sends no
//! frame for an output with no new ids, so a stop may carry no finish
//! reason) is finished with `stop` at `[DONE]`, never left open; a stream
//! that closes before `[DONE]` ends in [`BackendError::Dropped`]; an
//! `error` frame ends it in a [`BackendError::Status`]. Logprob entries
//! (vLLM writes every token `token_id:ID`) are spelled as the token's text
//! unless the request asked `return_tokens_as_token_ids`.

use super::conn::{BodyStream, Client};
use super::sse::Frames;
use super::{BackendError, Chunk, ChunkStream, GenRequest};
use crate::outbound::Fate;
use futures_util::Stream;
use llmsift_protocol::FinishReason;
use llmsift_tokenizers::TokenizerView;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The worker's path.
pub const PATH: &str = "/inference/v1/generate";

/// Forwarded request fields that are `GenerateRequest`'s own (the rest of
/// the forwarded fields are `SamplingParams`'s).
const TOP_LEVEL: [&str; 4] = ["priority", "cache_salt", "kv_transfer_params", "request_id"];

/// What becomes of a request field on the `generate` backend: the
/// `completions` backend's fate, except for what the gateway does itself
/// here (the prompt is tokenized by the gateway, logprob tokens are
/// spelled by it) and what vLLM's `GenerateRequest` has no place for.
pub fn fate(name: &str, completions: Fate) -> Fate {
    match name {
        // The gateway tokenized the prompt: these would change what it sent.
        "add_special_tokens" | "truncate_prompt_tokens" | "truncation_side" => Fate::Refuse,
        // Not fields of `GenerateRequest` nor of `SamplingParams`.
        "session_id" | "ec_transfer_params" | "watermarking" => Fate::Refuse,
        // The gateway holds deltas to it itself (`drive.rs`).
        "stream_interval" => Fate::Gateway,
        _ => completions,
    }
}

/// A pool of connections to one worker.
#[derive(Debug, Clone)]
pub struct GenerateBackend {
    client: Arc<Client>,
    key: Option<String>,
    view: TokenizerView,
}

impl GenerateBackend {
    /// A worker at `base` (e.g. `http://127.0.0.1:8001`); `view` spells
    /// logprob tokens.
    pub fn new(
        base: &str,
        key: Option<String>,
        view: TokenizerView,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<GenerateBackend, String> {
        let url = format!("{}{PATH}", base.trim_end_matches('/').trim_end_matches("/v1"));
        let client = Arc::new(Client::new(&url, connect_timeout, read_timeout)?);
        Ok(GenerateBackend { client, key, view })
    }

    /// Sends the request; fails before any output, or streams chunks.
    pub async fn start(&self, req: GenRequest) -> Result<ChunkStream, BackendError> {
        let body = self.body(&req);
        let body = serde_json::to_vec(&body).expect("JSON values serialize");
        let (status, bytes) = self.client.post(body.into(), self.key.as_deref()).await?;
        if !status.is_success() {
            let text = bytes.text().await;
            return Err(BackendError::Status { status: status.as_u16(), message: message(&text) });
        }
        let as_ids = req.sampling.get("return_tokens_as_token_ids").and_then(Value::as_bool) == Some(true);
        let reader = Reader {
            frames: Frames::default(),
            queue: VecDeque::new(),
            open: vec![true; req.n.max(1) as usize],
            closed: false,
            complete: false,
            spell: (!as_ids).then(|| self.view.clone()),
        };
        Ok(Box::pin(Chunks { bytes, reader }))
    }

    /// The `GenerateRequest`: the rendered one, the forwarded fields placed.
    fn body(&self, req: &GenRequest) -> Value {
        let mut g = req.generate.clone().unwrap_or_else(|| json!({"token_ids": [], "sampling_params": {}}));
        place(&mut g, &req.sampling);
        g["model"] = json!(req.model);
        g["stream"] = json!(true);
        if let Some(o) = g.as_object_mut() {
            // The gateway counts usage itself.
            o.remove("stream_options");
        }
        g
    }
}

/// Puts forwarded request fields where `GenerateRequest` has them: its own
/// at the top, `vllm_xargs` as `sampling_params.extra_args`, the others in
/// `sampling_params` (where render's already are, they are the same value).
pub fn place(g: &mut Value, forwarded: &Map<String, Value>) {
    for (k, v) in forwarded {
        if TOP_LEVEL.contains(&k.as_str()) {
            g[k.as_str()] = v.clone();
        } else if k == "vllm_xargs" {
            g["sampling_params"]["extra_args"] = v.clone();
        } else if k != "return_tokens_as_token_ids" {
            g["sampling_params"][k.as_str()] = v.clone();
        }
    }
}

/// The message of an error body (`{"error": {"message"}}`, vLLM's
/// `ErrorResponse`), else the body.
fn message(text: &str) -> String {
    let v: Option<Value> = serde_json::from_str(text).ok();
    let m = v.as_ref().and_then(|v| {
        let e = v.get("error").unwrap_or(v);
        e.get("message").and_then(Value::as_str).map(str::to_string)
    });
    m.unwrap_or_else(|| text.trim().chars().take(500).collect())
}

struct Chunks {
    bytes: BodyStream,
    reader: Reader,
}

impl Stream for Chunks {
    type Item = Result<Chunk, BackendError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Chunks { bytes, reader: r } = self.get_mut();
        loop {
            if let Some(item) = r.queue.pop_front() {
                return Poll::Ready(Some(item));
            }
            if r.closed {
                return Poll::Ready(None);
            }
            match Pin::new(&mut *bytes).poll_next(cx) {
                Poll::Ready(Some(Ok(b))) => r.read(&b, Instant::now()),
                Poll::Ready(Some(Err(e))) => r.fail(e),
                Poll::Ready(None) if r.complete => r.closed = true,
                Poll::Ready(None) => {
                    r.fail(BackendError::Dropped("the worker closed the connection before [DONE]".into()))
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// One frame of vLLM's `GenerateStreamResponse`, the fields read.
#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(default, borrow)]
    choices: Vec<StreamChoice<'a>>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StreamChoice<'a> {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    token_ids: Option<Vec<u32>>,
    #[serde(default, borrow)]
    finish_reason: Option<&'a str>,
    #[serde(default)]
    logprobs: Option<Value>,
}

struct Reader {
    frames: Frames,
    queue: VecDeque<Result<Chunk, BackendError>>,
    /// Per choice: not finished yet.
    open: Vec<bool>,
    closed: bool,
    complete: bool,
    /// Spells `token_id:ID` logprob tokens as text (None: keep the ids).
    spell: Option<TokenizerView>,
}

impl Reader {
    fn fail(&mut self, e: BackendError) {
        self.queue.push_back(Err(e));
        self.closed = true;
    }

    fn read(&mut self, bytes: &[u8], received: Instant) {
        for frame in self.frames.push(bytes) {
            if self.closed || self.complete {
                return;
            }
            let data = match frame {
                Ok(d) => d,
                Err(e) => return self.fail(BackendError::Protocol(e)),
            };
            if data.trim() == "[DONE]" {
                self.done(received);
                continue;
            }
            let f: Frame = match serde_json::from_str(&data) {
                Ok(f) => f,
                Err(e) => {
                    let shown: String = data.chars().take(80).collect();
                    return self.fail(BackendError::Protocol(format!("{e} in {shown:?}")));
                }
            };
            if let Some(err) = f.error {
                let message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| err.to_string(), str::to_string);
                return self.fail(BackendError::Status { status: 500, message });
            }
            for c in f.choices {
                let finish = match c.finish_reason {
                    None => None,
                    Some("length") => Some(FinishReason::Length),
                    Some("abort") => {
                        return self.fail(BackendError::Dropped("the worker aborted the request".into()))
                    }
                    Some(_) => Some(FinishReason::Stop),
                };
                match self.open.get_mut(c.index as usize) {
                    Some(open) if *open => *open = finish.is_none(),
                    _ => continue,
                }
                let logprobs = c.logprobs.as_ref().and_then(|l| self.entries(l));
                self.queue.push_back(Ok(Chunk {
                    index: c.index,
                    text: String::new(),
                    ids: Some(c.token_ids.unwrap_or_default()),
                    finish,
                    logprobs,
                    received: Some(received),
                    usage: None,
                }));
            }
        }
    }

    /// `[DONE]`: every choice still open ends here (vLLM sends no frame
    /// for a last output without new ids).
    fn done(&mut self, received: Instant) {
        self.complete = true;
        for (index, open) in self.open.iter_mut().enumerate() {
            if std::mem::replace(open, false) {
                self.queue.push_back(Ok(Chunk {
                    index: index as u32,
                    ids: Some(Vec::new()),
                    finish: Some(FinishReason::Stop),
                    received: Some(received),
                    ..Chunk::default()
                }));
            }
        }
    }

    /// Chat Completions entries of vLLM's `ChatCompletionLogProbs`, the
    /// `token_id:ID` tokens spelled as text when asked.
    fn entries(&self, l: &Value) -> Option<Vec<Value>> {
        let content = l.get("content")?.as_array()?;
        let spell = |e: &Value| -> Value {
            let token = e.get("token").and_then(Value::as_str).unwrap_or_default();
            let logprob = e.get("logprob").and_then(Value::as_f64).unwrap_or(-9999.0);
            let text = match (&self.spell, token.strip_prefix("token_id:").and_then(|i| i.parse().ok())) {
                (Some(v), Some(id)) => v.decode(&[id]),
                _ => token.to_string(),
            };
            json!({"token": text, "logprob": logprob, "bytes": text.as_bytes()})
        };
        Some(
            content
                .iter()
                .map(|e| {
                    let mut out = spell(e);
                    let top = e.get("top_logprobs").and_then(Value::as_array);
                    out["top_logprobs"] = top.map_or(json!([]), |t| t.iter().map(spell).collect());
                    out
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(n: usize) -> Reader {
        Reader {
            frames: Frames::default(),
            queue: VecDeque::new(),
            open: vec![true; n],
            closed: false,
            complete: false,
            spell: None,
        }
    }

    fn drain(r: &mut Reader) -> Vec<Result<Chunk, BackendError>> {
        r.queue.drain(..).map(|c| c.map(|c| Chunk { received: None, ..c })).collect()
    }

    #[test]
    fn frames_done_and_errors() {
        let t = Instant::now();
        let mut r = reader(2);
        r.read(
            b"data: {\"request_id\":\"x\",\"choices\":[{\"index\":1,\"token_ids\":[5,6],\"finish_reason\":null}]}\n\n\
              data: {\"request_id\":\"x\",\"choices\":[{\"index\":1,\"token_ids\":[7],\"finish_reason\":\"length\"}]}\n\n\
              data: {\"request_id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\ndata: [DONE]\n\n",
            t,
        );
        let got = drain(&mut r);
        let ids: Vec<_> = got.iter().map(|c| c.as_ref().unwrap().ids.clone().unwrap()).collect();
        assert_eq!(ids, vec![vec![5, 6], vec![7], vec![]]);
        // Choice 1 ended with its frame; choice 0 only at [DONE].
        let ends: Vec<_> =
            got.iter().map(|c| (c.as_ref().unwrap().index, c.as_ref().unwrap().finish)).collect();
        assert_eq!(ends[1], (1, Some(FinishReason::Length)));
        assert_eq!(ends[2], (0, Some(FinishReason::Stop)));
        assert!(r.complete);

        let mut r = reader(1);
        r.read(b"data: {\"error\":{\"message\":\"no\",\"code\":500}}\n\n", t);
        assert_eq!(drain(&mut r), vec![Err(BackendError::Status { status: 500, message: "no".into() })]);
        let mut r = reader(1);
        r.read(b"data: {\"choices\":[{\"index\":0,\"token_ids\":[\"x\"]}]}\n\n", t);
        assert!(matches!(drain(&mut r)[..], [Err(BackendError::Protocol(_))]));
    }

    #[test]
    fn forwarded_fields_placed() {
        let mut g = json!({"token_ids": [1], "sampling_params": {"temperature": 0.5}});
        let f: Map<String, Value> = serde_json::from_value(json!({"priority": 2, "logit_bias": {"1": 2},
            "vllm_xargs": {"a": 1}, "return_tokens_as_token_ids": true, "temperature": 0.5}))
        .unwrap();
        place(&mut g, &f);
        assert_eq!(
            g,
            json!({"token_ids": [1], "priority": 2, "sampling_params": {"temperature": 0.5,
            "logit_bias": {"1": 2}, "extra_args": {"a": 1}}})
        );
    }
}
