//! The compiled format: immutable, validated, shared behind `Arc` by every
//! request that uses it. Per-token work only reads these tables.

use std::collections::HashMap;

/// Index of a state.
pub type StateId = u16;
/// Index of a terminal.
pub type TermId = u16;

/// A compiled terminal.
#[derive(Debug, Clone)]
pub(crate) struct Terminal {
    pub spellings: Vec<Box<str>>,
    /// Matched by id once bound (cleared by `bind` when the vocabulary lacks it).
    pub token: bool,
    /// Binding fails when the vocabulary lacks it (`required_token`).
    pub required: bool,
    /// Not declared a token, but every spelling is an added token of the
    /// bound vocabulary: matched by id only in the default mode (set by
    /// `bind`; vLLM's parsers match it in text).
    pub vocab: bool,
}

/// How a name's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameStyle {
    /// The trimmed text is the name.
    Plain,
    /// `functions.NAME:IDX`: the name is NAME, the trimmed text is the call id.
    Kimi,
}

/// The JSON envelope kernel's settings (`{"name": …, "arguments": …}`).
#[derive(Debug, Clone)]
pub(crate) struct EnvelopeCfg {
    pub name_keys: Vec<String>,
    pub args_keys: Vec<String>,
    pub array: bool,
    pub separator: Option<u8>,
    pub done: StateId,
    pub fail: StateId,
    pub empty_args: bool,
    pub keyed: bool,
    /// Exactly one object; what follows goes to `done`.
    pub single: bool,
    /// Text after the closed envelope goes to `done`.
    pub rest: bool,
}

/// How a relaxed body's bare values are read (`values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BareValues {
    /// JSON literals (`literal`).
    Literal,
    /// Typed by the tool schema, text where it has none (`schema`).
    Schema,
    /// As `schema` for a function whose parameters the request declares,
    /// else as `literal` (`declared`: vLLM's standalone Gemma 4 parser).
    Declared,
}

/// One header route (`RouteSpec`, compiled).
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub contains: String,
    pub to: StateId,
    /// The message is a call to the header's recipient.
    pub call: bool,
    /// Counts only when a tool grammar is composed.
    pub tools: bool,
    /// Opens a call section.
    pub section: bool,
    /// The header as written, and its routing marker, are content.
    pub raw: bool,
    /// Counts only for a built-in recipient (`HeaderCfg::builtins`).
    pub builtin: bool,
    /// Counts only under this reading.
    pub reading: Option<Reading>,
}

/// Sift's reading or vLLM's (`reading`, `ReadingSpec` compiled): which the
/// request's parser follows is settled by `engine/policy.rs`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Sift's: a call's name must read as a function name (else the call is
    /// content), attribute entities are unescaped, built-in recipients are
    /// reasoning, a plain-text `<think>` opens reasoning.
    #[default]
    Sift,
    /// vLLM's, with `vllm_text_loss`: as vLLM 0.34's parsers read them.
    Vllm,
}

/// A header state's routing.
#[derive(Debug, Clone)]
pub(crate) struct HeaderCfg {
    pub routes: Vec<Route>,
    pub recipient: String,
    pub strip: Vec<String>,
    /// A header no route takes is content (else it is dropped, and only
    /// output never framed by any header is content).
    pub unrouted_content: bool,
    /// Built-in recipients (`builtins`).
    pub builtins: Vec<String>,
}

/// The pythonic calls kernel's settings.
#[derive(Debug, Clone)]
pub(crate) struct PyCfg {
    /// Calls must sit in one `[...]` list.
    pub bracketed: bool,
    pub done: StateId,
    pub fail: StateId,
}

/// The nested XML arguments kernel's settings (see `engine/xmlargs.rs`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct XmlCfg {
    /// What introduces every tag (`]<]minimax[>[`).
    pub prefix: String,
    /// Elements nested deeper than this make the rest of the body malformed.
    pub max_depth: usize,
    /// The field holding text mixed with child elements (`$text`).
    pub mixed_text: String,
}

