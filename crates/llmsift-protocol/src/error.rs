//! Request errors, shaped the way vLLM's OpenAI server answers them.
//!
//! Owns [`ProtocolError`]: every reason a request is refused before any
//! parsing happens. Model output never produces one (the core's invariant),
//! so there is no error path in the stream processor.
//!
//! Invariant: every variant maps to one HTTP status and one OpenAI-shaped
//! body `{"error": {"message", "type", "param", "code"}}`, where `code`
//! repeats the status as vLLM does.

use serde_json::{json, Value};
use std::fmt;

/// Why a request was refused. All of these are client errors (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// The body is not JSON, or not shaped like a request.
    InvalidBody {
        /// The JSON reader's message.
        message: String,
    },
    /// `tool_choice` other than `none` without `tools`.
    ToolChoiceWithoutTools,
    /// A `tool_choice` string other than `none`, `auto`, `required`.
    InvalidToolChoice {
        /// The value given, as JSON text.
        value: String,
    },
    /// A named `tool_choice` whose `function` is missing or malformed.
    MalformedNamedToolChoice {
        /// What is wrong with it (vLLM's wording).
        message: String,
        /// The offending parameter path.
        param: &'static str,
    },
    /// A named `tool_choice` naming a function that is not among `tools`.
    UnknownNamedTool {
        /// The name given.
        name: String,
    },
    /// `tool_choice: auto` while the server does not parse calls
    /// (vLLM: `--enable-auto-tool-choice` / `--tool-call-parser` not set).
    AutoToolsDisabled,
    /// `stream_options` on a request that does not stream.
    StreamOptionsWithoutStream,
    /// `top_logprobs` without `logprobs: true`.
    TopLogprobsWithoutLogprobs,
    /// `top_logprobs` below zero (other than -1).
    InvalidTopLogprobs {
        /// The value given.
        value: i64,
    },
}

const NAMED_USAGE: &str =
    "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`";

impl ProtocolError {
    /// The HTTP status of the response carrying this error.
    pub fn status(&self) -> u16 {
        400
    }

    /// The error `type` field (vLLM's name for a 400).
    pub fn error_type(&self) -> &'static str {
        "BadRequestError"
    }

    /// The request parameter at fault, when there is one.
    pub fn param(&self) -> Option<&'static str> {
        match self {
            ProtocolError::InvalidBody { .. } => None,
            ProtocolError::ToolChoiceWithoutTools
            | ProtocolError::InvalidToolChoice { .. }
            | ProtocolError::UnknownNamedTool { .. }
            | ProtocolError::AutoToolsDisabled => Some("tool_choice"),
            ProtocolError::MalformedNamedToolChoice { param, .. } => Some(param),
            ProtocolError::StreamOptionsWithoutStream => Some("stream_options"),
            ProtocolError::TopLogprobsWithoutLogprobs | ProtocolError::InvalidTopLogprobs { .. } => {
                Some("top_logprobs")
            }
        }
    }

    /// The human-readable message (vLLM's wording).
    pub fn message(&self) -> String {
        match self {
            ProtocolError::InvalidBody { message } => message.clone(),
            ProtocolError::ToolChoiceWithoutTools => {
                "When using `tool_choice`, `tools` must be set.".to_string()
            }
            ProtocolError::InvalidToolChoice { value } => format!(
                "Invalid value for `tool_choice`: {value}! Only named tools, \"none\", \"auto\" or \"required\" are supported."
            ),
            ProtocolError::MalformedNamedToolChoice { message, .. } => format!("{message} {NAMED_USAGE}"),
            ProtocolError::UnknownNamedTool { .. } => {
                "The tool specified in `tool_choice` does not match any of the specified `tools`".to_string()
            }
            ProtocolError::AutoToolsDisabled => {
                "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"
                    .to_string()
            }
            ProtocolError::StreamOptionsWithoutStream => {
                "Stream options can only be defined when `stream=True`.".to_string()
            }
            ProtocolError::TopLogprobsWithoutLogprobs => {
                "when using `top_logprobs`, `logprobs` must be set to true.".to_string()
            }
            ProtocolError::InvalidTopLogprobs { .. } => {
                "`top_logprobs` must be a positive value or -1.".to_string()
            }
        }
    }

    /// The response body: `{"error": {"message", "type", "param", "code"}}`.
    pub fn to_json(&self) -> Value {
        json!({
            "error": {
                "message": self.message(),
                "type": self.error_type(),
                "param": self.param(),
                "code": self.status(),
            }
        })
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ProtocolError {}
