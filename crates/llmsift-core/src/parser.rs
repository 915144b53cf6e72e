//! The Parser API: one [`Parser`] per request, made by a [`ParserFactory`]
//! that holds the compiled formats of one reasoning/tool parser pair.
//!
//! The factory compiles, once, every variant a request can select: the
//! native format (`tool_choice` auto), the reasoning-only format (no tools,
//! or `none`: the calls' markup stays content), the `required` array
//! and the named-function form. A request then only picks one and builds a
//! small per-request state. `parse` is literally "push everything, then
//! finish", folded the way a client folds deltas.
//!
//! This module is the streaming layer. The request's entry points,
//! [`ParserFactory::parser`] and [`ParserFactory::parse`], are defined one
//! layer up, in `crate::whole`, which adds the held one-shot reading
//! (`vllm_one_shot`) on top: whole.rs imports this module, never the
//! reverse, and a held output reaches it only through `ReadWhole`.

use crate::engine::{Engine, NoneChoice, Policy, Settings};
use crate::format::compiled::SwitchKey;
use crate::format::response_template::{Stream, StreamSettings, Template, TemplateError};
use crate::format::StateId;
use crate::format::{compile, Format, FormatSpec};
use crate::limits::{Exceeded, LimitState, Limits};
use crate::message::{Delta, Folder, Message};
pub use crate::request::{Request, ToolChoice};
use crate::FormatError;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The compiled formats of one reasoning/tool parser pair, shared by all requests.
#[derive(Debug, Clone)]
pub struct ParserFactory {
    native: Arc<Format>,
    /// A tool format's `[[switch]]`es: the native format compiled with each
    /// switch's entry, picked per request (first match wins).
    entries: Vec<(SwitchKey, Value, Arc<Format>)>,
    plain: Arc<Format>,
    /// The tool format without the reasoning grammar, for a reasoning
    /// format whose `[vllm.one_shot] unterminated` or `partition` reads a
    /// whole output so.
    alone: Option<Arc<Format>>,
    required: Arc<Format>,
    named: Arc<Format>,
    /// The last response template a request carried, compiled (an error:
    /// it is refused, and the native formats serve the request).
    templated: Arc<Mutex<Option<TemplateCache>>>,
    /// The model's own response template, used when a request carries none.
    own: Option<Arc<Template>>,
    /// The limits every parser of this factory starts with.
    limits: Limits,
}

/// A response template and what it compiled to.
type TemplateCache = (Value, Result<Arc<Template>, TemplateError>);

const REQUIRED: &str = r#"
name = "required"
kind = "tools"
entry = "calls"
[calls]
uncommitted = "content"
[states.calls]
text = { kind = "envelope", array = true, name_keys = ["name"], args_keys = ["parameters", "arguments"], done = "content", fail = "content", empty_args = true }
[states.content]
text = "content"
"#;

// The named function's arguments: a JSON object (the call), and any text
// that is not one, or follows it, is content.
const NAMED: &str = r#"
name = "named"
kind = "tools"
entry = "args"
[calls]
uncommitted = "content"
[states.args]
text = { kind = "args", done = "content" }
[states.content]
text = "content"
"#;

impl ParserFactory {
    /// Compiles every variant for a reasoning grammar and a tool grammar.
    pub fn new(
        reasoning: Option<&FormatSpec>,
        tools: Option<&FormatSpec>,
    ) -> Result<ParserFactory, FormatError> {
        let required = FormatSpec::from_toml(REQUIRED)?;
        let named = FormatSpec::from_toml(NAMED)?;
        let mut entries = vec![];
        for sw in tools.map_or(&[][..], |t| &t.switches[..]) {
            let (key, val) = crate::format::compile::switch_key(sw)?;
            let f = crate::format::compile::compile_entry(reasoning, tools, Some(&sw.state))?;
            entries.push((key, val, Arc::new(f)));
        }
        Ok(ParserFactory {
            entries,
            native: Arc::new(compile(reasoning, tools)?),
            plain: Arc::new(compile(reasoning, None)?),
            alone: match (reasoning, tools) {
                (Some(r), Some(t))
                    if r.vllm.one_shot.unterminated.is_some() || r.vllm.one_shot.partition.is_some() =>
                {
                    Some(Arc::new(compile(None, Some(t))?))
                }
                _ => None,
            },
            required: Arc::new(compile(reasoning, Some(&required))?),
            named: Arc::new(compile(reasoning, Some(&named))?),
            templated: Arc::default(),
            own: None,
            limits: Limits::default(),
        })
    }

