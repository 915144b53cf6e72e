//! The format language: what a format file says, as serde types.
//!
//! A format is data. It names terminals (markers, each with one or more
//! spellings, optionally special tokens matched by id), states (what plain
//! text in the state becomes, and which terminal moves to which state with
//! which call actions), the initial state and the request switches that
//! change it, and how a rendered prompt's tail picks the start state.
//! Reasoning formats and tool formats are written separately and composed:
//! the tool format's `content` state is merged into the reasoning format's.
//! See docs/format-language.md for a worked example.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Whether a file describes reasoning or tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Reasoning markers (`<think>`…).
    Reasoning,
    /// Tool-call markup.
    Tools,
}

/// One format file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatSpec {
    /// The registry name (vLLM's parser name).
    pub name: String,
    /// Reasoning or tools.
    pub kind: Kind,
    /// Other names this format answers to.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Start state (default `content`).
    #[serde(default)]
    pub initial: Option<String>,
    /// Request switches evaluated in order; the first that matches sets the start state.
    #[serde(default, rename = "switch")]
    pub switches: Vec<SwitchSpec>,
    /// How the rendered prompt's tail picks the start state.
    #[serde(default)]
    pub prompt: Option<PromptSpec>,
    /// Terminals by name.
    #[serde(default)]
    pub terminals: BTreeMap<String, TerminalSpec>,
    /// Terminals dropped wherever they appear (engine drop tokens such as `<eos>`).
    #[serde(default)]
    pub drop: Vec<String>,
    /// States by name.
    #[serde(default)]
    pub states: BTreeMap<String, StateSpec>,
    /// Tool formats: where content starts (default `content`).
    #[serde(default)]
    pub entry: Option<String>,
    /// Tool formats: call policies.
    #[serde(default)]
    pub calls: CallPolicy,
    /// Reasoning formats: text the content starts with, as if the model had
    /// written it (MiniMax's `append_think`: the `<think>` the template opened).
    #[serde(default)]
    pub content_prefix: Option<String>,
    /// Auto-detection: texts that must all appear in a model's chat template
    /// (or its added tokens) for this format to fit it.
    #[serde(default)]
    pub detect: Vec<String>,
    /// Auto-detection: texts that must not appear.
    #[serde(default)]
    pub detect_not: Vec<String>,
    /// Reasoning formats: how `relaxed` tool bodies composed with this
    /// grammar read bare values (`literal` or `schema`), overriding the tool
    /// format's own choice. vLLM's unified engines type them by schema where
    /// the standalone tool parser reads literals.
    #[serde(default)]
    pub relaxed_values: Option<String>,
    /// A `parser_init_kwargs` key holding a response template (vLLM's `hf`
    /// parser: `response_template`): a request that carries one is parsed
    /// by that template (see `format::response_template`).
    #[serde(default)]
    pub template_init: Option<String>,
    /// vLLM's one-shot answer drops content written after a call was emitted
    /// (text in no field; vLLM's unified Gemma 4 engine, DeepSeek V3.1, …).
    /// Sift keeps it unless the request sets `vllm_text_loss`.
    #[serde(default)]
    pub drop_content_after_calls: bool,
    /// Tool formats that only switch calls on in a reasoning format's
    /// grammar (gpt-oss's harmony): the reasoning format composed with it
    /// when the pair names no reasoning parser (vLLM parses harmony with its
    /// own grammar whatever the pair).
    #[serde(default)]
    pub grammar_from: Option<String>,
    /// With `grammar_from`: the borrowed grammar serves only while calls are
    /// parsed. Under `tool_choice: "none"` vLLM runs no parser at all for a
    /// pair without a reasoning parser, so the output is plain content
    /// (Muse's ATEM messages; harmony is parsed whatever the choice).
    #[serde(default)]
    pub grammar_with_calls_only: bool,
    /// Reasoning formats: vLLM's reasoning parser is not engine-based, so
    /// under `tool_choice: "none"` its pair never runs the tool parser and
    /// the calls' markup stays content, even where the tool format's
    /// `strip_when_none` drops it (with `vllm_text_loss`); and its pair's
    /// one-shot answer keeps the raw text of a call the output's end cuts,
    /// where an engine-based pair drops it (`calls.cut_lost` other than
    /// `unclosed` is off).
    #[serde(default)]
    pub calls_kept_when_none: bool,
    /// Aliases whose vLLM reasoning parser class has `calls_kept_when_none`
    /// where the format's own name does not (`["step5"]`).
    #[serde(default)]
    pub alias_calls_kept_when_none: Vec<String>,
    /// Tool formats: aliases whose vLLM tool parser class answers a call
    /// the output's end cuts otherwise: alias → its `calls.cut_lost`.
    #[serde(default)]
    pub alias_cut_lost: BTreeMap<String, CutLost>,
    /// When vLLM's `adjust_request` for this parser turns
    /// `skip_special_tokens` off: `always`, `with_tools` (tools declared and
    /// `tool_choice` not `none`) or `never` (the default; see
    /// [`crate::special`]).
    #[serde(default)]
    pub keep_special_tokens: Option<String>,
    /// `keep_special_tokens` for an alias whose vLLM parser class decides
    /// otherwise (`{ qwen3_json = "with_tools" }`); each key must be an alias.
    #[serde(default)]
    pub alias_keep_special_tokens: BTreeMap<String, String>,
    /// The start state for an alias whose vLLM parser starts elsewhere
    /// (`{ cohere_command4 = "think" }`: Command 4's filter reads bare text
    /// as reasoning); each key must be an alias.
    #[serde(default)]
    pub alias_initial: BTreeMap<String, String>,
    /// `grammar_from` for an alias (`{ cohere_command4 = "cohere_command4" }`);
    /// each key must be an alias.
    #[serde(default)]
    pub alias_grammar_from: BTreeMap<String, String>,
    /// Aliases whose vLLM tool parser class has `supports_required_and_named
    /// = false` while the file's own name's has not: they get
    /// `calls.native_required` (`["qwen3_json"]`); each must be an alias.
    #[serde(default)]
    pub alias_native_required: Vec<String>,
    /// Reasoning formats: literal escape sequences (`\n`, `\r\n`) in reasoning
    /// and content are rewritten as the characters they stand for, outside
    /// code spans, code blocks and LaTeX (MiniCPM-V's tokenizer decodes a
    /// newline as the two characters `\` `n`). Tool arguments are untouched.
    #[serde(default)]
    pub recover_newlines: bool,
    /// Reasoning formats: when the request matches, a message whose content is
    /// blank and that has no tool calls answers with its reasoning as content
    /// (Nemotron's `force_nonempty_content`).
    #[serde(default)]
    pub force_content: Option<ForceContentSpec>,
    /// vLLM's one-shot answer where it is decided from the whole output,
    /// followed when the request sets `vllm_one_shot` (see `crate::whole`).
    #[serde(default)]
    pub one_shot: OneShotSpec,
    /// `one_shot` for an alias whose vLLM parser class decides otherwise
    /// (`{ qwen3_json = { marker_in_string = true } }`); each key must be an
    /// alias, and its table replaces the file's.
    #[serde(default)]
    pub alias_one_shot: BTreeMap<String, OneShotSpec>,
}

