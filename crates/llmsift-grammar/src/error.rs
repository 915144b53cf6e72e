//! Why a constraint could not be built.
//!
//! Owns [`GrammarError`]. Every variant is caused by the request (its tools,
//! its schemas), so every variant answers HTTP 400, in the OpenAI shape the
//! protocol layer uses (`{"error": {"message", "type", "param", "code"}}`).

use serde_json::{json, Value};
use std::fmt;

/// Why the structured-output constraint of a request could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrammarError {
    /// Two tools define the same `$defs` name with different schemas
    /// (vLLM: "Tool definition 'X' has multiple schemas, which is not supported.").
    ConflictingDefs {
        /// The `$defs` entry defined twice.
        name: String,
    },
    /// A tool's `parameters.$defs` is not an object.
    InvalidDefs {
        /// The tool whose `$defs` is malformed.
        tool: String,
    },
    /// A named tool choice names a function that is not among `tools`
    /// (vLLM: "Tool 'X' has not been passed in `tools`.").
    UnknownTool {
        /// The name given.
        name: String,
    },
    /// `response_format` is not one Sift can turn into a constraint.
    ResponseFormat {
        /// What is wrong with it.
        message: String,
    },
    /// The grammar engine refused the exported grammar (an unsupported or
    /// contradictory schema, most of the time).
    Engine {
        /// The engine's message.
        message: String,
    },
}

impl GrammarError {
    /// The HTTP status of the response carrying this error (always 400).
    pub fn status(&self) -> u16 {
        400
    }

    /// The request parameter at fault.
    pub fn param(&self) -> Option<&'static str> {
        match self {
            GrammarError::ConflictingDefs { .. } | GrammarError::InvalidDefs { .. } => Some("tools"),
            GrammarError::UnknownTool { .. } => Some("tool_choice"),
            GrammarError::ResponseFormat { .. } => Some("response_format"),
            GrammarError::Engine { .. } => None,
        }
    }

    /// The human-readable message (vLLM's wording where vLLM has one).
    pub fn message(&self) -> String {
        match self {
            GrammarError::ConflictingDefs { name } => {
                format!("Tool definition '{name}' has multiple schemas, which is not supported.")
            }
            GrammarError::InvalidDefs { tool } => {
                format!("Tool '{tool}' has a `$defs` that is not an object.")
            }
            GrammarError::UnknownTool { name } => format!("Tool '{name}' has not been passed in `tools`."),
            GrammarError::ResponseFormat { message } => message.clone(),
            GrammarError::Engine { message } => format!("Invalid structured output grammar: {message}"),
        }
    }

    /// The response body: `{"error": {"message", "type", "param", "code"}}`.
    pub fn to_json(&self) -> Value {
        json!({
            "error": {
                "message": self.message(),
                "type": "BadRequestError",
                "param": self.param(),
                "code": self.status(),
            }
        })
    }
}

impl fmt::Display for GrammarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for GrammarError {}
