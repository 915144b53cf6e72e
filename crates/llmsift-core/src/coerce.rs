//! Schema typing of JSON arguments, value by value: vLLM's
//! `coerce_to_schema_type` over `extract_types_from_schema`, as its K2
//! Horizon parser applies them to a JSON call's arguments (the `[calls]
//! schema_args` policy), as its parser engine's `_fix_arg_types` applies them
//! to finished calls, nested values included (`fix_arg_types`), and to XML
//! parameter values (`coerce_values`).
//!
//! Each top-level argument whose parameter has a schema object is read as
//! text (a string as is, anything else as its JSON) and converted to the
//! first of the schema's types it reads as, in vLLM's priority order: null,
//! integer, number, boolean, object/array (any JSON), string. Arguments
//! without a schema are kept. Integers keep their exact digits, however
//! large. Pure functions; the output is Python-style JSON
//! (`json.dumps(..., ensure_ascii=False)`).

use crate::json::{escape_into, to_python_json};
use crate::pylit::{number_text, py_float, py_int, py_strip};
use crate::schema::Tools;
use serde_json::Value;

/// Types `args` (a JSON object's text) by the schema of `func`'s parameters.
/// `None` when `args` is not a JSON object.
pub fn type_json_args(tools: &Tools, func: &str, args: &str) -> Option<String> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(args) else {
        return None;
    };
    let mut out = String::with_capacity(args.len());
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        escape_into(&mut out, k);
        out.push_str("\": ");
        match tools.param_schema(func, k) {
            Some(schema @ Value::Object(_)) => {
                let raw = match v {
                    Value::String(s) => s.clone(),
                    other => {
                        let mut t = String::new();
                        to_python_json(other, &mut t);
                        t
                    }
                };
                write_typed(&raw, coerce(&raw, &schema_types(schema)), &mut out);
            }
            _ => to_python_json(v, &mut out),
        }
    }
    out.push('}');
    Some(out)
}

/// vLLM's parser-engine `_fix_arg_types` over a finished call's JSON
/// arguments: values typed by the parameters' schemas, recursing into
/// nested objects (`properties`) and arrays (`items`). A string is read by
/// `coerce_to_schema_type`; any other value is read from its JSON text and
/// replaced when that reading differs in type or value (`5` for a string is
/// `"5"`, `2.0` for a number is `2`). `None` when nothing changes (the text
/// stays as written) or `args` is not an object.
pub fn fix_arg_types(tools: &Tools, func: &str, args: &str) -> Option<String> {
    let props = tools.parameters(func)?.get("properties")?.as_object()?;
    if props.is_empty() {
        return None;
    }
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(args) else {
        return None;
    };
    if !fix_dict(&mut map, props) {
        return None;
    }
    let mut out = String::with_capacity(args.len());
    to_python_json(&Value::Object(map), &mut out);
    Some(out)
}

fn fix_dict(map: &mut serde_json::Map<String, Value>, props: &serde_json::Map<String, Value>) -> bool {
    let mut changed = false;
    for (k, v) in map.iter_mut() {
        if let Some(schema @ Value::Object(_)) = props.get(k) {
            changed |= fix_value(v, schema);
        }
    }
    changed
}

pub(crate) fn fix_value(v: &mut Value, schema: &Value) -> bool {
    match v {
        Value::String(s) => match coerce(s, &schema_types(schema)) {
            Typed::Str => false,
            t => {
                *v = typed_value(s, t);
                true
            }
        },
        Value::Object(m) => match schema.get("properties").and_then(Value::as_object) {
            Some(p) => fix_dict(m, p),
            None => false,
        },
        Value::Array(items) => match schema.get("items") {
            Some(is @ Value::Object(_)) => items.iter_mut().fold(false, |c, x| fix_value(x, is) | c),
            _ => false,
        },
        other => {
            let mut text = String::new();
            to_python_json(other, &mut text);
            let t = typed_value(&text, coerce(&text, &schema_types(schema)));
            // Python compares `type(coerced) is not type(value) or coerced != value`;
            // serde's equality tells integers from floats the same way.
            if t != *other {
                *other = t;
                return true;
            }
            false
        }
    }
}

