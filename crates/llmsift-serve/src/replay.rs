//! The replay backend: recorded outputs served in each backend wire
//! format, with pacing and injected faults. `sift-replay` runs it; the
//! gateway's end-to-end tests and load test put `sift serve` in front of it.
//!
//! Wire formats: vLLM/SGLang `POST /v1/completions` (SSE, `token_ids` per
//! choice, `[DONE]`), llama.cpp `POST /completion` (SSE, `tokens`, a last
//! frame with `stop: true`), a raw `POST /v1/chat/completions` whose
//! `delta.content` carries the markers, all three always streamed (the
//! gateway only asks for streams), and vLLM 0.34's token-in/token-out
//! `POST /inference/v1/generate`, whole or streamed as its body says
//! (`replay/generate.rs`). The recording is picked by the request's `model` (a
//! recording's file stem or served name), else the default; the tool
//! variant when the prompt mentions one of its tools (or, for chat, when
//! the request has tools).
//!
//! Faults (flag `--fault`; per request the `x-replay-fault` header, or a
//! suffix of the requested model, `qwen3@drop:6,pace:20`, which is how a
//! gateway in front picks them per served model):
//! `status500`, `drop:N` (the connection is cut after N frames),
//! `stall:N` (no byte after N frames), `garbage:N` (a non-JSON frame after
//! N frames), `split-utf8` (the body written in 1–3 byte pieces, cutting
//! multi-byte characters). `GET /replay/stats` counts started, completed
//! and cancelled streams (a stream dropped before its end: the client left).
//!
//! What it was asked is kept: `GET /replay/requests` returns (and forgets)
//! the bodies received since the last call, each `{"path", "body"}` (the
//! last 256 at most), so a test can assert what the gateway sent.
//!
//! Log probabilities, when the body asks for them (`logprobs` for
//! completions, `n_probs` for llama.cpp, `logprobs: true` for chat), come
//! in each wire's own shape (`logprob_frames`): made-up but fixed values
//! (token `k` of the output has logprob `-(k % 4 + 1) / 4`, its
//! alternatives are the next ids), with `return_tokens_as_token_ids`
//! honoured. A chat request with a JSON `response_format` is answered as a
//! guided vLLM answers it: JSON text built from the request's schema
//! ([`guided_text`]); one with `tool_choice` `required` or a named
//! function as vLLM (and llama.cpp's server) stream the calls they guided:
//! `delta.tool_calls`, the name first, then the arguments in pieces of
//! `chunk_tokens` tokens, `finish_reason: "tool_calls"`.
//! A chat request with `stream_options.include_usage` gets a last frame
//! with empty `choices` and the replay's own `usage` (prompt: the tokens
//! of the messages' JSON text; completion: the ids sent, all choices).
//!
//! Invariant: without a fault, the frames' token ids are exactly the
//! recording's ids (cut at `max_tokens`), so the gateway's answer can be
//! compared byte for byte.

mod generate;

use crate::recording::{replay_ids, Recording};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use llmsift_tokenizers::TokenizerView;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    /// None.
    #[default]
    None,
    /// Answer 500 before any output.
    Status500,
    /// Cut the connection after N frames.
    Drop(usize),
    /// Send nothing more after N frames.
    Stall(usize),
    /// A frame that is not JSON after N frames.
    Garbage(usize),
    /// Write the body in 1–3 byte pieces.
    SplitUtf8,
}

impl std::str::FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Fault, String> {
        let (name, n) = s.split_once(':').unwrap_or((s, "0"));
        let n: usize = n.parse().map_err(|_| format!("`{s}`: the count after `:` must be a number"))?;
        match name {
            "none" => Ok(Fault::None),
            "status500" => Ok(Fault::Status500),
            "drop" => Ok(Fault::Drop(n)),
            "stall" => Ok(Fault::Stall(n)),
            "garbage" => Ok(Fault::Garbage(n)),
            "split-utf8" => Ok(Fault::SplitUtf8),
            _ => Err(format!("unknown fault `{s}` (status500, drop:N, stall:N, garbage:N, split-utf8)")),
        }
    }
}