/// `[one_shot]`: the decisions vLLM's one-shot parser makes from the whole
/// output, which its own stream does not follow. Sift follows them only
/// when the request sets `vllm_one_shot`, holding the output until it ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneShotSpec {
    /// Reasoning formats, with `vllm_text_loss` too: a terminal whose first
    /// spelling anywhere in the output (the answer included) splits it, when
    /// the output starts in reasoning: the text before it reaches no field
    /// and the text after it is read from `split_to` (DeepSeek R1's
    /// `partition(start_token)`).
    #[serde(default)]
    pub split_at: Option<String>,
    /// The state the text after `split_at` is read from (default `reasoning`).
    #[serde(default)]
    pub split_to: Option<String>,
    /// Reasoning formats: terminals of which, when none is spelled anywhere
    /// in the output, the whole output is read without the reasoning
    /// grammar (content, and calls where the request parses them): vLLM's
    /// answer for reasoning whose end marker never comes.
    #[serde(default)]
    pub unterminated: Vec<String>,
    /// With `unterminated`: a spelling of this terminal that opens the
    /// output is dropped from it first (K2 Horizon's `removeprefix`).
    #[serde(default)]
    pub unterminated_strip: Option<String>,
    /// Tool formats: non-blank content after a call makes the whole output
    /// content, calls and all (the parser's JSON or list does not end the
    /// output, so vLLM reads no call).
    #[serde(default)]
    pub text_after_calls: bool,
    /// Tool formats: a marker read as text inside a JSON string of a call
    /// (`markers_in_strings = "text"`) makes the whole output content (vLLM's
    /// non-greedy regex ends the call there and its JSON does not parse).
    #[serde(default)]
    pub marker_in_string: bool,
    /// Tool formats: two or more calls make the whole output content
    /// (vLLM's GigaChat 3 parser reads one JSON object after its marker).
    #[serde(default)]
    pub single_call: bool,
    /// Tool formats, with `vllm_text_loss` too: text that, inside a call's
    /// arguments, ends vLLM's non-greedy match of the call list there, so
    /// its JSON does not parse and its answer is empty, every field lost
    /// (phi4_mini_json's `functools\[(.*?)\]` and a `]` in the arguments).
    #[serde(default)]
    pub empty_if_in_args: Option<String>,
    /// Tool formats, with `vllm_text_loss` too: when the output has a call,
    /// the content before the first call and the content after it are each
    /// stripped of white space and joined with one newline (Apertus, LFM2).
    #[serde(default)]
    pub strip_join: bool,
    /// Tool formats, with `vllm_text_loss` too: the content between the
    /// first call and the last reaches no field (vLLM's DeepSeek V3 answers
    /// the text before the first call block and after the last).
    #[serde(default)]
    pub between_calls_lost: bool,
    /// Tool formats, with `vllm_text_loss` too: a terminal ending a call
    /// block; the text after the first block's end up to the last block's
    /// end reaches no field (vLLM's Kimi K3 and LFM2 read the first block).
    #[serde(default)]
    pub later_blocks_lost: Option<String>,
    /// With `later_blocks_lost`: the terminal opening a block; only a span
    /// holding one is a later block (a closer inside a string is not).
    #[serde(default)]
    pub later_blocks_open: Option<String>,
    /// With `strip_join`: spellings removed from the content after the call
    /// (Apertus removes every `<|tools_suffix|>`).
    #[serde(default)]
    pub remove_after: Vec<String>,
    /// Reasoning formats with `[prompt] lost`: when the prompt left a
    /// message open, vLLM's answer is empty, every field lost (its harmony
    /// parser fails on the open message's tokens and reads nothing after
    /// them); with `vllm_text_loss` too.
    #[serde(default)]
    pub prompt_open_empty: bool,
    /// Reasoning formats, with `vllm_text_loss` too: from the first
    /// non-blank text a `drop` state reads (text outside any message) up to
    /// the next spelling of this terminal (a message's start), the output
    /// reaches no field (vLLM's harmony parser fails on each such token,
    /// and on a header that no start marker opened).
    #[serde(default)]
    pub outside_lost: Option<String>,
    /// Reasoning formats: a terminal whose first spelling, coming before
    /// any spelling of `lone_end_unless` while the output does not start in
    /// reasoning, makes the text before it reasoning: the output is read
    /// from `lone_end_to` (default `reasoning`). Gemma 4's lone `<channel|>`.
    #[serde(default)]
    pub lone_end: Option<String>,
    /// Reasoning formats with message headers (harmony): when the output
    /// ends before the last message's header reached `message` (the
    /// terminal named by `unfinished_body`), or has no header at all, that
    /// message's text as written (from its `unfinished_start` marker, or
    /// from the output's start) is content, after a newline when content
    /// came before it, followed by this text (vLLM's harmony parser answers
    /// the unfinished message's raw tokens and its stop token).
    #[serde(default)]
    pub unfinished_suffix: Option<String>,
    /// With `unfinished_suffix`: the terminal that starts a message.
    #[serde(default)]
    pub unfinished_start: Option<String>,
    /// With `unfinished_suffix`: the terminal that starts a message's body.
    #[serde(default)]
    pub unfinished_body: Option<String>,
    /// With `lone_end`: the terminals that open reasoning.
    #[serde(default)]
    pub lone_end_unless: Vec<String>,
    /// With `lone_end`: the state the output is read from.
    #[serde(default)]
    pub lone_end_to: Option<String>,
}

