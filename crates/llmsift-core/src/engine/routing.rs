//! Transitions: applying one (the marker kept, recorded or dropped, the
//! call or section it opens or ends, a held group it opens, releases or
//! fails), header routes (harmony-style messages routed by their header),
//! and what entering and leaving a state does to the open call, the
//! section and the header.
//!
//! Invariants: `exit` and `enter` run only when a transition moves (to
//! another state, or opens or ends a call); a section left for a state
//! with output of its own and no committed call is flushed as content.

use super::args::RawJson;
use super::frames::Env;
use super::{relaxed, xmlargs, ArgsW, Engine, MAX_HEADER};
use crate::format::compiled::{BareValues, Mode};
use crate::format::StateId;
use crate::message::Delta;
use std::sync::Arc;

impl Engine {
    pub(super) fn apply(&mut self, tr: crate::format::compiled::Trans, marker: &str, out: &mut Delta) {
        let tr = if tr.route { self.route(tr, marker, out) } else { tr };
        if let Mode::Header(h) = &self.fmt.states[self.state as usize].mode {
            if h.unrouted_content && tr.to == self.state {
                // A new header begins: the unrouted one is dropped (Inkling's
                // second `<|message_model|>`).
                self.hdr.clear();
                self.hdr_raw.clear();
            }
        }
        if matches!(&self.fmt.states[self.state as usize].mode, Mode::Header(h) if !h.unrouted_content)
            && tr.to == self.state
        {
            // Markers inside a header separate its words; a full header
            // takes no more (fuzz: a space past MAX_HEADER made the cut
            // below wrap around and spin).
            if !self.hdr_full && self.hdr.len() < MAX_HEADER {
                self.hdr.push(' ');
                self.hdr_raw.push_str(marker);
            }
        }
        let from = self.state;
        if tr.keep {
            self.kernel_text(marker, out);
        }
        if tr.discard && self.call.as_ref().is_some_and(|c| c.index.is_none() && c.deferred.is_none()) {
            self.call = None;
        }
        if tr.section && self.section.is_none() && self.call.is_none() {
            self.section = Some(self.tentative.take().unwrap_or_default());
        }
        if !tr.call && !tr.reprocess {
            self.record(marker);
        }
        let moves = tr.to != from || tr.call || tr.end;
        if moves {
            self.exit(from, out);
        }
        if tr.end || tr.args_end {
            if let Some(c) = &mut self.call {
                c.closed = true;
            }
        }
        if tr.end || tr.call {
            self.end_call(out);
        }
        if tr.call {
            if let Some(t) = self.tentative.take() {
                // The message's call markup: its text so far is the section's.
                if self.section.is_none() {
                    self.section = Some(t);
                }
            }
            self.begin_call();
            if !tr.reprocess {
                self.record(marker);
                if let Some(c) = &mut self.call {
                    c.opener = c.raw.len();
                }
            }
        }
        if let Some(on) = tr.verbatim {
            self.with_args(out, |a, o| {
                if let ArgsW::Params(p) = a {
                    p.set_verbatim(on, o)
                }
            });
        }
        self.param_override = tr.param;
        self.state = tr.to;
        if moves {
            self.enter(tr.to, out);
            if matches!(self.fmt.states[tr.to as usize].mode, Mode::Header(_)) {
                self.hdr_raw.push_str(marker);
            }
        }
        if let Some(fail_to) = tr.hold {
            self.hold_open(fail_to, if tr.reprocess { "" } else { marker });
        }
        if tr.release {
            self.hold_release();
        }
        if tr.fail {
            self.hold_fail(Some(tr.to));
        }
    }

    /// Picks a header state's route; a call route opens a call to the
    /// header's recipient.
    pub(super) fn route(
        &mut self,
        tr: crate::format::compiled::Trans,
        marker: &str,
        out: &mut Delta,
    ) -> crate::format::compiled::Trans {
        let fmt = Arc::clone(&self.fmt);
        let Mode::Header(h) = &fmt.states[self.state as usize].mode else { return tr };
        let hdr = std::mem::take(&mut self.hdr);
        let raw = std::mem::take(&mut self.hdr_raw);
        self.framed = true;
        // Call routes are off unless a tool grammar is composed.
        let has_tools = fmt.has_tools;
        let readings = self.set.policy.readings();
        let builtin = || {
            // The recipient's first dot-separated part, as vLLM's
            // `is_function_recipient` reads `browser.search`.
            let to = hdr.split(h.recipient.as_str()).nth(1).unwrap_or("");
            let to = to.split(|c: char| c.is_whitespace() || c == '<').next().unwrap_or("");
            let first = to.split('.').next().unwrap_or("");
            !first.is_empty() && h.builtins.iter().any(|b| b == first)
        };
        let Some(r) = h.routes.iter().find(|r| {
            (has_tools || !(r.call || r.tools))
                && r.reading.is_none_or(|x| x == readings)
                && hdr.contains(r.contains.as_str())
                && (!r.builtin || builtin())
        }) else {
            if h.unrouted_content {
                out.push_content(&hdr);
            }
            return crate::format::compiled::Trans { route: false, ..tr };
        };
        let (to, call, section) = (r.to, r.call, r.section);
        self.tentative = None;
        if r.raw && !self.priming {
            out.push_content(&raw);
            out.push_content(marker);
        }
        if section && !self.priming && self.section.is_none() && self.call.is_none() {
            // The message is a call section from its header on, once its
            // body shows call markup (the route's marker follows, recorded).
            self.tentative = Some(raw);
        }
        if call {
            let name = hdr.split(h.recipient.as_str()).nth(1).unwrap_or("");
            let name = name.split(|c: char| c.is_whitespace() || c == '<').next().unwrap_or("");
            let name = h.strip.iter().fold(name, |n, p| n.strip_prefix(p.as_str()).unwrap_or(n));
            self.end_call(out);
            if !name.is_empty() {
                self.begin_call();
                self.commit(name.to_string(), None, out);
            }
        }
        crate::format::compiled::Trans { to, route: false, ..tr }
    }

