//! Text kernels: where the text between markers goes in each state's mode
//! (content, reasoning, dropped or lost text, names, parameters, raw JSON
//! arguments, relaxed and XML arguments, headers, envelopes, Python calls).
//!
//! Invariants: every kernel gives the same result however its input is
//! split (streaming equals one-shot); a kernel that switches state returns
//! how many bytes it took, and the lexer re-reads the rest in the new state;
//! prompt bytes (`priming`) never reach a kernel that builds calls.

use super::args::RawJson;
use super::policy::Text;
use super::{ArgsW, Engine, MAX_HEADER, SEEN_DROPPED_TEXT};
use crate::format::compiled::Mode;
use crate::format::StateId;
use crate::message::Delta;
use std::sync::Arc;

impl Engine {
    /// Sends text to the current state's kernel. `Some(n)`: the kernel took
    /// `n` bytes and switched state; the caller re-lexes the rest.
    pub(super) fn text(&mut self, s: &str, out: &mut Delta) -> Option<usize> {
        if s.is_empty() {
            return None;
        }
        let Some(then) = self.fmt.states[self.state as usize].then else {
            return self.kernel_text(s, out);
        };
        // A `then` state only looks for its markers at the very start: the
        // first text hands over to the next state, which reads it, so the
        // switch point never depends on how the input was cut.
        self.state = then;
        self.enter(then, out);
        Some(0)
    }

    /// The current state's kernel reads `s`.
    pub(super) fn kernel_text(&mut self, s: &str, out: &mut Delta) -> Option<usize> {
        let kind = Kernel::of(&self.fmt.states[self.state as usize].mode);
        if self.priming && kind.is_data() {
            // A call's arguments (or a whole call) in the prompt are history,
            // not output: they neither open a call nor feed one.
            return None;
        }
        match kind {
            Kernel::Content if self.content_after_calls() => {}
            Kernel::Content | Kernel::Reasoning if self.prompt_lost => self.record(s),
            Kernel::Content => {
                if self.next_index > 0 {
                    self.note_text_after_call(s);
                }
                out.push_content(s)
            }
            Kernel::Reasoning => {
                if self.set.include_reasoning {
                    self.wrote_reasoning |= !self.priming && !s.is_empty();
                    out.push_reasoning(s)
                }
            }
            Kernel::Drop => {
                if !self.priming && self.seen & SEEN_DROPPED_TEXT == 0 && !s.trim().is_empty() {
                    self.seen |= SEEN_DROPPED_TEXT;
                }
                self.record(s)
            }
            // Kept as content: vLLM's answer would put it in no field.
            Kernel::Lost if self.set.policy.lost_text == Text::Lost => self.record(s),
            Kernel::Lost => out.push_content(s),
            Kernel::Blank => {
                if let Some(i) = self.blank_text(s) {
                    return Some(i);
                }
                self.record(s);
            }
            Kernel::Name | Kernel::ParamName => {
                self.record(s);
                if let Some(c) = &mut self.call {
                    if matches!(kind, Kernel::Name) {
                        c.name.push_str(s)
                    } else {
                        c.param_key.push_str(s)
                    }
                }
            }
            Kernel::ParamValue | Kernel::Relaxed | Kernel::RelaxedStr | Kernel::Xml => {
                // The open call's argument writer takes the text.
                self.record(s);
                self.with_args(out, |a, o| match (kind, a) {
                    (Kernel::ParamValue, ArgsW::Params(p)) => p.text(s, o),
                    (Kernel::Relaxed, ArgsW::Relaxed(r)) => r.text(s, o),
                    (Kernel::RelaxedStr, ArgsW::Relaxed(r)) => r.str_text(s, o),
                    (Kernel::Xml, ArgsW::Xml(x)) => x.text(s),
                    _ => {}
                });
            }
            Kernel::Args => return self.args_text(s, out),
            Kernel::Header => return self.header_text(s, out),
            Kernel::Pythonic => {
                let fmt = Arc::clone(&self.fmt);
                if let Mode::Pythonic(cfg) = &fmt.states[self.state as usize].mode {
                    return self.py_text(cfg, s, out);
                }
            }
            Kernel::Envelope => {
                let fmt = Arc::clone(&self.fmt);
                if let Mode::Envelope(cfg) = &fmt.states[self.state as usize].mode {
                    return self.env_text(cfg, s, out);
                }
            }
        }
        None
    }

