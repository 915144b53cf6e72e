//! Held call groups: a group of calls that counts only as a whole
//! (K2 Horizon's `<ifm|tool_calls>…</ifm|tool_calls>`, which vLLM parses
//! all-or-nothing).
//!
//! A `hold` transition opens the group: from then on everything the kernels
//! write goes to a private buffer, and the raw text of the group (markers
//! included) is kept. A `release` transition closes it: when at least one
//! call committed and nothing failed, the buffer (the calls) is emitted.
//! Otherwise, and on a `fail` transition, non-blank text in a `blank` state,
//! a call that never commits, a call whose JSON arguments are not whole, or
//! the end of the output with the group still open, the group fails: its
//! raw text is emitted as content, its calls are forgotten, and the output
//! continues in the state the `hold` named (or the `fail` transition's).
//!
//! A state with `hold` opens a bare group when entered (no marker: OLMo 3's
//! call lines, which vLLM reads only when they are all the output holds).
//! It is released when the output ends in that state with no call open, and
//! fails when the state is left (the output continues in the state entered)
//! or the output ends inside a call.
//!
//! Invariants: the lexer stops at every hold toggle, so each run of bytes
//! goes wholly to the buffer or wholly to the caller, and the raw text is
//! exactly the bytes consumed while held: emitted as content on failure it
//! is byte-identical to the input. Decisions depend only on bytes seen, so
//! streaming equals one-shot; memory while held is the group's text.

use super::frames::{End, Hold};
use super::{ArgsW, Engine};
use crate::format::StateId;
use crate::message::Delta;

impl Engine {
    /// Lexes `s`, sending output to the hold buffer while a group is held
    /// and to `out` otherwise; resolves a group when it ends.
    pub(super) fn lex(&mut self, s: &str, at_end: bool, out: &mut Delta) {
        let mut from = 0;
        loop {
            let t = &s[from..];
            if let Some(l) = &mut self.ledger {
                l.at(from);
            }
            let Some(mut h) = self.hold.take() else {
                self.hold_toggled = false;
                // Stops only where a `hold` opened a group.
                match self.lex_run(t, at_end, out) {
                    Some(n) => {
                        from += n;
                        continue;
                    }
                    None => return,
                }
            };
            let mut buf = std::mem::take(&mut h.buf);
            self.hold = Some(h);
            let held0 = self.held.len();
            self.hold_toggled = false;
            let stop = self.lex_run(t, at_end, &mut buf);
            let used = stop.unwrap_or(t.len() - (self.held.len() - held0));
            let Some(mut h) = self.hold.take() else { return };
            h.raw.push_str(&t[..used]);
            h.buf = buf;
            match h.end {
                End::Open => self.hold = Some(h),
                End::Released => {
                    let calls = self.next_index - h.first_index;
                    if calls == 0 {
                        self.hold_resolve_fail(*h, out);
                    } else {
                        out.append(&h.buf);
                    }
                }
                End::Failed => self.hold_resolve_fail(*h, out),
            }
            match stop {
                Some(_) => from += used,
                None => return,
            }
        }
    }

    /// A `hold` transition: opens a group (a group already open stays).
    pub(super) fn hold_open(&mut self, fail_to: StateId, marker: &str) {
        if self.hold.is_some() {
            return;
        }
        let mut raw = String::new();
        raw.push_str(marker);
        self.hold = Some(Box::new(Hold {
            buf: Delta::default(),
            raw,
            fail_to,
            first_index: self.next_index,
            end: End::Open,
            opener: None,
        }));
        self.hold_toggled = true;
    }

    /// Entering state `s`: a state with `hold` opens a bare group; leaving
    /// the state that opened one fails it, the output continuing in `s`.
    pub(super) fn hold_enter(&mut self, s: StateId) {
        if let Some(h) = &self.hold {
            if h.opener.is_some_and(|o| o != s) {
                self.hold_fail(Some(s));
            }
            return;
        }
        if self.priming {
            return;
        }
        if let Some(fail_to) = self.fmt.states[s as usize].hold {
            self.hold_open(fail_to, "");
            if let Some(h) = &mut self.hold {
                h.opener = Some(s);
            }
        }
    }