impl OneShotSpec {
    /// Whether the table says anything.
    pub fn is_empty(&self) -> bool {
        *self == OneShotSpec::default()
    }
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

/// A terminal: a list of spellings, or a table with `spell`, `token` and
/// `required_token`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TerminalSpec {
    /// Spellings matched in text.
    Spellings(Vec<String>),
    /// Spellings plus whether the marker is one special token.
    Full {
        /// Spellings (at least one).
        spell: Vec<String>,
        /// Matched by token id when the caller gives ids.
        #[serde(default)]
        token: bool,
        /// The reference parser refuses to start without this marker as one
        /// token of the vocabulary, so binding fails naming it. Any other
        /// `token` marker the vocabulary lacks falls back to text matching.
        #[serde(default)]
        required_token: bool,
    },
}

impl TerminalSpec {
    /// The spellings.
    pub fn spellings(&self) -> &[String] {
        match self {
            TerminalSpec::Spellings(s) | TerminalSpec::Full { spell: s, .. } => s,
        }
    }
    /// Whether the terminal is a special token.
    pub fn is_token(&self) -> bool {
        matches!(self, TerminalSpec::Full { token: true, .. })
    }
    /// Whether binding must find the terminal as one token (see `required_token`).
    pub fn is_required_token(&self) -> bool {
        matches!(self, TerminalSpec::Full { token: true, required_token: true, .. })
    }
}