/// How the replay backend behaves.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// The recording for requests that name none (a file stem or served name).
    pub default_recording: Option<String>,
    /// The fault applied to every request without an `x-replay-fault` header.
    pub fault: Fault,
    /// Pause between frames.
    pub pace: Duration,
    /// Tokens per frame (at least 1).
    pub chunk_tokens: usize,
    /// Record when each frame is handed to the connection, by the request's
    /// `seed` (`GET /replay/stamps`; the load test's clock).
    pub stamps: bool,
}

/// Stream counters.
#[derive(Debug, Default)]
pub struct Stats {
    started: AtomicU64,
    completed: AtomicU64,
    cancelled: AtomicU64,
}

/// The replay backend's state.
#[derive(Debug, Clone)]
pub struct ReplayState {
    opts: ReplayOptions,
    recordings: Arc<Vec<Recording>>,
    views: Arc<Mutex<HashMap<String, TokenizerView>>>,
    stats: Arc<Stats>,
    stamps: Arc<Mutex<Vec<(u64, u32, u128)>>>,
    requests: Arc<Mutex<std::collections::VecDeque<Value>>>,
}

/// How many received bodies `GET /replay/requests` keeps.
const KEPT_REQUESTS: usize = 256;

impl ReplayState {
    /// State over the shipped recordings.
    pub fn new(opts: ReplayOptions) -> ReplayState {
        ReplayState {
            opts,
            recordings: Arc::new(Recording::builtin()),
            views: Arc::default(),
            stats: Arc::default(),
            stamps: Arc::default(),
            requests: Arc::default(),
        }
    }

    fn recording(&self, model: Option<&str>) -> Option<&Recording> {
        let wanted = model.or(self.opts.default_recording.as_deref());
        let stem = |r: &Recording| r.name.trim_end_matches("-demo").to_string();
        match wanted {
            Some(w) => self.recordings.iter().find(|r| r.name == w || stem(r) == w),
            None => self.recordings.first(),
        }
    }

    fn view(&self, rec: &Recording) -> Result<TokenizerView, String> {
        let mut views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = views.get(&rec.tokenizer) {
            return Ok(v.clone());
        }
        let v = TokenizerView::from_file(rec.tokenizer_path()).map_err(|e| e.to_string())?;
        views.insert(rec.tokenizer.clone(), v.clone());
        Ok(v)
    }
}

/// The replay router.
pub fn replay_app(state: ReplayState) -> Router {
    Router::new()
        .route("/v1/completions", post(|s, h, b| answer(s, h, b, Wire::Completions)))
        .route("/completion", post(|s, h, b| answer(s, h, b, Wire::Llamacpp)))
        .route("/v1/chat/completions", post(|s, h, b| answer(s, h, b, Wire::Chat)))
        .route(generate::PATH, post(generate::answer))
        .route("/health", get(|| async { StatusCode::OK }))
        .route("/replay/stats", get(stats))
        .route("/replay/stamps", get(stamps))
        .route("/replay/requests", get(requests))
        .with_state(state)
}

async fn stats(State(s): State<ReplayState>) -> Response {
    let st = &s.stats;
    axum::Json(json!({
        "started": st.started.load(Ordering::SeqCst),
        "completed": st.completed.load(Ordering::SeqCst),
        "cancelled": st.cancelled.load(Ordering::SeqCst),
    }))
    .into_response()
}

/// `[[seed, frame, unix_nanos], …]`: when each frame was handed over.
async fn stamps(State(s): State<ReplayState>) -> Response {
    let all = std::mem::take(&mut *s.stamps.lock().unwrap_or_else(|e| e.into_inner()));
    axum::Json(all).into_response()
}

/// The bodies received since the last call, oldest first.
async fn requests(State(s): State<ReplayState>) -> Response {
    let all: Vec<Value> = s.requests.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
    axum::Json(all).into_response()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Completions,
    Llamacpp,
    Chat,
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(
            json!({"error": {"message": message, "type": "BadRequestError", "code": status.as_u16()}}),
        ),
    )
        .into_response()
}

/// A requested model `NAME@fault,pace:MS`: the recording, the fault, the pace.
fn split_model<'a>(
    model: Option<&'a str>,
    opts: &ReplayOptions,
) -> Result<(Option<&'a str>, Fault, Duration), String> {
    let Some((name, rest)) = model.and_then(|m| m.split_once('@')) else {
        return Ok((model, opts.fault, opts.pace));
    };
    let (mut fault, mut pace) = (opts.fault, opts.pace);
    for part in rest.split(',') {
        match part.strip_prefix("pace:") {
            Some(ms) => {
                pace = Duration::from_millis(ms.parse().map_err(|_| format!("`{part}`: not a number"))?)
            }
            None => fault = part.parse()?,
        }
    }
    Ok((Some(name), fault, pace))
}

