//! The streaming engine: one per request, over a shared compiled [`Format`].
//!
//! Pipeline per `push(text, ids)`:
//! 1. token-id scan: ids of special-token markers are queued, so a marker's
//!    text counts as that marker only when its id was seen (text the model
//!    spelled with ordinary tokens stays text), and a marker whose text the
//!    detokenizer has not released yet is applied at `finish`;
//! 2. lexing with prefix holdback: the state's active spellings are searched
//!    with `memchr` on their first bytes; text up to a match goes to the
//!    state's text kernel, the match fires its transition, and a tail that is
//!    a proper prefix of an active spelling (`</thi`) is held until the next
//!    delta decides it. A delta with no candidate byte passes straight through;
//! 3. text kernels (content, reasoning, names, parameters, raw JSON, JSON
//!    envelopes) and call actions write into the caller's [`Delta`].
//!
//! Invariants: held text is shorter than the longest active spelling; bytes
//! before the held tail are never scanned again; every kernel gives the same
//! result however its input is split, so streaming equals one-shot.

mod args;
mod carry;
mod checked;
mod envelope;
mod hold;
mod prime;
mod pycalls;
mod pystr;
mod pyvalue;
mod relaxed;
mod unwrap;
mod xmlargs;

use crate::format::compiled::{BareValues, Mode, NameStyle, Uncommitted};
use crate::format::spec::CutLost;
use crate::format::{Format, StateId, TermId};
use crate::json::JsonScanner;
use crate::message::Delta;
use crate::schema::Tools;
use args::{IdGen, Params, RawJson};
use envelope::Env;
use std::collections::VecDeque;
use std::sync::Arc;

/// Longest message header kept (harmony headers are a few dozen bytes).
const MAX_HEADER: usize = 1024;

/// Per-request switches the engine obeys.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub include_reasoning: bool,
    pub suppress_calls: bool,
    pub tools: Arc<Tools>,
    pub id_seed: Option<u64>,
    /// `tool_choice` named: the whole output is this function's arguments.
    pub named: Option<String>,
    /// `tool_choice` named, written in the family's own format: with
    /// `known_names_only`, a call to another function is not a call.
    pub choice: Option<String>,
    /// Follow vLLM where it drops text into no field (see `Request`).
    pub vllm_text_loss: bool,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum ArgsW {
    None,
    Raw(RawJson),
    Params(Params),
    Relaxed(relaxed::Relaxed),
    Py(pyvalue::PyArgs),
    Xml(xmlargs::XmlArgs),
}

