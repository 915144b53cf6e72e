//! `/metrics`: the gateway's counters in the Prometheus text format
//! (`prometheus-client`).
//!
//! Owns the metric names: `sift_requests_total{route,status}`,
//! `sift_open_streams`, `sift_backend_first_token_seconds`,
//! `sift_parse_delta_seconds`, `sift_relay_seconds`,
//! `sift_output_bytes_total{field}`, `sift_errors_total{kind}`.
//!
//! Invariant: recording a metric never blocks on I/O and never fails; the
//! per-chunk metrics take no lock (their counters are resolved once).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FieldLabels {
    field: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

/// A message field, as `sift_output_bytes_total` labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `reasoning`.
    Reasoning,
    /// `content`.
    Content,
    /// `tool_calls` (names and arguments).
    ToolCalls,
}

/// The gateway's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RouteLabels, Counter>,
    /// Streams open now.
    pub open_streams: Gauge,
    /// Backend request sent → first output chunk, in seconds.
    pub first_token: Histogram,
    /// Parse time of one backend chunk, in seconds.
    pub parse_delta: Histogram,
    /// Backend chunk's bytes received → its client frames handed to the connection, in seconds.
    pub relay: Histogram,
    /// `sift_output_bytes_total` for reasoning, content and tool_calls, in
    /// that order (looked up once: a family lookup takes a lock).
    output: [Counter; 3],
    errors: Family<KindLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RouteLabels, Counter>::default();
        let open_streams = Gauge::default();
        let first_token = Histogram::new(exponential_buckets(0.0005, 2.0, 16));
        let parse_delta = Histogram::new(exponential_buckets(1e-7, 4.0, 12));
        let relay = Histogram::new(exponential_buckets(1e-5, 2.0, 14));
        let output = Family::<FieldLabels, Counter>::default();
        let errors = Family::<KindLabels, Counter>::default();
        registry.register("sift_requests", "Requests by route and status", requests.clone());
        registry.register("sift_open_streams", "Streaming responses open now", open_streams.clone());
        registry.register(
            "sift_backend_first_token_seconds",
            "Backend request sent to its first output chunk",
            first_token.clone(),
        );
        registry.register("sift_parse_delta_seconds", "Parse time per backend chunk", parse_delta.clone());
        registry.register(
            "sift_relay_seconds",
            "Backend chunk received to its client frames handed to the connection",
            relay.clone(),
        );
        registry.register("sift_output_bytes", "Bytes sent to clients by message field", output.clone());
        let output = ["reasoning", "content", "tool_calls"]
            .map(|field| output.get_or_create(&FieldLabels { field }).clone());
        registry.register("sift_errors", "Errors by kind", errors.clone());
        Metrics { registry, requests, open_streams, first_token, parse_delta, relay, output, errors }
    }
}

impl Metrics {
    /// Counts a request.
    pub fn request(&self, route: &str, status: u16) {
        self.requests.get_or_create(&RouteLabels { route: route.to_string(), status }).inc();
    }

    /// Counts output bytes of `field` (`reasoning`, `content`, `tool_calls`).
    pub fn output(&self, field: Field, bytes: usize) {
        if bytes > 0 {
            self.output[field as usize].inc_by(bytes as u64);
        }
    }

    /// Counts an error.
    pub fn error(&self, kind: &'static str) {
        self.errors.get_or_create(&KindLabels { kind }).inc();
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, &self.registry).expect("writing to a String");
        s
    }
}
