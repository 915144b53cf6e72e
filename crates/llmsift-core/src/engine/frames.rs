//! The parse states the engine carries for its kernels while they are
//! open: a JSON envelope's (`Env`, run by `envelope.rs`), a Python call
//! list's (`PyState`, `pycalls.rs`) and a held call group's (`Hold`,
//! `hold.rs`). They live here, below the `Engine` that holds them and the
//! modules that run them, so neither imports the other both ways.
//!
//! Invariant: these are carried types (`crate::state`): a field added,
//! removed, reordered or retyped here changes `STATE_LAYOUT`.

use crate::format::StateId;
use crate::json::JsonScanner;
use crate::message::Delta;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum EnvPhase {
    #[default]
    Lead,
    ArrLead,
    Key,
    InKey,
    Colon,
    Value,
    NameStr,
    ArgsVal,
    SkipVal,
    After,
    ArrAfter,
    Between,
    Trail,
    /// The envelope closed cleanly (the array's `]`, or an object with no
    /// separator after it): what follows is swallowed like `Trail`, unless
    /// the `done` state is `lost` text (vLLM drops it into no field), which
    /// then decides whether it is content.
    Closed,
    /// `single`: the object closed; whatever follows goes to `done`.
    Single,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Role {
    Name,
    Args,
    Skip,
}

/// Envelope parse state (lives while the engine is in an envelope state).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Env {
    pub(super) phase: EnvPhase,
    pub(super) in_array: bool,
    pub(super) key: String,
    pub(super) esc: bool,
    pub(super) raw_name: String,
    pub(super) name: Option<String>,
    pub(super) args_started: bool,
    pub(super) role: Option<Role>,
    pub(super) skip: JsonScanner,
    /// The (non-array) object closed.
    pub(super) closed: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum PyPhase {
    #[default]
    Lead,
    CallStart,
    Name,
    ArgKey,
    Key,
    Eq,
    Value,
    AfterArg,
    AfterCall,
    Trail,
}

/// Pythonic parse state (lives while the engine is in a pythonic state).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct PyState {
    pub(super) phase: PyPhase,
    pub(super) bracketed: bool,
    pub(super) name: String,
    pub(super) key: String,
}

/// How a held group ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum End {
    Open,
    Released,
    Failed,
}

/// An open held group.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Hold {
    /// What the kernels wrote while held (the group's calls).
    #[serde(with = "crate::message::full_delta")]
    pub(super) buf: Delta,
    /// The group's text as written.
    pub(super) raw: String,
    /// Where the output continues if the group fails.
    pub(super) fail_to: StateId,
    /// The call index the group started at.
    pub(super) first_index: usize,
    pub(super) end: End,
    /// The state that opened a bare group (`hold` on a state), if it is one.
    pub(super) opener: Option<StateId>,
}
