//! Transforms (a field's `transform` / `transform_each`) and the schema
//! casting of call arguments, as transformers' `_apply_transform` and
//! `ResponseParser._coerce_tool_calls` do them. Both are functions of a
//! closed region's value, applied once when the region closes.

use super::content::{big_int, json_loads};
use super::pycall::{float_value, Malformed};
use super::TemplateError;
use crate::pylit::{py_float, py_int, py_strip};
use crate::schema::Tools;
use serde_json::{Map, Value};

fn word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// `\{(\w+(?:\.\w+)*)\}` matched at the start of `s`: the path and the match length.
fn placeholder_at(s: &str) -> Option<(&str, usize)> {
    let inner = s.strip_prefix('{')?;
    let end = inner.find('}')?;
    let path = &inner[..end];
    let ok = !path.is_empty() && path.split('.').all(|p| !p.is_empty() && p.chars().all(word));
    ok.then_some((path, end + 2))
}

/// The path of a whole-string placeholder (`fullmatch`).
fn whole_placeholder(s: &str) -> Option<&str> {
    placeholder_at(s).filter(|(_, n)| *n == s.len()).map(|(p, _)| p)
}

/// Refuses a string that mixes a placeholder with literal text (transformers' check).
pub(crate) fn validate(scope: &str, t: &Value) -> Result<(), TemplateError> {
    match t {
        Value::Object(o) => o.values().try_for_each(|v| validate(scope, v)),
        Value::Array(a) => a.iter().try_for_each(|v| validate(scope, v)),
        Value::String(s) => {
            let has = s.char_indices().any(|(i, c)| c == '{' && placeholder_at(&s[i..]).is_some());
            if has && whole_placeholder(s).is_none() {
                return Err(TemplateError::Invalid {
                    message: format!(
                        "{scope}: transform string {s:?} mixes a {{placeholder}} with literal text"
                    ),
                });
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `_apply_transform(transform, scope)`.
pub(crate) fn apply(t: &Value, scope: &Map<String, Value>) -> Result<Value, Malformed> {
    Ok(match t {
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, v) in o {
                out.insert(k.clone(), apply(v, scope)?);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| apply(v, scope)).collect::<Result<_, _>>()?),
        Value::String(s) => match whole_placeholder(s) {
            None => t.clone(),
            Some(path) => {
                let mut keys = path.split('.');
                let root = keys.next().unwrap_or("");
                let mut v = scope
                    .get(root)
                    .ok_or_else(|| Malformed(format!("transform placeholder {s} is not defined")))?;
                for k in keys {
                    v = v
                        .as_object()
                        .ok_or_else(|| Malformed(format!("transform placeholder {s} cannot index at {k}")))?
                        .get(k)
                        .ok_or_else(|| Malformed(format!("transform placeholder {s} is missing key {k}")))?;
                }
                v.clone()
            }
        },
        other => other.clone(),
    })
}

/// `_schema_types`.
fn schema_types(schema: &Value, out: &mut Vec<String>) {
    let Some(o) = schema.as_object() else { return };
    match o.get("type") {
        Some(Value::String(s)) => out.push(s.clone()),
        Some(Value::Array(a)) => out.extend(a.iter().filter_map(Value::as_str).map(str::to_string)),
        _ => {}
    }
    for u in ["anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = o.get(u) {
            for c in a {
                schema_types(c, out);
            }
        }
    }
    let nullable = o.get("nullable").is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)));
    if nullable && !out.iter().any(|t| t == "null") {
        out.push("null".into());
    }
}

/// `_coerce(raw, types)`: the first type the text reads as, else the text.
fn coerce(raw: &str, types: &[String]) -> Value {
    for t in types {
        match t.as_str() {
            "integer" => {
                if let Some(d) = py_int(raw) {
                    if let Some(v) = big_int(&d) {
                        return v;
                    }
                    continue;
                }
                match py_float(raw) {
                    Some(f) if f.is_finite() && f.fract() == 0.0 => {
                        if let Some(v) = big_int(&crate::pylit::int_text(f)) {
                            return v;
                        }
                    }
                    _ => {}
                }
            }
            "number" => match py_float(raw) {
                Some(f) if f.is_finite() => {
                    if f.fract() == 0.0 && !raw.contains('.') {
                        if let Some(v) = big_int(&crate::pylit::int_text(f)) {
                            return v;
                        }
                    }
                    return float_value(f);
                }
                _ => {}
            },
            "boolean" => {
                let l = py_strip(raw).to_lowercase();
                if matches!(l.as_str(), "true" | "1" | "false" | "0") {
                    return Value::Bool(l == "true" || l == "1");
                }
            }
            "null" if matches!(py_strip(raw), "null" | "None") => return Value::Null,
            "object" | "array" => {
                if let Some(v) = json_loads(raw) {
                    if (t == "object" && v.is_object()) || (t == "array" && v.is_array()) {
                        return v;
                    }
                }
            }
            _ => {}
        }
    }
    Value::String(raw.to_string())
}

/// `_coerce_tool_calls`: arguments cast by the calling tool's schema, in place.
pub(crate) fn cast_calls(v: &mut Value, tools: &Tools, typed: bool) {
    if let Value::Array(a) = v {
        for x in a {
            cast_calls(x, tools, typed);
        }
        return;
    }
    let Some(f) = v.get_mut("function").and_then(Value::as_object_mut) else { return };
    let Some(name) = f.get("name").and_then(Value::as_str).map(str::to_string) else { return };
    let Some(props) = tools.parameters(&name).and_then(|p| p.get("properties")).and_then(Value::as_object)
    else {
        return;
    };
    if props.is_empty() {
        return;
    }
    let Some(args) = f.get_mut("arguments").and_then(Value::as_object_mut) else { return };
    for (k, a) in args.iter_mut() {
        let Some(schema) = props.get(k) else { continue };
        let mut types = vec![];
        schema_types(schema, &mut types);
        if types.is_empty() || (typed && types.iter().any(|t| t == "string")) {
            continue;
        }
        match a {
            Value::String(s) => *a = coerce(s, &types),
            Value::Array(items) if !types.iter().any(|t| t == "array") => {
                for it in items {
                    if let Value::String(s) = it {
                        *it = coerce(s, &types);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_and_casting() {
        assert!(validate("f", &json!({"a": "x{content}"})).is_err());
        assert!(validate("f", &json!({"a": "{content.args}", "b": "lit"})).is_ok());
        let scope = json!({"name": "f", "content": {"args": {"x": 1}}});
        let out = apply(
            &json!({"function": {"name": "{name}", "arguments": "{content.args}"}}),
            scope.as_object().unwrap(),
        );
        assert_eq!(out.unwrap(), json!({"function": {"name": "f", "arguments": {"x": 1}}}));
        let tools = Tools::from_json(
            &json!([{"type": "function", "function": {"name": "f", "parameters": {"properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"}, "s": {"type": "string"},
            "o": {"type": ["object", "null"]}}}}}]),
        );
        let mut v = json!({"function": {"name": "f", "arguments": {"n": "3.0", "x": "1e3", "b": "True", "s": "7", "o": "None"}}});
        cast_calls(&mut v, &tools, false);
        assert_eq!(v["function"]["arguments"], json!({"n": 3, "x": 1000, "b": true, "s": "7", "o": null}));
    }
}