/// A request switch (in a tool format it picks the `entry` state, and the
/// factory compiles one variant per switch): one of `kwarg` (a `chat_template_kwargs` key), `field`
/// (a request field: `reasoning_effort`) or `init` (a `parser_init_kwargs`
/// key) equal to `equals` selects `state`.
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

/// Prompt-tail rules.
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
    /// With `prime` and `vllm_text_loss`: the text of a message the prompt
    /// left open (its header routed) reaches no field until a marker moves
    /// the state (vLLM's Muse parser starts at a header and never reads the
    /// message the prompt opened). Sift reads it by default.
    #[serde(default)]
    pub lost: bool,
}

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

/// What plain text becomes.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ModeSpec {
    /// `content`, `reasoning`, `drop`, `name`, `param_name`, `param_value`, `args`.
    Simple(String),
    /// A configured kernel.
    Table(Box<ModeTable>),
}

/// A configured text kernel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeTable {
    /// `name`, `args` or `envelope`.
    pub kind: String,
    /// `name`: how the name text is read (`plain`, `kimi` for `functions.NAME:IDX`).
    #[serde(default)]
    pub style: Option<String>,
    /// `envelope`: keys holding the function name.
    #[serde(default)]
    pub name_keys: Option<Vec<String>>,
    /// `envelope`: keys holding the arguments.
    #[serde(default)]
    pub args_keys: Option<Vec<String>>,
    /// `envelope`: the calls are items of one JSON array.
    #[serde(default)]
    pub array: bool,
    /// `envelope`: a byte that may separate consecutive objects (`;`).
    #[serde(default)]
    pub separator: Option<String>,
    /// `envelope`: state after the object (or array) closes.
    #[serde(default)]
    pub done: Option<String>,
    /// `envelope`: state for the rest when the text is not a call.
    #[serde(default)]
    pub fail: Option<String>,
    /// `envelope`: a call without arguments is a call with `{}` (default: not a call).
    #[serde(default)]
    pub empty_args: bool,
    /// `header`: where a message goes, by what its header says (first match wins).
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
    /// `header`: the text that introduces a call's recipient (default `to=`).
    #[serde(default)]
    pub recipient: Option<String>,
    /// `header`: prefixes removed from the recipient to get the function name
    /// (default `functions.`).
    #[serde(default)]
    pub strip: Option<Vec<String>>,
    /// `header`: `content` makes a header that no route takes (a `route`
    /// transition with no matching route, or the end of the output) content
    /// rather than dropped (Inkling: text after `<|message_model|>` with no
    /// block marker is content).
    #[serde(default)]
    pub unrouted: Option<String>,
    /// `pythonic`: the calls must sit in one `[...]` list.
    #[serde(default)]
    pub bracketed: bool,
    /// `envelope`: objects are `{"NAME": {arguments}}` (the key is the name).
    #[serde(default)]
    pub keyed: bool,
    /// `relaxed`: how bare values are read: `literal` (default) or `schema`.
    #[serde(default)]
    pub values: Option<String>,
    /// `envelope`: exactly one object; whatever follows it goes to `done`.
    #[serde(default)]
    pub single: bool,
    /// `envelope`: text after the closed envelope goes to `done` (not
    /// swallowed), so the `done` state decides what it is.
    #[serde(default)]
    pub rest: bool,
    /// `xml`: the text that introduces every element tag.
    #[serde(default)]
    pub prefix: Option<String>,
    /// `xml`: the deepest element nesting accepted (default 128, at most 1024).
    #[serde(default)]
    pub max_depth: Option<usize>,
    /// `xml`: the field for text mixed with child elements (default `$text`).
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
}

