//! One backend's HTTP/1.1 connections, driven by the task that reads the
//! response.
//!
//! Owns connecting (TCP, then TLS for `https://`), the pool of idle
//! connections, the connect and read timeouts, and a response body as a
//! stream of byte chunks ([`BodyStream`]). A client such as reqwest runs
//! each connection in a task of its own and hands the body over through a
//! channel, so every backend chunk wakes two tasks (the connection's, then
//! the reader's). Here the connection (hyper's `client::conn` API) is polled
//! by whoever polls the body: in the gateway that is the client connection's
//! task, which then writes the client frame in the same poll. The backend
//! socket's readiness wakes that one task directly.
//!
//! Invariants: a connection is polled only from the future or stream that
//! owns it, never from a task of its own; it goes back to the pool only
//! after its response body ended cleanly, still open and not
//! `Connection: close`; dropping a [`BodyStream`] (a client that went away)
//! closes its connection, which is how the backend learns to stop
//! generating; a request is sent again, on a new connection, only when a
//! pooled connection refused it before writing any of it.

use super::BackendError;
use bytes::Bytes;
use futures_util::Stream;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_rustls::rustls;

/// Idle connections kept, as reqwest's pool kept them for one host.
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused.
const IDLE_FOR: Duration = Duration::from_secs(90);

/// A connection's I/O, polled by its owner.
type Driver = Pin<Box<dyn Future<Output = hyper::Result<()>> + Send>>;

/// One HTTP/1.1 connection: the request side and the I/O that serves it.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    /// `None` once the connection ended.
    driver: Option<Driver>,
}

impl Conn {
    /// Moves bytes between the socket and the request or response in flight.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(d) = &mut self.driver {
            // Its error, if any, also reaches the response or body being read.
            if d.as_mut().poll(cx).is_ready() {
                self.driver = None;
            }
        }
    }
}

/// Where the requests go.
#[derive(Debug)]
struct Target {
    tls: bool,
    host: String,
    port: u16,
    /// The `Host` header.
    authority: HeaderValue,
    /// The path (and query) of every request.
    path: Uri,
}

impl Target {
    fn parse(url: &str) -> Result<Target, String> {
        let uri: Uri = url.parse().map_err(|e| format!("invalid backend URL {url:?}: {e}"))?;
        let tls = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(format!("invalid backend URL {url:?}: it must start with http:// or https://")),
        };
        let authority = uri.authority().ok_or_else(|| format!("invalid backend URL {url:?}: no host"))?;
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_string();
        let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let header = HeaderValue::from_str(authority.as_str()).map_err(|e| format!("{url:?}: {e}"))?;
        let path =
            uri.path_and_query().map_or("/", |p| p.as_str()).parse().map_err(|e| format!("{url:?}: {e}"))?;
        Ok(Target { tls, host, port, authority: header, path })
    }
}

/// A backend's connections.
pub(super) struct Client {
    target: Target,
    tls: Option<tokio_rustls::TlsConnector>,
    idle: Mutex<Vec<(Conn, Instant)>>,
    connect_timeout: Duration,
    read_timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("target", &self.target).finish_non_exhaustive()
    }
}

