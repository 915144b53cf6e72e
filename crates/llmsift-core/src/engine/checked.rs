//! Schema validation of finished calls (`calls.validate`): vLLM's MiniCPM5
//! parser keeps a call only when it fits the request's tool schema, and
//! returns the call's text as content otherwise.
//!
//! A deferred call's arguments (a JSON object, parameters in the order
//! written, duplicates kept) are checked when the call ends:
//! - every parameter has a name, and none is written twice;
//! - a parameter named in `wrapper_keys` that the function does not declare
//!   holds the arguments as a JSON or Python dict: its declared keys are
//!   unwrapped (a key written twice fails; a wrapper with none fails);
//! - a parameter the function does not declare is ignored (when it declares
//!   any);
//! - a name the request does not declare may be an `alias` of one that it
//!   does, with its arguments renamed;
//! - the function is declared and every required parameter is present.
//!
//! Invariant: a pure function of the call's name and finished arguments, so
//! it cannot depend on how the output was cut.

use crate::format::compiled::CallRules;
use crate::json::to_python_json;
use crate::schema::{ParamType, Tools};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

/// Object members in order, duplicates kept.
struct Entries(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Entries, A::Error> {
                let mut v = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, Value>()? {
                    v.push((k, val));
                }
                Ok(Entries(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads a wrapper's text as JSON, else as a Python literal.
pub(crate) fn literal(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let mut p = super::pyvalue::PyValue::default();
    let mut out = String::new();
    for c in text.trim().chars() {
        if p.push(c, &mut out) != super::pyvalue::Py::Ok {
            return None;
        }
    }
    if !p.end(&mut out) {
        return None;
    }
    serde_json::from_str(&out).ok()
}

/// Python's truthiness, for `a or b` alias lookups.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The checked call (its name, possibly an alias's target, and its
/// arguments as JSON text), or `None` when it is not a valid call.
pub(crate) fn check(policy: &CallRules, tools: &Tools, name: &str, args: &str) -> Option<(String, String)> {
    let Entries(entries) = serde_json::from_str(args).ok()?;
    let schema = tools.schema(name);
    let props = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
    let declared = |k: &str| props.is_some_and(|p| p.contains_key(k));
    let has_props = props.is_some_and(|p| !p.is_empty());
    let mut out = Map::new();
    for (key, val) in entries {
        if key.is_empty() {
            return None;
        }
        if has_props && !declared(&key) && policy.wrapper_keys.contains(&key) {
            let inner = match val {
                Value::String(s) => literal(&s)?,
                v => v,
            };
            let Value::Object(inner) = inner else { return None };
            let mut added = false;
            for (k, v) in inner {
                if !declared(&k) {
                    continue;
                }
                if out.contains_key(&k) {
                    return None;
                }
                let v = coerce(tools, name, &k, v, policy.union_string);
                out.insert(k, v);
                added = true;
            }
            if !added {
                return None;
            }
            continue;
        }
        if has_props && !declared(&key) {
            continue;
        }
        if out.contains_key(&key) {
            return None;
        }
        out.insert(key, val);
    }
    let names = tools.names();
    let mut name = name.to_string();
    if !names.contains(&name) {
        for a in &policy.alias {
            if !a.from.contains(&name) || !names.contains(&a.to) {
                continue;
            }
            let mut mapped = Map::new();
            for (to_key, from_keys) in &a.args {
                if let Some(v) = from_keys.iter().filter_map(|k| out.get(k)).find(|v| truthy(v)) {
                    mapped.insert(to_key.clone(), v.clone());
                }
            }
            if mapped.is_empty() {
                continue;
            }
            for (k, v) in &a.set {
                mapped.insert(k.clone(), serde_json::to_value(v).unwrap_or(Value::Null));
            }
            name.clone_from(&a.to);
            out = mapped;
            break;
        }
    }
    if !names.contains(&name) {
        return None;
    }
    let required = tools.schema(&name).and_then(|s| s.get("required")).and_then(Value::as_array);
    if required.into_iter().flatten().any(|r| r.as_str().is_some_and(|r| !out.contains_key(r))) {
        return None;
    }
    let mut text = String::new();
    to_python_json(&Value::Object(out), &mut text);
    Some((name, text))
}

/// A wrapped value, typed like vLLM's MiniCPM5 parser: a string parameter
/// keeps strings and gets other values as their JSON text; any other
/// parameter reads a string as JSON (or a Python literal) when it is one.
fn coerce(tools: &Tools, func: &str, key: &str, v: Value, union_string: bool) -> Value {
    let string =
        tools.param_type(func, key) == ParamType::String || (union_string && tools.admits_string(func, key));
    match v {
        Value::String(s) if !string => literal(&s).unwrap_or(Value::String(s)),
        Value::String(s) => Value::String(s),
        v if string => {
            let mut t = String::new();
            to_python_json(&v, &mut t);
            Value::String(t)
        }
        v => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::spec::AliasSpec;

    fn tools() -> Tools {
        Tools::from_json(&serde_json::json!([
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
                "properties": {"city": {"type": "string"}, "n": {"type": "integer"}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "by_id", "parameters": {"type": "object",
                "properties": {"id": {"type": "string"}, "on": {"type": "boolean"}}, "required": ["id"]}}}
        ]))
    }

    fn policy() -> CallRules {
        CallRules {
            validate: true,
            wrapper_keys: vec!["arguments".into()],
            alias: vec![AliasSpec {
                from: vec!["line".into()],
                to: "by_id".into(),
                args: [("id".to_string(), vec!["line_id".to_string(), "id".to_string()])].into(),
                set: [("on".to_string(), toml::Value::Boolean(true))].into(),
            }],
            ..CallRules::default()
        }
    }

    #[test]
    fn schema_rules() {
        let (p, t) = (policy(), tools());
        let ok = |n: &str, a: &str| check(&p, &t, n, a);
        assert_eq!(
            ok("get_weather", r#"{"city": "X"}"#),
            Some(("get_weather".into(), r#"{"city": "X"}"#.into()))
        );
        assert_eq!(ok("get_weather", r#"{"city": "X", "city": "Y"}"#), None);
        assert_eq!(ok("get_weather", r#"{"City": "X"}"#), None);
        assert_eq!(ok("get_weather", r#"{"": "X", "city": "Y"}"#), None);
        assert_eq!(ok("nope", r#"{"city": "X"}"#), None);
        assert_eq!(
            ok("get_weather", r#"{"city": "X", "extra": 1}"#),
            Some(("get_weather".into(), r#"{"city": "X"}"#.into()))
        );
        assert_eq!(
            ok("get_weather", r#"{"arguments": "{'city': 5, 'n': '3', 'zz': 1}"}"#),
            Some(("get_weather".into(), r#"{"city": "5", "n": 3}"#.into()))
        );
        assert_eq!(ok("get_weather", r#"{"arguments": "[1]"}"#), None);
        assert_eq!(
            ok("line", r#"{"customer_id": "C", "line_id": "L"}"#),
            Some(("by_id".into(), r#"{"id": "L", "on": true}"#.into()))
        );
        assert_eq!(ok("line", r#"{"customer_id": "C"}"#), None);
    }
}