/// What plain text in a state becomes.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    Content,
    Reasoning,
    Drop,
    /// Text vLLM's one-shot answer drops into no field (after a call):
    /// content, unless the request asks for vLLM's text loss.
    Lost,
    Name(NameStyle),
    ParamName,
    ParamValue,
    /// Raw JSON arguments; with a state, text after the closed value (of a
    /// committed call) goes there (`{ kind = "args", done = "after" }`).
    Args(Option<StateId>),
    Envelope(Box<EnvelopeCfg>),
    /// Relaxed object notation (Gemma), and how its bare values are read.
    Relaxed(BareValues),
    /// Text between the relaxed notation's string delimiters.
    RelaxedStr,
    /// Python call syntax.
    Pythonic(Box<PyCfg>),
    /// A message header (harmony): collected, then routed.
    Header(Box<HeaderCfg>),
    /// Only white space may appear: other text fails the held group.
    Blank,
    /// Nested XML elements typed by the tool schema (MiniMax-M3).
    Xml(Box<XmlCfg>),
}

/// A transition's effect.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Trans {
    pub to: StateId,
    pub call: bool,
    pub end: bool,
    pub reprocess: bool,
    /// Overrides the schema type of the parameter this transition opens.
    pub param: Option<ParamForce>,
    /// Choose the target by the header state's routes.
    pub route: bool,
    /// The marker is also text of the state it leaves.
    pub keep: bool,
    /// Opens a held group; the state the output continues in if it fails.
    pub hold: Option<StateId>,
    /// Closes the held group.
    pub release: bool,
    /// Fails the held group.
    pub fail: bool,
    /// Switches verbatim parameter text on or off.
    pub verbatim: Option<bool>,
    /// An open call that never committed is dropped, raw text and all.
    pub discard: bool,
    /// Opens a call section (see `Engine::section`).
    pub section: bool,
    /// A closer of a value state under `markers_in_values = "follow"`: in
    /// the default mode, spelled inside a value it acts only when the
    /// target state's marker (after optional white space) or the output's
    /// end follows (see `engine/lex.rs`).
    pub follow: bool,
    /// The open call's arguments are whole from here (`args_end`).
    pub args_end: bool,
    /// Taken only under this reading; else the marker is text.
    pub reading: Option<Reading>,
}

/// How a transition types the parameter it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum ParamForce {
    /// This type, whatever the schema says.
    Type(crate::schema::ParamType),
    /// The schema's type when it declares the parameter (a declared string
    /// keeps `null` as text unless the schema admits null); JSON otherwise.
    Declared,
    /// vLLM's `schema_types.convert_value` (Muse, poolside): the text decoded
    /// (JSON, then with `true` a Python literal of the stripped text, else the
    /// text) and kept decoded unless the schema admits a string and not the
    /// decoded value's type.
    Admitted(bool),
}

/// How the lexer finds candidate marker starts in one state.
#[derive(Debug, Clone)]
pub(crate) enum Needle {
    None,
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
    Set(Box<[bool; 256]>),
}

/// A set of bytes (256 bits).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ByteSet([u64; 4]);

impl ByteSet {
    /// Every byte.
    pub const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    pub fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    #[inline]
    pub fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] >> (b & 63) & 1 == 1
    }
}

/// One compiled state.
#[derive(Debug, Clone)]
pub(crate) struct State {
    pub name: String,
    pub mode: Mode,
    /// Active spellings: (bytes, terminal, transition).
    pub spellings: Vec<(Box<[u8]>, TermId, Trans)>,
    pub needle: Needle,
    /// The bytes that may follow a candidate byte: every spelling's second
    /// byte (all bytes when a spelling is one byte long). A candidate whose
    /// next byte is not among them starts no spelling, so it is passed over
    /// without a probe (`a < b`, `<div>` inside a Hermes call's arguments).
    pub second: ByteSet,
    /// The state to continue in after the first text read here.
    pub then: Option<StateId>,
    /// Written to the reasoning on entry once reasoning was written.
    pub join: Option<String>,
    /// Entering opens a bare held group failing to this state (`hold`).
    pub hold: Option<StateId>,
}

impl State {
    /// Offset of the first byte in `hay` that may start an active spelling.
    #[inline(always)]
    pub fn find_candidate(&self, hay: &[u8]) -> Option<usize> {
        if hay.len() < 16 {
            return match &self.needle {
                Needle::None => None,
                Needle::One(a) => hay.iter().position(|b| b == a),
                Needle::Two(a, b) => hay.iter().position(|x| x == a || x == b),
                Needle::Three(a, b, c) => hay.iter().position(|x| x == a || x == b || x == c),
                Needle::Set(set) => hay.iter().position(|&b| set[b as usize]),
            };
        }
        match &self.needle {
            Needle::None => None,
            Needle::One(a) => memchr::memchr(*a, hay),
            Needle::Two(a, b) => memchr::memchr2(*a, *b, hay),
            Needle::Three(a, b, c) => memchr::memchr3(*a, *b, *c, hay),
            Needle::Set(set) => hay.iter().position(|&b| set[b as usize]),
        }
    }
}

