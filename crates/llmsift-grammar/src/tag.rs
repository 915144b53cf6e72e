//! The structural tag: how a family's calls look in the model's own
//! output, for `tool_choice: "auto"` (vLLM's structural-tag / xgrammar
//! "triggered tags" idea).
//!
//! The model writes free text until it writes a *trigger*; from there on
//! it must complete one of the *tags* that begin with that trigger: a fixed
//! `begin` (which names the function), the arguments (constrained by the
//! tool's schema, or any JSON), and a fixed `end`. Then free text again.
//! Families that wrap calls in a section (Kimi K2, DeepSeek) have one
//! trigger, the section's opening marker, and one or more calls inside.
//!
//! Strictness ([`StrictLevel`], vLLM's `--tool-strict-level`):
//! - `auto`: a tag is built only when some tool says `strict: true`; each
//!   tool's own `strict` decides whether its arguments follow its schema;
//! - `function`: a tag is always built, so the envelope and the function
//!   name are constrained; arguments follow the schema of strict tools only;
//! - `parameter`: as `function`, and every tool's arguments follow its
//!   schema, as if every tool were `strict: true`.
//!
//! Invariant: the level is a floor. A tool's own `strict: true` is honoured
//! at every level; the server can only add constraints, never remove one.
//!
//! This module owns the data (pieces, tags, sections, the strict level);
//! [`crate::syntax`] builds a family's tag from its format file.
//!
//! Invariant: every trigger is a piece-wise prefix of the `begin` of the
//! tags it opens (or of the section's `begin`), so the exported grammar can
//! split a tag at its trigger.

use crate::family::Family;
use llmsift_protocol::wire::ToolParam;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How strictly calls are constrained under `tool_choice: "auto"`
/// (a server-wide floor; vLLM's `--tool-strict-level`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StrictLevel {
    /// Each tool's own `strict` decides; no tool strict, no constraint.
    #[default]
    Auto,
    /// The call envelope and the function name are always constrained.
    Function,
    /// The arguments are always constrained by the tool's schema too.
    Parameter,
}

impl StrictLevel {
    /// Reads `auto`, `function` or `parameter` (any case, surrounding
    /// spaces ignored).
    pub fn from_name(name: &str) -> Option<StrictLevel> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(StrictLevel::Auto),
            "function" => Some(StrictLevel::Function),
            "parameter" => Some(StrictLevel::Parameter),
            _ => None,
        }
    }

    /// The name (`auto`, `function`, `parameter`).
    pub fn name(self) -> &'static str {
        match self {
            StrictLevel::Auto => "auto",
            StrictLevel::Function => "function",
            StrictLevel::Parameter => "parameter",
        }
    }

    /// Whether a tag is built for these tools at all.
    pub fn constrains(self, tools: &[ToolParam]) -> bool {
        !tools.is_empty()
            && (self > StrictLevel::Auto || tools.iter().any(|t| t.function.strict == Some(true)))
    }

    /// Whether this tool's arguments follow its schema at this level.
    pub fn pins_schema(self, tool: &ToolParam) -> bool {
        self == StrictLevel::Parameter || tool.function.strict == Some(true)
    }
}

/// One piece of fixed model output.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// A marker that is a special token in the family's vocabulary (its
    /// spelling). As text it reads the same; a grammar can ask for the token.
    Token(String),
    /// One or more ASCII digits (Kimi K2's call index).
    Digits,
}

impl Piece {
    /// A text piece.
    pub fn text(s: impl Into<String>) -> Piece {
        Piece::Text(s.into())
    }

    /// A special-token piece.
    pub fn token(s: impl Into<String>) -> Piece {
        Piece::Token(s.into())
    }

    /// The piece as text (`Digits` reads `0`).
    pub fn as_text(&self) -> &str {
        match self {
            Piece::Text(s) | Piece::Token(s) => s,
            Piece::Digits => "0",
        }
    }
}

/// The pieces written one after another, as text (`Digits` reads `0`).
pub fn pieces_text(pieces: &[Piece]) -> String {
    pieces.iter().map(Piece::as_text).collect()
}

