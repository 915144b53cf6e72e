//! The HTTP surface: routes, authentication, limits, and one request's
//! path from body to response.
//!
//! Owns the order of refusals, each an OpenAI-shaped error:
//! over the concurrency limit → 503 (`Retry-After`); body too large → 413;
//! not JSON or a field of the wrong shape → 400 naming it; unknown `model`
//! → 404; the protocol checks (`tool_choice`, `stream_options`, …) → 400;
//! backend unreachable or failing before its first byte → 502 (504 on a
//! timeout). After the stream started, a backend failure is an in-stream
//! error event (see [`crate::drive`]).
//!
//! Invariants: model output never causes an error status (malformed output
//! is content); a client that goes away cancels the backend request (the
//! response body owns the backend stream, so dropping it drops the request);
//! a concurrency permit lives exactly as long as its response.

use crate::backend::{BackendError, ChunkStream, GenRequest};
use crate::config::{BackendKind, Limits};
use crate::drive::{counted, Collected, Output};
use crate::error::ApiError;
use crate::inbound;
use crate::metrics::{Field, Metrics};
use crate::models::{Model, Models};
use crate::stamps::Stamps;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures_util::StreamExt;
use llmsift_protocol::{chat, complete, Api, ChoiceProcessor, FinishReason, ResponseMeta, TokenCounts};
use llmsift_templates::RenderRequest;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What every request shares.
#[derive(Debug)]
pub struct Shared {
    /// The served models.
    pub models: Models,
    /// The metrics.
    pub metrics: Metrics,
    /// Limits and timeouts.
    pub limits: Limits,
    /// The bearer token `/v1/*` needs, if any.
    pub api_key: Option<String>,
    /// Origins allowed by CORS.
    pub allowed_origins: Vec<String>,
    /// Per-chunk relay stamps (`--stamps`; off by default).
    pub stamps: Stamps,
    /// The key carried stream states are sealed with (`--state-key`; see `scaleout`).
    pub state_key: llmsift_protocol::carry::StateKey,
    permits: Arc<Semaphore>,
    seq: AtomicU64,
    started: u64,
}

/// The gateway's state (cheap to clone).
#[derive(Debug, Clone)]
pub struct AppState(pub Arc<Shared>);

impl AppState {
    /// State over built models.
    pub fn new(
        models: Models,
        limits: Limits,
        api_key: Option<String>,
        allowed_origins: Vec<String>,
    ) -> AppState {
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        AppState(Arc::new(Shared {
            models,
            metrics: Metrics::default(),
            stamps: Stamps::default(),
            state_key: crate::scaleout::process_key(),
            permits: Arc::new(Semaphore::new(limits.max_concurrent)),
            limits,
            api_key,
            allowed_origins,
            seq: AtomicU64::new(0),
            started,
        }))
    }

    /// The same state with the replicas' shared state key (before serving).
    pub fn with_state_key(mut self, key: llmsift_protocol::carry::StateKey) -> AppState {
        if let Some(s) = Arc::get_mut(&mut self.0) {
            s.state_key = key;
        }
        self
    }

    pub(crate) fn next_id(&self, prefix: &str) -> String {
        let n = self.0.seq.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}-{:08x}{:08x}", self.0.started & 0xffff_ffff, n)
    }
}

/// The router: `/v1/chat/completions`, `/v1/responses`, `/v1/messages`,
/// `/v1/models`, `/health`, `/metrics` (and `/debug/stamps`, answered with
/// `--stamps` only).
pub fn app(state: AppState) -> Router {
    let limit = state.0.limits.max_body_bytes;
    let mut router = Router::new()
        .route("/v1/chat/completions", post(chat_route))
        .route("/v1/responses", post(responses_route))
        .route("/v1/messages", post(messages_route))
        .route("/v1/models", get(models_route))
        .route("/health", get(|| async { StatusCode::OK }))
        .route("/metrics", get(metrics_route))
        .route("/debug/stamps", get(stamps_route))
        .merge(crate::scaleout::routes())
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(state.clone(), gate))
        // `tracing` spans and events per request (debug), 5xx as errors.
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state.clone());
    if !state.0.allowed_origins.is_empty() {
        router = router.layer(cors(&state.0.allowed_origins));
    }
    router
}

fn cors(origins: &[String]) -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowOrigin, Any, CorsLayer};
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    CorsLayer::new().allow_origin(allow).allow_methods(Any).allow_headers(Any)
}

/// Authentication on `/v1/*` and the request counter.
async fn gate(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", MatchedPath::as_str).to_string();
    let resp = match &s.0.api_key {
        Some(key) if req.uri().path().starts_with("/v1") && !authorized(&req, key) => {
            s.0.metrics.error("unauthorized");
            ApiError::unauthorized().into_response()
        }
        _ => next.run(req).await,
    };
    s.0.metrics.request(&route, resp.status().as_u16());
    resp
}