impl ArgsW {
    /// Writes what the arguments still need to be whole (`{}` when none came).
    fn finish(&mut self, out: &mut String) {
        match self {
            ArgsW::None => out.push_str("{}"),
            ArgsW::Raw(r) => r.finish(out),
            ArgsW::Params(p) => p.finish(out),
            ArgsW::Relaxed(r) => r.finish(out),
            ArgsW::Py(p) => p.finish(out),
            ArgsW::Xml(x) => x.finish(out),
        }
    }
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct OpenCall {
    index: Option<usize>,
    raw: String,
    name: String,
    param_key: String,
    args: ArgsW,
    /// Arguments written before the call committed.
    early_args: String,
    /// A deferred call's name and id: it is emitted whole when it closes.
    deferred: Option<(String, Option<String>)>,
    /// Closed by an `end` transition (not by the output's end or the next call).
    closed: bool,
    /// Arguments held while a wrapper parameter may still unwrap (see `unwrap`).
    held: Option<String>,
    /// A commit was refused because the name was empty: the call's text is
    /// content even where the format drops uncommitted calls, since the model
    /// did write a call-shaped thing that no field would otherwise hold.
    nameless: bool,
    /// Bytes of `raw` that are the call's opening marker (`cut_lost = "begun"`).
    opener: usize,
    /// The open parameter's arguments bytes, held until it closes
    /// (`cut_param_lost` with `vllm_text_loss`; see [`Engine::open_param`]).
    param_buf: Option<String>,
}

/// The per-request state.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Engine {
    /// Not carried: the resuming side relinks its own (`crate::state`).
    #[serde(skip, default = "crate::state::unlinked_format")]
    fmt: Arc<Format>,
    state: StateId,
    held: String,
    #[serde(skip)]
    scratch: String,
    id_mode: bool,
    pending: VecDeque<TermId>,
    call: Option<OpenCall>,
    next_index: usize,
    ids: IdGen,
    env: Option<Env>,
    /// Boxed, as the next two: most streams never use them, and a
    /// `Parser` stays within 1 KiB (`docs/benchmarks.md`).
    py: Option<Box<pycalls::PyState>>,
    /// The current message header (harmony).
    hdr: String,
    /// The header reached `MAX_HEADER` and was cut.
    hdr_full: bool,
    /// The current header as the output wrote it (its markers spelled, the
    /// prompt's bytes left out): what a header that never routes, or a
    /// route that opens a call section, turns into text.
    hdr_raw: String,
    /// Reasoning text was output (a `join` state separates what follows).
    wrote_reasoning: bool,
    /// A header was routed (the output is framed).
    framed: bool,
    /// Whether anything was pushed yet.
    started: bool,
    /// Type forced on the next parameter by the transition that opens it.
    /// The open held group (see `hold.rs`).
    hold: Option<Box<hold::Hold>>,
    /// A held group opened or ended: the lexer stops there.
    hold_toggled: bool,
    param_override: Option<crate::format::compiled::ParamForce>,
    /// Leading bytes of the held tail that came from the prompt (see `prime`).
    mute: usize,
    /// The text of a call section (its opening marker and the text it
    /// dropped) while no call in it committed: markup once a call commits,
    /// content if none does (the output ends, the section is left for a
    /// state that outputs text, or an uncommitted call's text becomes
    /// content), so a cut or broken section loses no byte. Emitted in order,
    /// before the text that follows it.
    section: Option<String>,
    /// A message a `section` route opened, before its body shows call
    /// markup (a `section` transition or a call): it becomes the section
    /// then, and is dropped with the message otherwise (vLLM's Muse parser
    /// ignores a tool message without ATEM markup).
    tentative: Option<String>,
    /// Prompt bytes are being read: they move the state, never a call's data.
    priming: bool,
    /// A call the prompt opened and the output continues: its index, id and
    /// name, sent with the first output (see `prime`).
    replay: Option<Box<(usize, String, String)>>,
    /// The raw JSON scanner of the last call that ended, until the limits
    /// layer has seen that push's fragments (see [`Engine::vouched_args`]).
    ended_raw: Option<Box<(usize, JsonScanner)>>,
    /// The output ended: what is still open is cut (see [`Engine::cut_lost`]).
    finishing: bool,
    /// The message the prompt left open is lost text until the state moves
    /// (`[prompt] lost` with `vllm_text_loss`).
    prompt_lost: bool,
    /// What the output showed that vLLM's one-shot answer decides on
    /// (`SEEN_*` bits; read by `crate::whole`).
    seen: u8,
    /// From the request: relinked on resume.
    #[serde(skip)]
    set: Settings,
}

/// Non-blank content came after a call committed.
pub(crate) const SEEN_TEXT_AFTER_CALL: u8 = 1;
/// A marker was read as the text of an open JSON string (`markers_in_strings`).
pub(crate) const SEEN_STRING_MARKER: u8 = 2;
/// Non-blank text reached a `drop` state (text outside any message).
pub(crate) const SEEN_DROPPED_TEXT: u8 = 4;

impl Engine {
    pub fn new(fmt: Arc<Format>, start: StateId, set: Settings) -> Engine {
        let ids = IdGen::new(set.id_seed);
        let mut e = Engine {
            fmt,
            state: start,
            held: String::new(),
            scratch: String::new(),
            id_mode: false,
            pending: VecDeque::new(),
            call: None,
            next_index: 0,
            ids,
            env: None,
            py: None,
            hdr: String::new(),
            hdr_full: false,
            hdr_raw: String::new(),
            wrote_reasoning: false,
            framed: false,
            started: false,
            param_override: None,
            hold: None,
            hold_toggled: false,
            mute: 0,
            section: None,
            tentative: None,
            priming: false,
            replay: None,
            ended_raw: None,
            finishing: false,
            seen: 0,
            prompt_lost: false,
            set,
        };
        let mut sink = Delta::default();
        e.enter(start, &mut sink);
        e
    }

