//! One lexing run over a buffer: the state's markers are searched, the text
//! between them goes to the state's kernel, each marker fires its
//! transition, and a tail that may begin a marker is held for the next
//! delta. Also the rule that reads a marker inside an open JSON string as
//! the string's text (`markers_in_strings = "text"`).
//!
//! Invariants: held text is a proper prefix of an active spelling (shorter
//! than the longest); bytes before the held tail are never scanned again; a
//! run that makes no progress for more rounds than a valid chain of states
//! can take passes a character on as content (a cycle in a user's format
//! never spins).

use super::{ArgsW, Engine, SEEN_STRING_MARKER};
use crate::format::compiled::Mode;
use crate::format::TermId;
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
                let skip = |t: TermId| {
                    id_mode && fmt.terminals[t as usize].token && !pending.contains(&fmt.canon(t))
                };
                let full = |k: usize| {
                    let (sp, t, tr) = &st.spellings[k];
                    Some((sp.len(), *t, *tr, fmt.terminals[*t as usize].token))
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
            match self.span(s, text_start, upto, out) {
                Span::Stop(n) => return self.stop_at(n),
                Span::Moved(n) => {
                    (text_start, pos) = (n, n);
                    continue;
                }
                Span::Taken => {}
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
            if self.marker_is_string_text() {
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
            self.apply(tr, self.marker_span(s, p, end), out);
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
                    match self.span(s, p, end, out) {
                        Span::Stop(n) => return self.stop_at(n),
                        Span::Moved(n) => (text_start, pos) = (n, n),
                        Span::Taken => (text_start, pos) = (end, end),
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

    /// A run stops at byte `n` (a hold toggle): prompt bytes before it are behind.
    pub(super) fn stop_at(&mut self, n: usize) -> Option<usize> {
        self.mute = self.mute.saturating_sub(n);
        Some(n)
    }
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
