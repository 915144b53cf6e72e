//! One lexing run over a buffer: the state's markers are searched, the text
//! between them goes to the state's kernel, each marker fires its
//! transition, and a tail that may begin a marker is held for the next
//! delta. Also the rule that reads a marker inside an open JSON string as
//! the string's text (`markers_in_strings = "text"`).
//!
//! Also the lookahead after a closer inside a value (`markers_in_values =
//! "follow"`): it acts only where the grammar's next marker or the output's
//! end follows, else it is the value's text; undecided, it is held.
//!
//! Invariants: held text is a proper prefix of an active spelling (shorter
//! than the longest), or a guarded closer, white space and a proper prefix
//! of the next marker (under `MAX_HELD_BYTES`); bytes before the held tail
//! are never scanned again; a
//! run that makes no progress for more rounds than a valid chain of states
//! can take passes a character on as content (a cycle in a user's format
//! never spins).

use super::policy::ValueMarkers;
use super::{ArgsW, Class, Engine, SEEN_STRING_MARKER};
use crate::format::compiled::{Mode, Trans};
use crate::format::{StateId, TermId};
use crate::limits::MAX_FOLLOW_SPACE;
use crate::message::Delta;

impl Engine {
    /// One lexing run over `s`. `Some(n)`: a held group opened or ended
    /// after `n` bytes; the caller ([`Engine::lex`]) resumes from there.
    pub(super) fn lex_run(&mut self, s: &str, at_end: bool, out: &mut Delta) -> Option<usize> {
        use crate::format::compiled::Probe;
        let bytes = s.as_bytes();
        let mut pos = 0;
        let mut text_start = 0;
        // Rounds without progress: states handing the same byte on. A valid
        // chain visits each state at most once or twice; more is a cycle in
        // a user's format, broken by passing the byte on as content.
        let (mut stall, mut last) = (0usize, (usize::MAX, usize::MAX));
        let limit = 2 * self.fmt.states.len() + 4;
        loop {
            if (pos, text_start) == last {
                stall += 1;
                if stall > limit {
                    let n = s[text_start..].chars().next().map_or(0, char::len_utf8);
                    if n == 0 {
                        self.mute = 0;
                        return None;
                    }
                    if text_start >= self.mute {
                        out.push_content(&s[text_start..text_start + n]);
                        self.note_text(text_start, text_start + n, self.text_class().map(|_| Class::Content));
                    }
                    text_start += n;
                    pos = text_start;
                    stall = 0;
                }
            } else {
                stall = 0;
            }
            last = (pos, text_start);
            // Look, with the format borrowed only for this scope.
            let look = {
                let fmt = &*self.fmt;
                let st = &fmt.states[self.state as usize];
                let (id_mode, pending) = (self.id_mode, &self.pending);
                let vocab = self.set.policy.values() == ValueMarkers::Guarded;
                let by_id = |t: TermId| {
                    let term = &fmt.terminals[t as usize];
                    term.token || (vocab && term.vocab)
                };
                let skip = |t: TermId| id_mode && by_id(t) && !pending.contains(&fmt.canon(t));
                let full = |k: usize| {
                    let (sp, t, tr) = &st.spellings[k];
                    Some((sp.len(), *t, *tr, by_id(*t)))
                };
                st.next_marker(bytes, pos, skip).map(|(p, probe)| match probe {
                    Probe::Full(k) => (p, full(k), false),
                    Probe::Partial(Some(k)) if at_end => (p, full(k), false),
                    Probe::Partial(_) => (p, None, true),
                    Probe::No => (p, None, false),
                })
            };
            // The text up to the next marker (or a marker's possible start)
            // goes to the kernel first; a byte that starts nothing is skipped.
            let upto = match look {
                None => s.len(),
                Some((p, full, partial)) if full.is_some() || (partial && !at_end) => p,
                Some((p, ..)) => {
                    pos = p + 1;
                    continue;
                }
            };
            let class = self.text_class();
            match self.span(s, text_start, upto, out) {
                Span::Stop(n) => {
                    self.note_text(text_start, n, class);
                    return self.stop_at(n);
                }
                Span::Moved(n) => {
                    self.note_text(text_start, n, class);
                    (text_start, pos) = (n, n);
                    continue;
                }
                Span::Taken => self.note_text(text_start, upto, class),
            }
            let Some((p, full, _)) = look else {
                self.mute = 0;
                return None;
            };
            let Some((len, t, tr, token)) = full else {
                // A proper prefix of a marker: held until the next delta decides.
                self.held.push_str(&s[p..]);
                self.mute = self.mute.saturating_sub(p);
                return None;
            };
            if tr.reading.is_some_and(|r| r != self.set.policy.readings()) {
                // A marker of the other reading (`reading`): text of the
                // state, and the search goes on from its next byte.
                self.take_id(t, token);
                text_start = p;
                pos = p + 1;
                continue;
            }
            if self.guards(tr, token) {
                match self.follows(s, p + len, tr.to, at_end) {
                    Follow::Acts => {}
                    Follow::Text => {
                        // The value's text: the kernel gets the marker's
                        // bytes with the text after it.
                        if !matches!(self.fmt.states[self.state as usize].mode, Mode::ParamValue) {
                            self.seen |= SEEN_STRING_MARKER;
                        }
                        text_start = p;
                        pos = p + 1;
                        continue;
                    }
                    Follow::Wait => {
                        // Undecided until more output comes: held, as a
                        // marker's proper prefix is.
                        self.held.push_str(&s[p..]);
                        self.mute = self.mute.saturating_sub(p);
                        return None;
                    }
                }
            } else if self.marker_is_string_text() {
                // The string's text (`markers_in_strings = "text"`): the
                // kernel gets its bytes with the text after it, and the
                // search goes on from its next byte.
                self.seen |= SEEN_STRING_MARKER;
                self.take_id(t, token);
                text_start = p;
                pos = p + 1;
                continue;
            }
            // A reprocessed marker is read again in the next state: its
            // id stays queued for that reading.
            if !tr.reprocess {
                self.take_id(t, token);
            }
            let end = p + len;
            let begun = self.calls_begun();
            self.apply(tr, self.marker_span(s, p, end), out);
            self.note_marker(p, end, tr.reprocess, begun);
            pos = if tr.reprocess { p } else { end };
            text_start = pos;
            if std::mem::take(&mut self.hold_toggled) {
                return self.stop_at(pos);
            }
            if tr.reprocess {
                // Read the marker again in the new state; when that state
                // treats it as text, hand it over and search past it. A
                // longer spelling of the new state that the bytes so far
                // only begin is read like any marker prefix, held for the
                // next delta (fuzz: taken as text under a cut, as a
                // marker in one shot).
                let again = match self.fmt.states[self.state as usize].probe(&bytes[p..], |_| false) {
                    Probe::Full(_) | Probe::Partial(Some(_)) => true,
                    Probe::Partial(None) => !at_end,
                    Probe::No => false,
                };
                if !again {
                    self.take_id(t, token);
                    let class = self.text_class();
                    match self.span(s, p, end, out) {
                        Span::Stop(n) => {
                            self.note_text(p, n, class);
                            return self.stop_at(n);
                        }
                        Span::Moved(n) => {
                            self.note_text(p, n, class);
                            (text_start, pos) = (n, n)
                        }
                        Span::Taken => {
                            self.note_text(p, end, class);
                            (text_start, pos) = (end, end)
                        }
                    }
                }
            }
        }
    }