fn authorized(req: &Request, key: &str) -> bool {
    let h = |name| req.headers().get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    let bearer = h(header::AUTHORIZATION).and_then(|v| v.strip_prefix("Bearer "));
    bearer == Some(key) || h(header::HeaderName::from_static("x-api-key")) == Some(key)
}

async fn chat_route(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(s, Api::Chat, body).await
}

async fn responses_route(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(s, Api::Responses, body).await
}

async fn messages_route(State(s): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    respond(s, Api::Anthropic, body).await
}

async fn models_route(State(s): State<AppState>) -> Response {
    let data: Vec<Value> =
        s.0.models
            .all()
            .iter()
            .map(|m| {
                json!({"id": m.name, "object": "model", "created": s.0.started, "owned_by": "sift",
                "root": m.backend_model, "parent": null})
            })
            .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

async fn metrics_route(State(s): State<AppState>) -> Response {
    let ct = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, ct)], s.0.metrics.render()).into_response()
}

/// The stamps recorded since the last call (404 unless `--stamps`).
async fn stamps_route(State(s): State<AppState>) -> Response {
    if !s.0.stamps.enabled() {
        return StatusCode::NOT_FOUND.into_response();
    }
    axum::Json(s.0.stamps.drain()).into_response()
}

async fn respond(s: AppState, api: Api, body: Result<Bytes, BytesRejection>) -> Response {
    match run(&s, api, body).await {
        Ok(r) => r,
        Err(e) => {
            s.0.metrics.error(e.label());
            e.into_response()
        }
    }
}

fn backend_error(e: BackendError) -> ApiError {
    match e {
        BackendError::Timeout(_) => ApiError::gateway_timeout(e.to_string()),
        _ => ApiError::bad_gateway(e.to_string()),
    }
}

async fn run(s: &AppState, api: Api, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let permit =
        s.0.permits
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::overloaded(s.0.limits.max_concurrent))?;
    let bytes = body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(s.0.limits.max_body_bytes)
        } else {
            ApiError::bad_request(r.body_text(), None)
        }
    })?;
    let (req, body) = inbound::read(api, &bytes)?;
    let model = s.0.models.route(req.model.as_deref())?;
    let mut checked = req.check_with(&model.check)?;
    if checked.n > 1 && (api != Api::Chat || !model.backend.supports_n()) {
        return Err(ApiError::bad_request(
            "`n` > 1 needs /v1/chat/completions and a backend that makes several choices",
            Some("n".into()),
        ));
    }
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let tools: Option<Vec<Value>> =
        body.get("tools").and_then(Value::as_array).filter(|t| !t.is_empty()).cloned();
    let prompt = render(&model, &messages, tools.as_ref(), &checked, &body)?;
    let prompt_ids = match (&prompt, &model.view) {
        (Some(p), Some(v)) => match v.encode(p) {
            Ok(ids) => Some(ids),
            // A worker that takes ids cannot be sent a prompt that does not tokenize.
            Err(e) if model.kind == BackendKind::Generate => {
                return Err(ApiError::bad_request(
                    format!("the prompt does not tokenize: {e}"),
                    Some("messages".into()),
                ))
            }
            Err(_) => None,
        },
        _ => None,
    };
    let prompt_tokens = prompt_ids.as_ref().map_or(0, |ids| ids.len() as u64);
    checked.prompt = prompt.clone();
    let empty = serde_json::Map::new();
    let obj = body.as_object().unwrap_or(&empty);
    let sampling = crate::outbound::fields(&model, &checked, obj, prompt.as_deref())?;
    let interval = stream_interval(&model, obj)?;
    crate::outbound::settle(&model, &mut checked, &sampling);
    let prefix = match api {
        Api::Chat => "chatcmpl",
        Api::Responses => "resp",
        Api::Anthropic => "msg",
    };
    let meta = ResponseMeta {
        id: s.next_id(prefix),
        model: model.name.clone(),
        created: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        prompt_tokens,
    };
    // The `generate` backend's worker gets what `/v1/chat/completions/render` answers.
    let generate = match (model.kind, &prompt_ids) {
        (BackendKind::Generate, Some(ids)) => {
            Some(crate::scaleout::render::generate_body(&model, &checked, obj, ids.clone(), meta.id.clone())?)
        }
        _ => None,
    };
    let gen = GenRequest {
        model: model.backend_model.clone(),
        prompt: prompt.filter(|_| model.kind != BackendKind::Chat),
        prompt_ids: prompt_ids.filter(|_| model.kind == BackendKind::Llamacpp),
        messages,
        tools,
        max_tokens: checked.max_tokens,
        n: checked.n.max(1),
        sampling,
        chat_template_kwargs: checked.chat_template_kwargs.clone(),
        generate,
    };
    // The key of this request's `--stamps` (the load test sends a seed per stream).
    let seed = gen.sampling.get("seed").and_then(Value::as_u64).unwrap_or(0);
    let sent = Instant::now();
    let mut stream = model.backend.start(gen).await.map_err(backend_error)?;

    if !checked.stream {
        let mut got: Vec<Collected> = (0..checked.n.max(1)).map(|_| Collected::default()).collect();
        let mut first = true;
        while let Some(item) = stream.next().await {
            // Counted once, by `respond`, as the answer's error.
            let chunk = item.map_err(backend_error)?;
            if std::mem::take(&mut first) {
                s.0.metrics.first_token.observe(sent.elapsed().as_secs_f64());
            }
            if let Some(c) = got.get_mut(chunk.index as usize) {
                c.push(&model, chunk);
            }
        }
        let t = Instant::now();
        let v = one_shot(&s.0.metrics, &model, api, &checked, &meta, &got);
        s.0.metrics.parse_delta.observe(t.elapsed().as_secs_f64());
        return Ok(axum::Json(v).into_response());
    }

    // The response body pulls the backend stream itself (no task between
    // them): one wake-up per chunk, and a client that goes away drops the
    // body, which drops the backend stream and so cancels its request.
    s.0.metrics.open_streams.inc();
    let mut out = Output::new(&model, api, &checked, &meta);
    out.set_interval(interval);
    let relay = Relay {
        opening: Some(Bytes::from(out.start().concat())),
        out,
        stream,
        shared: s.0.clone(),
        _permit: permit,
        sent,
        first: true,
        seed,
        chunks: 0,
    };
    let body = Body::from_stream(futures_util::stream::unfold(relay, |mut r| async move {
        if let Some(b) = r.opening.take() {
            return Some((Ok::<_, std::convert::Infallible>(b), r));
        }
        while !r.out.ended() {
            if let Some(b) = r.next().await {
                return Some((Ok(b), r));
            }
        }
        None
    }));
    Ok(Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .expect("static headers"))
}