impl State {
    /// The first position at or after `from` where an active spelling
    /// starts or may start, with its [`Probe`] (never [`Probe::No`]);
    /// `None` when none can. Candidate bytes that start no spelling (the
    /// `<` of `a < b` in a call's arguments) are passed over in this loop.
    #[inline]
    pub fn next_marker(
        &self,
        hay: &[u8],
        mut from: usize,
        skip: impl Fn(TermId) -> bool,
    ) -> Option<(usize, Probe)> {
        while let Some(i) = self.find_candidate(&hay[from..]) {
            let p = from + i;
            if hay.get(p + 1).is_some_and(|&b| !self.second.contains(b)) {
                // Neither a full match nor a proper prefix of any spelling.
                from = p + 1;
                continue;
            }
            match self.probe(&hay[p..], &skip) {
                Probe::No => from = p + 1,
                found => return Some((p, found)),
            }
        }
        None
    }
}

/// Where a spelling stands at a position.
pub(crate) enum Probe {
    /// A full match of spelling `idx`.
    Full(usize),
    /// The rest of the input is a proper prefix of some spelling; the
    /// shorter spelling that fully matches, if any, applies at the end.
    Partial(Option<usize>),
    /// No spelling starts here.
    No,
}

impl State {
    /// Checks the active spellings at the start of `rest`. `skip` rejects a
    /// full match (a token terminal whose id has not been seen).
    #[inline]
    pub fn probe(&self, rest: &[u8], skip: impl Fn(TermId) -> bool) -> Probe {
        // Leftmost-longest: the longest full match wins, and while a longer
        // spelling could still match (`` ``` `` vs `` ```json ``) the text is held.
        let mut partial = false;
        let mut best: Option<usize> = None;
        for (i, (sp, t, _)) in self.spellings.iter().enumerate() {
            if rest.len() >= sp.len() {
                if rest.starts_with(sp)
                    && !skip(*t)
                    && best.is_none_or(|b| self.spellings[b].0.len() < sp.len())
                {
                    best = Some(i);
                }
            } else if sp.starts_with(rest) {
                partial = true;
            }
        }
        match (partial, best) {
            (true, fallback) => Probe::Partial(fallback),
            (false, Some(i)) => Probe::Full(i),
            (false, None) => Probe::No,
        }
    }
}

/// What a call that never got a name becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Uncommitted {
    Drop,
    Content,
}

/// How calls are read (`[calls]`, compiled), with the pair's vLLM
/// text-loss rules for calls (`[vllm.text_loss]`), which the engine
/// follows only with `vllm_text_loss`.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallRules {
    pub commit_open_name: bool,
    pub drop_unfinished_marker: bool,
    pub native_required: bool,
    pub need_tools: bool,
    pub verbatim_keys: bool,
    pub verbatim_values: bool,
    pub coerce_values: bool,
    pub fix_arg_types: bool,
    pub trim_values: bool,
    pub known_names_only: bool,
    pub nameless_args: bool,
    pub schema_args: bool,
    pub word_names: bool,
    pub unique_params: bool,
    pub markers_in_strings: crate::format::spec::MarkersInStrings,
    pub markers_in_values: crate::format::spec::MarkersInValues,
    /// Entities in names and parameter keys (`entities`).
    pub entities: crate::format::spec::Entities,
    /// Which readings resolve schemas (`schema_refs`).
    pub schema_refs: crate::format::spec::SchemaRefs,
    pub unwrap_params: Vec<String>,
    pub need_end: bool,
    pub validate: bool,
    pub wrapper_keys: Vec<String>,
    pub alias: Vec<crate::format::spec::AliasSpec>,
    pub union_string: bool,
    /// `text_loss.unknown_names`.
    pub unknown_names_lost: bool,
    /// `text_loss.calls_when_none = "strip_without_tools"`.
    pub strip_without_tools: bool,
    /// `text_loss.cut_call`, as the pair's reasoning parser class reads it.
    pub cut_lost: Option<crate::format::spec::CutLost>,
    /// `text_loss.cut_param`.
    pub cut_param_lost: bool,
    /// `text_loss.text_around_calls`.
    pub text_around_calls_lost: bool,
}

/// Where a switch reads its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SwitchKey {
    Kwarg(String),
    Field(String),
    Init(String),
}

