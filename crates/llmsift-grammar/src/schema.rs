//! The JSON schemas vLLM guides decoding with for `tool_choice: "required"`
//! and for a named function (`vllm/tool_parsers/utils.py`,
//! `get_json_schema_from_tools`).
//!
//! - `required`: the output is a JSON array of `{"name", "parameters"}`
//!   objects, one `anyOf` branch per tool, at least one item (and at most
//!   one when `parallel_tool_calls` is false). A tool without parameters
//!   (absent or `{}`) gets `{"type": "object", "properties": {}}`. Every
//!   tool's `parameters.$defs` is lifted to the top level, so that
//!   `#/$defs/…` references resolve against the array schema; two tools
//!   defining the same name differently is a [`GrammarError::ConflictingDefs`].
//! - named: the output is the function's arguments, so the schema is the
//!   function's `parameters` as given (`None` when it has none: vLLM then
//!   does not constrain the output).
//!
//! Invariant: the tools given are never modified; vLLM pops `$defs` out of
//! the request's own dicts, here the lifted copy is built instead.

use crate::error::GrammarError;
use llmsift_protocol::wire::ToolParam;
use serde_json::{json, Map, Value};

/// The schema for `tool_choice: "required"`.
///
/// ```
/// use llmsift_protocol::wire::{FunctionDefinition, ToolParam};
/// let tool = ToolParam { kind: "function".into(), function: FunctionDefinition {
///     name: "f".into(), ..Default::default() } };
/// let s = llmsift_grammar::required_schema(&[tool], false).unwrap();
/// assert_eq!(s["maxItems"], 1);
/// assert_eq!(s["items"]["anyOf"][0]["properties"]["name"]["enum"][0], "f");
/// ```
pub fn required_schema(tools: &[ToolParam], parallel_tool_calls: bool) -> Result<Value, GrammarError> {
    let mut any_of = Vec::with_capacity(tools.len());
    let mut defs = Map::new();
    for tool in tools {
        let f = &tool.function;
        let mut params = f.parameters.clone();
        // vLLM tests truthiness before it pops `$defs` from the same dict.
        let truthy = is_truthy(params.as_ref());
        if let Some(Value::Object(p)) = params.as_mut() {
            if let Some(d) = p.shift_remove("$defs") {
                let Value::Object(d) = d else {
                    return Err(GrammarError::InvalidDefs { tool: f.name.clone() });
                };
                for (name, schema) in d {
                    match defs.get(&name) {
                        Some(seen) if !json_eq(seen, &schema) => {
                            return Err(GrammarError::ConflictingDefs { name });
                        }
                        _ => {
                            defs.insert(name, schema);
                        }
                    }
                }
            }
        }
        let params = match params {
            Some(p) if truthy => p,
            _ => json!({"type": "object", "properties": {}}),
        };
        any_of.push(json!({
            "properties": {
                "name": {"type": "string", "enum": [f.name]},
                "parameters": params,
            },
            "required": ["name", "parameters"],
        }));
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("array"));
    schema.insert("minItems".into(), json!(1));
    if !parallel_tool_calls {
        schema.insert("maxItems".into(), json!(1));
    }
    schema.insert("items".into(), json!({"type": "object", "anyOf": any_of}));
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Ok(Value::Object(schema))
}

/// The schema for a named tool choice: that function's `parameters`
/// (`None` when the function declares none).
pub fn named_schema(tools: &[ToolParam], name: &str) -> Result<Option<Value>, GrammarError> {
    tools
        .iter()
        .find(|t| t.function.name == name)
        .map(|t| t.function.parameters.clone())
        .ok_or_else(|| GrammarError::UnknownTool { name: name.to_string() })
}

/// Python truthiness of a `parameters` value (`None`, `{}`, `[]`, `""`,
/// `0` and `false` are falsy).
fn is_truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
    }
}

/// Python `==` on decoded JSON: maps compare regardless of key order and
/// `1 == 1.0`.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Bool(x), Value::Number(_)) | (Value::Number(_), Value::Bool(x)) => {
            // Python: True == 1, False == 0.
            let n = if let Value::Number(n) = if a.is_number() { a } else { b } { n.as_f64() } else { None };
            n == Some(if *x { 1.0 } else { 0.0 })
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}
