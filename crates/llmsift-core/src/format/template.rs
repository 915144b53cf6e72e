//! Response templates: vLLM's `hf` parser reads a model's output by a
//! `response_template` (checkpoint metadata, or the `response_template`
//! construction option). This module turns such a template into the two
//! format specs it describes, so a template is just another pair of formats.
//!
//! What converts: a `start_anchor` (the prompt's last one starts the turn the
//! output continues; the format is primed with that turn), a `thinking` field
//! (reasoning between its `open` and `close` literals), a `content` field
//! (its `open`/`close` literals are dropped), and a `tool_calls` field with
//! literal `open`/`close` and `json` content, whose `transform` (if any) takes
//! the name and the arguments from keys of that JSON object
//! (`{content.name}`, `{content.arguments}`). A call is emitted once it
//! closes with whole arguments, or dropped.
//!
//! Invariant: anything else (regex anchors, named captures, other fields,
//! non-JSON calls, content arguments) is refused with a [`FormatError`]: a
//! template is either expressed exactly or not at all, never approximated.

use crate::format::spec::FormatSpec;
use crate::FormatError;
use serde_json::{json, Map, Value};

fn refuse(why: impl Into<String>) -> FormatError {
    FormatError::Syntax { message: format!("response_template: {}", why.into()) }
}

/// A literal anchor: a string or a list of strings (none empty).
fn literals(field: &Map<String, Value>, key: &str) -> Result<Vec<String>, FormatError> {
    let out: Vec<String> = match field.get(key) {
        None => vec![],
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| refuse(format!("{key} holds a non-string")))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(refuse(format!("{key} is neither a string nor a list"))),
    };
    if out.iter().any(String::is_empty) {
        return Err(refuse(format!("{key} holds an empty literal")));
    }
    Ok(out)
}

fn field<'a>(
    fields: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a Map<String, Value>>, FormatError> {
    match fields.get(name) {
        None => Ok(None),
        Some(Value::Object(o)) => {
            for k in o.keys() {
                if !matches!(
                    k.as_str(),
                    "open" | "close" | "content" | "content_args" | "repeats" | "optional" | "transform"
                ) {
                    return Err(refuse(format!("field {name}: {k} is not supported")));
                }
            }
            Ok(Some(o))
        }
        Some(_) => Err(refuse(format!("field {name} is not a table"))),
    }
}

/// `{content.KEY}` → `KEY`.
fn content_key(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    let k = s.strip_prefix("{content.")?.strip_suffix('}')?;
    (!k.is_empty() && !k.contains(['{', '}', '.'])).then(|| k.to_string())
}

fn text_only(name: &str, f: &Map<String, Value>) -> Result<(), FormatError> {
    if f.get("content").is_some_and(|c| c != "text") || f.contains_key("transform") {
        return Err(refuse(format!("field {name} must be plain text")));
    }
    Ok(())
}

/// The reasoning spec and (with `tools`) the tool spec a template describes.
pub fn template_specs(tpl: &Value, tools: bool) -> Result<(FormatSpec, Option<FormatSpec>), FormatError> {
    let tpl = tpl.as_object().ok_or_else(|| refuse("not a table"))?;
    for k in tpl.keys() {
        if !matches!(k.as_str(), "version" | "defaults" | "fields" | "start_anchor") {
            return Err(refuse(format!("{k} is not supported")));
        }
    }
    if tpl.get("version").is_some_and(|v| v != 1) {
        return Err(refuse("unsupported version"));
    }
    let fields = match tpl.get("fields") {
        Some(Value::Object(f)) if !f.is_empty() => f,
        _ => return Err(refuse("fields must be a non-empty table")),
    };
    if let Some(k) = fields.keys().find(|k| !matches!(k.as_str(), "thinking" | "content" | "tool_calls")) {
        return Err(refuse(format!("field {k} is not supported")));
    }
    let anchors = literals(tpl, "start_anchor")?;

    // Reasoning: content, and thinking between its literals.
    let mut terminals = Map::new();
    let mut drop = vec![];
    let mut content_on = Map::new();
    let mut states = Map::new();
    if let Some(t) = field(fields, "thinking")? {
        text_only("thinking", t)?;
        let (open, close) = (literals(t, "open")?, literals(t, "close")?);
        if open.is_empty() || close.is_empty() {
            return Err(refuse("thinking needs open and close literals"));
        }
        terminals.insert("think_start".into(), json!(open));
        terminals.insert("think_end".into(), json!(close));
        content_on.insert("think_start".into(), json!("reasoning"));
        states.insert("reasoning".into(), json!({"text": "reasoning", "on": {"think_end": "content"}}));
    }
    if let Some(c) = field(fields, "content")? {
        text_only("content", c)?;
        for (i, sp) in literals(c, "open")?.into_iter().chain(literals(c, "close")?).enumerate() {
            let name = format!("content_mark{i}");
            terminals.insert(name.clone(), json!([sp]));
            drop.push(name);
        }
    }
    states.insert("content".into(), json!({"text": "content", "on": content_on}));
    let mut reasoning = json!({
        "name": "response_template",
        "kind": "reasoning",
        "terminals": terminals,
        "drop": drop,
        "states": states,
    });
    if !anchors.is_empty() {
        reasoning["prompt"] = json!({"turn_start": anchors, "prime": true});
    }
    let reasoning: FormatSpec = serde_json::from_value(reasoning).map_err(|e| refuse(e.to_string()))?;

    let tool = match (tools, field(fields, "tool_calls")?) {
        (false, _) => None,
        (true, None) => return Err(refuse("a tool parser needs a tool_calls field")),
        (true, Some(t)) => Some(tool_spec(t)?),
    };
    Ok((reasoning, tool))
}