/// The request values start-state switches read.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SwitchInput<'a> {
    pub kwargs: Option<&'a serde_json::Value>,
    pub reasoning_effort: Option<&'a str>,
    pub init: Option<&'a serde_json::Value>,
}

/// A compiled, validated format: a reasoning grammar composed with a tool grammar.
#[derive(Debug, Clone)]
pub struct Format {
    pub(crate) name: String,
    pub(crate) terminals: Vec<Terminal>,
    pub(crate) states: Vec<State>,
    pub(crate) initial: StateId,
    /// Request switches: key, value, start state, and whether the state
    /// outranks the prompt tail (a switch's `alone` state: vLLM's reasoning
    /// parser with thinking off answers verbatim whatever the prompt says).
    pub(crate) switches: Vec<(SwitchKey, serde_json::Value, StateId, bool)>,
    pub(crate) prompt_turns: Vec<String>,
    pub(crate) prompt_enter: Vec<(String, StateId)>,
    pub(crate) prompt_prime: bool,
    /// `[vllm.text_loss] prompt_open_message`: a message the prompt opened is lost text.
    pub(crate) prompt_lost: bool,
    pub(crate) uncommitted: Uncommitted,
    pub(crate) strip_when_none: bool,
    pub(crate) defer_calls: bool,
    pub(crate) content_prefix: Option<String>,
    pub(crate) calls: CallRules,
    pub(crate) has_tools: bool,
    /// Special-token id → terminal, filled by [`Format::bind`].
    pub(crate) token_ids: HashMap<u32, TermId>,
    /// Per terminal, the terminal its token id is queued as (itself unless
    /// both grammars of a pair declare the same token: one id, two
    /// terminals). Empty until bound.
    pub(crate) token_canon: Vec<TermId>,
    pub(crate) reasoning_markers: (Option<TermId>, Option<TermId>),
    /// The `parser_init_kwargs` key of a response template that replaces this format.
    pub(crate) template_init: Option<String>,
    /// Content after an emitted call is dropped.
    pub(crate) drop_content_after_calls: bool,
    /// vLLM's `skip_special_tokens` rule for the pair (`keep_special_tokens`).
    pub(crate) special: crate::special::SpecialRule,
    /// Escaped newlines in reasoning and content are recovered (`recover_newlines`).
    pub(crate) recover_newlines: bool,
    /// `force_content`: the `chat_template_kwargs` key and value that turn
    /// it on, and whether only absent (not blank) content swaps.
    pub(crate) force_content: Option<(String, serde_json::Value, bool)>,
    /// vLLM's whole-output decisions (`[vllm.one_shot]`), followed with `vllm_one_shot`.
    pub(crate) one_shot: OneShot,
}

/// A pair's `[vllm.one_shot]` tables, compiled (see `crate::whole`).
#[derive(Debug, Clone, Default)]
pub(crate) struct OneShot {
    /// `split`: `at`'s spellings and the state `to` names.
    pub split: Option<(Vec<String>, StateId)>,
    /// The spellings of every `unterminated.ends` terminal (empty: off).
    pub unterminated: Vec<String>,
    /// `unterminated.strip`'s spellings.
    pub strip: Vec<String>,
    /// `as_content`: `text_after_calls`, `marker_in_string`, `two_calls`.
    pub text_after_calls: bool,
    pub marker_in_string: bool,
    pub single_call: bool,
    pub empty_if_in_args: Option<String>,
    /// `strip_join`: `Some(remove_after)`.
    pub strip_join: Option<Vec<String>>,
    pub prompt_open_empty: bool,
    pub between_calls_lost: bool,
    /// `later_blocks_lost`: `end`'s and `open`'s spellings.
    pub later_blocks_lost: Option<(Vec<String>, Vec<String>)>,
    /// `strict_block`, compiled.
    pub strict_block: Option<StrictBlock>,
    /// `outside_lost`: the resuming terminal's spellings.
    pub outside_lost: Option<Vec<String>>,
    pub lone_end: Option<LoneEnd>,
    pub unfinished: Option<Unfinished>,
    /// `partition`: `start`'s and `end`'s spellings.
    pub partition: Option<(Vec<String>, Vec<String>)>,
    /// `no_call_as_written`.
    pub no_call_as_written: bool,
    /// `first_block`: `open`'s and `close`'s spellings.
    pub first_block: Option<(Vec<String>, Vec<String>)>,
}

