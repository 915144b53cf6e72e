//! The constraint of a checked request: what vLLM would guide decoding
//! with, resolved from its `tool_choice`.
//!
//! - `none`: nothing;
//! - `required`: the array schema of [`crate::required_schema`];
//! - named: the function's parameters ([`crate::named_schema`]; nothing when
//!   it declares none);
//! - `auto`: the family's structural tag, when the server's tool parser has
//!   one and the strict level asks for it ([`crate::structural_tag`]).

use crate::error::GrammarError;
use crate::family::Family;
use crate::lark::{json_schema_lark, structural_tag_lark, LarkOptions};
use crate::schema::{named_schema, required_schema};
use crate::tag::{structural_tag, StrictLevel, StructuralTag};
use serde_json::Value;
use llmsift_protocol::{CheckedRequest, ToolChoiceMode};

/// A structured-output constraint on the output.
#[derive(Debug, Clone, PartialEq)]
pub enum Constraint {
    /// The whole output is JSON following this schema.
    JsonSchema(Value),
    /// Free text with calls in the family's own format.
    StructuralTag(StructuralTag),
}

impl Constraint {
    /// The constraint as an llguidance Lark grammar.
    pub fn to_lark(&self, opts: &LarkOptions) -> String {
        match self {
            Constraint::JsonSchema(s) => json_schema_lark(s, opts),
            Constraint::StructuralTag(t) => structural_tag_lark(t, opts),
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
