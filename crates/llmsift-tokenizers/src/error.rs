//! The crate's error type.
//!
//! Invariant: every message is lowercase and names the offending value (a
//! path, a tokenizer name, or the text that failed to encode).

use std::fmt;
use std::path::PathBuf;

/// What can go wrong when loading a tokenizer or encoding with it.
#[derive(Debug)]
pub enum TokenizerError {
    /// The tokenizer file could not be read.
    Io {
        /// The file that was read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The bytes are not a valid `tokenizer.json`.
    Parse {
        /// Where the bytes came from (a path, or `"<bytes>"`).
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A name given to [`crate::TokenizerView::named`] is not one of
    /// [`crate::TOKENIZER_NAMES`].
    UnknownName(String),
    /// A named tokenizer's file is not on disk (the assets were not fetched).
    MissingAsset {
        /// The tokenizer's name.
        name: String,
        /// Where the file was expected.
        path: PathBuf,
    },
    /// The tokenizer failed to encode a text.
    Encode {
        /// The text (truncated to 80 chars).
        text: String,
        /// The tokenizer's message.
        message: String,
    },
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerError::Io { path, source } => {
                write!(f, "cannot read tokenizer file {}: {source}", path.display())
            }
            TokenizerError::Parse { origin, message } => {
                write!(f, "invalid tokenizer json in {origin}: {message}")
            }
            TokenizerError::UnknownName(name) => write!(f, "unknown tokenizer name {name:?}"),
            TokenizerError::MissingAsset { name, path } => {
                write!(f, "tokenizer {name:?} not found at {}: run scripts/fetch-assets.sh", path.display())
            }
            TokenizerError::Encode { text, message } => {
                write!(f, "cannot encode {text:?}: {message}")
            }
        }
    }
}

impl std::error::Error for TokenizerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TokenizerError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