impl Client {
    /// Connections to `url`, whose path every request uses.
    pub(super) fn new(
        url: &str,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<Client, String> {
        let target = Target::parse(url)?;
        let tls = match target.tls {
            true => Some(tls_connector()?),
            false => None,
        };
        Ok(Client { target, tls, idle: Mutex::default(), connect_timeout, read_timeout })
    }

    /// Posts `body` (JSON) and waits for the response's head; the body is
    /// read through the returned [`BodyStream`], which drives the connection.
    pub(super) async fn post(
        self: &Arc<Client>,
        body: Bytes,
        key: Option<&str>,
    ) -> Result<(hyper::StatusCode, BodyStream), BackendError> {
        let (mut conn, mut pooled) = match self.checkout() {
            Some(c) => (c, true),
            None => (self.connect().await?, false),
        };
        let mut req = self.request(body, key);
        let resp = loop {
            let sent = conn.sender.try_send_request(req);
            let result = tokio::time::timeout(self.read_timeout, drive_until(&mut conn, sent)).await;
            match result {
                Err(_) => return Err(self.timed_out()),
                Ok(Ok(resp)) => break resp,
                // A pooled connection closed while idle: nothing was written, so send again.
                Ok(Err(mut e)) if pooled && e.message().is_some() => {
                    req = e.take_message().expect("checked");
                    conn = self.connect().await?;
                    pooled = false;
                }
                Ok(Err(e)) => return Err(BackendError::Dropped(chain(&e.into_error()))),
            }
        };
        let status = resp.status();
        let keep_alive = resp
            .headers()
            .get(header::CONNECTION)
            .is_none_or(|v| !v.as_bytes().eq_ignore_ascii_case(b"close"));
        let stream = BodyStream {
            conn: Some(conn),
            body: resp.into_body(),
            keep_alive,
            client: self.clone(),
            last: Instant::now(),
            timer: Box::pin(tokio::time::sleep(self.read_timeout)),
            done: false,
        };
        Ok((status, stream))
    }

    fn request(&self, body: Bytes, key: Option<&str>) -> Request<Full<Bytes>> {
        let mut req = Request::post(self.target.path.clone())
            .header(header::HOST, self.target.authority.clone())
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(mut auth) = key.and_then(|k| HeaderValue::from_str(&format!("Bearer {k}")).ok()) {
            auth.set_sensitive(true);
            req = req.header(header::AUTHORIZATION, auth);
        }
        req.body(Full::new(body)).expect("a valid method, path and headers")
    }

    fn timed_out(&self) -> BackendError {
        BackendError::Timeout(format!("no bytes from the backend for {} ms", self.read_timeout.as_millis()))
    }

    async fn connect(&self) -> Result<Conn, BackendError> {
        let t = &self.target;
        let open = async {
            let refused = |e: std::io::Error| {
                BackendError::Connect(format!("connecting to {}:{}: {e}", t.host, t.port))
            };
            let tcp = TcpStream::connect((t.host.as_str(), t.port)).await.map_err(refused)?;
            // Request bodies go out in one write; nothing to gain from Nagle.
            let _ = tcp.set_nodelay(true);
            let refused = |e: hyper::Error| BackendError::Connect(chain(&e));
            let (sender, driver): (_, Driver) = match &self.tls {
                None => {
                    let (s, c) = http1::handshake(TokioIo::new(tcp)).await.map_err(refused)?;
                    (s, Box::pin(c))
                }
                Some(tls) => {
                    let name = rustls::pki_types::ServerName::try_from(t.host.clone())
                        .map_err(|e| BackendError::Connect(format!("{}: {e}", t.host)))?;
                    let stream = tls
                        .connect(name, tcp)
                        .await
                        .map_err(|e| BackendError::Connect(format!("TLS with {}:{}: {e}", t.host, t.port)))?;
                    let (s, c) = http1::handshake(TokioIo::new(stream)).await.map_err(refused)?;
                    (s, Box::pin(c))
                }
            };
            Ok(Conn { sender, driver: Some(driver) })
        };
        tokio::time::timeout(self.connect_timeout, open).await.unwrap_or_else(|_| {
            Err(BackendError::Timeout(format!(
                "no connection to {}:{} within {} ms",
                t.host,
                t.port,
                self.connect_timeout.as_millis()
            )))
        })
    }

    /// A pooled connection that is still open and ready for a request.
    fn checkout(&self) -> Option<Conn> {
        loop {
            let (mut conn, since) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()?;
            if since.elapsed() > IDLE_FOR {
                continue;
            }
            // One poll reads what arrived while idle: a backend that closed
            // the connection is seen here, and the connection dropped.
            conn.drive(&mut Context::from_waker(Waker::noop()));
            if conn.driver.is_some() && conn.sender.is_ready() {
                return Some(conn);
            }
        }
    }

    fn checkin(&self, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push((conn, Instant::now()));
        }
    }
}