    /// Raw JSON arguments (`args` states); for a named `tool_choice`, the
    /// call itself, committed on its object's `{`.
    fn args_text(&mut self, s: &str, out: &mut Delta) -> Option<usize> {
        let done = match &self.fmt.states[self.state as usize].mode {
            Mode::Args(d) => *d,
            _ => None,
        };
        if let Some(name) = self.set.named.clone() {
            if self.call.is_none() {
                self.begin_call();
                if let Some(c) = &mut self.call {
                    c.args = ArgsW::Raw(RawJson::default());
                }
            }
            if self.call.as_ref().is_some_and(|c| c.index.is_none()) {
                // The named function's call commits on its object's `{`;
                // output that is not an object is text (a call always
                // has JSON-object arguments).
                match s.trim_start().as_bytes().first() {
                    None => {
                        self.record(s);
                        return None;
                    }
                    Some(b'{') => self.commit(name, None, out),
                    Some(_) => {
                        if let Some(done) = done {
                            self.end_call(out);
                            self.state = done;
                            self.enter(done, out);
                            return Some(0);
                        }
                    }
                }
            }
        }
        let mut used = s.len();
        let mut closed = false;
        self.with_args(out, |a, o| {
            if let ArgsW::Raw(r) = a {
                used = r.feed(s, true, o);
                closed = r.stopped() && r.complete();
            }
        });
        let committed = self.call.as_ref().is_some_and(|c| c.index.is_some());
        if let (Some(done), true) = (done, closed && committed && used < s.len()) {
            // The value closed: what follows is the `done` state's
            // text (decided by the bytes alone, so any cut agrees).
            self.record(&s[..used]);
            self.state = done;
            self.enter(done, out);
            return Some(used);
        }
        self.record(s);
        None
    }

    /// A message header's text (harmony-style `header` states).
    fn header_text(&mut self, s: &str, out: &mut Delta) -> Option<usize> {
        self.record(s);
        // Headers are short. Before any header was routed, a runaway
        // one is no header: what the output wrote is content (vLLM
        // reads unframed output as content); later it is cut, never
        // grown without bound.
        if self.hdr_full {
            // Cut: nothing more joins this header.
            return None;
        }
        if self.hdr.len() + s.len() <= MAX_HEADER {
            self.hdr.push_str(s);
            if !self.priming {
                self.hdr_raw.push_str(s);
            }
            return None;
        }
        // The first MAX_HEADER bytes (whole characters) and no more,
        // however the header was cut into deltas (fuzz: a smaller later
        // delta used to fit where a larger one had not).
        let mut n = MAX_HEADER.saturating_sub(self.hdr.len());
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        if (!self.framed || self.unrouted_content()) && !self.priming {
            // It turns content at its MAX_HEADER-th byte, wherever the
            // deltas were cut; the rest is read again in the content state
            // (fuzz: the switch point used to be the end of the delta).
            out.push_content(&std::mem::take(&mut self.hdr_raw));
            out.push_content(&s[..n]);
            self.hdr.clear();
            self.framed = true;
            if let Some(c) = self.fmt.states.iter().position(|st| st.name == "content") {
                self.state = c as StateId;
                return Some(n);
            }
            out.push_content(&s[n..]);
        } else {
            self.hdr.push_str(&s[..n]);
            if !self.priming {
                self.hdr_raw.push_str(&s[..n]);
            }
            self.hdr_full = true;
        }
        None
    }
}

/// A state's kernel, read off its mode (so the format is not borrowed
/// while the kernel runs).
#[derive(Clone, Copy)]
enum Kernel {
    Content,
    Reasoning,
    Drop,
    Lost,
    Name,
    ParamName,
    ParamValue,
    Args,
    Envelope,
    Relaxed,
    RelaxedStr,
    Pythonic,
    Header,
    Blank,
    Xml,
}

impl Kernel {
    fn of(mode: &Mode) -> Kernel {
        match mode {
            Mode::Content => Kernel::Content,
            Mode::Reasoning => Kernel::Reasoning,
            Mode::Drop => Kernel::Drop,
            Mode::Lost => Kernel::Lost,
            Mode::Name(_) => Kernel::Name,
            Mode::ParamName => Kernel::ParamName,
            Mode::ParamValue => Kernel::ParamValue,
            Mode::Args(_) => Kernel::Args,
            Mode::Envelope(_) => Kernel::Envelope,
            Mode::Relaxed(_) => Kernel::Relaxed,
            Mode::RelaxedStr => Kernel::RelaxedStr,
            Mode::Pythonic(_) => Kernel::Pythonic,
            Mode::Header(_) => Kernel::Header,
            Mode::Blank => Kernel::Blank,
            Mode::Xml(_) => Kernel::Xml,
        }
    }

    /// Kernels that build calls rather than pick the state.
    fn is_data(self) -> bool {
        matches!(
            self,
            Kernel::ParamValue
                | Kernel::Args
                | Kernel::Envelope
                | Kernel::Relaxed
                | Kernel::RelaxedStr
                | Kernel::Pythonic
                | Kernel::Xml
        )
    }
}
