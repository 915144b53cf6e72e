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

use super::Engine;
use crate::format::compiled::Mode;
use crate::message::Delta;

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
    fn of(mode: &Mode) -> Class {
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
    pushed: usize,
    /// Absolute offset of the buffer `lex` reads (negative while prompt
    /// bytes lead it).
    base: i64,
    /// Absolute offset of the buffer the current lexing run reads.
    pub(super) run: i64,
    /// Consumed runs `[start, end)`, in order.
    pub notes: Vec<(usize, usize, Class)>,
    /// Calls begun (a marker that moves it opened a call).
    pub(super) begun: u32,
    /// A reprocessed marker opened a call: the next note is its opener.
    opener: bool,
    /// The parser's accounting (`parser::Accounting`), kept here so that a
    /// parser without accounting carries one pointer for it, not two; not
    /// named here, as the engine sits below the parser.
    above: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger").field("pushed", &self.pushed).field("notes", &self.notes.len()).finish()
    }
}

impl Ledger {
    /// Notes `[a, b)` of the current run.
    fn note(&mut self, a: usize, b: usize, mut class: Class) {
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

impl Engine {
    /// Starts byte accounting (before anything is pushed).
    pub fn keep_ledger(&mut self) {
        self.ledger = Some(Box::default());
    }

    /// Whether byte accounting is on (the parser's one check per delta).
    #[inline(always)]
    pub fn keeps_ledger(&self) -> bool {
        self.ledger.is_some()
    }

    /// The parser's accounting, taken out (see [`Ledger`]'s `above`).
    pub fn take_above(&mut self) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        self.ledger.as_mut().and_then(|l| l.above.take())
    }

    /// Puts the parser's accounting (back) behind the ledger.
    pub fn set_above(&mut self, above: Box<dyn std::any::Any + Send + Sync>) {
        if let Some(l) = &mut self.ledger {
            l.above = Some(above);
        }
    }

    /// The notes taken since the last call.
    pub fn take_notes(&mut self, into: &mut Vec<(usize, usize, Class)>) {
        if let Some(l) = &mut self.ledger {
            into.append(&mut l.notes);
        }
    }

    /// `push` for an engine with a ledger: the same steps without the
    /// plain-delta fast path, each run of bytes noted as it is consumed
    /// (`push` itself for an engine without one).
    pub fn push_lexed(&mut self, text: &str, ids: Option<&[u32]>, out: &mut Delta) {
        let Some(l) = &mut self.ledger else { return self.push(text, ids, out) };
        l.base = l.pushed as i64 - self.held.len() as i64;
        l.pushed += text.len();
        self.push_slow(text, ids, out);
    }

    /// Sets the base of the held tail `finish` lexes.
    pub(super) fn ledger_finish(&mut self) {
        if let Some(l) = &mut self.ledger {
            l.base = l.pushed as i64 - self.held.len() as i64;
        }
    }

    /// Notes text `[a, b)` of the run, read in the current state.
    #[inline]
    pub(super) fn note_text(&mut self, a: usize, b: usize, mode_class: Option<Class>) {
        if let (Some(l), Some(c)) = (&mut self.ledger, mode_class) {
            l.note(a, b, c);
        }
    }

    /// The class of the current state's text, when a ledger is kept.
    #[inline]
    pub(super) fn text_class(&self) -> Option<Class> {
        self.ledger.as_ref().map(|_| Class::of(&self.fmt.states[self.state as usize].mode))
    }

    /// Calls begun so far, when a ledger is kept.
    #[inline]
    pub(super) fn calls_begun(&self) -> Option<u32> {
        self.ledger.as_ref().map(|l| l.begun)
    }

    /// Notes marker `[a, b)` of the run; `begun` is the count of calls begun
    /// before it was applied. A reprocessed marker is read again: noted then.
    #[inline]
    pub(super) fn note_marker(&mut self, a: usize, b: usize, reprocess: bool, begun: Option<u32>) {
        if let (Some(l), Some(before)) = (&mut self.ledger, begun) {
            let opened = l.begun != before;
            if reprocess {
                l.opener |= opened;
                return;
            }
            l.note(a, b, if opened { Class::CallMarker } else { Class::Marker });
        }
    }
}