    /// The variants of a tool format that borrows a reasoning format's
    /// grammar (`grammar_from`) for a pair that names no reasoning parser:
    /// the grammar parses, but vLLM has no reasoning parser whose
    /// `adjust_request` would run (the special-token rule is the tool
    /// format's alone), and with `grammar_with_calls_only` a request that
    /// parses no calls (`tool_choice: "none"`) reads the output as plain text.
    pub fn borrowed(grammar: &FormatSpec, tools: &FormatSpec) -> Result<ParserFactory, FormatError> {
        let mut f = ParserFactory::new(Some(grammar), Some(tools))?;
        let unconfigured = |fmt: &Arc<Format>| {
            let mut fmt = (**fmt).clone();
            fmt.special.reasoning = None;
            Arc::new(fmt)
        };
        f.native = unconfigured(&f.native);
        f.required = unconfigured(&f.required);
        f.named = unconfigured(&f.named);
        f.plain = if tools.grammar_with_calls_only {
            Arc::new(compile(None, None)?)
        } else {
            unconfigured(&f.plain)
        };
        for e in &mut f.entries {
            e.2 = unconfigured(&e.2);
        }
        Ok(f)
    }

    /// Binds every variant's special-token markers to a vocabulary.
    pub fn bind(&self, vocab: &dyn crate::Vocab) -> Result<ParserFactory, FormatError> {
        let mut entries = vec![];
        for (k, v, f) in &self.entries {
            entries.push((k.clone(), v.clone(), Arc::new(f.bind(vocab)?)));
        }
        Ok(ParserFactory {
            entries,
            native: Arc::new(self.native.bind(vocab)?),
            plain: Arc::new(self.plain.bind(vocab)?),
            alone: self.alone.as_ref().map(|f| f.bind(vocab).map(Arc::new)).transpose()?,
            required: Arc::new(self.required.bind(vocab)?),
            named: Arc::new(self.named.bind(vocab)?),
            templated: Arc::default(),
            own: self.own.clone(),
            limits: self.limits,
        })
    }

    /// The same factory with other [`Limits`] for the parsers it makes
    /// (a single request can still change its own: [`Parser::with_limits`]).
    pub fn with_limits(mut self, limits: Limits) -> ParserFactory {
        self.limits = limits;
        self
    }

    /// The limits its parsers start with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The native compiled format.
    pub fn format(&self) -> &Arc<Format> {
        &self.native
    }

    /// This factory with a model's own response template (see
    /// [`crate::format::response_template`]): every request that carries
    /// no template of its own is parsed by it. A template Sift cannot
    /// express exactly is refused with the reason.
    pub fn with_template(&self, template: &Value) -> Result<ParserFactory, TemplateError> {
        let t = crate::format::response_template::load(template)?;
        Ok(ParserFactory { own: Some(Arc::new(t)), ..self.clone() })
    }

    /// The model's own response template, when the factory has one.
    pub fn own_template(&self) -> Option<&Arc<Template>> {
        self.own.as_ref()
    }