    /// The current state is a header that is content when no route takes it.
    pub(super) fn unrouted_content(&self) -> bool {
        matches!(&self.fmt.states[self.state as usize].mode, Mode::Header(h) if h.unrouted_content)
    }

    pub(super) fn enter(&mut self, s: StateId, out: &mut Delta) {
        self.hold_enter(s);
        self.prompt_lost = false;
        let fmt = Arc::clone(&self.fmt);
        if matches!(fmt.states[s as usize].mode, Mode::Content | Mode::Lost | Mode::Reasoning) {
            // A message that never showed call markup was framing.
            self.tentative = None;
        }
        if self.section.is_some()
            && self.call.is_none()
            && matches!(fmt.states[s as usize].mode, Mode::Content | Mode::Lost | Mode::Reasoning)
        {
            // Left for a state with output of its own (content, text after
            // the section) and no call committed: the section was text.
            self.flush_section(out);
        }
        if let Some(j) = fmt.states[s as usize].join.as_deref() {
            if self.wrote_reasoning && self.set.include_reasoning && !self.priming {
                out.push_reasoning(j);
            }
        }
        match &fmt.states[s as usize].mode {
            Mode::ParamName => {
                if let Some(c) = &mut self.call {
                    c.param_key.clear();
                }
            }
            Mode::ParamValue => self.open_param(out),
            Mode::Args(_) => {
                if let Some(c) = &mut self.call {
                    if matches!(c.args, ArgsW::None) {
                        c.args = ArgsW::Raw(RawJson::default());
                    }
                    let nameless = c.index.is_none() && c.deferred.is_none() && c.name.trim().is_empty();
                    if nameless && self.fmt.calls.nameless_args {
                        self.commit(String::new(), None, out);
                    }
                }
            }
            Mode::Relaxed(values) => {
                let tools = Arc::clone(&self.set.tools);
                if let Some(c) = &mut self.call {
                    let mode = match values {
                        BareValues::Schema => relaxed::Bare::Schema,
                        BareValues::Declared if tools.has_params(&c.name) => relaxed::Bare::Schema,
                        BareValues::Declared | BareValues::Literal => relaxed::Bare::Literal,
                    };
                    if matches!(c.args, ArgsW::None) {
                        c.args = ArgsW::Relaxed(relaxed::Relaxed::new(mode, &c.name, tools));
                    }
                }
            }
            Mode::RelaxedStr => self.with_args(out, |a, o| {
                if let ArgsW::Relaxed(r) = a {
                    r.str_open(o)
                }
            }),
            Mode::Xml(cfg) => {
                let tools = Arc::clone(&self.set.tools);
                if let Some(c) = &mut self.call {
                    if matches!(c.args, ArgsW::None) {
                        c.args = ArgsW::Xml(xmlargs::XmlArgs::new(cfg, &c.name, tools));
                    }
                }
            }
            Mode::Envelope(_) => self.env = Some(Env::default()),
            Mode::Pythonic(_) => self.py = Some(Box::default()),
            Mode::Header(_) => {
                self.hdr.clear();
                self.hdr_raw.clear();
                self.hdr_full = false;
            }
            _ => {}
        }
    }

    pub(super) fn exit(&mut self, s: StateId, out: &mut Delta) {
        let fmt = Arc::clone(&self.fmt);
        match &fmt.states[s as usize].mode {
            Mode::Name(style) => self.commit_name(*style, out),
            Mode::ParamValue => self.close_param(out),
            Mode::RelaxedStr => self.with_args(out, |a, o| {
                if let ArgsW::Relaxed(r) = a {
                    r.str_close(o)
                }
            }),
            Mode::Envelope(_) => self.env_finish(out),
            Mode::Pythonic(_) => self.py_finish(out),
            _ => {}
        }
    }
}
