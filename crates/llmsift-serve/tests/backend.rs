//! The HTTP backend's connections, against the replay backend on a
//! 127.0.0.1 port: whole reads reuse one pooled connection, a stream dropped
//! part-way closes its connection (the backend sees its client leave), and
//! an `https://` URL speaks TLS.

use axum::serve::ListenerExt;
use futures_util::StreamExt;
use llmsift_serve::backend::http::HttpBackend;
use llmsift_serve::backend::{BackendError, ChunkStream, GenRequest};
use llmsift_serve::replay::{replay_app, Fault, ReplayOptions, ReplayState};
use llmsift_serve::BackendKind;
use serde_json::Value;
use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A replay backend (Qwen3) and the count of connections it accepted.
async fn replay() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let opts = ReplayOptions {
        default_recording: Some("qwen3".into()),
        fault: Fault::None,
        pace: Duration::ZERO,
        chunk_tokens: 1,
        stamps: false,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let listener = listener.tap_io(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    tokio::spawn(axum::serve(listener, replay_app(ReplayState::new(opts))).into_future());
    (addr, accepted)
}

fn backend(url: &str) -> HttpBackend {
    let t = Duration::from_secs(5);
    HttpBackend::new(BackendKind::Completions, url, None, t, t).unwrap()
}

fn request(model: &str) -> GenRequest {
    GenRequest { model: model.into(), prompt: Some("Hello".into()), n: 1, ..GenRequest::default() }
}

/// Every id of a stream read to its end, and whether its last chunk finished it.
async fn ids(mut s: ChunkStream) -> (Vec<u32>, bool) {
    let (mut ids, mut finished) = (Vec::new(), false);
    while let Some(c) = s.next().await {
        let c = c.unwrap();
        ids.extend(c.ids.unwrap());
        finished = c.finish.is_some();
    }
    (ids, finished)
}

#[tokio::test]
async fn whole_reads_reuse_one_connection() {
    let (addr, accepted) = replay().await;
    let b = backend(&format!("http://{addr}"));
    let first = ids(b.start(request("qwen3")).await.unwrap()).await;
    let second = ids(b.start(request("qwen3")).await.unwrap()).await;
    assert!(first.1 && first.0.len() > 10, "{first:?}");
    assert_eq!(first, second);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_dropped_stream_closes_its_connection() {
    let (addr, accepted) = replay().await;
    let b = backend(&format!("http://{addr}"));
    let mut s = b.start(request("qwen3@pace:20")).await.unwrap();
    for _ in 0..2 {
        s.next().await.unwrap().unwrap();
    }
    drop(s);
    let stats = format!("http://{addr}/replay/stats");
    let mut cancelled = 0;
    for _ in 0..100 {
        let v: Value =
            serde_json::from_str(&reqwest::get(&stats).await.unwrap().text().await.unwrap()).unwrap();
        cancelled = v["cancelled"].as_u64().unwrap();
        if cancelled == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cancelled, 1, "the backend never saw its client leave");
    // The closed connection is not reused.
    let before = accepted.load(Ordering::SeqCst);
    assert!(ids(b.start(request("qwen3")).await.unwrap()).await.1);
    assert_eq!(accepted.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn https_speaks_tls() {
    let (addr, _) = replay().await;
    let e = backend(&format!("https://{addr}")).start(request("qwen3")).await.err().unwrap();
    match e {
        BackendError::Connect(m) => assert!(m.starts_with(&format!("TLS with {addr}: ")), "{m}"),
        e => panic!("{e:?}"),
    }
}
