//! The threads that serve: one single-threaded tokio runtime per core,
//! each accepting connections from the same listening socket and serving
//! every connection it accepted until that connection closes.
//!
//! Why not one multi-threaded runtime: a streamed chunk is one wake-up of
//! the one task that reads the backend connection and writes the client's
//! (see [`crate::backend`]), and its work is tens of microseconds, far less
//! than the time between two chunks. A work-stealing runtime spends more
//! than that work on coordination: the worker that wakes with two ready
//! tasks wakes a second worker (a `futex` call each way, two context
//! switches), and only one worker at a time waits on the I/O driver, so
//! readiness found by one worker is often run by the other. Here a
//! connection's socket, its backend connections and its task all belong to
//! one runtime and one thread: a chunk costs one wake-up of that thread.
//! The load test measured it (`docs/serve.md`, "Load").
//!
//! The kernel hands each new connection to whichever thread accepts first,
//! so a thread busy with its streams leaves new ones to an idle thread.
//!
//! Invariants: every connection is served to its end on the thread that
//! accepted it (nothing moves between runtimes; the backend pool is kept
//! per runtime for the same reason, see `backend::conn`); on shutdown every
//! runtime stops accepting and lets its open connections finish (axum's
//! graceful shutdown, per runtime); when the calling thread's server ends
//! (the signal, or an error), the others are told to shut down too.

use axum::Router;
use std::future::Future;
use std::io;
use tokio::sync::watch;

/// How many runtimes: `TOKIO_WORKER_THREADS` when set (the variable tokio's
/// own multi-threaded runtime reads), else one per core.
pub fn threads() -> usize {
    std::env::var("TOKIO_WORKER_THREADS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
}

/// Serves `router` on `listener` from `threads` runtimes (this thread runs
/// one) until `shutdown` resolves and the open connections have finished.
/// TCP_NODELAY is set on every connection: small SSE frames go out at once.
pub fn serve_per_core(
    listener: std::net::TcpListener,
    router: Router,
    threads: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    // Dropping the sender (on the signal, or when this thread's server
    // ends) tells every other runtime to shut down.
    let (tx, rx) = watch::channel(());
    let mut others = Vec::new();
    for i in 1..threads.max(1) {
        let (listener, router, mut rx) = (listener.try_clone()?, router.clone(), rx.clone());
        let closed = async move { while rx.changed().await.is_ok() {} };
        let thread = std::thread::Builder::new()
            .name(format!("sift-serve-{i}"))
            .spawn(move || serve_one(listener, router, closed))?;
        others.push(thread);
    }
    drop(rx);
    let signalled = async move {
        shutdown.await;
        drop(tx);
    };
    let result = serve_one(listener, router, signalled);
    for t in others {
        // A thread that panicked already printed why; its connections are gone.
        if let Ok(Err(e)) = t.join() {
            return Err(e);
        }
    }
    result
}

/// One runtime on this thread, accepting from `listener` until `shutdown`.
fn serve_one(
    listener: std::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).with_graceful_shutdown(shutdown).await
    })
}
