//! Calls: opening one, committing it (its name and id, the checks a name
//! must pass), ending it (a deferred call emitted whole or not at all, held
//! arguments typed and unwrapped), where its argument bytes go
//! (`with_args`), and what an uncommitted call's text becomes (its raw
//! text and its section's, kept as content or dropped by the format's
//! `uncommitted` policy).
//!
//! Invariants: a call is emitted only with a non-empty name; indexes count
//! up from 0 in the order calls commit; an uncommitted call's text is
//! either content, in order, or dropped as the format and the cut policy
//! say — never both.

use super::policy::UnknownNames;
use super::{checked, unwrap, ArgsW, Engine, OpenCall};
use crate::format::compiled::{NameStyle, Reading, Uncommitted};
use crate::format::spec::Entities;
use crate::message::Delta;

impl Engine {
    pub(super) fn begin_call(&mut self) {
        if let Some(l) = &mut self.ledger {
            l.begun += 1;
        }
        self.call = Some(OpenCall {
            index: None,
            raw: String::new(),
            name: String::new(),
            param_key: String::new(),
            args: ArgsW::None,
            early_args: String::new(),
            deferred: None,
            closed: false,
            held: None,
            nameless: false,
            opener: 0,
            param_buf: None,
        });
    }

    pub(super) fn commit_name(&mut self, style: NameStyle, out: &mut Delta) {
        let Some(c) = &mut self.call else { return };
        if c.index.is_some() {
            return;
        }
        let readings = self.set.policy.readings();
        let text = attr_text(self.fmt.calls.entities, readings, c.name.trim());
        let text = text.as_ref();
        let (name, id) = match style {
            NameStyle::Plain => (text.to_string(), None),
            NameStyle::Kimi => {
                let body = text.split_once('.').map_or(text, |(_, rest)| rest);
                // vLLM skips a call whose id lacks the `:IDX` suffix.
                let name = match body.rsplit_once(':') {
                    Some((n, idx)) if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) => n,
                    _ => return,
                };
                (name.to_string(), Some(text.to_string()))
            }
        };
        if name.is_empty() {
            // No name: the format's `uncommitted` policy, or content where
            // vLLM would answer a call named "" (`nameless_args`).
            if self.fmt.calls.nameless_args {
                if let Some(c) = &mut self.call {
                    c.nameless = true;
                }
            }
            return;
        }
        self.commit(name, id, out);
    }

    /// Under Sift's reading, a name that is neither a function name nor a
    /// declared tool's: the header it came from did not parse.
    pub(super) fn name_refused(&self, name: &str) -> bool {
        self.set.policy.readings() == Reading::Sift
            && !is_function_name(name)
            && !self.set.tools.names().iter().any(|n| n == name)
    }

    /// Gives the open call its index and emits its first fragment.
    pub(super) fn commit(&mut self, name: String, id: Option<String>, out: &mut Delta) {
        // A tool call always has a name: one that never got one stays
        // uncommitted, whatever the format or the cut (see `end_call`).
        if name.trim().is_empty() {
            if let Some(c) = &mut self.call {
                c.nameless = true;
            }
            return;
        }
        if self.name_refused(&name) {
            // Not a name as a header writes one (`submit"/>`, a broken
            // attribute, a sentence): the header did not parse, so the call's
            // text is content, whatever the format does with uncommitted calls.
            if let Some(c) = &mut self.call {
                c.nameless = true;
            }
            return;
        }
        let known_only = self.set.policy.unknown_names == UnknownNames::Uncommitted;
        if known_only
            && !self.fmt.calls.validate
            && !self.set.tools.is_empty()
            && !self.set.tools.names().contains(&name)
        {
            // Not a declared function: the call stays uncommitted (content or dropped).
            return;
        }
        if self.fmt.calls.known_names_only && self.set.choice.as_ref().is_some_and(|c| *c != name) {
            // Not the named tool_choice.
            return;
        }
        if self.fmt.calls.word_names && (name.is_empty() || name.chars().any(char::is_whitespace)) {
            return;
        }
        let defer = self.fmt.defer_calls || self.defer_for_loss();
        let Some(c) = &mut self.call else { return };
        if defer {
            c.name.clone_from(&name);
            c.deferred = Some((name, id));
            return;
        }
        let index = self.next_index;
        self.next_index += 1;
        c.index = Some(index);
        c.raw.clear();
        self.section = None;
        c.name = name;
        if self.set.suppress_calls {
            return;
        }
        let id = id.unwrap_or_else(|| self.ids.next());
        let f = out.call_fragment(index);
        f.id = Some(id);
        f.name = Some(c.name.clone());
        if self.fmt.calls.fix_arg_types && self.set.tools.has_params(&c.name) {
            // Typed by the schema when the call ends (`_fix_arg_types`): the
            // arguments are held until then instead of streamed.
            c.held = Some(std::mem::take(&mut c.early_args));
            return;
        }
        f.arguments.push_str(&c.early_args);
        c.early_args.clear();
    }

    /// Ends the open call. A deferred call is emitted only now, and only when
    /// its arguments are whole.
    pub(super) fn end_call(&mut self, out: &mut Delta) {
        if self.holding() {
            return self.hold_end_call(out);
        }
        let cut_lost = self.cut_lost();
        let cut_drops = self.call.as_ref().is_some_and(|c| self.cut_drops(c));
        let cut_content = cut_lost && self.cut_to_content();
        let Some(c) = &mut self.call else { return };
        if c.index.is_none() && c.deferred.is_some() {
            let mut c = self.call.take().expect("open call");
            let mut valid = match &c.args {
                // Held only for `[vllm.text_loss] cut_call`: whole as a streamed call would be,
                // unless the output's end cut it before its end marker (under
                // `content`, before its JSON arguments were whole).
                ArgsW::Relaxed(r) if !self.fmt.defer_calls && cut_content => c.closed || r.valid(),
                ArgsW::Raw(r) if !self.fmt.defer_calls && cut_content => c.closed || r.complete(),
                _ if !self.fmt.defer_calls => !cut_lost || c.closed,
                ArgsW::Relaxed(r) => r.valid(),
                ArgsW::Raw(r) => r.complete(),
                _ => true,
            };
            if self.fmt.calls.need_end && !c.closed {
                valid = false;
            }
            let mut checked = None;
            if valid && self.fmt.calls.validate {
                let mut args = std::mem::take(&mut c.early_args);
                c.args.finish(&mut args);
                let name = c.deferred.as_ref().map_or("", |d| d.0.as_str());
                checked = checked::check(&self.fmt.calls, &self.set.tools, name, &args);
                valid = checked.is_some();
            }
            if !valid || self.set.suppress_calls {
                if !valid && ((self.fmt.uncommitted == Uncommitted::Content && !cut_drops) || cut_content) {
                    self.uncommitted_text(&c.raw, out);
                } else {
                    self.section = None;
                }
                return;
            }
            self.section = None;
            let (name, id) = c.deferred.take().expect("deferred");
            let index = self.next_index;
            self.next_index += 1;
            let f = out.call_fragment(index);
            f.id = Some(id.unwrap_or_else(|| self.ids.next()));
            if let Some((name, args)) = checked {
                f.name = Some(name);
                f.arguments.push_str(&args);
                return;
            }
            let mut args = std::mem::take(&mut c.early_args);
            c.args.finish(&mut args);
            if c.held.is_some() {
                let tools = &self.set.tools;
                unwrap::resolve(&args, &self.fmt.calls.unwrap_params, tools, &name, &mut f.arguments);
            } else if let Some(typed) = self
                .fmt
                .calls
                .fix_arg_types
                .then(|| crate::coerce::fix_arg_types(&self.set.tools, &name, &args))
                .flatten()
            {
                f.arguments.push_str(&typed);
            } else {
                f.arguments.push_str(&args);
            }
            f.name = Some(name);
            return;
        }
        if c.index.is_none() {
            let c = self.call.take().expect("open call");
            if (self.fmt.uncommitted == Uncommitted::Content && !cut_drops) || c.nameless || cut_content {
                self.uncommitted_text(&c.raw, out);
            } else {
                self.section = None;
            }
            return;
        }
        if self.cut_as_written() && self.call.as_ref().is_some_and(|c| !c.closed) {
            // The output's end cut a committed call: its arguments stay as
            // far as they were written (issue 23), never completed.
            return self.end_cut_call(out);
        }
        self.with_args(out, |a, o| a.finish(o));
        if let Some(c) = self.call.take() {
            if let Some((i, ArgsW::Raw(r))) = self.vouches(&c).zip(Some(c.args)) {
                self.ended_raw = Some(Box::new((i, r.into_scanner())));
                return;
            }
            if let (Some(held), Some(i)) = (c.held, c.index) {
                if !self.set.suppress_calls {
                    let wrappers = &self.fmt.calls.unwrap_params;
                    let args = &mut out.call_fragment(i).arguments;
                    let fixed = self
                        .fmt
                        .calls
                        .fix_arg_types
                        .then(|| crate::coerce::fix_arg_types(&self.set.tools, &c.name, &held));
                    let held = fixed.flatten().unwrap_or(held);
                    unwrap::resolve(&held, wrappers, &self.set.tools, &c.name, args);
                }
            }
        }
    }

    /// Runs `f` on the open call's argument writer with the right output:
    /// the delta when the call is committed, its early buffer otherwise.
    pub(super) fn with_args(&mut self, out: &mut Delta, f: impl FnOnce(&mut ArgsW, &mut String)) {
        let suppress = self.set.suppress_calls;
        let Some(c) = &mut self.call else { return };
        if let Some(b) = &mut c.param_buf {
            return f(&mut c.args, b);
        }
        match c.index {
            Some(_) if c.held.is_some() => {
                if let Some(h) = &mut c.held {
                    f(&mut c.args, h)
                }
            }
            Some(i) if !suppress => {
                f(&mut c.args, &mut out.call_fragment(i).arguments);
                out.drop_empty_fragment();
            }
            Some(_) => {
                let mut sink = String::new();
                f(&mut c.args, &mut sink)
            }
            None => f(&mut c.args, &mut c.early_args),
        }
    }

    pub(super) fn record(&mut self, s: &str) {
        match (&mut self.call, &mut self.section) {
            (Some(c), _) => {
                if c.index.is_none() {
                    c.raw.push_str(s);
                }
            }
            (None, Some(sec)) => sec.push_str(s),
            (None, None) => {
                if let Some(t) = &mut self.tentative {
                    t.push_str(s)
                }
            }
        }
    }

    /// An uncommitted call's text as content, after its section's; the
    /// section goes on collecting (its close is text too, unless a later call
    /// in it commits).
    pub(super) fn uncommitted_text(&mut self, raw: &str, out: &mut Delta) {
        let open = self.section.is_some();
        self.flush_section(out);
        out.push_content(raw);
        if open {
            self.section = Some(String::new());
        }
    }

    /// The open section's text as content (no call in it committed).
    pub(super) fn flush_section(&mut self, out: &mut Delta) {
        if let Some(sec) = self.section.take() {
            out.push_content(&sec);
        }
    }

    /// Ends the committed call the output's end cut, by default: the bytes
    /// it wrote and nothing more (`cut.rs`). Arguments held for typing or
    /// unwrapping go out as held, untyped, since a cut value cannot be
    /// typed; a call that needed nothing more ends as usual.
    fn end_cut_call(&mut self, out: &mut Delta) {
        let mut cut = false;
        self.with_args(out, |a, o| cut = Engine::cut_args(a, o));
        let Some(c) = self.call.take() else { return };
        if cut && !self.set.suppress_calls && c.index.is_some() {
            // The cut call is the last one committed (`next_index - 1`).
            self.seen |= super::SEEN_CUT_CALL;
        }
        let vouch = if cut { None } else { self.vouches(&c) };
        let OpenCall { held, index, args, name, .. } = c;
        if let (Some(held), Some(i)) = (held, index) {
            if self.set.suppress_calls {
                return;
            }
            let out_args = &mut out.call_fragment(i).arguments;
            if cut {
                out_args.push_str(&held);
                return;
            }
            let fixed = self
                .fmt
                .calls
                .fix_arg_types
                .then(|| crate::coerce::fix_arg_types(&self.set.tools, &name, &held));
            let held = fixed.flatten().unwrap_or(held);
            unwrap::resolve(&held, &self.fmt.calls.unwrap_params, &self.set.tools, &name, out_args);
        } else if let (Some(i), ArgsW::Raw(r)) = (vouch, args) {
            self.ended_raw = Some(Box::new((i, r.into_scanner())));
        }
    }
}

/// A name or a parameter key as the format writes it: an attribute value's
/// entities unescaped (`entities = "xml"`), as Sift or vLLM reads them.
pub(super) fn attr_text(e: Entities, readings: Reading, text: &str) -> std::borrow::Cow<'_, str> {
    match (e, readings) {
        (Entities::None, _) => text.into(),
        (Entities::Xml, Reading::Sift) => crate::entities::unescape_xml(text),
        (Entities::Xml, Reading::Vllm) => crate::entities::unescape_vllm(text),
    }
}

/// A function name as the families' headers write one: letters and digits
/// (any script), `_`, `-`, `.` and `:` (OpenAI's `^[a-zA-Z0-9_-]+$`, widened
/// by the namespaces some families write: `functions.get_weather`,
/// `server:tool`). A declared tool's own name is read whatever it holds.
fn is_function_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}
