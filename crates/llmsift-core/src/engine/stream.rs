//! The engine's entry points: `push` (the token-id scan, the fast path for
//! a delta with no marker's first byte, the held tail joined to the next
//! delta), the content prefix of the first push, and `finish` (the held
//! tail lexed as final, queued marker ids applied, what the output's end
//! leaves open closed or cut).
//!
//! Invariants: the fast path gives what `lex` would give for the same
//! delta (it is taken only when nothing is held and no marker can start in
//! the delta); `finish` runs once and leaves nothing held.

use super::Engine;
use crate::format::compiled::Mode;
use crate::message::Delta;

impl Engine {
    pub fn push(&mut self, text: &str, ids: Option<&[u32]>, out: &mut Delta) {
        self.push_ids(ids, out);
        if self.held.is_empty() && self.hold.is_none() && !self.prompt_lost {
            // The common delta: plain text with no marker's first byte in it.
            let st = &self.fmt.states[self.state as usize];
            if st.then.is_none() && st.find_candidate(text.as_bytes()).is_none() {
                match st.mode {
                    Mode::Content if self.content_after_calls() => return,
                    Mode::Content => {
                        if self.next_index > 0 {
                            self.note_text_after_call(text);
                        }
                        return out.push_content(text);
                    }
                    Mode::Reasoning if self.set.include_reasoning => {
                        self.wrote_reasoning |= !self.priming && !text.is_empty();
                        return out.push_reasoning(text);
                    }
                    // No marker can start here: the whole delta is the
                    // kernel's (a streamed argument value, a name), as the
                    // lexer would hand it over, without searching it twice.
                    _ if self.mute == 0 => {
                        let r = self.text(text, out);
                        if !std::mem::take(&mut self.hold_toggled) && r.is_none() {
                            return;
                        }
                        // The kernel switched state or a held group toggled:
                        // the rest is lexed as `lex_run` would resume it.
                        return self.lex(&text[r.unwrap_or(text.len())..], false, out);
                    }
                    _ => {}
                }
            }
            self.lex(text, false, out);
        } else {
            self.lex_held(text, out);
        }
    }

    /// `push` without the plain-delta fast path (an engine keeping a byte
    /// ledger, `ledger.rs`): the same answer, every byte through the lexer.
    pub(super) fn push_slow(&mut self, text: &str, ids: Option<&[u32]>, out: &mut Delta) {
        self.push_ids(ids, out);
        if self.held.is_empty() {
            self.lex(text, false, out);
        } else {
            self.lex_held(text, out);
        }
    }

    /// The first push's start, and the token-id scan.
    #[inline(always)]
    fn push_ids(&mut self, ids: Option<&[u32]>, out: &mut Delta) {
        if !self.started {
            self.start(out);
        }
        // Ids only matter to a format bound to a vocabulary; an unbound one
        // keeps matching markers by text.
        if let Some(ids) = ids.filter(|_| !self.fmt.token_ids.is_empty()) {
            self.id_mode = true;
            {
                for id in ids {
                    if let Some(&t) = self.fmt.token_ids.get(id) {
                        if self.by_id(t) {
                            self.pending.push_back(t);
                        }
                    }
                }
            }
        }
    }

    /// Lexes the held tail joined to the next delta.
    fn lex_held(&mut self, text: &str, out: &mut Delta) {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        buf.push_str(&self.held);
        buf.push_str(text);
        self.held.clear();
        self.lex(&buf, false, out);
        self.scratch = buf;
    }

    /// The length of a held closer and the white space after it, when the
    /// held tail is one (a whole marker, held for its follower); else 0.
    fn held_closer(&self, held: &str) -> usize {
        use crate::format::compiled::Probe;
        let st = &self.fmt.states[self.state as usize];
        match st.probe(held.as_bytes(), |_| false) {
            Probe::Full(k) => {
                let end = st.spellings[k].0.len();
                end + held[end..].bytes().take_while(u8::is_ascii_whitespace).count()
            }
            _ => 0,
        }
    }

    /// The first push (or the finish of an empty output) emits the format's
    /// content prefix.
    pub(super) fn start(&mut self, out: &mut Delta) {
        self.started = true;
        if let Some(p) = &self.fmt.content_prefix {
            out.push_content(p);
        }
        if let Some((index, id, name)) = self.replay.take().map(|r| *r) {
            let f = out.call_fragment(index);
            f.id = Some(id);
            f.name = Some(name);
        }
    }

    pub fn finish(&mut self, out: &mut Delta) {
        if !self.started {
            self.start(out);
        }
        self.ledger_finish();
        let held = std::mem::take(&mut self.held);
        if self.fmt.calls.drop_unfinished_marker {
            // A closer held for what follows it (`markers_in_values`) ends
            // the value now; what is left is a marker the output stopped in
            // the middle of, in the state the closer led to.
            let closer = self.held_closer(&held);
            self.lex(&held[..closer], true, out);
            let rest = &held[closer..];
            let keep =
                self.fmt.states[self.state as usize].find_candidate(rest.as_bytes()).unwrap_or(rest.len());
            self.lex(&rest[..keep], true, out);
        } else {
            self.lex(&held, true, out);
        }
        // Markers whose ids came but whose text never did.
        while let Some(t) = self.pending.pop_front() {
            let st = &self.fmt.states[self.state as usize];
            if let Some(&(_, _, tr)) = st.spellings.iter().find(|s| self.fmt.canon(s.1) == t) {
                self.apply(tr, "", out);
            }
        }
        // A bare group ending where it opened, between calls, stands; any
        // other group still held at the end never closed: it is content.
        self.hold_release_bare();
        self.hold_finish(out);
        if let Mode::Header(h) = &self.fmt.states[self.state as usize].mode {
            if h.unrouted_content {
                // A header no route took is content: its text, not the
                // marker that opened it.
                out.push_content(&std::mem::take(&mut self.hdr));
                self.hdr_raw.clear();
            }
        }
        if matches!(self.fmt.states[self.state as usize].mode, Mode::Header(_)) && !self.framed {
            // Output with no framing at all is content, as vLLM reads it,
            // its markers as written.
            out.push_content(&std::mem::take(&mut self.hdr_raw));
            self.hdr.clear();
        }
        // Only what the end of the output cuts (not a call the held tail's
        // markers ended) is lost under `[vllm.text_loss] cut_call`.
        self.finishing = true;
        match self.fmt.states[self.state as usize].mode {
            Mode::Name(style) if self.fmt.calls.commit_open_name => self.commit_name(style, out),
            Mode::ParamValue if self.holds_params() => self.abandon_param(),
            // A committed call's open parameter stays open by default: its
            // value is cut, not closed (`cut.rs`).
            Mode::ParamValue
                if self.cut_as_written() && self.call.as_ref().is_some_and(|c| c.index.is_some()) => {}
            Mode::ParamValue => self.close_param(out),
            Mode::Envelope(_) => self.env_finish(out),
            Mode::Pythonic(_) => self.py_finish(out),
            _ => {}
        }
        self.end_call(out);
        if self.cut_lost() && !self.cut_keeps_text() {
            self.section = None;
        }
        self.flush_section(out);
    }
}