    /// The end of the output in the state that opened a bare group, with
    /// no call open: the group's calls stand.
    pub(super) fn hold_release_bare(&mut self) {
        let ends_here =
            self.hold.as_ref().is_some_and(|h| h.opener == Some(self.state) && h.end == End::Open);
        if ends_here && self.call.is_none() {
            self.hold_release();
        }
    }

    /// A `release` transition.
    pub(super) fn hold_release(&mut self) {
        if let Some(h) = &mut self.hold {
            if h.end == End::Open {
                h.end = End::Released;
                self.hold_toggled = true;
            }
        }
    }

    /// Fails the held group; `to` overrides where the output continues.
    pub(super) fn hold_fail(&mut self, to: Option<StateId>) {
        if let Some(h) = &mut self.hold {
            if h.end != End::Failed {
                h.end = End::Failed;
                if let Some(t) = to {
                    h.fail_to = t;
                }
                self.hold_toggled = true;
            }
        }
    }

    /// Whether a group is held and still open.
    pub(super) fn holding(&self) -> bool {
        self.hold.as_ref().is_some_and(|h| h.end == End::Open)
    }

    /// The group failed: its text is content, its calls are forgotten, and
    /// the output continues in its fail state.
    fn hold_resolve_fail(&mut self, h: Hold, out: &mut Delta) {
        out.push_content(&h.raw);
        self.next_index = h.first_index;
        self.call = None;
        self.env = None;
        self.py = None;
        self.param_override = None;
        self.state = h.fail_to;
        let mut sink = Delta::default();
        self.enter(h.fail_to, &mut sink);
    }

    /// The end of output with a group still open: it fails, taking the held
    /// tail with it (a group released by a marker known only by its id is
    /// emitted).
    pub(super) fn hold_finish(&mut self, out: &mut Delta) {
        if let Some(mut h) = self.hold.take() {
            h.raw.push_str(&std::mem::take(&mut self.held));
            if h.end == End::Released && self.next_index > h.first_index {
                out.append(&h.buf);
                return;
            }
            self.hold_resolve_fail(*h, out);
        }
    }

    /// `blank` text: white space is fine; anything else fails the group
    /// (outside a group it is dropped). `Some(n)`: the group failed at byte
    /// `n`, which the lexer reads again in the fail state.
    pub(super) fn blank_text(&mut self, s: &str) -> Option<usize> {
        let i = s.bytes().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
        if !self.holding() {
            return None;
        }
        self.hold_fail(None);
        Some(i)
    }

    /// Ends the open call of a held group: a call that never committed,
    /// whose JSON arguments are not whole, or (with `unique_params`) that
    /// names a parameter twice, fails the group; a whole one gets
    /// its arguments finished (and typed by schema with `schema_args`).
    pub(super) fn hold_end_call(&mut self, out: &mut Delta) {
        let Some(c) = self.call.take() else { return };
        let Some(index) = c.index else {
            self.hold_fail(None);
            return;
        };
        let mut c = c;
        if let ArgsW::Raw(r) = &c.args {
            if !r.complete() {
                self.hold_fail(None);
                return;
            }
        }
        if self.set.suppress_calls {
            return;
        }
        let mut tail = String::new();
        c.args.finish(&mut tail);
        let f = out.call_fragment(index);
        f.arguments.push_str(&tail);
        if self.fmt.calls.unique_params
            && matches!(c.args, ArgsW::Params(_))
            && crate::coerce::has_duplicate_keys(&f.arguments) != Some(false)
        {
            self.hold_fail(None);
            return;
        }
        if self.fmt.calls.schema_args {
            let typed = crate::coerce::type_json_args(&self.set.tools, &c.name, &f.arguments);
            match typed {
                Some(t) => f.arguments = t,
                None => self.hold_fail(None),
            }
        }
    }
}