    /// Whether (and why not) a request's response template (format
    /// `template_init`) is used: `None` when it carries none.
    pub fn request_template(&self, req: &Request) -> Option<Result<Arc<Template>, TemplateError>> {
        let key = self.native.template_init.as_deref()?;
        let tpl = req.init_kwargs.as_ref()?.get(key).filter(|v| !v.is_null())?;
        let mut cache = self.templated.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, t)) = cache.as_ref() {
            if seen == tpl {
                return Some(t.clone());
            }
        }
        let t = crate::format::response_template::load(tpl).map(Arc::new);
        *cache = Some((tpl.clone(), t.clone()));
        Some(t)
    }

    /// The template a request is parsed by: its own (when it compiles), else the model's.
    fn template_for(&self, req: &Request) -> Option<Arc<Template>> {
        match self.request_template(req) {
            Some(Ok(t)) => Some(t),
            _ => self.own.clone(),
        }
    }

    /// The streaming parser of one request (the layer above, `crate::whole`,
    /// makes the public [`ParserFactory::parser`] of it), and the pick it
    /// was built from unless a response template parses instead.
    pub(crate) fn stream_parser(&self, req: &Request) -> (Parser, Option<Pick>) {
        let pick = self.pick(req);
        let mut p = self.build(req, &pick, None);
        if let Some(t) = self.template_for(req) {
            let set = StreamSettings {
                tools: Arc::clone(&req.tools),
                calls: self.native.has_tools() && t.has_calls() && req.tool_choice != ToolChoice::None,
                include_reasoning: req.include_reasoning,
                id_seed: req.id_seed,
            };
            p.rt = Some(Box::new(Stream::new(t, set, req.prompt.as_deref())));
            return (p, None);
        }
        (p, Some(pick))
    }

    /// The compiled variant and call switches a request selects.
    fn pick(&self, req: &Request) -> Pick {
        let has_tools = self.native.has_tools();
        let mut suppress = false;
        let mut named = None;
        let mut choice = None;
        let native = self.native.calls.native_required && has_tools && !req.choice_as_json;
        if self.native.calls.need_tools && req.tools.is_empty() && has_tools {
            suppress = true;
        }
        let fmt = match &req.tool_choice {
            ToolChoice::Named(n) if native => {
                choice = Some(n.clone());
                &self.native
            }
            ToolChoice::Required if native => &self.native,
            ToolChoice::Required => &self.required,
            ToolChoice::Named(n) => {
                named = Some(n.clone());
                &self.named
            }
            // vLLM's engine-based pairs parse the calls and drop them, text
            // and all; Sift keeps the markup as content (the reasoning-only
            // format) unless the request asks for vLLM's text loss.
            ToolChoice::None
                if has_tools
                    && match Policy::resolve(&self.native, req.vllm()).none_choice {
                        NoneChoice::Strip => true,
                        NoneChoice::StripWithoutTools => req.tools.is_empty(),
                        NoneChoice::Plain => false,
                    } =>
            {
                suppress = true;
                &self.native
            }
            ToolChoice::None => &self.plain,
            ToolChoice::Auto | ToolChoice::Unset => &self.native,
        };
        let input = self.switch_input(req);
        let calls = Arc::ptr_eq(fmt, &self.native) && has_tools && !suppress;
        let fmt = match self.entries.iter().find(|(k, v, _)| k.matches(v, input)) {
            Some((_, _, f)) if Arc::ptr_eq(fmt, &self.native) => f,
            _ => fmt,
        };
        Pick { fmt: Arc::clone(fmt), suppress, named, choice, calls }
    }

    /// The reasoning-only variant: calls off, their markup content.
    pub(crate) fn plain_pick(&self) -> Pick {
        Pick { fmt: Arc::clone(&self.plain), suppress: false, named: None, choice: None, calls: false }
    }

    /// The tool format without the reasoning grammar, calls on (`None`
    /// when the pair has no tool format or no `unterminated` or
    /// `partition` rule).
    pub(crate) fn alone_pick(&self) -> Option<Pick> {
        let fmt = Arc::clone(self.alone.as_ref()?);
        Some(Pick { fmt, suppress: false, named: None, choice: None, calls: true })
    }

    fn switch_input<'a>(&self, req: &'a Request) -> crate::format::compiled::SwitchInput<'a> {
        crate::format::compiled::SwitchInput {
            kwargs: req.chat_template_kwargs.as_ref(),
            reasoning_effort: req.reasoning_effort.as_deref(),
            init: req.init_kwargs.as_ref(),
        }
    }

    /// Builds the parser of a pick; `start` overrides the start state (the
    /// prompt is then not read).
    pub(crate) fn build(&self, req: &Request, pick: &Pick, start: Option<StateId>) -> Parser {
        let fmt = &pick.fmt;
        let input = self.switch_input(req);
        let prime = fmt.prompt_prime.then_some(req.prompt.as_deref()).flatten().filter(|_| start.is_none());
        let start = start.unwrap_or_else(|| {
            fmt.start_state(input, if prime.is_some() { None } else { req.prompt.as_deref() })
        });
        let force = fmt
            .force_content
            .as_ref()
            .filter(|(k, v, _)| req.chat_template_kwargs.as_ref().and_then(|o| o.get(k)) == Some(v))
            .map(|f| f.2);
        // Every vLLM-compatibility decision, settled here once.
        let policy = Policy::resolve(fmt, req.vllm());
        let set = Settings {
            // `force_content` may answer with the reasoning: the engine keeps
            // it, and the filter hides what is left of it.
            include_reasoning: req.include_reasoning || force.is_some(),
            suppress_calls: pick.suppress,
            // Sift's reading types values by the schemas resolved (`$ref`,
            // unions), settled here once; vLLM's reads them as written.
            tools: match (policy.engine.readings(), fmt.calls.schema_refs) {
                (crate::format::compiled::Reading::Sift, _) | (_, crate::format::spec::SchemaRefs::Both) => {
                    req.tools.typed()
                }
                (crate::format::compiled::Reading::Vllm, crate::format::spec::SchemaRefs::Sift) => {
                    Arc::clone(&req.tools)
                }
            },
            id_seed: req.id_seed,
            named: pick.named.clone(),
            choice: pick.choice.clone(),
            policy: policy.engine,
        };
        let mut engine = Engine::new(Arc::clone(fmt), start, set);
        if let Some(p) = prime {
            // The prompt's last turn, read and discarded: the output continues it.
            let from = fmt.prompt_turns.iter().filter_map(|t| p.rfind(t.as_str())).max().unwrap_or(0);
            engine.prime(&p[from..]);
        }
        // vLLM's answer drops the text around calls into no field: Sift keeps
        // it unless the request asks for vLLM's text loss.
        let post = crate::post::Post::new(
            policy.with_calls,
            fmt.recover_newlines,
            force.map(|a| (a, !req.include_reasoning)),
        )
        .map(Box::new);
        Parser { engine, finished: false, post, limits: LimitState::new(self.limits), whole: None, rt: None }
    }
}

