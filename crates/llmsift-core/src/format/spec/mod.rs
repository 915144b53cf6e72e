//! The format language: what a format file says, as serde types.
//!
//! A format is data, in two layers. The grammar names terminals (markers,
//! each with one or more spellings, optionally special tokens matched by
//! id: [`terminals`]), states (what plain text in the state becomes, and
//! which terminal moves to which state with which call actions:
//! [`states`]), the initial state and the request switches that change it,
//! how a rendered prompt's tail picks the start state, and how calls are
//! read ([`calls`]). The vLLM profile ([`vllm`], the `[vllm]` table) says
//! what vLLM's answer loses or decides from the whole output; Sift follows
//! it only when a request sets `vllm_text_loss` or `vllm_one_shot`. Other
//! names a file answers to are `[alias.NAME]` overlays ([`alias`]).
//!
//! Reasoning formats and tool formats are written separately and composed:
//! the tool format's `content` state is merged into the reasoning format's.
//!
//! Invariant: every value kind is an enum checked when the file is read
//! (`load`); a bad value is a [`crate::FormatError::BadKey`] naming the
//! file, the table and the key. See docs/format-language.md.

pub mod alias;
pub mod calls;
mod load;
pub mod states;
pub mod terminals;
pub mod vllm;

pub use alias::{AliasOverlay, CallsOverlay, VllmOverlay};
pub use calls::{
    AliasSpec, CallPolicy, Entities, MarkersInStrings, MarkersInValues, SchemaRefs, Uncommitted,
};
pub use states::{
    ArgsSpec, BareValuesSpec, EnvelopeSpec, ForceContentSpec, HeaderSpec, Kernel, ModeSpec, NameSpec,
    NameStyleSpec, ParamSpec, PromptSpec, PythonicSpec, ReadingSpec, RelaxedSpec, RouteSpec, SimpleMode,
    StateSpec, SwitchSpec, TransitionSpec, TransitionTable, Unrouted, XmlSpec,
};
pub use terminals::TerminalSpec;
pub use vllm::{
    AsContent, BlockSpec, CutLost, LaterBlocksSpec, LoneEndSpec, NoneCalls, OneShotSpec, ParserClass,
    PartitionSpec, SplitSpec, StrictBlockSpec, StripJoinSpec, TextLossSpec, UnfinishedSpec, UnterminatedSpec,
    VllmSpec,
};

use serde::Deserialize;
use std::collections::BTreeMap;

/// Whether a file describes reasoning or tool calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Reasoning markers (`<think>`…).
    #[default]
    Reasoning,
    /// Tool-call markup.
    Tools,
}

/// When vLLM's `adjust_request` for this parser turns `skip_special_tokens`
/// off (`keep_special_tokens`; see [`crate::special`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeepSpecialTokens {
    /// Never: the request's own setting holds (the default).
    #[default]
    Never,
    /// Always.
    Always,
    /// When tools are declared and `tool_choice` is not `none`.
    WithTools,
    /// Always, and the output is read from token ids (harmony).
    FromIds,
}

/// One format file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatSpec {
    /// Where the file came from (`tools/hermes.toml`), for error messages;
    /// not a key of the language.
    #[serde(skip)]
    pub source: Option<String>,
    /// The registry name (vLLM's parser name).
    pub name: String,
    /// Reasoning or tools.
    pub kind: Kind,
    /// Other names this format answers to, each with what its vLLM parser
    /// class decides otherwise (an empty table: nothing).
    #[serde(default)]
    pub alias: BTreeMap<String, AliasOverlay>,
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
    /// Tool formats: how calls are read.
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
    /// grammar read bare values, overriding the tool format's own choice.
    /// vLLM's unified engines type them by schema where the standalone tool
    /// parser reads literals.
    #[serde(default)]
    pub relaxed_values: Option<BareValuesSpec>,
    /// A `parser_init_kwargs` key holding a response template (vLLM's `hf`
    /// parser: `response_template`): a request that carries one is parsed
    /// by that template (see `format::response_template`).
    #[serde(default)]
    pub template_init: Option<String>,
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
    /// When vLLM's `adjust_request` for this parser turns
    /// `skip_special_tokens` off.
    #[serde(default)]
    pub keep_special_tokens: KeepSpecialTokens,
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
    /// The vLLM profile: what vLLM's answer loses (`vllm_text_loss`) or
    /// decides from the whole output (`vllm_one_shot`).
    #[serde(default)]
    pub vllm: VllmSpec,
}

impl FormatSpec {
    /// What errors call this format: its file, or `format "NAME"`.
    pub fn origin(&self) -> String {
        self.source.clone().unwrap_or_else(|| format!("format {:?}", self.name))
    }

    /// An error about `key` of `[table]` in this format.
    pub(crate) fn bad_key(&self, table: &str, key: &str, message: impl Into<String>) -> crate::FormatError {
        crate::FormatError::BadKey {
            file: self.origin(),
            table: table.to_string(),
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// The spec the name `name` stands for: the file itself, or the file
    /// with `name`'s `[alias.NAME]` overlay applied (`None` when `name` is
    /// neither).
    pub fn named(&self, name: &str) -> Option<FormatSpec> {
        if name == self.name {
            return Some(self.clone());
        }
        self.alias.get(name).map(|o| o.apply(self))
    }
}
