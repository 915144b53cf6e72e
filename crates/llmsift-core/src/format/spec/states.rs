//! `[states.NAME]` and what decides the start state (`initial`,
//! `[[switch]]`, `[prompt]`, `force_content`): the grammar's states, the
//! text kind each reads plain text as, and the transitions its terminals
//! take.
//!
//! Every value kind is an enum; a state's `text` and a transition are read
//! as a word or as a table by what the file holds, so an error inside the
//! table names its key.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// One state.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSpec {
    /// What plain text in this state becomes.
    pub text: ModeSpec,
    /// Terminal name → transition.
    #[serde(default)]
    pub on: BTreeMap<String, TransitionSpec>,
    /// After the first text read in this state, continue in this state (a
    /// marker that only counts at the very start, such as a bare `thought\n`).
    #[serde(default)]
    pub then: Option<String>,
    /// Reasoning states: text written to the reasoning when this state is
    /// entered after reasoning was already written (Muse Glimmer joins its
    /// `to=self` messages with a newline).
    #[serde(default)]
    pub join: Option<String>,
    /// Reasoning states: also read the composed tool grammar's calls, as
    /// `content` does (a thinking-off state that keeps reasoning markers as
    /// text while calls are still parsed).
    #[serde(default)]
    pub calls: bool,
    /// Entering this state opens a held group without a marker (OLMo 3's
    /// bare call lines, which vLLM reads only when they are the whole
    /// output): it is released when the output ends in this state with no
    /// call open, and fails (its text is content) when the state is left or
    /// the output ends inside a call. The value names where the output
    /// continues if it fails at the end.
    #[serde(default)]
    pub hold: Option<String>,
}

/// A text kind named by a word (`text = "content"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimpleMode {
    /// The message's content.
    Content,
    /// The message's reasoning.
    Reasoning,
    /// Dropped.
    Drop,
    /// Text vLLM's answer loses: content unless `vllm_text_loss`.
    Lost,
    /// A call's name.
    Name,
    /// A parameter's name.
    ParamName,
    /// A parameter's value.
    ParamValue,
    /// Raw JSON arguments.
    Args,
    /// Relaxed object notation, bare values as JSON literals.
    Relaxed,
    /// Text between the relaxed notation's string delimiters.
    RelaxedString,
    /// White space only: other text fails the held group.
    Blank,
}

/// What plain text becomes: a word, or a configured kernel.
#[derive(Debug, Clone)]
pub enum ModeSpec {
    /// `content`, `reasoning`, `drop`, `lost`, `name`, `param_name`, …
    Simple(SimpleMode),
    /// A configured kernel.
    Table(Box<Kernel>),
}

impl<'de> Deserialize<'de> for ModeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ModeSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a text kind or a kernel table with `kind`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ModeSpec, E> {
                SimpleMode::deserialize(de::value::StrDeserializer::<E>::new(s)).map(ModeSpec::Simple)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<ModeSpec, A::Error> {
                Kernel::deserialize(de::value::MapAccessDeserializer::new(a))
                    .map(|t| ModeSpec::Table(Box::new(t)))
            }
        }
        d.deserialize_any(V)
    }
}

/// How a `name` kernel reads the name text (`style`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameStyleSpec {
    /// The trimmed text is the name.
    #[default]
    Plain,
    /// `functions.NAME:IDX`.
    Kimi,
}

/// Which reading a transition or a route belongs to (`reading`): Sift's,
/// or vLLM's (the request's `vllm_text_loss`); under the other one a
/// transition's marker is text of its state and a route does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadingSpec {
    /// Sift's reading (the default mode).
    Sift,
    /// vLLM's reading (`vllm_text_loss`).
    Vllm,
}

/// What a header no route takes becomes (`unrouted`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unrouted {
    /// Dropped.
    #[default]
    Drop,
    /// Content.
    Content,
}

/// How relaxed bodies read bare values (`values`, `relaxed_values`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BareValuesSpec {
    /// JSON literals.
    #[default]
    Literal,
    /// Typed by the tool schema, text where it has none.
    Schema,
    /// As `schema` for a function whose parameters the request declares,
    /// else as `literal`.
    Declared,
}

/// A configured text kernel (`text = { kind = "…", … }`), each kind with
/// its own keys: a key another kind has is an error here.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Kernel {
    /// A call's name, read in a style.
    Name(NameSpec),
    /// Raw JSON arguments; the text after the closed value of a committed
    /// call goes to `done`.
    Args(ArgsSpec),
    /// JSON call objects (`{"name": …, "arguments": …}`).
    Envelope(EnvelopeSpec),
    /// A message header routed by what it says (harmony).
    Header(HeaderSpec),
    /// Python call syntax.
    Pythonic(PythonicSpec),
    /// Relaxed object notation (Gemma).
    Relaxed(RelaxedSpec),
    /// Nested XML elements typed by the tool schema (MiniMax-M3).
    Xml(XmlSpec),
}

/// `kind = "name"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameSpec {
    /// How the name text is read.
    #[serde(default)]
    pub style: NameStyleSpec,
}

/// `kind = "args"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgsSpec {
    /// The state the text after the closed value goes to.
    pub done: String,
}