/// `strict_block`, compiled: each terminal's spellings.
#[derive(Debug, Clone)]
pub(crate) struct StrictBlock {
    pub open: Vec<String>,
    pub close: Vec<String>,
    pub balanced: Vec<(Vec<String>, Vec<String>)>,
}

/// `unfinished`, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Unfinished {
    pub suffix: String,
    pub start: Vec<String>,
    pub body: Vec<String>,
}

/// `lone_end`, compiled.
#[derive(Debug, Clone)]
pub(crate) struct LoneEnd {
    pub end: Vec<String>,
    pub unless: Vec<String>,
    pub to: StateId,
}

impl OneShot {
    /// Whether any decision needs the whole output.
    pub fn is_on(&self) -> bool {
        self.split.is_some()
            || !self.unterminated.is_empty()
            || self.text_after_calls
            || self.marker_in_string
            || self.single_call
            || self.empty_if_in_args.is_some()
            || self.strip_join.is_some()
            || self.prompt_open_empty
            || self.between_calls_lost
            || self.later_blocks_lost.is_some()
            || self.strict_block.is_some()
            || self.outside_lost.is_some()
            || self.lone_end.is_some()
            || self.unfinished.is_some()
            || self.partition.is_some()
            || self.no_call_as_written
            || self.first_block.is_some()
    }
}

impl Format {
    /// A state's name.
    pub(crate) fn state_name(&self, s: StateId) -> &str {
        &self.states[s as usize].name
    }

    /// The state of this name, if the format has one.
    pub(crate) fn state_named(&self, name: &str) -> Option<StateId> {
        self.states.iter().position(|s| s.name == name).and_then(|i| StateId::try_from(i).ok())
    }

    /// The composed name (`reasoning+tools`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the format parses tool calls.
    pub fn has_tools(&self) -> bool {
        self.has_tools
    }

    /// Whether `tool_choice: required` and named functions are written in
    /// the family's own format (vLLM's `supports_required_and_named =
    /// false`): the calls are then what the model wrote, as vLLM returns
    /// them, filtered by name only where the format says so.
    pub fn choice_in_own_format(&self) -> bool {
        self.calls.native_required
    }

    /// Whether vLLM would detokenize this pair's output with special tokens
    /// skipped, for a request whose own `skip_special_tokens` is `requested`
    /// (None: vLLM's default, true), that declares tools or not, and whose
    /// `tool_choice` is `none` (or absent without tools) or not. See
    /// [`crate::special`].
    pub fn skips_special_tokens(
        &self,
        requested: Option<bool>,
        tools_declared: bool,
        tool_choice_none: bool,
    ) -> bool {
        self.special.skip(requested, tools_declared, tool_choice_none)
    }

    /// Whether special-token markers are bound to a vocabulary's ids.
    pub fn is_bound(&self) -> bool {
        !self.token_ids.is_empty()
    }

    /// Every marker spelling the format knows.
    pub fn spellings(&self) -> impl Iterator<Item = &str> {
        self.terminals.iter().flat_map(|t| t.spellings.iter().map(|s| &**s))
    }

    /// Markers declared as special tokens, by spelling.
    pub fn token_markers(&self) -> impl Iterator<Item = &str> {
        self.terminals.iter().filter(|t| t.token).flat_map(|t| t.spellings.iter().map(|s| &**s))
    }

