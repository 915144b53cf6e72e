//! The HTTP backends: vLLM/SGLang `/v1/completions` with token ids,
//! llama.cpp `/completion`, and a raw OpenAI `/v1/chat/completions`.
//!
//! Owns each protocol's request body and the reading of its stream into
//! [`Chunk`]s. The gateway always streams from the backend, also for a
//! client that does not stream, so there is one reading path. The
//! connection is `backend::conn`'s, polled by whoever reads the chunks.
//!
//! A chat backend's guided calls (`delta.tool_calls`) are read back as
//! the text of its guided answer (`backend::chat_calls`). A chat backend is
//! asked for its `usage` (`stream_options.include_usage`): it renders the
//! prompt and returns no ids, so only it can count the tokens. The chunk
//! that finishes the last choice is held until the usage frame (or the
//! stream's end) and carries it.
//!
//! Invariants: the backend's key is sent as a bearer token and never
//! logged or echoed; a status error carries the backend's own message; a
//! stream that closes before its end marker (`[DONE]`, every choice
//! finished, or llama.cpp's `stop: true`) ends in [`BackendError::Dropped`].

use super::chat_calls::ChatCalls;
use super::conn::{BodyStream, Client};
use super::sse::Frames;
use super::wire::{self, Bad};
use super::{BackendError, Chunk, ChunkStream, GenRequest, Usage};
use crate::config::BackendKind;
use futures_util::Stream;
use serde_json::{json, Value};
use std::collections::{HashSet, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// A backend reached over HTTP.
#[derive(Debug, Clone)]
pub struct HttpBackend {
    client: Arc<Client>,
    kind: BackendKind,
    key: Option<String>,
}

impl HttpBackend {
    /// A backend at `base` (e.g. `http://127.0.0.1:8001`), with an optional bearer key.
    pub fn new(
        kind: BackendKind,
        base: &str,
        key: Option<String>,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<HttpBackend, String> {
        let base = base.trim_end_matches('/');
        let path = match kind {
            BackendKind::Completions => "/v1/completions",
            BackendKind::Llamacpp => "/completion",
            BackendKind::Chat => "/v1/chat/completions",
            BackendKind::Demo => return Err("the demo backend is not HTTP".into()),
            BackendKind::Generate => return Err("the generate backend is `backend::generate`'s".into()),
        };
        // A base given with `/v1` already (as OpenAI clients spell it) is not doubled.
        let url = match base.strip_suffix("/v1") {
            Some(b) if path.starts_with("/v1") => format!("{b}{path}"),
            _ => format!("{base}{path}"),
        };
        let client = Arc::new(Client::new(&url, connect_timeout, read_timeout)?);
        Ok(HttpBackend { client, kind, key })
    }

    /// llama.cpp's `/completion` makes one choice per request.
    pub fn supports_n(&self) -> bool {
        self.kind != BackendKind::Llamacpp
    }

    fn body(&self, req: &GenRequest) -> Value {
        let mut body = match self.kind {
            BackendKind::Completions => json!({
                "model": req.model,
                "prompt": req.prompt.clone().unwrap_or_default(),
                "stream": true,
                "n": req.n,
                "return_token_ids": true,
                "skip_special_tokens": false,
                "include_stop_str_in_output": false,
            }),
            // Token ids when the gateway has them: llama.cpp adds no BOS to
            // an id list (`tokenize_mixed`), so the model sees what the
            // template rendered (its own `<bos>` included) and the usage
            // counts what the backend evaluated.
            BackendKind::Llamacpp => json!({
                "prompt": match &req.prompt_ids {
                    Some(ids) => json!(ids),
                    None => json!(req.prompt.clone().unwrap_or_default()),
                },
                "stream": true,
                "return_tokens": true,
                "cache_prompt": true,
            }),
            _ => {
                let mut b = json!({
                    "model": req.model,
                    "messages": req.messages,
                    "stream": true,
                    "stream_options": {"include_usage": true},
                    "n": req.n,
                    "skip_special_tokens": false,
                });
                if let Some(t) = &req.tools {
                    // The backend must not parse calls (it has no parser), but its
                    // template must still show the model the tools.
                    b["tools"] = Value::Array(t.clone());
                    b["tool_choice"] = json!("none");
                }
                if let Some(k) = &req.chat_template_kwargs {
                    b["chat_template_kwargs"] = Value::Object(k.clone());
                }
                b
            }
        };
        if let Some(m) = req.max_tokens {
            let key = if self.kind == BackendKind::Llamacpp { "n_predict" } else { "max_tokens" };
            body[key] = json!(m);
        }
        for (k, v) in &req.sampling {
            body[k.as_str()] = v.clone();
        }
        body
    }

    /// Sends the request; fails before any output, or streams chunks.
    pub async fn start(&self, req: GenRequest) -> Result<ChunkStream, BackendError> {
        let body = serde_json::to_vec(&self.body(&req)).expect("JSON values serialize");
        let (status, bytes) = self.client.post(body.into(), self.key.as_deref()).await?;
        if !status.is_success() {
            let text = bytes.text().await;
            return Err(BackendError::Status { status: status.as_u16(), message: backend_message(&text) });
        }
        let calls = match self.kind {
            BackendKind::Chat => ChatCalls::new(req.sampling.get("tool_choice")),
            _ => None,
        };
        let reader = Reader {
            kind: self.kind,
            calls,
            frames: Frames::default(),
            queue: VecDeque::new(),
            n: req.n.max(1),
            finished: HashSet::new(),
            complete: false,
            closed: false,
            usage: None,
            held: None,
        };
        Ok(Box::pin(Chunks { bytes, reader }))
    }
}

/// The chunks of one response, read as its bytes arrive.
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
                Poll::Ready(None) if r.complete => {
                    r.release();
                    r.closed = true
                }
                Poll::Ready(None) => {
                    r.fail(BackendError::Dropped("the backend closed the connection".into()))
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// The message inside an OpenAI-shaped (or llama.cpp) error body, else the body.
fn backend_message(text: &str) -> String {
    let v: Option<Value> = serde_json::from_str(text).ok();
    let m = v.as_ref().and_then(|v| {
        let e = v.get("error")?;
        e.get("message").and_then(Value::as_str).or(e.as_str()).map(str::to_string)
    });
    m.unwrap_or_else(|| text.trim().chars().take(500).collect())
}

struct Reader {
    kind: BackendKind,
    /// A chat backend's guided calls, read back as text.
    calls: Option<ChatCalls>,
    frames: Frames,
    queue: VecDeque<Result<Chunk, BackendError>>,
    n: u32,
    finished: HashSet<u32>,
    complete: bool,
    closed: bool,
    /// A chat backend's counts, once its usage frame came.
    usage: Option<Usage>,
    /// A chat backend's last chunk, waiting for the usage frame.
    held: Option<Chunk>,
}

impl Reader {
    fn fail(&mut self, e: BackendError) {
        self.release();
        self.queue.push_back(Err(e));
        self.closed = true;
    }

    /// Queues the held last chunk, with the usage if it came.
    fn release(&mut self) {
        if let Some(mut c) = self.held.take() {
            c.usage = self.usage;
            self.queue.push_back(Ok(c));
        }
    }

    /// Bytes that arrived at `received`.
    fn read(&mut self, bytes: &[u8], received: Instant) {
        for frame in self.frames.push(bytes) {
            if self.closed {
                return;
            }
            let data = match frame {
                Ok(d) => d,
                Err(e) => return self.fail(BackendError::Protocol(e)),
            };
            if data.trim() == "[DONE]" {
                self.release();
                self.complete = true;
                continue;
            }
            let (mut chunks, usage) = match wire::frame(self.kind, &data, received) {
                Ok(f) => (f.chunks, f.usage),
                Err(Bad::Json(m)) => return self.fail(BackendError::Protocol(m)),
                Err(Bad::Error(message)) => return self.fail(BackendError::Status { status: 500, message }),
            };
            self.usage = usage.or(self.usage);
            if let Some(calls) = &mut self.calls {
                calls.apply(&data, &mut chunks);
            }
            for c in chunks {
                if c.finish.is_some() {
                    // llama.cpp makes one choice: its `stop` ends the stream.
                    self.finished.insert(c.index);
                    if self.kind == BackendKind::Llamacpp || self.finished.len() as u32 >= self.n {
                        self.complete = true;
                        if self.kind == BackendKind::Chat && self.held.is_none() {
                            // Its usage frame follows (asked for in the body).
                            self.held = Some(c);
                            continue;
                        }
                    }
                }
                self.queue.push_back(Ok(c));
            }
            if self.usage.is_some() {
                self.release();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(kind: BackendKind, n: u32) -> Reader {
        Reader {
            kind,
            calls: None,
            frames: Frames::default(),
            queue: VecDeque::new(),
            n,
            finished: HashSet::new(),
            complete: false,
            closed: false,
            usage: None,
            held: None,
        }
    }

    /// The chunks of `frames` (SSE data), read in one piece, then the stream's end.
    fn read(kind: BackendKind, n: u32, frames: &[&str]) -> Vec<Chunk> {
        let mut r = reader(kind, n);
        let bytes: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
        r.read(bytes.as_bytes(), Instant::now());
        if r.complete {
            r.release();
        }
        r.queue.into_iter().map(|c| c.expect("no error")).collect()
    }

    const FIRST: &str = r#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}"#;
    const LAST: &str = r#"{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}"#;
    const USAGE: &str =
        r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}"#;

    /// A chat backend's usage rides on the chunk that finishes the last
    /// choice, whether its frame comes after the finish (vLLM, llama.cpp) or
    /// with it; without one, the last chunk comes at `[DONE]` or the end, as it was.
    #[test]
    fn the_last_chunk_carries_the_usage() {
        let want = Some(Usage { prompt_tokens: 7, completion_tokens: 2, reasoning_tokens: None });
        let with_finish = r#"{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2}}"#;
        for frames in
            [vec![FIRST, LAST, USAGE, "[DONE]"], vec![FIRST, with_finish, "[DONE]"], vec![FIRST, LAST, USAGE]]
        {
            let got = read(BackendKind::Chat, 1, &frames);
            let texts: Vec<&str> = got.iter().map(|c| c.text.as_str()).collect();
            assert_eq!(texts, ["a", "b"], "{frames:?}");
            assert_eq!((got[0].usage, got[1].usage), (None, want), "{frames:?}");
            assert!(got[1].finish.is_some());
        }
        for frames in [vec![FIRST, LAST, "[DONE]"], vec![FIRST, LAST]] {
            let got = read(BackendKind::Chat, 1, &frames);
            assert_eq!(got.len(), 2, "{frames:?}");
            assert_eq!(got[1].usage, None);
        }
        // Two choices: only the chunk that finishes both carries it.
        let other = r#"{"choices":[{"index":1,"delta":{"content":"c"},"finish_reason":"length"}]}"#;
        let got = read(BackendKind::Chat, 2, &[LAST, other, USAGE, "[DONE]"]);
        assert_eq!(got.iter().map(|c| c.usage).collect::<Vec<_>>(), [None, want]);
        // Other wires have no usage to wait for: the finish is queued at once.
        let mut r = reader(BackendKind::Completions, 1);
        r.read(
            b"data: {\"choices\":[{\"index\":0,\"text\":\"b\",\"finish_reason\":\"stop\"}]}\n\n",
            Instant::now(),
        );
        assert_eq!(r.queue.len(), 1);
    }
}