/// Tokens per streamed delta: the request's `stream_interval`, at least the
/// model's (vLLM clamps a request's up to its server's `--stream-interval`).
fn stream_interval(model: &Model, body: &serde_json::Map<String, Value>) -> Result<u32, ApiError> {
    let asked = match body.get("stream_interval") {
        None | Some(Value::Null) => 1,
        Some(v) => v.as_u64().filter(|n| *n >= 1).and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
            ApiError::bad_request("`stream_interval` must be an integer >= 1", Some("stream_interval".into()))
        })?,
    };
    Ok(asked.max(model.stream_interval))
}

/// One open stream: the backend's chunks to the client's frames. Counted in
/// `sift_open_streams` and holding its concurrency permit until dropped.
struct Relay {
    opening: Option<Bytes>,
    out: Output,
    stream: ChunkStream,
    shared: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
    sent: Instant,
    first: bool,
    /// The request's `seed`, the key of its stamps.
    seed: u64,
    /// Backend chunks read so far.
    chunks: u32,
}

impl Relay {
    /// The client bytes for the next backend chunk (none when it completes nothing).
    async fn next(&mut self) -> Option<Bytes> {
        let metrics = &self.shared.metrics;
        let (frames, received) = match self.stream.next().await {
            Some(Ok(chunk)) => {
                if std::mem::take(&mut self.first) {
                    metrics.first_token.observe(self.sent.elapsed().as_secs_f64());
                }
                let received = chunk.received;
                (self.out.push(chunk, metrics), received)
            }
            Some(Err(e)) => {
                metrics.error(e.label());
                (self.out.fail(&e.to_string(), metrics), None)
            }
            None => (self.out.fail("the backend stream ended before the output finished", metrics), None),
        };
        let k = self.chunks;
        self.chunks += 1;
        if frames.is_empty() {
            return None;
        }
        // One frame (the usual case) is handed over as it is, not copied.
        let bytes = match <[String; 1]>::try_from(frames) {
            Ok([one]) => Bytes::from(one),
            Err(frames) => Bytes::from(frames.concat()),
        };
        if let Some(at) = received {
            // Handed to the connection now; hyper writes it in the same poll.
            metrics.relay.observe(at.elapsed().as_secs_f64());
            self.shared.stamps.record(self.seed, k, at);
        }
        Some(bytes)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared.metrics.open_streams.dec();
    }
}