    /// Whether text now goes to reasoning.
    pub fn in_reasoning(&self) -> bool {
        matches!(self.fmt.states[self.state as usize].mode, Mode::Reasoning)
    }

    /// The prompt left a message open that is lost text (`[prompt] lost`).
    pub fn prompt_lost(&self) -> bool {
        self.prompt_lost
    }

    /// Content after a call: non-blank text is what vLLM's one-shot
    /// `text_after_calls` decision reads.
    fn note_text_after_call(&mut self, s: &str) {
        if self.seen & SEEN_TEXT_AFTER_CALL == 0 && !s.trim().is_empty() {
            self.seen |= SEEN_TEXT_AFTER_CALL;
        }
    }

    /// What the output showed so far (`SEEN_*` bits).
    pub fn seen(&self) -> u8 {
        self.seen
    }

    /// Bytes held back as a possible marker's start.
    pub fn held_bytes(&self) -> usize {
        self.held.len()
    }

    /// A call whose `arguments` fragments in the caller's delta are exactly
    /// the bytes its raw JSON writer marked safe (committed, written
    /// straight to the caller: not held, deferred, suppressed or retyped),
    /// with that writer's scanner. The limits layer takes the scanner's
    /// state instead of scanning the same bytes a second time; it checks the
    /// byte count itself, so a fragment with anything more (the repair of a
    /// cut value) is scanned as before.
    pub fn vouched_args(&self) -> Option<(usize, &JsonScanner)> {
        match &self.call {
            Some(c) => match &c.args {
                ArgsW::Raw(r) => self.vouches(c).map(|i| (i, r.scanner())),
                _ => None,
            },
            None => self.ended_raw.as_deref().map(|(i, s)| (*i, s)),
        }
    }

    /// The limits layer has seen the fragments of the call that ended.
    pub fn forget_ended(&mut self) {
        if self.ended_raw.is_some() {
            self.ended_raw = None;
        }
    }

    /// The index of call `c` when its fragments are its writer's bytes only.
    fn vouches(&self, c: &OpenCall) -> Option<usize> {
        let direct = matches!(c.args, ArgsW::Raw(_))
            && c.held.is_none()
            && c.deferred.is_none()
            && self.hold.is_none()
            && !self.set.suppress_calls;
        c.index.filter(|_| direct)
    }

    /// The current state's name (for diagnostics and tests).
    pub fn state_name(&self) -> &str {
        &self.fmt.states[self.state as usize].name
    }