/// Whether `t` is a JSON integer literal (`-12`, `0`; no leading zeros).
pub(crate) fn is_json_int(t: &str) -> bool {
    let int = t.strip_prefix('-').unwrap_or(t);
    !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) && (int == "0" || !int.starts_with('0'))
}

/// A value's text read as JSON (else as a string) and typed against
/// `schema` as `_fix_arg_types` types one value, written as Python-style JSON.
pub(crate) fn write_fixed(text: &str, schema: &Value, out: &mut String) {
    let t = text.trim();
    if is_json_int(t) {
        // A JSON integer keeps its exact digits (Python's int is unbounded):
        // typed from its text, which is what `_fix_arg_types` reads too.
        match coerce(t, &schema_types(schema)) {
            Typed::Json(_) => out.push_str(t),
            typed => write_typed(t, typed, out),
        }
        return;
    }
    let mut v = serde_json::from_str::<Value>(t).unwrap_or_else(|_| Value::String(text.to_string()));
    fix_value(&mut v, schema);
    to_python_json(&v, out);
}

fn typed_value(raw: &str, t: Typed) -> Value {
    match t {
        Typed::Null => Value::Null,
        Typed::Bool(b) => Value::Bool(b),
        Typed::Num(n) => serde_json::from_str(&n).unwrap_or_else(|_| Value::String(raw.to_string())),
        Typed::Json(v) => v,
        Typed::Str => Value::String(raw.to_string()),
    }
}

/// vLLM's `schema_types._schema_types`: the JSON types a parameter schema
/// admits (`type`, `const`, `enum`, local `$ref`, `anyOf`/`oneOf` as a union,
/// `allOf` as an intersection; `number` admits `integer`), `None` when it
/// admits any. `root` is the function's `parameters` (for `#/...` refs);
/// `refs` memoizes refs and ends cycles.
pub(crate) fn admitted_types(
    schema: &Value,
    root: &Value,
    refs: &mut std::collections::HashMap<String, Option<Vec<String>>>,
) -> Option<Vec<String>> {
    let obj = schema.as_object()?;
    let mut constraints: Vec<Option<Vec<String>>> = vec![];
    match obj.get("type") {
        Some(Value::String(t)) => constraints.push(Some(vec![t.clone()])),
        Some(Value::Array(a)) => {
            constraints.push(Some(a.iter().filter_map(Value::as_str).map(String::from).collect()))
        }
        _ => {}
    }
    if let Some(c) = obj.get("const") {
        constraints.push(Some(vec![json_type(c).into()]));
    }
    if let Some(Value::Array(e)) = obj.get("enum") {
        constraints.push(Some(e.iter().map(|v| json_type(v).to_string()).collect()));
    }
    if let Some(Value::String(r)) = obj.get("$ref") {
        if !refs.contains_key(r) {
            refs.insert(r.clone(), None);
            let mut node = if r.starts_with("#/") { Some(root) } else { None };
            for part in r.get(2..).unwrap_or("").split('/') {
                let key = part.replace("~1", "/").replace("~0", "~");
                node = node.and_then(|n| n.as_object()).and_then(|o| o.get(&key));
            }
            let t = node.and_then(|n| admitted_types(n, root, refs));
            refs.insert(r.clone(), t);
        }
        constraints.push(refs[r].clone());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get(key) {
            if !branches.is_empty() {
                let mut union: Vec<String> = vec![];
                let mut open = false;
                for b in branches {
                    match admitted_types(b, root, refs) {
                        Some(t) => union.extend(t),
                        None => {
                            open = true; // an unconstrained branch admits anything
                            break;
                        }
                    }
                }
                if !open {
                    constraints.push(Some(union));
                }
            }
        }
    }
    if let Some(Value::Array(all)) = obj.get("allOf") {
        constraints.extend(all.iter().map(|s| admitted_types(s, root, refs)));
    }
    let known: Vec<Vec<String>> = constraints
        .into_iter()
        .flatten()
        .map(|mut t| {
            if t.iter().any(|x| x == "number") && !t.iter().any(|x| x == "integer") {
                t.push("integer".into());
            }
            t
        })
        .collect();
    let first = known.first()?;
    let mut out: Vec<String> = vec![];
    for t in first {
        if known.iter().all(|k| k.contains(t)) && !out.contains(t) {
            out.push(t.clone());
        }
    }
    Some(out)
}