/// The trust roots reqwest's `rustls-tls` used (Mozilla's, built in), with `ring`.
fn tls_connector() -> Result<tokio_rustls::TlsConnector, String> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let mut config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// Awaits `fut` while driving `conn`, whose I/O it needs.
async fn drive_until<T>(conn: &mut Conn, fut: impl Future<Output = T>) -> T {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| {
        conn.drive(cx);
        fut.as_mut().poll(cx)
    })
    .await
}

/// An error and its causes, as one line.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        msg = format!("{msg}: {s}");
        src = s.source();
    }
    msg
}

/// A response body's bytes, in the order they arrived. Polling it drives
/// the connection; it ends with `None` after the last byte, or with one
/// error (the connection failed, or no byte came for the read timeout).
pub(super) struct BodyStream {
    /// `None` once the body ended (the connection went back to the pool or was closed).
    conn: Option<Conn>,
    body: Incoming,
    keep_alive: bool,
    client: Arc<Client>,
    /// When the last bytes came (or the head).
    last: Instant,
    /// Fires at the earliest moment the read timeout can have passed; it is
    /// re-armed only when it fires, not per chunk.
    timer: Pin<Box<Sleep>>,
    done: bool,
}

impl BodyStream {
    /// The whole body as text (an error status's message); empty on failure.
    pub(super) async fn text(mut self) -> String {
        let mut all = Vec::new();
        while let Some(Ok(b)) = futures_util::StreamExt::next(&mut self).await {
            all.extend_from_slice(&b);
        }
        String::from_utf8_lossy(&all).into_owned()
    }

    fn end(
        &mut self,
        item: Option<Result<Bytes, BackendError>>,
    ) -> Poll<Option<Result<Bytes, BackendError>>> {
        self.done = true;
        if let (Some(conn), None) = (self.conn.take(), &item) {
            if self.keep_alive && conn.driver.is_some() && !conn.sender.is_closed() {
                self.client.checkin(conn);
            }
        }
        Poll::Ready(item)
    }
}

impl Stream for BodyStream {
    type Item = Result<Bytes, BackendError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        loop {
            // The connection first: it reads the socket into the body.
            if let Some(conn) = &mut this.conn {
                conn.drive(cx);
            }
            // The body is polled with a waker that does nothing: only `drive`
            // (just above, in this same poll) puts bytes into it, and `drive`
            // registered the real waker with the socket and the body's
            // channel, so the body's own wake-up would only poll this task a
            // second time per chunk, for nothing.
            match Pin::new(&mut this.body).poll_frame(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => {
                        this.last = Instant::now();
                        return Poll::Ready(Some(Ok(data)));
                    }
                    // Trailers and empty chunks carry no output.
                    _ => continue,
                },
                Poll::Ready(Some(Err(e))) => return this.end(Some(Err(BackendError::Dropped(chain(&e))))),
                Poll::Ready(None) => return this.end(None),
                Poll::Pending => {}
            }
            if this.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = this.last + this.client.read_timeout;
            if Instant::now() >= due {
                let e = this.client.timed_out();
                return this.end(Some(Err(e)));
            }
            // Bytes came since it was armed: wait for the rest of the timeout (and poll again to register).
            this.timer.as_mut().reset(due.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("http://127.0.0.1:8001/v1/completions").unwrap();
        assert_eq!(
            (t.tls, t.host.as_str(), t.port, t.path.to_string()),
            (false, "127.0.0.1", 8001, "/v1/completions".into())
        );
        assert_eq!(t.authority, "127.0.0.1:8001");
        let t = Target::parse("https://[::1]/completion?x=1").unwrap();
        assert_eq!(
            (t.tls, t.host.as_str(), t.port, t.path.to_string()),
            (true, "::1", 443, "/completion?x=1".into())
        );
        assert_eq!(t.authority, "[::1]");
        for bad in ["127.0.0.1:8001/v1", "ftp://h/x", "http://", "not a url"] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }
}