/// A transition: a target state name, or a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TransitionSpec {
    /// Just the target.
    To(String),
    /// Target plus actions.
    Full(TransitionTable),
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
    /// The next parameter's type, overriding the tool schema: `string`,
    /// `json`, or `declared` (the schema's type when it declares the
    /// parameter, JSON otherwise: DSML's `string="false"`).
    #[serde(default)]
    pub param: Option<String>,
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
}

/// What `vllm_text_loss` does with a call the output's end cuts
/// (`calls.cut_lost`; see [`CallPolicy::cut_lost`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CutLost {
    /// A call with no name yet is lost; a named one is a call.
    Uncommitted,
    /// As `uncommitted` once anything follows the opening marker.
    Begun,
    /// Only a named call is answered; no text is lost.
    Named,
    /// Also a committed call its end marker never closed is lost.
    Unclosed,
    /// A cut call whose arguments are not whole is taken back as content.
    Content,
}

/// What a marker inside an open JSON string of a call is (`markers_in_strings`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkersInStrings {
    /// The marker acts as it would anywhere in its state.
    #[default]
    Markers,
    /// The marker is text of the string.
    Text,
}

/// What happens to calls that never got a name.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallPolicy {
    /// `drop` (default) or `content`: the raw text of a call that never committed.
    #[serde(default)]
    pub uncommitted: Option<String>,
    /// With `tool_choice: none`, parse the markup and drop it (true), or keep
    /// the format's markup as content (false, default).
    #[serde(default)]
    pub strip_when_none: bool,
    /// Emit a call only once it ends with its arguments whole (a truncated
    /// or malformed call is dropped, or kept as content per `uncommitted`),
    /// at the cost of not streaming them.
    #[serde(default)]
    pub defer: bool,
    /// A call whose name is still open when the output ends is a call.
    #[serde(default)]
    pub commit_open_name: bool,
    /// A marker left unfinished at the end of the output is dropped, not text.
    #[serde(default)]
    pub drop_unfinished_marker: bool,
    /// `tool_choice: required` or a named function are written in the
    /// family's own format (vLLM's `supports_required_and_named = false`).
    #[serde(default)]
    pub native_required: bool,
    /// A request without tools gets no calls (the markup is removed).
    #[serde(default)]
    pub need_tools: bool,
    /// Parameter keys are kept exactly as written (no trimming).
    #[serde(default)]
    pub verbatim_keys: bool,
    /// String parameter values are kept exactly as written (no wrapping
    /// newline removed, `null` stays a string).
    #[serde(default)]
    pub verbatim_values: bool,
    /// Parameter values are typed as vLLM's parser engine types them
    /// (`_fix_arg_types`: `coerce_to_schema_type` over the parameter's
    /// `extract_types_from_schema`): a parameter whose schema allows only a
    /// string, or that has no schema, keeps its text (`null` included);
    /// any other is read as the first of its types the text reads as.
    #[serde(default)]
    pub coerce_values: bool,
    /// A finished call's JSON arguments are typed as vLLM's parser engine
    /// types them (`_fix_arg_types`, nested objects and arrays included);
    /// arguments that need no change stay as written. A call to a function
    /// with a schema has its arguments held until it ends (with `defer`, the
    /// whole call is).
    #[serde(default)]
    pub fix_arg_types: bool,
    /// String parameter values lose surrounding white space (Python's
    /// `str.strip`) and are otherwise kept as written (`null` stays a string).
    #[serde(default)]
    pub trim_values: bool,
    /// A call to a function the request declares no tool for is not a call
    /// (when the request declares tools at all).
    #[serde(default)]
    pub known_names_only: bool,
    /// With `vllm_text_loss`: a call to a function the request declares no
    /// tool for (when it declares tools) is not a call, and its text reaches
    /// no field (vLLM's GLM engine). Sift keeps the call by default.
    #[serde(default)]
    pub unknown_names_lost: bool,
    /// With `vllm_text_loss`: a request without tools (`tool_choice` none)
    /// parses the calls and drops them, as `strip_when_none` does, while
    /// a request that declares tools and says `none` keeps the markup
    /// (vLLM's engine-based Llama JSON parser).
    #[serde(default)]
    pub strip_without_tools: bool,
    /// A call whose raw arguments begin before any name was written is a
    /// call without a name: its text is content even where uncommitted calls
    /// are dropped (vLLM's Mistral parser answers a call named "" on
    /// `[TOOL_CALLS]{…}`; a call always has a name in Sift).
    #[serde(default)]
    pub nameless_args: bool,
    /// JSON arguments of held calls are typed by the tool's schema, value by
    /// value (vLLM's `coerce_to_schema_type`): `"2"` for an integer becomes 2.
    #[serde(default)]
    pub schema_args: bool,
    /// A name with white space inside is not a name (the call never commits).
    #[serde(default)]
    pub word_names: bool,
    /// A held call that names one parameter twice fails its group.
    #[serde(default)]
    pub unique_params: bool,
    /// What a marker spelled inside an open JSON string of a call (its name,
    /// a key, a string value) is: `markers` (default: it acts, cutting the
    /// string) or `text` (it is the string's text, as regexes that match
    /// the call as a whole read it: DeepSeek V3's, ERNIE's, Hermes').
    #[serde(default)]
    pub markers_in_strings: MarkersInStrings,
    /// Wrapper parameter names (`["arguments", "input"]`): a call whose only
    /// parameter is one of them, not declared by a function that declares
    /// parameters, gets the wrapped object as its arguments when all its keys
    /// are declared (vLLM's DSML `_repair_param_dict`). The call's arguments
    /// are held from the wrapper's opening until a second parameter or the
    /// call's end decides.
    #[serde(default)]
    pub unwrap_params: Vec<String>,
    /// A deferred call is a call only when its end marker closes it (a call
    /// cut off by the end of the output or by the next call follows `uncommitted`).
    #[serde(default)]
    pub need_end: bool,
    /// What vLLM's one-shot answer loses of a call the output's end cuts
    /// (its text lands in no field), followed only when the request sets
    /// `vllm_text_loss`: `uncommitted` (a call that has no name yet, and its
    /// section's text: Sift's default makes them content; one whose name is
    /// known is answered as a call, arguments as far as written, as vLLM's
    /// engine pairs answer it), `begun` (the same once anything follows the
    /// call's opening marker: the marker alone stays content, and a named
    /// call needs its arguments begun, as vLLM's Apertus engine answers),
    /// `named` (only the named call: what either becomes under a reasoning
    /// format with `calls_kept_when_none`), `unclosed` (also
    /// a committed call its end marker never closed: with the setting, such a
    /// format's calls are held until they end, so none is streamed that the
    /// end of the output takes back) or `content` (held the same way, a cut
    /// call whose end marker never came and whose JSON arguments are not
    /// whole is taken back as content, its text as written: vLLM's legacy
    /// parsers answer the raw output when a call does not parse). A call
    /// without a readable name stays content either way (vLLM answers a call
    /// named "" there).
    #[serde(default)]
    pub cut_lost: Option<CutLost>,
    /// vLLM's one-shot answer drops a parameter the output's end cuts
    /// before its closing marker (its text lands in no field; the call
    /// stays). Followed only when the request sets `vllm_text_loss`: each
    /// parameter is then held until it closes, so no streamed fragment is
    /// taken back.
    #[serde(default)]
    pub cut_param_lost: bool,
    /// A deferred call is checked against the request's tool schema when it
    /// ends (see `engine/checked.rs`): a declared function (after `alias`),
    /// every parameter named, no parameter twice, undeclared parameters
    /// ignored, every required parameter present. A call that fails is not a
    /// call (`uncommitted`).
    #[serde(default)]
    pub validate: bool,
    /// With `validate`: parameter names that, when the function does not
    /// declare them, wrap the real arguments as a JSON or Python dict.
    #[serde(default)]
    pub wrapper_keys: Vec<String>,
    /// With `validate`: names the model uses for a declared function.
    #[serde(default)]
    pub alias: Vec<AliasSpec>,
    /// `keep` (default) or `drop`: the text around calls, when the output has
    /// any call (content is then held until the output ends).
    #[serde(default)]
    pub text_with_calls: Option<String>,
    /// A parameter whose schema is a union (`anyOf`, `oneOf`, a type list)
    /// admitting `string` is read as a string.
    #[serde(default)]
    pub union_string: bool,
}

/// A function name the model writes for a declared one, with its arguments
/// renamed: used only when `to` is declared and `from` is not, and only
/// when at least one argument maps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasSpec {
    /// The names the model writes.
    pub from: Vec<String>,
    /// The declared function they stand for.
    pub to: String,
    /// Target key → the model's keys, first non-empty value wins.
    #[serde(default)]
    pub args: BTreeMap<String, Vec<String>>,
    /// Target key → constant value added when the alias applies.
    #[serde(default)]
    pub set: BTreeMap<String, toml::Value>,
}

impl FormatSpec {
    /// Parses a format file (TOML).
    pub fn from_toml(text: &str) -> Result<FormatSpec, crate::FormatError> {
        toml::from_str(text).map_err(|e| crate::FormatError::Syntax { message: e.to_string() })
    }
}