/// The JSON Schema type name of a value, as Python's `_json_type` names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::String(_) => "string",
    }
}

/// vLLM's `schema_types.convert_value(raw, allowed, decode)`: the text kept
/// when the schema admits only a string; otherwise `decoded` (the text
/// decoded by the caller), kept unless the schema admits a string and not
/// the decoded value's type.
pub(crate) fn convert_admitted(raw: &str, allowed: Option<&[String]>, decoded: Value) -> Value {
    let Some(allowed) = allowed else { return decoded };
    if !allowed.is_empty() && allowed.iter().all(|t| t == "string") {
        return Value::String(raw.to_string());
    }
    if !allowed.iter().any(|t| t == "string") {
        return decoded;
    }
    let t = json_type(&decoded);
    if t != "string" && allowed.iter().any(|a| a == t) {
        decoded
    } else {
        Value::String(raw.to_string())
    }
}

/// Whether a JSON object's text names one key twice (`None`: not an object).
pub(crate) fn has_duplicate_keys(args: &str) -> Option<bool> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut seen = std::collections::HashSet::new();
            let mut dup = false;
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                dup |= !seen.insert(k);
            }
            Ok(dup)
        }
    }
    serde_json::Deserializer::from_str(args).deserialize_map(Keys).ok()
}

/// vLLM's `extract_types_from_schema`, normalised (`int` → `integer`, …)
/// and without repeats: every type a schema allows (`type`, `enum` values,
/// `anyOf`/`oneOf`/`allOf`), where a schema (or a choice) that names none
/// allows a string.
pub(crate) fn schema_types(schema: &Value) -> Vec<String> {
    let mut raw = vec![];
    types_of(schema, &mut raw);
    let mut types: Vec<String> = Vec::with_capacity(raw.len());
    for t in raw {
        let t = normalize(&t);
        if !types.contains(&t) {
            types.push(t);
        }
    }
    types
}

fn types_of(schema: &Value, out: &mut Vec<String>) {
    let start = out.len();
    if !schema.is_object() {
        out.push("string".into());
        return;
    }
    match schema.get("type") {
        Some(Value::String(s)) => out.push(s.clone()),
        Some(Value::Array(a)) => out.extend(a.iter().filter_map(Value::as_str).map(str::to_string)),
        _ => {}
    }
    for v in schema.get("enum").and_then(Value::as_array).into_iter().flatten() {
        out.push(
            match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            }
            .into(),
        );
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for choice in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            types_of(choice, out);
        }
    }
    if out.len() == start {
        out.push("string".into());
    }
}

fn normalize(t: &str) -> String {
    let t = t.trim().to_lowercase();
    let alias = match t.as_str() {
        "str" | "text" | "varchar" | "char" | "enum" => "string",
        "int" | "int32" | "int64" | "uint" | "uint32" | "uint64" | "long" | "short" | "unsigned" => "integer",
        "float" | "float32" | "float64" | "double" => "number",
        "bool" => "boolean",
        "dict" => "object",
        "arr" | "list" | "sequence" => "array",
        _ => return t,
    };
    alias.to_string()
}

fn push_string(raw: &str, out: &mut String) {
    out.push('"');
    escape_into(out, raw);
    out.push('"');
}

/// What vLLM's `coerce_to_schema_type` made of a value's text.
pub(crate) enum Typed {
    Null,
    Bool(bool),
    /// A JSON number's exact text (Python's `int` is unbounded).
    Num(String),
    /// Any JSON (an `object`/`array` type, or the untyped fallback).
    Json(Value),
    /// The text itself, as a string.
    Str,
}

/// vLLM's `coerce_to_schema_type(raw, types)` over [`schema_types`]: the
/// first type the text reads as, in the order null, integer, number,
/// boolean, object/array, string; then any JSON; then the text.
pub(crate) fn coerce(raw: &str, types: &[String]) -> Typed {
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("null") && raw.to_lowercase() == "null" {
        return Typed::Null;
    }
    if has("integer") || has("number") {
        // An integer keeps its exact digits, for `number` too.
        if let Some(d) = py_int(raw) {
            return Typed::Num(d);
        }
    }
    if has("number") {
        if let Some(x) = py_float(raw).filter(|x| x.is_finite()) {
            return Typed::Num(number_text(x));
        }
    }
    if has("boolean") {
        match py_strip(&raw.to_lowercase()) {
            "true" | "1" => return Typed::Bool(true),
            "false" | "0" => return Typed::Bool(false),
            _ => {}
        }
    }
    if has("object") || has("array") {
        if let Ok(v) = serde_json::from_str::<Value>(raw) {
            return Typed::Json(v);
        }
    }
    if has("string") {
        return Typed::Str;
    }
    serde_json::from_str::<Value>(raw).map_or(Typed::Str, Typed::Json)
}