async fn answer(State(s): State<ReplayState>, headers: HeaderMap, body: Bytes, wire: Wire) -> Response {
    let req: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("replay: body is not JSON: {e}")),
    };
    let path = match wire {
        Wire::Completions => "/v1/completions",
        Wire::Llamacpp => "/completion",
        Wire::Chat => "/v1/chat/completions",
    };
    keep(&s, path, &req);
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
    let tools = match (wire, req.get("prompt")) {
        (Wire::Chat, _) => req.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()),
        // llama.cpp takes the prompt as token ids too.
        (_, Some(Value::Array(ids))) => {
            let ids: Vec<u32> = ids.iter().filter_map(Value::as_u64).map(|i| i as u32).collect();
            rec.prompt_has_tools(&view.decode(&ids))
        }
        (_, p) => rec.prompt_has_tools(p.and_then(Value::as_str).unwrap_or_default()),
    };
    let max =
        req.get(if wire == Wire::Llamacpp { "n_predict" } else { "max_tokens" }).and_then(Value::as_u64);
    let n = req.get("n").and_then(Value::as_u64).unwrap_or(1).max(1) as u32;
    let guided = if wire == Wire::Chat { guided_text(&req) } else { None };
    let (ids, cut) = replay_ids(&view, guided.as_deref().unwrap_or(rec.output(tools)), max);
    let lp = LogprobAsk::of(wire, &req);
    let framing = Framing { n, per: s.opts.chunk_tokens.max(1), model: rec.name.as_str(), logprobs: lp };
    let (mut frames, made) = match guided_call(&req).filter(|_| wire == Wire::Chat) {
        Some((name, args)) => {
            (call_frames(&view, &name, &args, &framing), view.encode(&args).map_or(0, |a| a.len()))
        }
        None => (frames(wire, &view, &ids, cut, &framing), ids.len()),
    };
    if wire == Wire::Chat && req.pointer("/stream_options/include_usage") == Some(&Value::Bool(true)) {
        // The replay renders no template: its prompt count is the tokens of
        // the messages' JSON text, which differs from the gateway's own.
        let prompt = view.encode(&req["messages"].to_string()).map_or(0, |p| p.len());
        let usage = json!({"prompt_tokens": prompt, "completion_tokens": made * n as usize,
            "total_tokens": prompt + made * n as usize});
        let frame = json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "model": rec.name,
            "choices": [], "usage": usage});
        // Before `[DONE]`, as vLLM and llama.cpp send it.
        frames.insert(frames.len() - 1, data(&frame));
    }
    let seed = req.get("seed").and_then(Value::as_u64).unwrap_or(0);
    stream(&s, frames, fault, pace, seed)
}

/// Keeps a received body for `GET /replay/requests`.
fn keep(s: &ReplayState, path: &str, req: &Value) {
    let mut kept = s.requests.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() >= KEPT_REQUESTS {
        kept.pop_front();
    }
    kept.push_back(json!({"path": path, "body": req}));
}

/// The fault a request asks for (its `x-replay-fault` header, else `fault`).
fn header_fault(headers: &HeaderMap, fault: Fault) -> Result<Fault, String> {
    match headers.get("x-replay-fault").and_then(|v| v.to_str().ok()) {
        Some(f) => f.parse::<Fault>(),
        None => Ok(fault),
    }
}

