//! `sift serve`: an OpenAI-compatible gateway in front of raw-completion
//! backends, answering Chat Completions, Responses and Anthropic Messages
//! clients with `reasoning`, `content` and `tool_calls`.
//!
//! ```text
//! client ─ POST /v1/… ─▶ app (axum) ── inbound: dialect body → Chat request, checks
//!                          │            models: route by `model`, render the prompt
//!                          ▼
//!                        backend ── vLLM/SGLang /v1/completions (token ids)
//!                          │        llama.cpp /completion (tokens) │ raw /v1/chat/completions │ demo replay
//!                          ▼
//!                        drive: detokenize ids → llmsift-protocol processors → SSE or one JSON
//! ```
//!
//! Everything protocol (request checks, the per-choice processor, the three
//! dialects, SSE framing) is `llmsift-protocol`'s; this crate adds HTTP, the
//! backends, limits and metrics. Embedding it:
//!
//! ```no_run
//! use llmsift_serve::{app, AppState, Config, Models};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut config = Config::default();
//! config.models = llmsift_serve::models::demo_models();
//! let models = Models::build(&config)?;
//! let state = AppState::new(models, config.limits.clone(), None, Vec::new());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! axum::serve(listener, app(state)).await?;
//! # Ok(()) }
//! ```

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod app;
pub mod backend;
pub mod config;
pub mod drive;
pub mod error;
pub mod inbound;
pub mod metrics;
pub mod models;
pub mod outbound;
pub mod recording;
pub mod replay;
pub mod scaleout;
pub mod stamps;

pub use app::{app, AppState};
pub use config::{BackendKind, Config, GuidedFields, Limits, ModelConfig};
pub use error::{ApiError, ServeError};
pub use models::Models;

use std::future::Future;

/// Builds the models of `config`, listens, and serves until `shutdown`
/// resolves; open streams are let finish (graceful shutdown). Calls
/// `ready` with the bound address once listening.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    let models = Models::build(&config)?;
    let mut state =
        AppState::new(models, config.limits.clone(), config.api_key.clone(), config.allowed_origins.clone());
    if let Some(k) = &config.state_key {
        let key = llmsift_protocol::carry::StateKey::new(k).map_err(ServeError::Config)?;
        state = state.with_state_key(key);
    }
    if config.stamps {
        state.0.stamps.enable();
    }
    let addr = format!("{}:{}", config.host, config.port);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|source| ServeError::Io { path: format!("listening on {addr}"), source })?;
    let local = listener.local_addr().map_err(|source| ServeError::Io { path: addr.clone(), source })?;
    ready(local);
    // Small SSE frames go out at once (no Nagle delay).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|source| ServeError::Io { path: addr, source })
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Runs [`serve`] on a new multi-threaded runtime until SIGINT/SIGTERM (for binaries).
pub fn run_blocking(config: Config, ready: impl FnOnce(std::net::SocketAddr)) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| ServeError::Io { path: "the async runtime".into(), source })?;
    rt.block_on(serve(config, shutdown_signal(), ready))
}
