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
//!
//! This module owns the engine's state types; the steps live beside it:
//! `stream` (push, finish), `lex` (the lexer loop), `kernel` (text per
//! state mode), `routing` (transitions, header routes, enter and exit),
//! `calls` (begin, commit, end), `params` (XML parameters), `cut` (what the
//! output's end cuts), `ledger` and `noting` (what the lexer consumed, for byte
//! accounting), and the argument kernels (`args`, `envelope`,
//! `relaxed`, `xmlargs`, `pycalls`, …).

mod args;
mod calls;
mod carry;
mod checked;
mod cut;
mod envelope;
mod frames;
mod hold;
mod kernel;
mod ledger;
mod lex;
mod noting;
mod params;
mod policy;
mod prime;
mod pycalls;
mod pystr;
mod pyvalue;
mod relaxed;
mod routing;
mod stream;
mod unwrap;
mod xmlargs;

use crate::format::compiled::Mode;
use crate::format::{Format, StateId, TermId};
use crate::json::JsonScanner;
use crate::message::Delta;
use crate::schema::Tools;
use args::{IdGen, Params, RawJson};
use frames::{Env, Hold, PyState};
use std::collections::VecDeque;
use std::sync::Arc;

pub(crate) use ledger::Class;
use policy::EnginePolicy;
pub(crate) use policy::{Answer, CutArgs, NoneChoice, Policy, Spans, Text, Vllm};

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
    /// The request's vLLM-compatibility decisions, settled when the parser
    /// was built (`policy.rs`).
    pub policy: EnginePolicy,
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
    /// Closed by an `end` transition (not by the output's end or the next
    /// call), or its arguments whole by an `args_end` one: the output's end
    /// then ends it without a cut (`cut.rs`).
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
    #[serde(skip, default = "carry::unlinked_format")]
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
    py: Option<Box<PyState>>,
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
    hold: Option<Box<Hold>>,
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
    /// What the lexer consumed, with the request setting `byte_spans`
    /// (`ledger.rs`); not carried.
    #[serde(skip)]
    ledger: Option<Box<ledger::Ledger>>,
}

/// Non-blank content came after a call committed.
pub(crate) const SEEN_TEXT_AFTER_CALL: u8 = 1;
/// A marker was read as the text of an open JSON string (`markers_in_strings`).
pub(crate) const SEEN_STRING_MARKER: u8 = 2;
/// Non-blank text reached a `drop` state (text outside any message).
pub(crate) const SEEN_DROPPED_TEXT: u8 = 4;
/// The output's end cut the last call, its arguments left as written
/// (`cut.rs`; set only while finishing).
pub(crate) const SEEN_CUT_CALL: u8 = 8;

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
            ledger: None,
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
}
