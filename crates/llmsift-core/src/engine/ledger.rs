//! The engine's side of byte accounting (`crate::spans`): with the request
//! setting `byte_spans`, the lexer notes which output bytes it consumed and
//! how (a marker, a call's opening marker, or text of a state's mode), for
//! the accountant above the engine (`crate::account`) to label the bytes no
//! field received. Off (no ledger), the engine does no extra work: the
//! parser feeds an engine with a ledger through [`Engine::push_lexed`],
//! never through the plain-delta fast path, so that path is untouched. The
//! ledger also keeps the parser's accounting (`parser::Accounting`, as
//! `Any`: the engine sits below the parser), so accounting costs a parser
//! without it one pointer.
//!
//! Invariants: each output byte is noted at most once, when the lexer
//! consumes it (a reprocessed marker is noted when it is finally read);
//! prompt bytes (priming) are never noted; offsets are absolute in the
//! output and fall on char boundaries.
//!
//! This module holds the ledger's data; the engine's side of it (how the
//! lexer and `push` feed it) is `noting.rs`, so that the engine's root
//! imports these types without an import cycle.

use crate::format::compiled::Mode;

/// How the lexer consumed a run of output bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Not consumed yet (held, or the parser holds the whole output).
    Pending,
    /// Text of a reasoning state.
    Reasoning,
    /// Text of a content state (or of a `lost` one).
    Content,
    /// Text of a state that drops it, a header or blank space.
    Framing,
    /// Text of a call state (name, parameters, arguments, envelope).
    CallText,
    /// A marker.
    Marker,
    /// A marker that opened a call.
    CallMarker,
    /// Consumed where the engine took no note (the whole-output and
    /// response-template paths): any field may hold it.
    Unknown,
}

impl Class {
    /// The class of a state's text.
    pub(super) fn of(mode: &Mode) -> Class {
        match mode {
            Mode::Content | Mode::Lost => Class::Content,
            Mode::Reasoning => Class::Reasoning,
            Mode::Drop | Mode::Header(_) | Mode::Blank => Class::Framing,
            _ => Class::CallText,
        }
    }
}

/// What the lexer consumed since the accountant last looked.
#[derive(Default)]
pub(crate) struct Ledger {
    /// Output bytes pushed so far.
    pub(super) pushed: usize,
    /// Absolute offset of the buffer `lex` reads (negative while prompt
    /// bytes lead it).
    pub(super) base: i64,
    /// Absolute offset of the buffer the current lexing run reads.
    pub(super) run: i64,
    /// Consumed runs `[start, end)`, in order.
    pub notes: Vec<(usize, usize, Class)>,
    /// Calls begun (a marker that moves it opened a call).
    pub(super) begun: u32,
    /// A reprocessed marker opened a call: the next note is its opener.
    pub(super) opener: bool,
    /// The parser's accounting (`parser::Accounting`), kept here so that a
    /// parser without accounting carries one pointer for it, not two; not
    /// named here, as the engine sits below the parser.
    pub(super) above: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger").field("pushed", &self.pushed).field("notes", &self.notes.len()).finish()
    }
}

impl Ledger {
    /// Notes `[a, b)` of the current run.
    pub(super) fn note(&mut self, a: usize, b: usize, mut class: Class) {
        if std::mem::take(&mut self.opener) && matches!(class, Class::Marker | Class::CallText) {
            class = Class::CallMarker;
        }
        let (a, b) = ((self.run + a as i64).max(0) as usize, (self.run + b as i64).max(0) as usize);
        if a < b {
            self.notes.push((a, b, class));
        }
    }

    /// Sets the start of the buffer `lex` reads, `from` bytes into it.
    pub(super) fn at(&mut self, from: usize) {
        self.run = self.base + from as i64;
    }
}