/// A coerced value written as Python-style JSON.
pub(crate) fn write_typed(raw: &str, typed: Typed, out: &mut String) {
    match typed {
        Typed::Null => out.push_str("null"),
        Typed::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Typed::Num(n) => out.push_str(&n),
        Typed::Json(v) => to_python_json(&v, out),
        Typed::Str => push_string(raw, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Tools {
        Tools::from_json(&serde_json::json!([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {
            "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
            "s": {"type": "string"}, "o": {"type": "object"}, "u": {"anyOf": [{"type": "null"}, {"type": "integer"}]}
        }}}}]))
    }

    #[test]
    fn types_by_schema() {
        let t = tools();
        let got = |a: &str| type_json_args(&t, "f", a);
        assert_eq!(got(r#"{"i": "2", "b": "true", "s": 5}"#).unwrap(), r#"{"i": 2, "b": true, "s": "5"}"#);
        assert_eq!(got(r#"{"n": 9223372036854775807}"#).unwrap(), r#"{"n": 9223372036854775807}"#);
        assert_eq!(got(r#"{"n": "2.50", "x": "keep"}"#).unwrap(), r#"{"n": 2.5, "x": "keep"}"#);
        assert_eq!(got(r#"{"o": "{\"a\":1}", "u": "null"}"#).unwrap(), r#"{"o": {"a": 1}, "u": null}"#);
        assert_eq!(got(r#"{"i": "x1", "b": "maybe"}"#).unwrap(), r#"{"i": "x1", "b": "maybe"}"#);
        assert_eq!(got("[1]"), None);
    }

    #[test]
    fn fixes_json_arguments_like_the_engine() {
        let t = Tools::from_json(
            &serde_json::json!([{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {
                "s": {"type": "string"}, "n": {"type": "number"}, "i": {"type": "integer"},
                "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
                "a": {"type": "array", "items": {"type": "integer"}}, "r": {"$ref": "#/$defs/X"}
            }}}}]),
        );
        let got = |a: &str| fix_arg_types(&t, "f", a);
        assert_eq!(got(r#"{"s": 5, "n": 2.0, "i": 1.0}"#).unwrap(), r#"{"s": "5", "n": 2, "i": 1.0}"#);
        assert_eq!(
            got(r#"{"o": {"k": "5"}, "a": [1, "2"], "r": 7}"#).unwrap(),
            r#"{"o": {"k": 5}, "a": [1, 2], "r": "7"}"#
        );
        assert_eq!(got(r#"{"s": "x", "i": 3}"#), None);
        assert_eq!(got(r#"{"s": "x"}"#), None);
        assert_eq!(fix_arg_types(&t, "g", r#"{"s": 5}"#), None);
    }

    #[test]
    fn duplicate_keys() {
        assert_eq!(has_duplicate_keys(r#"{"a": 1, "b": {"a": 2}}"#), Some(false));
        assert_eq!(has_duplicate_keys(r#"{"a": 1, "a": 2}"#), Some(true));
        assert_eq!(has_duplicate_keys("[1]"), None);
    }

    #[test]
    fn schema_types_follow_vllm() {
        let t = |v: Value| schema_types(&v);
        assert_eq!(t(serde_json::json!({"type": ["int", "NULL"]})), ["integer", "null"]);
        assert_eq!(t(serde_json::json!({"enum": [1, 2.5, "a"]})), ["integer", "number", "string"]);
        // A choice that names no type allows a string.
        assert_eq!(t(serde_json::json!({"anyOf": [{"type": "integer"}, {}]})), ["integer", "string"]);
        assert_eq!(t(serde_json::json!({})), ["string"]);
    }
}