/// What a request selected: one compiled variant and its call switches.
#[derive(Debug, Clone)]
pub(crate) struct Pick {
    pub fmt: Arc<Format>,
    suppress: bool,
    named: Option<String>,
    choice: Option<String>,
    /// The native calls are parsed (not `none`, `required` or a named function).
    pub calls: bool,
}

/// The whole output of a request whose answer is decided when it ends:
/// held here, read at the end by the layer above (`crate::whole`).
#[derive(Debug)]
pub(crate) struct Held {
    pub text: String,
    /// The token ids of every delta; `None` once a delta came without them.
    pub ids: Option<Vec<u32>>,
    pub reader: Box<dyn ReadWhole>,
}

/// What reads a held output at its end (`crate::whole::Whole`).
pub(crate) trait ReadWhole: std::fmt::Debug + Send + Sync {
    /// Parses the whole output into `out`; the limits state of the parser
    /// that ran (what it cut) and the call the output's end cut
    /// ([`Parser::cut_call`]).
    fn read(
        &self,
        text: String,
        ids: Option<Vec<u32>>,
        limits: Limits,
        out: &mut Delta,
    ) -> (LimitState, Option<usize>);

    /// `read`, and with byte accounting the ledger notes of the engine
    /// whose reading `out` is, when it read the output as written
    /// (offsets in the output); none when the text it read was changed.
    fn read_noted(
        &self,
        text: String,
        ids: Option<Vec<u32>>,
        limits: Limits,
        out: &mut Delta,
        notes: &mut Vec<(usize, usize, crate::engine::Class)>,
    ) -> (LimitState, Option<usize>);
}