/// `kind = "envelope"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSpec {
    /// Keys holding the function name (default `["name"]`).
    #[serde(default)]
    pub name_keys: Option<Vec<String>>,
    /// Keys holding the arguments (default `["arguments", "parameters"]`).
    #[serde(default)]
    pub args_keys: Option<Vec<String>>,
    /// The calls are items of one JSON array.
    #[serde(default)]
    pub array: bool,
    /// A byte that may separate consecutive objects (`;`).
    #[serde(default)]
    pub separator: Option<String>,
    /// State after the object (or array) closes (default `content`).
    #[serde(default)]
    pub done: Option<String>,
    /// State for the rest when the text is not a call (default `content`).
    #[serde(default)]
    pub fail: Option<String>,
    /// A call without arguments is a call with `{}` (default: not a call).
    #[serde(default)]
    pub empty_args: bool,
    /// Objects are `{"NAME": {arguments}}` (the key is the name).
    #[serde(default)]
    pub keyed: bool,
    /// Exactly one object; whatever follows it goes to `done`.
    #[serde(default)]
    pub single: bool,
    /// Text after the closed envelope goes to `done` (not swallowed), so
    /// the `done` state decides what it is.
    #[serde(default)]
    pub rest: bool,
}

/// `kind = "header"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderSpec {
    /// Where a message goes, by what its header says (first match wins).
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
    /// The text that introduces a call's recipient (default `to=`).
    #[serde(default)]
    pub recipient: Option<String>,
    /// Prefixes removed from the recipient to get the function name
    /// (default `functions.`).
    #[serde(default)]
    pub strip: Option<Vec<String>>,
    /// What a header that no route takes (a `route` transition with no
    /// matching route, or the end of the output) becomes (Inkling: text
    /// after `<|message_model|>` with no block marker is content).
    #[serde(default)]
    pub unrouted: Unrouted,
    /// Recipients the server runs itself (harmony's `python`, `browser`,
    /// `container`): what a route with `builtin` recognises.
    #[serde(default)]
    pub builtins: Vec<String>,
}

/// `kind = "pythonic"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PythonicSpec {
    /// The calls must sit in one `[...]` list.
    #[serde(default)]
    pub bracketed: bool,
    /// State after the calls (default `content`).
    #[serde(default)]
    pub done: Option<String>,
    /// State for the rest when the text is not a call (default `content`).
    #[serde(default)]
    pub fail: Option<String>,
}

/// `kind = "relaxed"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelaxedSpec {
    /// How bare values are read.
    #[serde(default)]
    pub values: BareValuesSpec,
}

/// `kind = "xml"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XmlSpec {
    /// The text that introduces every element tag (1 to 64 bytes).
    #[serde(default)]
    pub prefix: Option<String>,
    /// The deepest element nesting accepted (default 128, at most 1024).
    #[serde(default)]
    pub max_depth: Option<usize>,
    /// The field for text mixed with child elements (default `$text`).
    #[serde(default)]
    pub mixed_text: Option<String>,
}

/// A header route: a header containing `contains` sends the message to `to`;
/// with `call`, the message is a tool call to the header's recipient (such a
/// route exists only when a tool parser is composed).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    /// Text the header must contain.
    pub contains: String,
    /// The state the message goes to.
    pub to: String,
    /// The message is a call to the recipient.
    #[serde(default)]
    pub call: bool,
    /// The route counts only when a tool grammar is composed (like a `call`
    /// route) but opens no call: the message's own markup names its calls.
    #[serde(default)]
    pub tools: bool,
    /// The message is a call section from its header on (as a transition's
    /// `section`): its text, header included, is content unless a call in
    /// it commits (Muse: vLLM answers a tool message with no complete call
    /// as the raw text).
    #[serde(default)]
    pub section: bool,
    /// The header as written, with the marker that routed it, is content
    /// (Muse: with no tool parser, vLLM answers a message to a tool as
    /// written, framing included).
    #[serde(default)]
    pub raw: bool,
    /// The route counts only when the header's recipient is one of the
    /// header's `builtins` (its first dot-separated part: `browser.search`).
    #[serde(default)]
    pub builtin: bool,
    /// The route counts only under this reading (see [`ReadingSpec`]).
    #[serde(default)]
    pub reading: Option<ReadingSpec>,
}

/// A transition: a target state name, or a table.
#[derive(Debug, Clone)]
pub enum TransitionSpec {
    /// Just the target.
    To(String),
    /// Target plus actions.
    Full(TransitionTable),
}

impl<'de> Deserialize<'de> for TransitionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TransitionSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a state name or a transition table with `to`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TransitionSpec, E> {
                Ok(TransitionSpec::To(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<TransitionSpec, A::Error> {
                TransitionTable::deserialize(de::value::MapAccessDeserializer::new(a))
                    .map(TransitionSpec::Full)
            }
        }
        d.deserialize_any(V)
    }
}