pub(crate) fn render(
    model: &Model,
    messages: &[Value],
    tools: Option<&Vec<Value>>,
    checked: &llmsift_protocol::CheckedRequest,
    body: &Value,
) -> Result<Option<String>, ApiError> {
    let Some(t) = &model.templates else { return Ok(None) };
    let mut r = RenderRequest::new(messages.to_vec());
    // vLLM renders with `add_generation_prompt` true unless the request says otherwise.
    r = r.with_generation_prompt(body.get("add_generation_prompt").and_then(Value::as_bool).unwrap_or(true));
    if let Some(d) = body.get("documents").and_then(Value::as_array) {
        r = r.with_documents(d.clone());
    }
    if let Some(tools) = tools {
        r = r.with_tools(tools.clone());
    }
    if let Some(k) = &checked.chat_template_kwargs {
        r = r.with_kwargs(k.clone());
    }
    // vLLM passes `reasoning_effort` to the template too (gpt-oss reads it).
    let effort = checked.reasoning_effort.as_ref().filter(|_| !r.kwargs.contains_key("reasoning_effort"));
    if let Some(e) = effort {
        r = r.with_kwarg("reasoning_effort", Value::String(e.clone()));
    }
    t.render(&r).map(Some).map_err(|e| {
        ApiError::bad_request(format!("the chat template refused the request: {e}"), Some("messages".into()))
    })
}

/// The one-shot answer (one parse of the whole output: its time is one
/// `sift_parse_delta_seconds` sample; output bytes are counted for Chat
/// Completions answers). Its usage is the backend's own where it gave one
/// ([`crate::drive::counted`]).
fn one_shot(
    metrics: &Metrics,
    model: &Model,
    api: Api,
    req: &llmsift_protocol::CheckedRequest,
    meta: &ResponseMeta,
    got: &[Collected],
) -> Value {
    let reason = |c: &Collected| c.finish.unwrap_or(FinishReason::Stop);
    let skip = req.skips_special_tokens(&model.factory);
    let usage = got.iter().find_map(|c| c.usage);
    if api == Api::Chat {
        let choices: Vec<_> = got
            .iter()
            .map(|c| {
                let (text, ids) = c.output(model, skip);
                let lps =
                    req.logprobs.then(|| c.logprobs(model, skip, req.top_logprobs.unwrap_or(0))).flatten();
                ChoiceProcessor::new(&model.factory, req, &model.opts).complete(
                    &text,
                    ids.as_deref(),
                    lps,
                    reason(c),
                )
            })
            .collect();
        for c in &choices {
            let m = &c.message;
            metrics.output(Field::Reasoning, m.reasoning.as_ref().map_or(0, String::len));
            metrics.output(Field::Content, m.content.as_ref().map_or(0, String::len));
            metrics.output(
                Field::ToolCalls,
                m.tool_calls.iter().map(|t| t.name.len() + t.arguments.len()).sum(),
            );
        }
        let mut r = chat::response(meta, model.opts.reasoning_field, &choices);
        if let Some(u) = usage {
            let own = choices.iter().fold(TokenCounts::default(), |a, c| a + c.counts);
            let (prompt, counts) = counted(meta.prompt_tokens, own, Some(u));
            r.usage = counts.usage(prompt);
        }
        return serde_json::to_value(r).expect("wire types serialize");
    }
    let (text, ids) = got[0].output(model, skip);
    if api == Api::Responses {
        let lps = req.logprobs.then(|| got[0].logprobs(model, skip, req.top_logprobs.unwrap_or(0))).flatten();
        let mut r = llmsift_protocol::responses::complete(
            &model.factory,
            req,
            meta,
            &model.opts,
            &text,
            ids.as_deref(),
            lps,
            reason(&got[0]),
        );
        if let (Some(u), Some(r)) = (usage, &mut r.usage) {
            let own = TokenCounts {
                completion_tokens: r.output_tokens,
                reasoning_tokens: Some(r.output_tokens_details.reasoning_tokens),
            };
            let (prompt, counts) = counted(r.input_tokens, own, Some(u));
            r.input_tokens = prompt;
            r.output_tokens = counts.completion_tokens;
            r.output_tokens_details.reasoning_tokens = counts.reasoning_tokens.unwrap_or(0);
            r.total_tokens = prompt + counts.completion_tokens;
        }
        return serde_json::to_value(r).expect("wire types serialize");
    }
    if let (Api::Anthropic, Some(u)) = (api, usage) {
        let mut m = llmsift_protocol::anthropic::complete(
            &model.factory,
            req,
            meta,
            &model.opts,
            &text,
            ids.as_deref(),
            reason(&got[0]),
        );
        let own = TokenCounts { completion_tokens: m.usage.output_tokens, reasoning_tokens: None };
        let (prompt, counts) = counted(m.usage.input_tokens, own, Some(u));
        m.usage.input_tokens = prompt;
        m.usage.output_tokens = counts.completion_tokens;
        return serde_json::to_value(m).expect("wire types serialize");
    }
    complete(api, &model.factory, req, meta, &model.opts, &text, ids.as_deref(), reason(&got[0]))
}