impl Held {
    pub fn new(reader: Box<dyn ReadWhole>) -> Held {
        Held { text: String::new(), ids: Some(vec![]), reader }
    }

    fn push(&mut self, text: &str, ids: Option<&[u32]>) {
        self.text.push_str(text);
        match (&mut self.ids, ids) {
            (Some(all), Some(ids)) => all.extend_from_slice(ids),
            (all, _) => *all = None,
        }
    }

    /// The output held so far and its ids (a carried state: `crate::state`).
    pub fn held(&self) -> (&str, Option<&[u32]>) {
        (&self.text, self.ids.as_deref())
    }

    /// Restores what [`Held::held`] gave on another parser of the same request.
    pub fn restore(&mut self, text: String, ids: Option<Vec<u32>>) {
        self.text = text;
        self.ids = ids;
    }
}

/// The per-request streaming parser.
#[derive(Debug)]
pub struct Parser {
    pub(crate) engine: Engine,
    pub(crate) finished: bool,
    /// Message-level filters (`post.rs`), when the format asks for any.
    pub(crate) post: Option<Box<crate::post::Post>>,
    /// The limits and what they cut (`limits.rs`).
    pub(crate) limits: LimitState,
    /// The whole output, held (`vllm_one_shot` for a format whose vLLM
    /// one-shot answer depends on all of it; read at its end by `whole.rs`).
    pub(crate) whole: Option<Box<Held>>,
    /// The region machine of a response template, which then parses alone.
    pub(crate) rt: Option<Box<Stream>>,
}

/// A request's byte accounting (`Request::byte_spans`; `crate::account`),
/// kept behind the engine's ledger so a parser without it is no larger.
#[derive(Debug)]
pub(crate) struct Accounting {
    pub account: Box<crate::account::Accountant>,
    /// Under vLLM's settings: the same request's parser with the default
    /// settings, which tells vLLM's loss from the format's framing.
    pub twin: Option<Parser>,
}

impl Parser {
    /// Feeds one delta (its text, and its token ids when known) into a
    /// caller-owned [`Delta`], which is appended to, not cleared.
    pub fn push_into(&mut self, text: &str, ids: Option<&[u32]>, out: &mut Delta) {
        if self.finished {
            return;
        }
        if self.engine.keeps_ledger() {
            return self.push_accounted(text, ids, out);
        }
        if let Some(w) = &mut self.whole {
            return w.push(text, ids);
        }
        let mark = Self::mark(out);
        match (&mut self.rt, &mut self.post) {
            (Some(rt), _) => rt.push(text, out),
            (None, None) => self.engine.push(text, ids, out),
            (None, Some(p)) => {
                let mut d = p.scratch();
                self.engine.push(text, ids, &mut d);
                p.apply(d, false, out);
            }
        }
        if Self::mark(out) != mark {
            self.limit(out, mark, false);
        }
    }

    /// `push_into` with byte accounting: the engine lexes every byte (no
    /// fast path) and notes what it consumed; the accountant places the
    /// delta on the raw output (`crate::account`).
    #[inline(never)]
    fn push_accounted(&mut self, text: &str, ids: Option<&[u32]>, out: &mut Delta) {
        let mut d = Delta::default();
        if let Some(w) = &mut self.whole {
            w.push(text, ids);
        } else {
            self.push_noted(text, ids, &mut d);
        }
        if let Some(mut acc) = self.accounting() {
            let a = &mut acc.account;
            if let Some(t) = &mut acc.twin {
                a.twin_spans(&t.push(text, ids).spans);
            }
            self.engine.take_notes(&mut a.notes);
            a.delta(text, &mut d);
            self.engine.set_above(acc);
        }
        out.append(&d);
    }