    /// Sends `s[a..b]` to the kernel ([`Engine::text_span`]) and says how
    /// the run goes on.
    fn span(&mut self, s: &str, a: usize, b: usize, out: &mut Delta) -> Span {
        let r = self.text_span(s, a, b, out);
        if std::mem::take(&mut self.hold_toggled) {
            return Span::Stop(r.map_or(b, |u| a + u));
        }
        match r {
            Some(used) => Span::Moved(a + used),
            None => Span::Taken,
        }
    }

    /// Whether terminal `t` matches by id once ids come: declared `token`,
    /// or an added token of the vocabulary in the default mode.
    pub(super) fn by_id(&self, t: TermId) -> bool {
        let term = &self.fmt.terminals[t as usize];
        term.token || (term.vocab && self.set.policy.values() == ValueMarkers::Guarded)
    }

    /// A token marker was read (or read as text): its queued id is used up.
    fn take_id(&mut self, t: TermId, token: bool) {
        if self.id_mode && token {
            let t = self.fmt.canon(t);
            if let Some(j) = self.pending.iter().position(|x| *x == t) {
                self.pending.remove(j);
            }
        }
    }

    /// Whether a marker found now is text of an open JSON string of the
    /// call (`markers_in_strings = "text"`). The kernel has read every byte
    /// before the marker, so the answer depends on the bytes alone, never
    /// on where the deltas were cut.
    pub(super) fn marker_is_string_text(&self) -> bool {
        use crate::format::spec::MarkersInStrings;
        if self.fmt.calls.markers_in_strings != MarkersInStrings::Text || self.priming {
            return false;
        }
        match &self.fmt.states[self.state as usize].mode {
            Mode::Args(_) => {
                matches!(self.call.as_ref().map(|c| &c.args), Some(ArgsW::Raw(r)) if r.in_string())
            }
            Mode::Envelope(_) => self.env_in_string(),
            _ => false,
        }
    }

