//! The one error type of the crate.

use std::fmt;
use std::path::PathBuf;

/// Why a chat template could not be loaded or rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// A `tokenizer_config.json` is not JSON, or its `chat_template` (or a
    /// special token) has an unexpected shape.
    Config(String),
    /// No template fits the request: the configuration has none, the named
    /// one is missing, or several are named and none is `default`.
    NotFound {
        /// The name asked for, if any.
        requested: Option<String>,
        /// The names the configuration has.
        available: Vec<String>,
    },
    /// The template does not parse.
    Syntax(String),
    /// The template called `raise_exception(message)`; this is the message.
    Raised(String),
    /// Rendering failed otherwise (an undefined value used, a type error, …).
    Render(String),
    /// The request cannot be rendered (a message is not an object, the
    /// conversation is empty, a keyword argument shadows a reserved name).
    Request(String),
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Io { path, message } => write!(f, "cannot read {}: {message}", path.display()),
            TemplateError::Config(m) => write!(f, "invalid tokenizer config: {m}"),
            TemplateError::NotFound { requested: Some(name), available } => {
                write!(f, "no chat template named {name:?} (available: {})", available.join(", "))
            }
            TemplateError::NotFound { requested: None, available } if available.is_empty() => {
                write!(f, "no chat template in the configuration")
            }
            TemplateError::NotFound { requested: None, available } => write!(
                f,
                "several chat templates and none named \"default\"; pick one of: {}",
                available.join(", ")
            ),
            TemplateError::Syntax(m) => write!(f, "chat template syntax error: {m}"),
            TemplateError::Raised(m) => write!(f, "chat template raised: {m}"),
            TemplateError::Render(m) => write!(f, "chat template render error: {m}"),
            TemplateError::Request(m) => write!(f, "invalid render request: {m}"),
        }
    }
}

impl std::error::Error for TemplateError {}