/// What a tag holds between its `begin` and its `end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Content {
    /// JSON text following `schema` (`true`: any JSON value).
    Json {
        /// The JSON schema of the arguments.
        schema: Value,
    },
    /// XML parameters (Qwen3-Coder): `OPEN KEY NAME_END \n VALUE \n CLOSE \n`
    /// for each argument (the markers as [`XmlParam`] spells them); string
    /// values raw, others JSON. With a schema that has `properties`, only
    /// those keys, in their declared order, the required ones present; with
    /// `true`, any keys.
    XmlParameters {
        /// The JSON schema of the arguments (`true`: any parameters).
        schema: Value,
        /// How one parameter is marked up.
        param: XmlParam,
    },
    /// Any text (a message that is not a call, e.g. harmony's `analysis`).
    Text,
    /// Nothing: the tag is its `begin` (e.g. harmony's `<|start|>assistant`).
    Empty,
}

/// The markers of one XML parameter, as the family's format spells them
/// (Qwen3-Coder: `<parameter=`, `>`, `</parameter>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XmlParam {
    /// Opens the parameter; its name follows.
    pub open: String,
    /// Ends the name; the value follows (after a newline).
    pub name_end: String,
    /// Closes the value (after a newline).
    pub close: String,
}

/// One tag: a fixed `begin`, the content, one of the `end`s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tag {
    /// The function this tag calls; `None` for a tag that is not a call.
    pub tool: Option<String>,
    /// The fixed text before the content (names the function).
    pub begin: Vec<Piece>,
    /// The content.
    pub content: Content,
    /// The fixed texts that may close the tag (one of them; empty when the
    /// tag has no end).
    pub end: Vec<Vec<Piece>>,
}

impl Tag {
    /// `begin` as text.
    pub fn begin_text(&self) -> String {
        pieces_text(&self.begin)
    }

    /// The first `end` as text (empty when there is none).
    pub fn end_text(&self) -> String {
        self.end.first().map(|e| pieces_text(e)).unwrap_or_default()
    }

    /// The argument schema of a call tag (`None` for other tags).
    pub fn schema(&self) -> Option<&Value> {
        match &self.content {
            Content::Json { schema } | Content::XmlParameters { schema, .. } => Some(schema),
            Content::Text | Content::Empty => None,
        }
    }
}

/// A wrapper around one or more calls (Kimi K2, DeepSeek).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Opens the section (and is the family's trigger).
    pub begin: Vec<Piece>,
    /// Written between two calls.
    pub separator: Vec<Piece>,
    /// Closes the section.
    pub end: Vec<Piece>,
}

/// A family's structural tag for a request's tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuralTag {
    /// The family (vLLM tool parser) the tag describes.
    pub family: Family,
    /// The strict level it was built at.
    pub level: StrictLevel,
    /// What switches from free text to a tag.
    pub triggers: Vec<Vec<Piece>>,
    /// The section calls are wrapped in, if the family has one (then the
    /// only trigger is its `begin` and every tag is a call inside it).
    pub section: Option<Section>,
    /// The tags: calls (one or more per tool), then the family's other tags.
    pub tags: Vec<Tag>,
}

impl StructuralTag {
    /// The tags that call `tool`.
    pub fn tags_for<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a Tag> + 'a {
        self.tags.iter().filter(move |t| t.tool.as_deref() == Some(tool))
    }

    /// The triggers as text.
    pub fn trigger_texts(&self) -> Vec<String> {
        self.triggers.iter().map(|t| pieces_text(t)).collect()
    }

    /// The special-token markers the tag uses (each once, in order of use).
    pub fn special_tokens(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let sec = self.section.iter().flat_map(|s| [&s.begin, &s.separator, &s.end]);
        let tags = self.tags.iter().flat_map(|t| std::iter::once(&t.begin).chain(t.end.iter()));
        for p in self.triggers.iter().chain(sec).chain(tags).flatten() {
            if let Piece::Token(s) = p {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
        }
        out
    }
}
