//! The constraint of a checked request: what vLLM would guide decoding
//! with, resolved from its `tool_choice`.
//!
//! - `none`: nothing;
//! - `required`: the array schema of [`crate::required_schema`];
//! - named: the function's parameters ([`crate::named_schema`]; nothing when
//!   it declares none);
//! - `auto`: the family's structural tag, when the server's tool parser has
//!   one and the strict level asks for it ([`crate::structural_tag`]).
//!
//! Families that write forced calls in their own format (vLLM's
//! `supports_required_and_named = false`, every family of [`Family`])
//! get [`Constraint::Calls`] from [`forced_constraint`] instead: the
//! family's tags, at least one call, one only for a named function or
//! `parallel_tool_calls: false`. `response_format` gives its own constraint
//! ([`response_format_constraint`]), which vLLM puts before the tools'.

use crate::error::GrammarError;
use crate::family::Family;
use crate::lark::{json_schema_lark, structural_tag_lark, Calls, LarkOptions};
use crate::schema::{named_schema, required_schema};
use crate::syntax::structural_tag;
use crate::tag::{StrictLevel, StructuralTag};
use llmsift_protocol::{CheckedRequest, ToolChoiceMode};
use serde_json::Value;

/// A structured-output constraint on the output.
#[derive(Debug, Clone, PartialEq)]
pub enum Constraint {
    /// The whole output is JSON following this schema.
    JsonSchema(Value),
    /// Free text with calls in the family's own format.
    StructuralTag(StructuralTag),
    /// Calls in the family's own format that must be made: at least one
    /// (text before the first is free), and only one when `one`.
    Calls {
        /// The family's tags (only the named function's, for a named choice).
        tag: StructuralTag,
        /// At most one call (named function, or `parallel_tool_calls: false`).
        one: bool,
    },
    /// Any JSON object (`response_format: {"type": "json_object"}`).
    JsonObject,
}

impl Constraint {
    /// The constraint as an llguidance Lark grammar.
    pub fn to_lark(&self, opts: &LarkOptions) -> String {
        match self {
            Constraint::JsonSchema(s) => json_schema_lark(s, opts),
            Constraint::StructuralTag(t) => structural_tag_lark(t, opts),
            Constraint::Calls { tag, one } => {
                let calls = if *one { Calls::One } else { Calls::AtLeastOne };
                crate::lark::tag_lark(tag, opts, calls)
            }
            Constraint::JsonObject => json_schema_lark(&serde_json::json!({"type": "object"}), opts),
        }
    }
}

/// The constraint for a checked request, given the server's tool parser
/// family (`None`: no structural tag is known, `auto` stays free) and its
/// strict level.
pub fn request_constraint(
    req: &CheckedRequest,
    family: Option<Family>,
    level: StrictLevel,
) -> Result<Option<Constraint>, GrammarError> {
    Ok(match &req.tool_choice {
        ToolChoiceMode::None => None,
        ToolChoiceMode::Required => {
            Some(Constraint::JsonSchema(required_schema(&req.tools, req.parallel_tool_calls)?))
        }
        ToolChoiceMode::Named(name) => named_schema(&req.tools, name)?.map(Constraint::JsonSchema),
        ToolChoiceMode::Auto => {
            family.and_then(|f| structural_tag(f, &req.tools, level)).map(Constraint::StructuralTag)
        }
    })
}

/// The constraint for a request whose server parser writes forced calls in
/// its own format: `required` and named become [`Constraint::Calls`] over the
/// family's tags (every tool's arguments pinned to its schema), `auto` is as
/// in [`request_constraint`]. Without a family nothing is known of the call
/// syntax, so `required` and named stay free (as vLLM leaves them for such
/// parsers).
pub fn forced_constraint(
    req: &CheckedRequest,
    family: Option<Family>,
    level: StrictLevel,
) -> Result<Option<Constraint>, GrammarError> {
    let Some(f) = family else {
        return match req.tool_choice {
            ToolChoiceMode::Auto | ToolChoiceMode::None => request_constraint(req, None, level),
            _ => Ok(None),
        };
    };
    Ok(match &req.tool_choice {
        ToolChoiceMode::Required => structural_tag(f, &req.tools, StrictLevel::Parameter)
            .map(|tag| Constraint::Calls { tag, one: !req.parallel_tool_calls }),
        ToolChoiceMode::Named(name) => {
            let tool: Vec<_> = req.tools.iter().filter(|t| &t.function.name == name).cloned().collect();
            if tool.is_empty() {
                return Err(GrammarError::UnknownTool { name: name.clone() });
            }
            structural_tag(f, &tool, StrictLevel::Parameter).map(|tag| Constraint::Calls { tag, one: true })
        }
        _ => return request_constraint(req, Some(f), level),
    })
}

/// The constraint of a `response_format` (`None` for `text` or absent):
/// `json_schema` gives its `schema` (any JSON object when it has none, as
/// vLLM reads an empty schema), `json_object` gives [`Constraint::JsonObject`].
/// Any other type is a [`GrammarError::ResponseFormat`].
pub fn response_format_constraint(rf: Option<&Value>) -> Result<Option<Constraint>, GrammarError> {
    let Some(rf) = rf.filter(|v| !v.is_null()) else { return Ok(None) };
    let bad = |m: &str| GrammarError::ResponseFormat { message: m.to_string() };
    match rf.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(Constraint::JsonObject)),
        Some("json_schema") => {
            let js = rf.get("json_schema").filter(|v| v.is_object()).ok_or_else(|| {
                bad("When response_format type is 'json_schema', the 'json_schema' field must be provided.")
            })?;
            let schema = js.get("schema").or_else(|| js.get("json_schema")).cloned();
            Ok(Some(match schema {
                Some(s) if s.is_object() => Constraint::JsonSchema(s),
                Some(Value::Bool(true)) | None => Constraint::JsonObject,
                Some(_) => return Err(bad("`response_format.json_schema.schema` must be an object")),
            }))
        }
        _ => Err(bad("`response_format.type` must be one of `text`, `json_object`, `json_schema`")),
    }
}