/// An SSE response of `frames`, paced, with `fault` injected, stamped by `seed`.
fn stream(s: &ReplayState, frames: Vec<String>, fault: Fault, pace: Duration, seed: u64) -> Response {
    let frames = inject(frames, fault);
    s.stats.started.fetch_add(1, Ordering::SeqCst);
    let guard = Guard { stats: s.stats.clone(), done: false };
    let stamp = s.opts.stamps.then(|| (s.stamps.clone(), seed));
    let state = (frames.into_iter().enumerate(), guard);
    let body = futures_util::stream::unfold(state, move |(mut rest, mut g)| {
        let stamp = stamp.clone();
        async move {
            let (k, piece) = rest.next()?;
            if !pace.is_zero() {
                tokio::time::sleep(pace).await;
            }
            if let Some((log, seed)) = &stamp {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
                log.lock().unwrap_or_else(|e| e.into_inner()).push((*seed, k as u32, now));
            }
            match piece {
                Piece::Bytes(b) => {
                    // The stream is complete once its last piece is handed over.
                    g.done = rest.len() == 0;
                    Some((Ok::<_, std::io::Error>(b), (rest, g)))
                }
                Piece::Cut => Some((Err(std::io::Error::other("replay: injected drop")), (rest, g))),
                Piece::Stall => {
                    std::future::pending::<()>().await;
                    None
                }
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .expect("static headers")
}

/// Counts a stream as completed when its last piece went out, else as cancelled.
struct Guard {
    stats: Arc<Stats>,
    done: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let c = if self.done { &self.stats.completed } else { &self.stats.cancelled };
        c.fetch_add(1, Ordering::SeqCst);
    }
}

enum Piece {
    Bytes(Bytes),
    Cut,
    Stall,
}

fn data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

/// How a reply is cut into frames.
struct Framing<'a> {
    /// Choices.
    n: u32,
    /// Tokens per frame.
    per: usize,
    /// The model name the frames carry.
    model: &'a str,
    /// The logprobs asked for, if any.
    logprobs: Option<LogprobAsk>,
}

fn frames(wire: Wire, view: &TokenizerView, ids: &[u32], cut: bool, how: &Framing) -> Vec<String> {
    let (n, per, model, lp) = (how.n, how.per, how.model, how.logprobs);
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let finish = if cut { "length" } else { "stop" };
    let mut out = Vec::new();
    let groups: Vec<&[u32]> = ids.chunks(per).collect();
    let mut dets: Vec<_> = (0..n).map(|_| view.detokenizer()).collect();
    if wire == Wire::Chat {
        let choices: Vec<Value> = (0..n)
            .map(
                |i| json!({"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}),
            )
            .collect();
        out.push(data(&json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices})));
    }
    let mut at = 0;
    for g in &groups {
        for (i, det) in dets.iter_mut().enumerate() {
            let text = det.push_ids(g);
            let mut v = match wire {
                Wire::Completions => {
                    json!({"id": "cmpl-replay", "object": "text_completion", "created": created, "model": model,
                    "choices": [{"index": i, "text": text, "logprobs": null, "finish_reason": null, "token_ids": g}]})
                }
                Wire::Chat => {
                    json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": i, "delta": {"content": text}, "finish_reason": null}]})
                }
                Wire::Llamacpp => json!({"content": text, "tokens": g, "stop": false, "id_slot": 0}),
            };
            if let Some(ask) = lp {
                let l = logprob_frames(wire, view, g, at, ask);
                match wire {
                    Wire::Llamacpp => v["completion_probabilities"] = l,
                    _ => v["choices"][0]["logprobs"] = l,
                }
            }
            out.push(data(&v));
        }
        at += g.len();
    }
    for (i, det) in dets.into_iter().enumerate() {
        let rest = det.finish();
        let v = match wire {
            Wire::Completions => {
                json!({"id": "cmpl-replay", "object": "text_completion", "created": created, "model": model,
                "choices": [{"index": i, "text": rest, "logprobs": null, "finish_reason": finish, "token_ids": []}]})
            }
            Wire::Chat => {
                json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": i, "delta": {"content": rest}, "finish_reason": finish}]})
            }
            Wire::Llamacpp => {
                json!({"content": rest, "tokens": [], "stop": true, "stop_type": if cut { "limit" } else { "eos" },
                "tokens_predicted": ids.len()})
            }
        };
        out.push(data(&v));
    }
    if wire != Wire::Llamacpp {
        out.push("data: [DONE]\n\n".to_string());
    }
    out
}

/// The call a guided chat answer makes: for `tool_choice` `required` the
/// first tool, for a named function that one; its arguments a sample of
/// its parameters' schema. `None` for any other `tool_choice`.
fn guided_call(req: &Value) -> Option<(Value, String)> {
    let tools = req.get("tools")?.as_array()?;
    let pick = |name: Option<&str>| tools.iter().find(|t| name.is_none_or(|n| t["function"]["name"] == n));
    let t = match req.get("tool_choice")? {
        Value::String(s) if s == "required" => pick(None)?,
        Value::Object(o) => pick(Some(o.get("function")?.get("name")?.as_str()?))?,
        _ => return None,
    };
    Some((t["function"]["name"].clone(), sample(&t["function"]["parameters"]).to_string()))
}

/// A guided call streamed as vLLM's `serving_chat` streams it, for each choice.
fn call_frames(view: &TokenizerView, name: &Value, args: &str, how: &Framing) -> Vec<String> {
    let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let frame = |i: u32, delta: Value, finish: Option<&str>| {
        json!({"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": created, "model": how.model,
            "choices": [{"index": i, "delta": delta, "finish_reason": finish}]})
    };
    let ids = view.encode(args).unwrap_or_default();
    let mut out = Vec::new();
    for i in 0..how.n {
        out.push(data(&frame(i, json!({"role": "assistant", "content": ""}), None)));
        let head = json!({"index": 0, "id": format!("call_replay{i}"), "type": "function",
            "function": {"name": name, "arguments": ""}});
        out.push(data(&frame(i, json!({"tool_calls": [head]}), None)));
        let mut det = view.detokenizer();
        let mut at = 0;
        for g in ids.chunks(how.per) {
            let text = det.push_ids(g);
            let mut v =
                frame(i, json!({"tool_calls": [{"index": 0, "function": {"arguments": text}}]}), None);
            if let Some(ask) = how.logprobs {
                v["choices"][0]["logprobs"] = logprob_frames(Wire::Chat, view, g, at, ask);
            }
            out.push(data(&v));
            at += g.len();
        }
        let rest = det.finish();
        let last = json!({"tool_calls": [{"index": 0, "function": {"arguments": rest}}]});
        out.push(data(&frame(i, last, Some("tool_calls"))));
    }
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// What a body asked of log probabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogprobAsk {
    /// Alternatives per token.
    top: usize,
    /// Tokens written `token_id:ID` (vLLM's `return_tokens_as_token_ids`).
    as_ids: bool,
}

impl LogprobAsk {
    fn of(wire: Wire, req: &Value) -> Option<LogprobAsk> {
        let n = |k: &str| req.get(k).and_then(Value::as_i64);
        let top = match wire {
            Wire::Completions => n("logprobs")?,
            Wire::Llamacpp => n("n_probs").filter(|&k| k > 0)?,
            Wire::Chat => {
                req.get("logprobs").and_then(Value::as_bool).filter(|b| *b)?;
                n("top_logprobs").unwrap_or(0)
            }
        };
        let as_ids = req.get("return_tokens_as_token_ids").and_then(Value::as_bool).unwrap_or(false);
        Some(LogprobAsk { top: top.clamp(0, 20) as usize, as_ids })
    }
}

/// A token, its logprob, and its alternatives (ids and logprobs).
type TokenLogprobs = (u32, f64, Vec<(u32, f64)>);

/// The log probabilities of the tokens `ids` (the output's tokens from
/// position `at` on), in `wire`'s shape.
fn logprob_frames(wire: Wire, view: &TokenizerView, ids: &[u32], at: usize, ask: LogprobAsk) -> Value {
    let token = |id: u32| if ask.as_ids { format!("token_id:{id}") } else { view.decode(&[id]) };
    let lp = |k: usize| -((k % 4 + 1) as f64) / 4.0;
    let per: Vec<TokenLogprobs> = ids
        .iter()
        .enumerate()
        .map(|(j, &id)| {
            let own = lp(at + j);
            let alts = (0..ask.top).map(|a| if a == 0 { (id, own) } else { (id + a as u32, own - a as f64) });
            (id, own, alts.collect())
        })
        .collect();
    let entry = |id: u32, l: f64| {
        let t = token(id);
        json!({"token": t, "logprob": l, "bytes": t.as_bytes()})
    };
    match wire {
        Wire::Completions => {
            let tops: Vec<Value> = per
                .iter()
                .map(|(_, _, alts)| {
                    Value::Object(alts.iter().map(|(id, l)| (token(*id), json!(l))).collect())
                })
                .collect();
            json!({"tokens": per.iter().map(|(id, _, _)| token(*id)).collect::<Vec<_>>(),
                "token_logprobs": per.iter().map(|(_, l, _)| *l).collect::<Vec<_>>(),
                "top_logprobs": tops, "text_offset": vec![0; per.len()]})
        }
        Wire::Llamacpp => per
            .iter()
            .map(|(id, l, alts)| {
                let mut e = entry(*id, *l);
                e["id"] = json!(id);
                e["top_logprobs"] = alts.iter().map(|(a, al)| entry(*a, *al)).collect();
                e
            })
            .collect(),
        Wire::Chat => {
            let content: Vec<Value> = per
                .iter()
                .map(|(id, l, alts)| {
                    let mut e = entry(*id, *l);
                    e["top_logprobs"] = alts.iter().map(|(a, al)| entry(*a, *al)).collect();
                    e
                })
                .collect();
            json!({ "content": content })
        }
    }
}

/// The text a guided chat backend answers with: for `tool_choice`
/// `required`, a JSON list of `{"name", "parameters"}` for the first tool;
/// for a named function, its arguments; for a JSON `response_format`, a
/// value of its schema (vLLM's guided JSON shapes). `None` when unguided.
pub fn guided_text(req: &Value) -> Option<String> {
    let tools = req.get("tools").and_then(Value::as_array);
    let params = |name: Option<&str>| {
        let t = tools?.iter().find(|t| name.is_none_or(|n| t["function"]["name"] == n))?;
        Some((t["function"]["name"].clone(), sample(&t["function"]["parameters"])))
    };
    let v = match req.get("tool_choice") {
        Some(Value::String(s)) if s == "required" => {
            let (name, args) = params(None)?;
            json!([{"name": name, "parameters": args}])
        }
        Some(Value::Object(o)) => params(o.get("function")?.get("name")?.as_str())?.1,
        _ => {
            let rf = req.get("response_format")?;
            match rf.get("type")?.as_str()? {
                "json_object" => json!({}),
                "json_schema" => sample(&rf["json_schema"]["schema"]),
                _ => return None,
            }
        }
    };
    Some(v.to_string())
}

/// A value of a JSON schema: its required properties, each the simplest of its type.
fn sample(schema: &Value) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => json!("x"),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ => {
            let req = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
            let props = &schema["properties"];
            let obj: serde_json::Map<String, Value> =
                req.iter().filter_map(Value::as_str).map(|k| (k.to_string(), sample(&props[k]))).collect();
            Value::Object(obj)
        }
    }
}

