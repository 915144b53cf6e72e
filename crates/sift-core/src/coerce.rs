//! Schema typing of JSON arguments, value by value (the `[calls] schema_args`
//! policy): vLLM's `coerce_to_schema_type` over `extract_types_from_schema`,
//! as its K2 Horizon parser applies them to a JSON call's arguments.
//!
//! Each top-level argument whose parameter has a schema object is read as
//! text (a string as is, anything else as its JSON) and converted to the
//! first of the schema's types it reads as, in vLLM's priority order: null,
//! integer, number, boolean, object/array (any JSON), string. Arguments
//! without a schema are kept. Integers keep their exact digits, however
//! large. Pure functions; the output is Python-style JSON
//! (`json.dumps(..., ensure_ascii=False)`).

use crate::json::{escape_into, to_python_json};
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
                coerce(&raw, &schema_types(schema), &mut out);
            }
            _ => to_python_json(v, &mut out),
        }
    }
    out.push('}');
    Some(out)
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

/// Every type a schema allows (`type`, `enum` values, `anyOf`/`oneOf`/`allOf`);
/// `["string"]` when it says none.
pub(crate) fn schema_types(schema: &Value) -> Vec<String> {
    let mut types: Vec<String> = vec![];
    collect_types(schema, &mut types);
    if types.is_empty() {
        types.push("string".into());
    }
    types
}

fn collect_types(schema: &Value, types: &mut Vec<String>) {
    let Value::Object(o) = schema else { return };
    let mut add = |t: &str| {
        if !types.iter().any(|x| x == t) {
            types.push(t.to_string());
        }
    };
    match o.get("type") {
        Some(Value::String(t)) => add(t),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).for_each(&mut add),
        _ => {}
    }
    if let Some(Value::Array(e)) = o.get("enum") {
        for v in e {
            add(match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            });
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(a)) = o.get(key) {
            for c in a {
                collect_types(c, types);
            }
        }
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

/// Python's `int(text)`: white space around, a sign, digits with single
/// underscores between them. Returns the canonical digits.
fn py_int(text: &str) -> Option<String> {
    let t = text.trim();
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let b = body.as_bytes();
    if b.is_empty() || b[0] == b'_' || b[b.len() - 1] == b'_' || body.contains("__") {
        return None;
    }
    if !b.iter().all(|c| c.is_ascii_digit() || *c == b'_') {
        return None;
    }
    let digits: String = body.chars().filter(|c| *c != '_').collect();
    let digits = digits.trim_start_matches('0');
    Some(match (digits.is_empty(), neg) {
        (true, _) => "0".to_string(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_string(),
    })
}

/// Python's `repr(float)`: shortest round-trip digits, positional for
/// exponents in [-4, 16), else `d.ddde+XX`.
fn py_float(x: f64) -> String {
    let sci = format!("{x:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let e = exp as usize + 1;
            if digits.len() <= e {
                s.push_str(&digits);
                s.push_str(&"0".repeat(e - digits.len()));
                s.push_str(".0");
            } else {
                s.push_str(&digits[..e]);
                s.push('.');
                s.push_str(&digits[e..]);
            }
        } else {
            s.push_str("0.");
            s.push_str(&"0".repeat((-exp - 1) as usize));
            s.push_str(&digits);
        }
    } else {
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        s.push_str(&format!("{:02}", exp.abs()));
    }
    s
}

/// Python's `float(text)` when finite.
fn py_finite_float(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.contains('_') {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

fn push_string(raw: &str, out: &mut String) {
    out.push('"');
    escape_into(out, raw);
    out.push('"');
}

/// vLLM's `coerce_to_schema_type(raw, types)`, written as JSON into `out`.
fn coerce(raw: &str, types: &[String], out: &mut String) {
    let types: Vec<String> = types.iter().map(|t| normalize(t)).collect();
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("null") && raw.to_lowercase() == "null" {
        out.push_str("null");
        return;
    }
    if has("integer") {
        if let Some(d) = py_int(raw) {
            out.push_str(&d);
            return;
        }
    }
    if has("number") {
        // An integer keeps its exact digits.
        if let Some(d) = py_int(raw) {
            out.push_str(&d);
            return;
        }
        if let Some(x) = py_finite_float(raw) {
            if x.fract() != 0.0 {
                out.push_str(&py_float(x));
            } else if x.abs() < 9.0e15 {
                out.push_str(&(x as i64).to_string());
            } else {
                out.push_str(&format!("{x:.0}"));
            }
            return;
        }
    }
    if has("boolean") {
        match raw.trim().to_lowercase().as_str() {
            "true" | "1" => return out.push_str("true"),
            "false" | "0" => return out.push_str("false"),
            _ => {}
        }
    }
    if has("object") || has("array") {
        if let Ok(v) = serde_json::from_str::<Value>(raw) {
            return to_python_json(&v, out);
        }
    }
    if has("string") {
        return push_string(raw, out);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => to_python_json(&v, out),
        Err(_) => push_string(raw, out),
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
    fn duplicate_keys() {
        assert_eq!(has_duplicate_keys(r#"{"a": 1, "b": {"a": 2}}"#), Some(false));
        assert_eq!(has_duplicate_keys(r#"{"a": 1, "a": 2}"#), Some(true));
        assert_eq!(has_duplicate_keys("[1]"), None);
    }

    #[test]
    fn python_numbers() {
        assert_eq!(py_int(" -0_7 ").as_deref(), Some("-7"));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_float(0.5), "0.5");
        assert_eq!(py_float(1e-5), "1e-05");
        assert_eq!(py_float(1.5e16), "1.5e+16");
        assert_eq!(py_float(-123.25), "-123.25");
    }
}