    pub fn push(&mut self, text: &str, ids: Option<&[u32]>, out: &mut Delta) {
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
                        self.pending.push_back(t);
                    }
                }
            }
        }
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
            let mut buf = std::mem::take(&mut self.scratch);
            buf.clear();
            buf.push_str(&self.held);
            buf.push_str(text);
            self.held.clear();
            self.lex(&buf, false, out);
            self.scratch = buf;
        }
    }

    /// The first push (or the finish of an empty output) emits the format's
    /// content prefix.
    fn start(&mut self, out: &mut Delta) {
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
        let held = std::mem::take(&mut self.held);
        if self.fmt.calls.drop_unfinished_marker {
            // The held tail is a marker the output stopped in the middle of.
            let keep =
                self.fmt.states[self.state as usize].find_candidate(held.as_bytes()).unwrap_or(held.len());
            self.lex(&held[..keep], true, out);
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
        // markers ended) is lost under `cut_lost`.
        self.finishing = true;
        match self.fmt.states[self.state as usize].mode {
            Mode::Name(style) if self.fmt.calls.commit_open_name => self.commit_name(style, out),
            Mode::ParamValue if self.holds_params() => self.abandon_param(),
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

    /// The output's end cut a call (or its section) whose text vLLM's one-shot
    /// answer puts in no field, and the request asks for that answer
    /// (`calls.cut_lost` with `vllm_text_loss`).
    fn cut_lost(&self) -> bool {
        self.finishing && self.set.vllm_text_loss && self.fmt.calls.cut_lost.is_some()
    }

    /// [`Engine::cut_lost`] for the uncommitted call `c`: a call with no
    /// readable name stays content (vLLM answers a call named "" there, and
    /// a call always has a name in Sift), and under `begun` so does a call
    /// that is its opening marker alone.
    fn cut_drops(&self, c: &OpenCall) -> bool {
        self.cut_lost()
            && !c.nameless
            && !self.cut_keeps_text()
            && (self.fmt.calls.cut_lost != Some(CutLost::Begun) || c.raw.len() > c.opener)
    }

    /// The output's end cut a call whose name is known: vLLM's engine pairs
    /// answer it as a call (`cut_lost = "uncommitted"`, `"begun"` or `"named"`).
    fn cut_names_call(&self) -> bool {
        self.cut_lost()
            && matches!(self.fmt.calls.cut_lost, Some(CutLost::Uncommitted | CutLost::Begun | CutLost::Named))
    }

    /// A cut call's text is not lost: taken back as content (`content`) or
    /// kept as Sift keeps it (`named`, a legacy reasoning pair).
    fn cut_keeps_text(&self) -> bool {
        matches!(self.fmt.calls.cut_lost, Some(CutLost::Content | CutLost::Named))
    }

    /// A cut call is taken back as content rather than lost (`cut_lost =
    /// "content"`: vLLM's legacy parsers answer the raw output when a
    /// call's JSON does not parse).
    fn cut_to_content(&self) -> bool {
        self.fmt.calls.cut_lost == Some(CutLost::Content)
    }

    /// Parameters are held until they close, since the end of the output may
    /// still take an open one back (`cut_param_lost` with `vllm_text_loss`).
    fn holds_params(&self) -> bool {
        self.set.vllm_text_loss && self.fmt.calls.cut_param_lost
    }

    /// The output's end cut the open parameter: its held bytes and the
    /// writer's record of it go, the call stays.
    fn abandon_param(&mut self) {
        if let Some(c) = &mut self.call {
            if c.param_buf.take().is_some() {
                if let ArgsW::Params(p) = &mut c.args {
                    p.abandon();
                }
            }
        }
    }

    /// The open parameter closed: its held bytes go where the call's go.
    fn flush_param(&mut self, out: &mut Delta) {
        let Some(b) = self.call.as_mut().and_then(|c| c.param_buf.take()) else { return };
        if !b.is_empty() {
            self.with_args(out, |_, o| o.push_str(&b));
        }
    }

    /// Calls are held until they end, since the end of the output may still
    /// take them back (`cut_lost = "unclosed"` with `vllm_text_loss`).
    fn defer_for_loss(&self) -> bool {
        self.set.vllm_text_loss
            && matches!(self.fmt.calls.cut_lost, Some(CutLost::Unclosed | CutLost::Content))
    }

    /// One lexing run over `s`. `Some(n)`: a held group opened or ended
    /// after `n` bytes; the caller ([`Engine::lex`]) resumes from there.
    fn lex_run(&mut self, s: &str, at_end: bool, out: &mut Delta) -> Option<usize> {
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
            let Some((p, full, partial)) = look else {
                let r = self.text_span(s, text_start, s.len(), out);
                if std::mem::take(&mut self.hold_toggled) {
                    return self.stop_at(r.map_or(s.len(), |u| text_start + u));
                }
                if let Some(used) = r {
                    text_start += used;
                    pos = text_start;
                    continue;
                }
                self.mute = 0;
                return None;
            };
            if let Some((len, t, tr, token)) = full {
                let r = self.text_span(s, text_start, p, out);
                if std::mem::take(&mut self.hold_toggled) {
                    return self.stop_at(r.map_or(p, |u| text_start + u));
                }
                if let Some(used) = r {
                    text_start += used;
                    pos = text_start;
                    continue;
                }
                if self.marker_is_string_text() {
                    // The string's text (`markers_in_strings = "text"`): the
                    // kernel gets its bytes with the text after it, and the
                    // search goes on from its next byte.
                    self.seen |= SEEN_STRING_MARKER;
                    if self.id_mode && token {
                        let t = self.fmt.canon(t);
                        if let Some(j) = self.pending.iter().position(|x| *x == t) {
                            self.pending.remove(j);
                        }
                    }
                    text_start = p;
                    pos = p + 1;
                    continue;
                }
                // A reprocessed marker is read again in the next state: its
                // id stays queued for that reading.
                if self.id_mode && token && !tr.reprocess {
                    let t = self.fmt.canon(t);
                    if let Some(j) = self.pending.iter().position(|x| *x == t) {
                        self.pending.remove(j);
                    }
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
                        if self.id_mode && token {
                            let t = self.fmt.canon(t);
                            if let Some(j) = self.pending.iter().position(|x| *x == t) {
                                self.pending.remove(j);
                            }
                        }
                        let r = self.text_span(s, p, end, out);
                        if std::mem::take(&mut self.hold_toggled) {
                            return self.stop_at(r.map_or(end, |u| p + u));
                        }
                        if let Some(used) = r {
                            text_start = p + used;
                            pos = text_start;
                            continue;
                        }
                        pos = end;
                        text_start = end;
                    }
                }
            } else if partial && !at_end {
                let r = self.text_span(s, text_start, p, out);
                if std::mem::take(&mut self.hold_toggled) {
                    return self.stop_at(r.map_or(p, |u| text_start + u));
                }
                if let Some(used) = r {
                    text_start += used;
                    pos = text_start;
                    continue;
                }
                self.held.push_str(&s[p..]);
                self.mute = self.mute.saturating_sub(p);
                return None;
            } else {
                pos = p + 1;
            }
        }
    }

    /// Whether a marker found now is text of an open JSON string of the
    /// call (`markers_in_strings = "text"`). The kernel has read every byte
    /// before the marker, so the answer depends on the bytes alone, never
    /// on where the deltas were cut.
    fn marker_is_string_text(&self) -> bool {
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
    fn stop_at(&mut self, n: usize) -> Option<usize> {
        self.mute = self.mute.saturating_sub(n);
        Some(n)
    }

    /// Sends text to the current state's kernel. `Some(n)`: the kernel took
    /// `n` bytes and switched state; the caller re-lexes the rest.
    fn text(&mut self, s: &str, out: &mut Delta) -> Option<usize> {
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

    fn kernel_text(&mut self, s: &str, out: &mut Delta) -> Option<usize> {
        enum K {
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
        impl K {
            /// Kernels that build calls rather than pick the state.
            fn is_data(&self) -> bool {
                matches!(
                    self,
                    K::ParamValue | K::Args | K::Envelope | K::Relaxed | K::RelaxedStr | K::Pythonic | K::Xml
                )
            }
        }
        let kind = match &self.fmt.states[self.state as usize].mode {
            Mode::Content => K::Content,
            Mode::Reasoning => K::Reasoning,
            Mode::Drop => K::Drop,
            Mode::Lost => K::Lost,
            Mode::Name(_) => K::Name,
            Mode::ParamName => K::ParamName,
            Mode::ParamValue => K::ParamValue,
            Mode::Args(_) => K::Args,
            Mode::Envelope(_) => K::Envelope,
            Mode::Relaxed(_) => K::Relaxed,
            Mode::RelaxedStr => K::RelaxedStr,
            Mode::Pythonic(_) => K::Pythonic,
            Mode::Header(_) => K::Header,
            Mode::Blank => K::Blank,
            Mode::Xml(_) => K::Xml,
        };
        if self.priming && kind.is_data() {
            // A call's arguments (or a whole call) in the prompt are history,
            // not output: they neither open a call nor feed one.
            return None;
        }
        match kind {
            K::Content if self.content_after_calls() => {}
            K::Content | K::Reasoning if self.prompt_lost => self.record(s),
            K::Content => {
                if self.next_index > 0 {
                    self.note_text_after_call(s);
                }
                out.push_content(s)
            }
            K::Reasoning => {
                if self.set.include_reasoning {
                    self.wrote_reasoning |= !self.priming && !s.is_empty();
                    out.push_reasoning(s)
                }
            }
            K::Drop => {
                if !self.priming && self.seen & SEEN_DROPPED_TEXT == 0 && !s.trim().is_empty() {
                    self.seen |= SEEN_DROPPED_TEXT;
                }
                self.record(s)
            }
            // Kept as content: vLLM's answer would put it in no field.
            K::Lost if self.set.vllm_text_loss => self.record(s),
            K::Lost => out.push_content(s),
            K::Blank => {
                if let Some(i) = self.blank_text(s) {
                    return Some(i);
                }
                self.record(s);
            }
            K::Name | K::ParamName => {
                self.record(s);
                if let Some(c) = &mut self.call {
                    if matches!(kind, K::Name) {
                        c.name.push_str(s)
                    } else {
                        c.param_key.push_str(s)
                    }
                }
            }
            K::ParamValue => {
                self.record(s);
                self.with_args(out, |a, o| {
                    if let ArgsW::Params(p) = a {
                        p.text(s, o)
                    }
                });
            }
            K::Args => {
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
            }
            K::Relaxed => {
                self.record(s);
                self.with_args(out, |a, o| {
                    if let ArgsW::Relaxed(r) = a {
                        r.text(s, o)
                    }
                });
            }
            K::RelaxedStr => {
                self.record(s);
                self.with_args(out, |a, o| {
                    if let ArgsW::Relaxed(r) = a {
                        r.str_text(s, o)
                    }
                });
            }
            K::Xml => {
                self.record(s);
                self.with_args(out, |a, _| {
                    if let ArgsW::Xml(x) = a {
                        x.text(s)
                    }
                });
            }
            K::Header => {
                self.record(s);
                // Headers are short. Before any header was routed, a runaway
                // one is no header: what the output wrote is content (vLLM
                // reads unframed output as content); later it is cut, never
                // grown without bound.
                if self.hdr_full {
                    // Cut: nothing more joins this header.
                } else if self.hdr.len() + s.len() <= MAX_HEADER {
                    self.hdr.push_str(s);
                    if !self.priming {
                        self.hdr_raw.push_str(s);
                    }
                } else if (!self.framed || self.unrouted_content()) && !self.priming {
                    // It turns content at its MAX_HEADER-th byte (whole
                    // characters), wherever the deltas were cut; the rest is
                    // read again in the content state (fuzz: the switch point
                    // used to be the end of the delta).
                    let mut n = MAX_HEADER.saturating_sub(self.hdr.len());
                    while !s.is_char_boundary(n) {
                        n -= 1;
                    }
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
                    // The first MAX_HEADER bytes (whole characters) and no
                    // more, however the header was cut into deltas (fuzz:
                    // a smaller later delta used to fit where a larger one
                    // had not).
                    let mut n = MAX_HEADER.saturating_sub(self.hdr.len());
                    while !s.is_char_boundary(n) {
                        n -= 1;
                    }
                    self.hdr.push_str(&s[..n]);
                    if !self.priming {
                        self.hdr_raw.push_str(&s[..n]);
                    }
                    self.hdr_full = true;
                }
            }
            K::Pythonic => {
                let fmt = Arc::clone(&self.fmt);
                if let Mode::Pythonic(cfg) = &fmt.states[self.state as usize].mode {
                    return self.py_text(cfg, s, out);
                }
            }
            K::Envelope => {
                let fmt = Arc::clone(&self.fmt);
                if let Mode::Envelope(cfg) = &fmt.states[self.state as usize].mode {
                    return self.env_text(cfg, s, out);
                }
            }
        }
        None
    }

    fn record(&mut self, s: &str) {
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
    fn uncommitted_text(&mut self, raw: &str, out: &mut Delta) {
        let open = self.section.is_some();
        self.flush_section(out);
        out.push_content(raw);
        if open {
            self.section = Some(String::new());
        }
    }

    /// The open section's text as content (no call in it committed).
    fn flush_section(&mut self, out: &mut Delta) {
        if let Some(sec) = self.section.take() {
            out.push_content(&sec);
        }
    }

    /// Runs `f` on the open call's argument writer with the right output:
    /// the delta when the call is committed, its early buffer otherwise.
    fn with_args(&mut self, out: &mut Delta, f: impl FnOnce(&mut ArgsW, &mut String)) {
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

    fn apply(&mut self, tr: crate::format::compiled::Trans, marker: &str, out: &mut Delta) {
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
        if tr.end {
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
    fn route(
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
        let Some(r) = h
            .routes
            .iter()
            .find(|r| (has_tools || !(r.call || r.tools)) && hdr.contains(r.contains.as_str()))
        else {
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
    fn unrouted_content(&self) -> bool {
        matches!(&self.fmt.states[self.state as usize].mode, Mode::Header(h) if h.unrouted_content)
    }

    fn enter(&mut self, s: StateId, out: &mut Delta) {
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

    fn exit(&mut self, s: StateId, out: &mut Delta) {
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

    fn begin_call(&mut self) {
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

    fn commit_name(&mut self, style: NameStyle, out: &mut Delta) {
        let Some(c) = &mut self.call else { return };
        if c.index.is_some() {
            return;
        }
        let text = c.name.trim();
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

    /// Gives the open call its index and emits its first fragment.
    fn commit(&mut self, name: String, id: Option<String>, out: &mut Delta) {
        // A tool call always has a name: one that never got one stays
        // uncommitted, whatever the format or the cut (see `end_call`).
        if name.trim().is_empty() {
            if let Some(c) = &mut self.call {
                c.nameless = true;
            }
            return;
        }
        let known_only =
            self.fmt.calls.known_names_only || (self.fmt.calls.unknown_names_lost && self.set.vllm_text_loss);
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
    fn end_call(&mut self, out: &mut Delta) {
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
                // Held only for `cut_lost`: whole as a streamed call would be,
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

    fn open_param(&mut self, out: &mut Delta) {
        let tools = Arc::clone(&self.set.tools);
        let Some(c) = &mut self.call else { return };
        if c.index.is_none() && c.deferred.is_none() {
            return;
        }
        let first = matches!(c.args, ArgsW::None);
        if first {
            let mut p = Params::default();
            p.verbatim_keys = self.fmt.calls.verbatim_keys;
            p.verbatim_values = self.fmt.calls.verbatim_values;
            p.trim_values = self.fmt.calls.trim_values;
            c.args = ArgsW::Params(p);
        }
        let key = std::mem::take(&mut c.param_key);
        let lookup = if self.fmt.calls.verbatim_keys { key.as_str() } else { key.trim() };
        if first && unwrap::holds(&self.fmt.calls.unwrap_params, &tools, &c.name, lookup) {
            c.held = Some(String::new());
        } else if let Some(h) = c.held.take() {
            // A second parameter: the wrapper does not unwrap; release what was held.
            if let (Some(i), false) = (c.index, self.set.suppress_calls) {
                out.call_fragment(i).arguments.push_str(&h);
            }
        }
        if self.holds_params() {
            // What an earlier parameter still holds goes out with it (it
            // ended without its closing marker: the next one opened).
            self.with_args(out, |a, o| {
                if let ArgsW::Params(p) = a {
                    p.close(o)
                }
            });
            self.flush_param(out);
            if let Some(c) = &mut self.call {
                c.param_buf = Some(String::new());
            }
        }
        let Some(c) = &mut self.call else { return };
        use crate::format::compiled::ParamForce;
        let engine =
            args::engine_open(&tools, &c.name, lookup, self.param_override, self.fmt.calls.coerce_values);
        if let Some(how) = engine {
            self.param_override = None;
            self.with_args(out, |a, o| {
                if let ArgsW::Params(p) = a {
                    p.open_engine(&key, how, o)
                }
            });
            return;
        }
        let (ty, literal) = match self.param_override.take() {
            Some(ParamForce::Type(t)) => (t, false),
            Some(ParamForce::Admitted(_)) => (crate::schema::ParamType::Json, false),
            Some(ParamForce::Declared) => match tools.declared_type(&c.name, lookup) {
                Some(t) => (t, !tools.nullable(&c.name, lookup)),
                None => (crate::schema::ParamType::Json, false),
            },
            None if self.fmt.calls.union_string && tools.admits_string(&c.name, lookup) => {
                (crate::schema::ParamType::String, false)
            }
            None => (tools.param_type(&c.name, lookup), false),
        };
        self.with_args(out, |a, o| {
            if let ArgsW::Params(p) = a {
                p.open_as(&key, ty, literal, o)
            }
        });
    }

    fn close_param(&mut self, out: &mut Delta) {
        self.with_args(out, |a, o| {
            if let ArgsW::Params(p) = a {
                p.close(o)
            }
        });
        self.flush_param(out);
    }
}