    /// Binds the special-token terminals to a vocabulary's ids.
    ///
    /// A `required_token` marker that is not a single token fails binding,
    /// naming it: at start-up, never on line (vLLM's parser raises in its
    /// constructor there). Any other marker the vocabulary lacks is matched
    /// in text, as vLLM's parsers do for a marker they only search for (the
    /// pythonic parser's `<|python_end|>` with a Llama 3.1 tokenizer). A
    /// terminal with several spellings is bound by id only when all are
    /// tokens, so it is never half id-matched and half text-matched. A
    /// marker not declared `token` whose spellings are all added tokens of
    /// the vocabulary is bound too (`vocab`): the engine matches it by id
    /// in the default mode only (issue 23: its spelling in ordinary tokens
    /// inside a value is text).
    pub fn bind(&self, vocab: &dyn crate::Vocab) -> Result<Format, crate::FormatError> {
        let mut f = self.clone();
        f.token_ids.clear();
        for t in &mut f.terminals {
            t.vocab = false;
        }
        f.token_canon = (0..self.terminals.len() as TermId).collect();
        // Declared tokens first, so a token both grammars spell is queued
        // as a declared terminal; then the markers the vocabulary holds as
        // added tokens (`vocab`), matched by id in the default mode only.
        for vocab_pass in [false, true] {
            for (i, t) in self.terminals.iter().enumerate() {
                if t.token == vocab_pass {
                    continue;
                }
                let ids: Vec<Option<u32>> = if vocab_pass {
                    // Not declared, but an added token of this vocabulary:
                    // the model writes it as one id, so its spelling in
                    // ordinary tokens (inside a value) is text.
                    let ids: Vec<Option<u32>> =
                        t.spellings.iter().map(|sp| vocab.added_token_id(sp)).collect();
                    if ids.iter().any(Option::is_none) {
                        continue;
                    }
                    f.terminals[i].vocab = true;
                    ids
                } else {
                    t.spellings.iter().map(|sp| vocab.token_id(sp)).collect()
                };
                if let Some(j) = ids.iter().position(Option::is_none) {
                    if t.required {
                        return Err(crate::FormatError::MissingToken { marker: t.spellings[j].to_string() });
                    }
                    f.terminals[i].token = false;
                    continue;
                }
                for id in ids.into_iter().flatten() {
                    // A pair whose reasoning and tool grammars both declare this
                    // token queues it as the first (the reasoning grammar's)
                    // terminal; the lexer compares through `canon`.
                    match f.token_ids.get(&id) {
                        Some(&first) => f.token_canon[i] = first,
                        None => {
                            f.token_ids.insert(id, i as TermId);
                        }
                    }
                }
            }
        }
        Ok(f)
    }

    /// The terminal a special-token marker's id is queued as: `t` itself,
    /// or the other grammar's terminal for the same token.
    pub(crate) fn canon(&self, t: TermId) -> TermId {
        self.token_canon.get(t as usize).copied().unwrap_or(t)
    }

    /// The ids of the reasoning start and end markers, once bound to a
    /// vocabulary (for [`crate::ReasoningCounter`] and reasoning-end checks).
    pub fn reasoning_token_ids(&self) -> Option<(Option<u32>, u32)> {
        let id_of = |t: Option<TermId>| {
            let t = t.filter(|t| self.terminals[*t as usize].token)?;
            self.token_ids.iter().find(|(_, v)| **v == t).map(|(k, _)| *k)
        };
        let end = id_of(self.reasoning_markers.1)?;
        Some((id_of(self.reasoning_markers.0), end))
    }

    /// The first spelling of the marker that ends reasoning (`</think>`),
    /// when the format has one: how a model closes its thinking.
    pub fn reasoning_end_marker(&self) -> Option<&str> {
        let t = self.reasoning_markers.1?;
        self.terminals.get(t as usize)?.spellings.first().map(|s| &**s)
    }

    /// The first spelling of the marker that opens reasoning (`<think>`).
    pub fn reasoning_start_marker(&self) -> Option<&str> {
        let t = self.reasoning_markers.0?;
        self.terminals.get(t as usize)?.spellings.first().map(|s| &**s)
    }

    /// The start state for a request's `chat_template_kwargs` and prompt tail.
    pub(crate) fn start_state(&self, input: SwitchInput<'_>, prompt: Option<&str>) -> StateId {
        let switched = self.switches.iter().find(|(key, val, _, _)| key.matches(val, input));
        if let Some((_, _, st, true)) = switched {
            return *st;
        }
        if let Some(p) = prompt {
            let tail = self
                .prompt_turns
                .iter()
                .filter_map(|t| p.rfind(t.as_str()).map(|i| i + t.len()))
                .max()
                .map_or(p, |i| &p[i..]);
            let last = self
                .prompt_enter
                .iter()
                .filter_map(|(sp, st)| tail.rfind(sp.as_str()).map(|i| (i, *st)))
                .max_by_key(|(i, _)| *i);
            if let Some((_, st)) = last {
                return st;
            }
        }
        switched.map_or(self.initial, |s| s.2)
    }
}

impl SwitchKey {
    /// Whether the request's value for this key equals `val`.
    pub(crate) fn matches(&self, val: &serde_json::Value, input: SwitchInput<'_>) -> bool {
        let got = match self {
            SwitchKey::Kwarg(k) => input.kwargs.and_then(|o| o.get(k)).cloned(),
            SwitchKey::Field(f) if f == "reasoning_effort" => {
                input.reasoning_effort.map(|s| serde_json::Value::String(s.to_string()))
            }
            SwitchKey::Field(_) => None,
            SwitchKey::Init(k) => input.init.and_then(|o| o.get(k)).cloned(),
        };
        got.as_ref() == Some(val)
    }
}
