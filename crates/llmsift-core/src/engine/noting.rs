//! The engine's methods that feed the byte ledger (`ledger.rs`): starting
//! it, the accounting pass of `push` (`push_lexed`, never the plain-delta
//! fast path), and the notes the lexer takes of text and markers as it
//! consumes them.
//!
//! Invariants: without a ledger every method here is a no-op (one
//! `Option` check), so an engine without byte accounting does no extra
//! work; notes are taken only when bytes are consumed, never when held.

use super::ledger::Class;
use super::Engine;
use crate::message::Delta;

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