    /// Whether the marker just found, with transition `tr`, is a closer
    /// inside a value that only acts where the grammar allows what follows
    /// (`markers_in_values = "follow"`, in the default mode): not when the
    /// prompt is read, nor for a marker its token id already decided, nor
    /// outside an open JSON string of a raw-JSON or envelope body.
    fn guards(&self, tr: Trans, by_id: bool) -> bool {
        if !tr.follow || self.priming || self.set.policy.values() != ValueMarkers::Guarded {
            return false;
        }
        if by_id && self.id_mode {
            return false;
        }
        match &self.fmt.states[self.state as usize].mode {
            Mode::ParamValue => true,
            Mode::Args(_) => {
                matches!(self.call.as_ref().map(|c| &c.args), Some(ArgsW::Raw(r)) if r.in_string())
            }
            Mode::Envelope(_) => self.env_in_string(),
            _ => false,
        }
    }

    /// What follows a guarded closer that ends at `from`: after at most
    /// [`MAX_FOLLOW_SPACE`] bytes of white space, a marker (or, at the end
    /// of the output, a marker's start) of the state `to` it leads to, or
    /// the end of the output: it acts; anything else: it is text; the
    /// bytes so far only begin such a marker or are all white space: wait.
    /// Longer white space lets it act, as it did before (the bound keeps
    /// what a stream holds small). A function of the bytes from the marker
    /// on, so every cut of the output gives the same answer.
    pub(super) fn follows(&self, s: &str, from: usize, to: StateId, at_end: bool) -> Follow {
        use crate::format::compiled::Probe;
        let b = s.as_bytes();
        let mut r = from;
        while r < b.len() && b[r].is_ascii_whitespace() {
            r += 1;
            if r - from > MAX_FOLLOW_SPACE {
                return Follow::Acts;
            }
        }
        if r == b.len() {
            return if at_end { Follow::Acts } else { Follow::Wait };
        }
        let fmt = &*self.fmt;
        let vocab = self.set.policy.values() == ValueMarkers::Guarded;
        let skip = |t: TermId| {
            let term = &fmt.terminals[t as usize];
            self.id_mode && (term.token || (vocab && term.vocab)) && !self.pending.contains(&fmt.canon(t))
        };
        match fmt.states[to as usize].probe(&b[r..], skip) {
            Probe::Full(_) => Follow::Acts,
            // The output ends inside the next marker: it was markup.
            Probe::Partial(_) if at_end => Follow::Acts,
            Probe::Partial(_) => Follow::Wait,
            Probe::No => Follow::Text,
        }
    }

    /// A run stops at byte `n` (a hold toggle): prompt bytes before it are behind.
    pub(super) fn stop_at(&mut self, n: usize) -> Option<usize> {
        self.mute = self.mute.saturating_sub(n);
        Some(n)
    }
}

/// What follows a guarded closer (see [`Engine::follows`]).
pub(super) enum Follow {
    /// The grammar's next marker, or the end: the closer acts.
    Acts,
    /// Anything else: the closer is the value's text.
    Text,
    /// Not decided by the bytes so far: held for the next delta.
    Wait,
}

/// How a lexing run goes on after a text span.
enum Span {
    /// The kernel took it all: go on at the span's end.
    Taken,
    /// The kernel switched state at this byte: lex again from there.
    Moved(usize),
    /// A held group opened or ended at this byte: the run stops there.
    Stop(usize),
}
