//! Errors. Model output never produces one: these are for misuse (a bad
//! format file, an unknown parser name, a vocabulary lacking a marker).

use std::fmt;

/// Why a format could not be built. Messages are lowercase and name the
/// offending value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The file is not valid TOML for the format language.
    Syntax {
        /// The parser's message.
        message: String,
    },
    /// A state name that is not defined.
    UnknownState {
        /// Format name.
        format: String,
        /// The missing state.
        state: String,
    },
    /// A terminal name that is not defined.
    UnknownTerminal {
        /// Format name.
        format: String,
        /// The missing terminal.
        terminal: String,
    },
    /// Two terminals active in one state with the same spelling.
    Ambiguous {
        /// The state.
        state: String,
        /// One spelling.
        first: String,
        /// The other spelling.
        second: String,
    },
    /// A state no start, transition or kernel can reach.
    Unreachable {
        /// The state.
        state: String,
    },
    /// A spelling that is empty or longer than [`crate::MAX_MARKER_LEN`]: holding
    /// it back would be unbounded or pointless.
    BadSpelling {
        /// The terminal.
        terminal: String,
        /// Its length in bytes.
        len: usize,
    },
    /// `reprocess` transitions that loop without consuming input.
    ReprocessCycle {
        /// A state on the cycle.
        state: String,
    },
    /// A key of a format file whose value is not one the language
    /// accepts, or that does not fit the rest of the file (a terminal it
    /// names is missing, a setting it needs is absent).
    BadKey {
        /// The file (`tools/hermes.toml`), or `format "NAME"` when the
        /// text came without a file.
        file: String,
        /// The table holding the key (`calls`, `states.call.on.open`;
        /// empty at the top level).
        table: String,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A marker declared as a special token that the vocabulary lacks.
    MissingToken {
        /// The marker's spelling.
        marker: String,
    },
    /// No format is registered under this name.
    UnknownParser {
        /// The name asked for.
        name: String,
    },
    /// A reasoning name was given where a tool name was expected, or back.
    WrongKind {
        /// The name.
        name: String,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Syntax { message } => write!(f, "format file syntax: {message}"),
            FormatError::UnknownState { format, state } => write!(f, "format {format:?}: unknown state {state:?}"),
            FormatError::UnknownTerminal { format, terminal } => {
                write!(f, "format {format:?}: unknown terminal {terminal:?}")
            }
            FormatError::Ambiguous { state, first, second } => {
                write!(f, "ambiguous spellings in state {state:?}: {first:?} and {second:?}")
            }
            FormatError::Unreachable { state } => write!(f, "state {state:?} cannot be reached"),
            FormatError::BadSpelling { terminal, len } => write!(
                f,
                "terminal {terminal:?} has a spelling of {len} bytes (must be 1 to {} bytes: holdback would be unbounded)",
                crate::MAX_MARKER_LEN
            ),
            FormatError::ReprocessCycle { state } => write!(f, "reprocess transitions loop at state {state:?}"),
            FormatError::BadKey { file, table, key, message } => match (table.as_str(), key.as_str()) {
                ("", "") => write!(f, "{file}: {message}"),
                ("", key) => write!(f, "{file}: {key}: {message}"),
                (table, key) => write!(f, "{file}: [{table}] {key}: {message}"),
            },
            FormatError::MissingToken { marker } => write!(f, "marker {marker:?} is not a single token of the vocabulary"),
            FormatError::UnknownParser { name } => write!(f, "unknown parser name {name:?}"),
            FormatError::WrongKind { name } => write!(f, "parser {name:?} is of the other kind"),
        }
    }
}

impl std::error::Error for FormatError {}