/// How a transition types the parameter it opens (`param`), overriding
/// the tool schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamSpec {
    /// A string, whatever the schema says.
    String,
    /// JSON, whatever the schema says.
    Json,
    /// The schema's type when it declares the parameter, JSON otherwise
    /// (DSML's `string="false"`).
    Declared,
    /// vLLM's `schema_types.convert_value`: decoded as JSON, kept decoded
    /// unless the schema admits a string and not the decoded type.
    Admitted,
    /// As `admitted`, also trying a Python literal of the stripped text.
    AdmittedLiteral,
}

/// A transition with actions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransitionTable {
    /// Target state.
    pub to: String,
    /// Begin a tool call (ending an open one first).
    #[serde(default)]
    pub call: bool,
    /// End the open tool call.
    #[serde(default)]
    pub end: bool,
    /// Do not consume the marker: read it again in the target state.
    #[serde(default)]
    pub reprocess: bool,
    /// Leave a `header` state by its routes (`to` is the default).
    #[serde(default)]
    pub route: bool,
    /// The next parameter's type, overriding the tool schema.
    #[serde(default)]
    pub param: Option<ParamSpec>,
    /// The marker is also text of the state it leaves (xLAM keeps the
    /// `</think>` that ends its content preamble).
    #[serde(default)]
    pub keep: bool,
    /// Opens a held group: from here on calls are buffered, not emitted,
    /// until a `release` transition; if the group fails (a `fail`
    /// transition, non-blank text in a `blank` state, a call that never
    /// commits or whose JSON arguments are not whole, a release with no
    /// call, or the end of output), its text becomes content and the output
    /// continues in the state named here.
    #[serde(default)]
    pub hold: Option<String>,
    /// Closes the held group: its calls are emitted (when it has any and
    /// did not fail).
    #[serde(default)]
    pub release: bool,
    /// Fails the held group (see `hold`); the output continues in `to`.
    #[serde(default)]
    pub fail: bool,
    /// Parameter text after this marker is kept exactly as written (`true`,
    /// a CDATA section's opener) or read as usual again (`false`, its closer).
    #[serde(default)]
    pub verbatim: Option<bool>,
    /// An open call that never committed is dropped with its raw text
    /// instead of following `uncommitted` (LFM2's echoed call body, ended by
    /// an orphan end marker).
    #[serde(default)]
    pub discard: bool,
    /// The marker opens a call section (`<｜DSML｜function_calls>`): its text
    /// and the section's dropped text are kept until a call commits, and are
    /// content if none does before the output ends, the section is left for
    /// a state that outputs text, or an uncommitted call's text becomes content.
    #[serde(default)]
    pub section: bool,
    /// The open call's arguments are whole from this marker on, though the
    /// call's own end marker may still come (`</function>` before
    /// `</tool_call>`): the end of the output after it ends the call as
    /// that marker would, never as a cut (issue 23: a cut call's arguments
    /// are left as written and the finish is `length`).
    #[serde(default)]
    pub args_end: bool,
    /// The transition is taken only under this reading; under the other
    /// one its marker is text of the state (Mistral's plain-text `<think>`).
    #[serde(default)]
    pub reading: Option<ReadingSpec>,
}

/// Prompt-tail rules (`[prompt]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSpec {
    /// Spellings that start a turn: only markers after the last one count.
    #[serde(default)]
    pub turn_start: Vec<String>,
    /// Terminal name → the state the output starts in when it is the prompt's last marker.
    #[serde(default)]
    pub enter: BTreeMap<String, String>,
    /// Run the prompt's last turn (from its turn start) through the parser,
    /// discarding the output, so the output starts where the prompt left off.
    #[serde(default)]
    pub prime: bool,
}

/// A request switch (in a tool format it picks the `entry` state, and the
/// factory compiles one variant per switch): one of `kwarg` (a
/// `chat_template_kwargs` key), `field` (a request field:
/// `reasoning_effort`) or `init` (a `parser_init_kwargs` key) equal to
/// `equals` selects `state`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// The `chat_template_kwargs` key.
    #[serde(default)]
    pub kwarg: Option<String>,
    /// The request field (`reasoning_effort`).
    #[serde(default)]
    pub field: Option<String>,
    /// The `parser_init_kwargs` key.
    #[serde(default)]
    pub init: Option<String>,
    /// The value it must equal.
    pub equals: toml::Value,
    /// The start state it selects.
    pub state: String,
    /// The start state it selects when no tool grammar is composed (the
    /// reasoning parser used alone): vLLM's reasoning parsers answer the whole
    /// output as content, markers included, when thinking is switched off,
    /// while a composed tool grammar still reads its calls.
    #[serde(default)]
    pub alone: Option<String>,
    /// The switch's state outranks the prompt tail (as an `alone` state
    /// does): thinking off means no reasoning, whatever the prompt says.
    #[serde(default)]
    pub over_prompt: bool,
}

/// `force_content`: the `chat_template_kwargs` value that turns it on, and
/// what counts as no content.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceContentSpec {
    /// The `chat_template_kwargs` key.
    pub kwarg: String,
    /// The value it must equal.
    pub equals: toml::Value,
    /// Only a message with no content at all swaps (whitespace-only content
    /// keeps the reasoning where it is); default: blank content swaps too.
    #[serde(default)]
    pub only_absent: bool,
}