fn inject(frames: Vec<String>, fault: Fault) -> Vec<Piece> {
    let bytes = |s: String| Piece::Bytes(Bytes::from(s));
    match fault {
        Fault::None | Fault::Status500 => frames.into_iter().map(bytes).collect(),
        Fault::Drop(k) => frames.into_iter().take(k).map(bytes).chain([Piece::Cut]).collect(),
        Fault::Stall(k) => frames.into_iter().take(k).map(bytes).chain([Piece::Stall]).collect(),
        Fault::Garbage(k) => {
            let mut v: Vec<Piece> = frames.into_iter().take(k).map(bytes).collect();
            v.push(Piece::Bytes(Bytes::from_static(b"data: \x00\x01 not json {{\n\n")));
            v
        }
        Fault::SplitUtf8 => {
            let all = frames.concat().into_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            let mut k = 0;
            while i < all.len() {
                let len = (1 + k % 3).min(all.len() - i);
                out.push(Piece::Bytes(Bytes::copy_from_slice(&all[i..i + len])));
                i += len;
                k += 1;
            }
            out
        }
    }
}

/// Serves the replay backend on `host:port` until SIGINT/SIGTERM (for the
/// `sift-replay` binary); calls `ready` with the bound address.
pub fn run_blocking(
    opts: ReplayOptions,
    host: &str,
    port: u16,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), crate::ServeError> {
    let io = |path: String| move |source| crate::ServeError::Io { path, source };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(io("the async runtime".into()))?;
    let addr = format!("{host}:{port}");
    let state = ReplayState::new(opts);
    // The default recording's tokenizer is loaded before the first request,
    // so that request's first byte is not late by a tokenizer load.
    if let Some(rec) = state.recording(None) {
        state.view(rec).map_err(crate::ServeError::Config)?;
    }
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&addr).await.map_err(io(addr.clone()))?;
        ready(listener.local_addr().map_err(io(addr.clone()))?);
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, replay_app(state))
            .with_graceful_shutdown(crate::shutdown_signal())
            .await
            .map_err(io(addr.clone()))
    })
}