    /// The request's byte accounting, taken from behind the engine's ledger
    /// (put back with `Engine::set_above`).
    fn accounting(&mut self) -> Option<Box<Accounting>> {
        self.engine.take_above().and_then(|b| b.downcast::<Accounting>().ok())
    }

    /// Starts byte accounting (before anything is pushed).
    pub(crate) fn keep_accounts(&mut self, acc: Accounting) {
        self.engine.keep_ledger();
        self.engine.set_above(Box::new(acc));
    }

    /// `push_into` for a parser whose engine keeps a byte ledger (no fast
    /// path, so every byte is noted; the whole-output reader's parsers and
    /// the accounted parser's own push).
    pub(crate) fn push_noted(&mut self, text: &str, ids: Option<&[u32]>, d: &mut Delta) {
        let mark = Self::mark(d);
        match (&mut self.rt, &mut self.post) {
            (Some(rt), _) => rt.push(text, d),
            (None, None) => self.engine.push_lexed(text, ids, d),
            (None, Some(p)) => {
                let mut s = p.scratch();
                self.engine.push_lexed(text, ids, &mut s);
                p.apply(s, false, d);
            }
        }
        if Self::mark(d) != mark {
            self.limit(d, mark, false);
        }
    }

    /// Applies the limits to what the last push or finish appended to `out`
    /// after `mark`. Out of line: a delta without call fragments (all of
    /// W1) keeps `push_into` small enough to inline.
    #[inline(never)]
    fn limit(&mut self, out: &mut Delta, mark: (usize, usize), last: bool) {
        let vouch = if self.post.is_none() { self.engine.vouched_args() } else { None };
        self.limits.apply(out, mark.0, mark.1, last, vouch);
        self.engine.forget_ended();
    }

    /// Where the caller's delta stands: its fragments, the last one's
    /// argument bytes (what the limits look at is what came after).
    #[inline(always)]
    fn mark(out: &Delta) -> (usize, usize) {
        (out.tool_calls.len(), out.tool_calls.last().map_or(0, |c| c.arguments.len()))
    }

    /// The same parser with other limits (before anything was pushed).
    pub fn with_limits(mut self, limits: Limits) -> Parser {
        self.limits = LimitState::new(limits);
        self
    }

    /// The limits this message reached so far, in the order it reached
    /// them; empty for nearly every message. Each says what became of the
    /// call (see [`Limits`]).
    pub fn exceeded(&self) -> &[Exceeded] {
        self.limits.exceeded()
    }

    /// Feeds one delta and returns what it produced.
    ///
    /// `ids` are the token ids of this delta's text: a special-token marker
    /// counts as a marker only when its id came in the same or an earlier
    /// push. A caller holding a whole output and its ids, where a marker may
    /// also be spelled in ordinary tokens (inside a value), pushes each
    /// special token with its own text so no id is taken for an earlier
    /// spelling (the conformance runner does so).
    pub fn push(&mut self, text: &str, ids: Option<&[u32]>) -> Delta {
        let mut d = Delta::default();
        self.push_into(text, ids, &mut d);
        d
    }

