//! A constraint as xgrammar's structural-tag JSON: the `structural_tag`
//! that vLLM 0.34's `structured_outputs` and SGLang's `/v1/completions`
//! take (`{"type": "structural_tag", "format": …}`).
//!
//! - a JSON schema → `json_schema`; any JSON object → `json_schema` of
//!   `{"type": "object"}`;
//! - a structural tag → `triggered_tags` (free text, a trigger opens one of
//!   the tags), `at_least_one` / `stop_after_first` for forced calls;
//!   a family's call section (Kimi K2, DeepSeek) is one tag whose content is
//!   the calls `tags_with_separator`;
//! - after the reasoning: a `sequence` of any text up to the reasoning end
//!   marker, then the above, so the model thinks freely first (what vLLM's
//!   `reasoning_ended` does when the server runs the reasoning parser; a
//!   raw backend does not, so the marker is in the grammar).
//!
//! What the format cannot say exactly is loosened, never tightened: a
//! Qwen3-Coder parameter list is `any_text` up to the call's end, a tag
//! with several possible ends keeps its first.
//!
//! Invariant: every string the model must write is a JSON string of the
//! document (never spliced into grammar syntax).

use crate::constraint::Constraint;
use crate::tag::{pieces_text, Content, Piece, StructuralTag, Tag};
use serde_json::{json, Value};

/// The `structural_tag` document for `constraint`, starting after `after`
/// (the reasoning end marker) when given.
pub fn structural_tag_json(constraint: &Constraint, after: Option<&str>) -> Value {
    let format = match constraint {
        Constraint::JsonSchema(s) => schema_format(s),
        Constraint::JsonObject => schema_format(&json!({"type": "object"})),
        Constraint::StructuralTag(t) => triggered(t, false, false),
        Constraint::Calls { tag, one } => triggered(tag, true, *one),
    };
    let format = match after {
        Some(m) => json!({"type": "sequence", "elements": [
            {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": m},
            format,
        ]}),
        None => format,
    };
    json!({"type": "structural_tag", "format": format})
}

fn schema_format(schema: &Value) -> Value {
    let schema = if schema.is_object() { schema.clone() } else { json!({}) };
    json!({"type": "json_schema", "json_schema": schema})
}

fn triggered(t: &StructuralTag, at_least_one: bool, stop_after_first: bool) -> Value {
    let tags: Vec<Value> = t.tags.iter().map(tag_json).collect();
    match &t.section {
        None => json!({"type": "triggered_tags", "triggers": t.trigger_texts(), "tags": tags,
            "at_least_one": at_least_one, "stop_after_first": stop_after_first}),
        Some(sec) => {
            let calls = json!({"type": "tags_with_separator", "tags": tags,
                "separator": pieces_text(&sec.separator), "at_least_one": true,
                "stop_after_first": stop_after_first});
            let section = json!({"type": "tag", "begin": pieces_text(&sec.begin), "content": calls,
                "end": pieces_text(&sec.end)});
            json!({"type": "triggered_tags", "triggers": [pieces_text(&sec.begin)], "tags": [section],
                "at_least_one": at_least_one, "stop_after_first": true})
        }
    }
}

fn content_json(c: &Content) -> Value {
    match c {
        Content::Json { schema } => schema_format(schema),
        Content::XmlParameters { .. } | Content::Text => json!({"type": "any_text"}),
        Content::Empty => json!({"type": "const_string", "value": ""}),
    }
}

/// One tag; a `begin` with digits in it (Kimi K2's call index) keeps its
/// fixed head as `begin` and writes the rest at the start of the content.
fn tag_json(t: &Tag) -> Value {
    let content = content_json(&t.content);
    let cut = t.begin.iter().position(|p| *p == Piece::Digits);
    let (begin, content) = match cut {
        None => (t.begin_text(), content),
        Some(i) => {
            let mut elements = vec![json!({"type": "regex", "pattern": "[0-9]+"})];
            let rest = pieces_text(&t.begin[i + 1..]);
            if !rest.is_empty() {
                elements.push(json!({"type": "const_string", "value": rest}));
            }
            elements.push(content);
            (pieces_text(&t.begin[..i]), json!({"type": "sequence", "elements": elements}))
        }
    };
    json!({"type": "tag", "begin": begin, "content": content, "end": t.end_text()})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{structural_tag, Family, StrictLevel};
    use llmsift_protocol::wire::{FunctionDefinition, ToolParam};

    fn tool(name: &str) -> ToolParam {
        ToolParam {
            kind: "function".into(),
            function: FunctionDefinition {
                name: name.into(),
                parameters: Some(json!({"type": "object", "properties": {"x": {"type": "integer"}}})),
                ..Default::default()
            },
        }
    }

    #[test]
    fn forced_hermes_calls_after_reasoning() {
        let tag = structural_tag(Family::Hermes, &[tool("f")], StrictLevel::Parameter).unwrap();
        let v = structural_tag_json(&Constraint::Calls { tag, one: true }, Some("</think>"));
        assert_eq!(v["format"]["elements"][0]["end"], "</think>");
        let calls = &v["format"]["elements"][1];
        assert_eq!(calls["type"], "triggered_tags");
        assert_eq!(
            (calls["at_least_one"].clone(), calls["stop_after_first"].clone()),
            (json!(true), json!(true))
        );
        assert_eq!(calls["tags"][0]["begin"], "<tool_call>\n{\"name\": \"f\", \"arguments\": ");
        assert_eq!(calls["tags"][0]["content"]["json_schema"]["properties"]["x"]["type"], "integer");
    }

    #[test]
    fn kimi_section_and_index() {
        let tag = structural_tag(Family::KimiK2, &[tool("f")], StrictLevel::Parameter).unwrap();
        let v = structural_tag_json(&Constraint::StructuralTag(tag), None);
        let sec = &v["format"]["tags"][0];
        assert_eq!(sec["begin"], "<|tool_calls_section_begin|>");
        let call = &sec["content"]["tags"][0];
        assert_eq!(call["begin"], "<|tool_call_begin|>functions.f:");
        assert_eq!(call["content"]["elements"][0]["pattern"], "[0-9]+");
    }
}