fn tool_spec(t: &Map<String, Value>) -> Result<FormatSpec, FormatError> {
    if t.get("content").and_then(Value::as_str) != Some("json") {
        return Err(refuse("tool_calls must hold json"));
    }
    if t.get("content_args").is_some_and(|a| a.as_object().is_none_or(|o| !o.is_empty())) {
        return Err(refuse("tool_calls content_args are not supported"));
    }
    let (open, close) = (literals(t, "open")?, literals(t, "close")?);
    if open.is_empty() || close.is_empty() {
        return Err(refuse("tool_calls needs open and close literals"));
    }
    let (name_key, args_key) = match t.get("transform") {
        None => ("name".to_string(), "arguments".to_string()),
        Some(tr) => {
            let f = tr.get("function");
            let name = content_key(f.and_then(|f| f.get("name")));
            let args = content_key(f.and_then(|f| f.get("arguments")));
            match (name, args) {
                (Some(n), Some(a)) if tr.get("type").is_none_or(|v| v == "function") => (n, a),
                _ => {
                    return Err(refuse("tool_calls transform must read {content.KEY} for name and arguments"))
                }
            }
        }
    };
    let spec = json!({
        "name": "response_template",
        "kind": "tools",
        "calls": {"uncommitted": "drop", "defer": true},
        "terminals": {"call_open": open, "call_close": close},
        "states": {
            "content": {"text": "content", "on": {"call_open": {"to": "call", "call": true}}},
            "call": {
                "text": {"kind": "envelope", "name_keys": [name_key], "args_keys": [args_key],
                         "done": "tail", "fail": "tail"},
                "on": {"call_close": {"to": "content", "end": true}, "call_open": {"to": "call", "call": true}},
            },
            "tail": {
                "text": "drop",
                "on": {"call_close": {"to": "content", "end": true}, "call_open": {"to": "call", "call": true}},
            },
        },
    });
    serde_json::from_value(spec).map_err(|e| refuse(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimited_template_converts() {
        let tpl = json!({"start_anchor": "<assistant>", "fields": {
            "thinking": {"open": "<think>", "close": "</think>"},
            "tool_calls": {"open": "<call>", "close": "</call>", "content": "json", "optional": false}}});
        let (r, t) = template_specs(&tpl, true).unwrap();
        assert_eq!(r.prompt.unwrap().turn_start, vec!["<assistant>".to_string()]);
        assert!(t.unwrap().calls.defer);
    }

    #[test]
    fn regex_anchors_are_refused() {
        let tpl = json!({"start_anchor": "<a>", "fields": {
            "tool_calls": {"open_pattern": "<call (?P<name>\\w+)>", "close": "</call>", "content": "json"}}});
        assert!(template_specs(&tpl, true).is_err());
        let tpl =
            json!({"start_anchor_pattern": "<a>", "fields": {"thinking": {"open": "<t>", "close": "</t>"}}});
        assert!(template_specs(&tpl, false).is_err());
    }

    #[test]
    fn transform_must_read_content_keys() {
        let tpl = json!({"start_anchor": "<a>", "fields": {"tool_calls": {"open": "<c>", "close": "</c>",
            "content": "json", "transform": {"function": {"name": "set_alarm", "arguments": "{content}"}}}}});
        assert!(template_specs(&tpl, true).is_err());
    }
}