    /// Ends the stream: flushes held text and deferred markers, closes an
    /// open call, ends open reasoning. Later calls produce nothing.
    pub fn finish_into(&mut self, out: &mut Delta) {
        if let Some(mut acc) = self.accounting() {
            // The ordinary finish, then the accountant's last placing.
            let mut d = Delta::default();
            let a = &mut acc.account;
            match self.whole.take() {
                Some(w) if !self.finished => {
                    self.finished = true;
                    let Held { text, ids, reader } = *w;
                    let cut;
                    (self.limits, cut) =
                        reader.read_noted(text, ids, self.limits.limits(), &mut d, &mut a.notes);
                    self.engine.adopt_cut(cut);
                }
                _ => self.finish_into(&mut d),
            }
            if let Some(t) = &mut acc.twin {
                a.twin_spans(&t.finish().spans);
            }
            self.engine.take_notes(&mut a.notes);
            a.finish(&mut d);
            self.engine.set_above(acc);
            return out.append(&d);
        }
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        if let Some(w) = self.whole.take() {
            let Held { text, ids, reader } = *w;
            let cut;
            (self.limits, cut) = reader.read(text, ids, self.limits.limits(), out);
            self.engine.adopt_cut(cut);
            return;
        }
        let mark = Self::mark(out);
        match (&mut self.rt, &mut self.post) {
            (Some(rt), _) => rt.finish(out),
            (None, None) => self.engine.finish(out),
            (None, Some(p)) => {
                let mut d = p.scratch();
                self.engine.finish(&mut d);
                p.apply(d, true, out);
            }
        }
        self.limit(out, mark, true);
    }

    /// Ends the stream and returns the last delta.
    pub fn finish(&mut self) -> Delta {
        let mut d = Delta::default();
        self.finish_into(&mut d);
        d
    }

    /// One-shot parse of a whole output.
    pub fn parse(&mut self, text: &str, ids: Option<&[u32]>) -> Message {
        let mut d = Delta::default();
        self.push_into(text, ids, &mut d);
        self.finish_into(&mut d);
        let mut f = Folder::default();
        f.push_owned(d);
        f.finish()
    }

    /// The call the output's end cut, once the stream finished: its index
    /// when the message holds it as a call whose arguments are incomplete
    /// (exactly what was written, never completed: the default). A client
    /// must not execute it; the protocol layer reports `finish_reason:
    /// "length"`. `None` when no call was cut, when the cut call's text is
    /// content (`atomic_calls`), or when it was completed
    /// (`vllm_text_loss`).
    pub fn cut_call(&self) -> Option<usize> {
        self.engine.cut_call()
    }

    /// Whether this parser holds each call until it closes
    /// (`Request::atomic_calls`; carried with its state, `crate::state`).
    pub fn atomic_calls(&self) -> bool {
        self.engine.cut_policy() == crate::engine::CutArgs::Atomic
    }

    /// The prompt left open a message whose text is lost (`whole.rs`).
    pub(crate) fn prompt_lost(&self) -> bool {
        self.engine.prompt_lost()
    }

    /// What the engine saw that a one-shot decision reads (`whole.rs`).
    pub(crate) fn seen(&self) -> u8 {
        self.engine.seen()
    }

    /// Whether the output is inside reasoning right now (for a
    /// [`crate::ReasoningCounter`] started mid-stream).
    pub fn in_reasoning(&self) -> bool {
        if let Some(rt) = &self.rt {
            return rt.in_reasoning();
        }
        self.engine.in_reasoning()
    }

    /// The engine's current state name (diagnostics).
    pub fn state(&self) -> &str {
        self.engine.state_name()
    }

    /// Bytes the lexer holds back because they may begin a marker: fewer
    /// than [`crate::MAX_MARKER_LEN`], or, for a closer inside a value whose
    /// follower is not known yet (`markers_in_values`), fewer than
    /// [`crate::MAX_HELD_BYTES`], however long the stream (a response
    /// template holds pending delimiters and an open call region).
    pub fn held_bytes(&self) -> usize {
        if let Some(rt) = &self.rt {
            return rt.held_bytes();
        }
        self.engine.held_bytes()
    }
}

#[cfg(test)]
mod size {
    /// A stream's own state stays within 1 KiB (issue 12's memory target,
    /// `docs/benchmarks.md`): parts most streams never use are boxed. The
    /// opt-in byte accounting (issue 23) is one such pointer, the engine's
    /// ledger, which took the parser from 1,024 to 1,032 bytes.
    #[test]
    fn a_parser_fits_in_a_kibibyte() {
        let n = std::mem::size_of::<super::Parser>();
        assert!(n <= 1024 + 8, "Parser is {n} bytes");
    }
}
