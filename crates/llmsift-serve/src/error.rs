//! Errors of the gateway: [`ApiError`], what a client is answered before a
//! stream starts, and [`ServeError`], why the gateway refuses to start.
//!
//! Invariant: every `ApiError` becomes one HTTP status and one OpenAI-shaped
//! body `{"error": {"message", "type", "param", "code"}}` (the shape
//! `llmsift_protocol::ProtocolError` uses), so the official clients raise their
//! typed exceptions with the message intact.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::fmt;

/// A refused request, as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The error `type` (`BadRequestError`, `NotFoundError`, …).
    pub kind: &'static str,
    /// The message.
    pub message: String,
    /// The request field at fault.
    pub param: Option<String>,
    /// Seconds for a `Retry-After` header (503 only).
    pub retry_after: Option<u32>,
}

impl ApiError {
    fn new(status: u16, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, kind, message: message.into(), param: None, retry_after: None }
    }

    /// 400 naming the field at fault.
    pub fn bad_request(message: impl Into<String>, param: Option<String>) -> ApiError {
        ApiError { param, ..ApiError::new(400, "BadRequestError", message) }
    }

    /// 401: `/v1/*` without the `--api-key` bearer token.
    pub fn unauthorized() -> ApiError {
        ApiError::new(401, "AuthenticationError", "Unauthorized")
    }

    /// 404 for a `model` no route serves (vLLM's wording).
    pub fn unknown_model(name: &str) -> ApiError {
        ApiError {
            param: Some("model".into()),
            ..ApiError::new(404, "NotFoundError", format!("The model `{name}` does not exist."))
        }
    }

    /// 413: the body is larger than the limit.
    pub fn too_large(limit: usize) -> ApiError {
        ApiError::new(413, "RequestTooLargeError", format!("request body larger than {limit} bytes"))
    }

    /// 503 with `Retry-After`: the concurrency limit is reached.
    pub fn overloaded(limit: usize) -> ApiError {
        ApiError {
            retry_after: Some(1),
            ..ApiError::new(
                503,
                "ServiceUnavailableError",
                format!("the gateway is serving its limit of {limit} requests; retry later"),
            )
        }
    }

    /// 502: the backend could not be reached or failed before any output.
    pub fn bad_gateway(message: impl Into<String>) -> ApiError {
        ApiError::new(502, "BadGatewayError", message)
    }

    /// 504: the backend did not answer within the timeout.
    pub fn gateway_timeout(message: impl Into<String>) -> ApiError {
        ApiError::new(504, "GatewayTimeoutError", message)
    }

    /// The OpenAI-shaped body.
    pub fn to_json(&self) -> serde_json::Value {
        json!({"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.status}})
    }

    /// The metrics label of this error.
    pub fn label(&self) -> &'static str {
        match self.status {
            400 => "bad_request",
            401 => "unauthorized",
            404 => "unknown_model",
            413 => "too_large",
            503 => "overloaded",
            502 => "backend",
            504 => "backend_timeout",
            _ => "other",
        }
    }
}

impl From<llmsift_protocol::ProtocolError> for ApiError {
    fn from(e: llmsift_protocol::ProtocolError) -> ApiError {
        ApiError::bad_request(e.message(), e.param().map(str::to_string))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (status, axum::Json(self.to_json())).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.message)
    }
}

/// Why the gateway (or the replay backend) refuses to start.
#[derive(Debug)]
pub enum ServeError {
    /// The configuration is incomplete or contradictory.
    Config(String),
    /// A file could not be read.
    Io {
        /// The file.
        path: String,
        /// The reader's error.
        source: std::io::Error,
    },
    /// A model's parsers, tokenizer or template could not be set up
    /// (a marker missing from the vocabulary is named here).
    Model {
        /// The served model name.
        model: String,
        /// What failed.
        message: String,
    },
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Config(m) => write!(f, "configuration: {m}"),
            ServeError::Io { path, source } => write!(f, "reading {path}: {source}"),
            ServeError::Model { model, message } => write!(f, "model `{model}`: {message}"),
        }
    }
}

impl std::error::Error for ServeError {}
