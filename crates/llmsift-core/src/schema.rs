//! Tool schemas, read once per request: which JSON type each parameter of
//! each function declares, and the conversion of an XML-style parameter's
//! text to that type (vLLM's `_convert_param_value`). Sift's reading types
//! values by the schemas with their `$ref`s and unions resolved
//! ([`Tools::typed`], `schema_resolve.rs`), settled once when a request's
//! parser is built; vLLM's reads them as written.

use crate::pylit::{number_text, py_float, py_int};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The declared type of one parameter, reduced to what conversion needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ParamType {
    /// Text, kept as a JSON string (also: no schema for this parameter).
    String,
    /// `integer` and its spellings.
    Integer,
    /// `number`/`float`.
    Number,
    /// `boolean`.
    Boolean,
    /// `object`/`array`/`dict`/`list`, or a schema without a plain type
    /// (`anyOf`…): parsed as JSON when it is JSON.
    Json,
}

/// The request's tools, indexed for lookups by function and parameter name.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    funcs: HashMap<String, HashMap<String, ParamType>>,
    schemas: HashMap<String, Value>,
    names: Vec<String>,
    /// The same tools with `$ref`s and unions resolved, made on first use
    /// (`None`: nothing to resolve).
    typed: std::sync::OnceLock<Option<Arc<Tools>>>,
}

fn type_of(schema: &Value) -> ParamType {
    let ty = match schema.get("type") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).find(|s| *s != "null"),
        _ => None,
    };
    let Some(ty) = ty else {
        return if schema.get("anyOf").is_some()
            || schema.get("oneOf").is_some()
            || schema.get("allOf").is_some()
        {
            ParamType::Json
        } else {
            ParamType::String
        };
    };
    let ty = ty.trim().to_ascii_lowercase();
    match ty.as_str() {
        "string" | "str" | "text" | "varchar" | "char" | "enum" => ParamType::String,
        "boolean" | "bool" | "binary" => ParamType::Boolean,
        t if t.starts_with("int")
            || t.starts_with("uint")
            || t.starts_with("long")
            || t.starts_with("short")
            || t.starts_with("unsigned") =>
        {
            ParamType::Integer
        }
        t if t.starts_with("num") || t.starts_with("float") || t.starts_with("double") => ParamType::Number,
        _ => ParamType::Json,
    }
}

impl Tools {
    /// Reads a `tools` array in the Chat Completions shape
    /// (`{"type": "function", "function": {...}}`) or the Responses API's flat one.
    pub fn from_json(tools: &Value) -> Tools {
        let mut t = Tools::default();
        for tool in tools.as_array().into_iter().flatten() {
            let f = tool.get("function").unwrap_or(tool);
            let Some(name) = f.get("name").and_then(Value::as_str) else {
                continue;
            };
            let mut params = HashMap::new();
            if let Some(props) =
                f.get("parameters").and_then(|p| p.get("properties")).and_then(Value::as_object)
            {
                for (k, v) in props {
                    params.insert(k.clone(), type_of(v));
                }
            }
            t.names.push(name.to_string());
            t.funcs.insert(name.to_string(), params);
            if let Some(p) = f.get("parameters") {
                t.schemas.insert(name.to_string(), p.clone());
            }
        }
        t
    }

    /// These tools as Sift's reading types values: each function's schema
    /// with its local `$ref`s followed and its unions' containers lifted
    /// (`schema_resolve.rs`), so that a parameter declared through
    /// `$defs`/`definitions` or a nullable union is typed like any other.
    /// Made once per `Tools` (a request's), when its first parser is built.
    pub fn typed(self: &Arc<Self>) -> Arc<Tools> {
        let typed = self.typed.get_or_init(|| {
            if !self.schemas.values().any(crate::schema_resolve::needs_resolving) {
                return None;
            }
            let mut t = Tools { names: self.names.clone(), ..Tools::default() };
            for name in &self.names {
                let Some(s) = self.schemas.get(name) else {
                    t.funcs.insert(name.clone(), HashMap::new());
                    continue;
                };
                let r = crate::schema_resolve::resolve(s);
                let mut params = HashMap::new();
                for (k, v) in r.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    params.insert(k.clone(), type_of(v));
                }
                t.funcs.insert(name.clone(), params);
                t.schemas.insert(name.clone(), r);
            }
            Some(Arc::new(t))
        });
        typed.clone().unwrap_or_else(|| Arc::clone(self))
    }

    /// The `parameters` schema of `func`, when declared.
    pub fn schema(&self, func: &str) -> Option<&Value> {
        self.schemas.get(func)
    }

    /// Whether `param` of `func` is a union (`anyOf`, `oneOf`, a type list)
    /// that admits `string`.
    pub fn admits_string(&self, func: &str, param: &str) -> bool {
        fn is_string(s: &Value) -> bool {
            match s.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(a)) => a.iter().any(|t| t == "string"),
                _ => false,
            }
        }
        let Some(p) = self.schemas.get(func).and_then(|s| s.get("properties")).and_then(|p| p.get(param))
        else {
            return false;
        };
        let union = ["anyOf", "oneOf"].iter().filter_map(|k| p.get(*k)).filter_map(Value::as_array).flatten();
        matches!(p.get("type"), Some(Value::Array(_))) && is_string(p) || union.into_iter().any(is_string)
    }

    /// Function names in declaration order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The declared type of `param` of `func`; String when either is unknown.
    /// The declared type at a path inside `func`'s parameters (`"[]"` steps
    /// into array items); `None` when the schema does not say.
    pub fn type_at(&self, func: &str, path: &[&str]) -> Option<ParamType> {
        let mut node = self.schemas.get(func)?;
        for seg in path {
            node = if *seg == "[]" { node.get("items")? } else { node.get("properties")?.get(*seg)? };
        }
        Some(type_of(node))
    }

    /// The schema at a path inside `func`'s parameters (as [`Tools::type_at`]).
    pub fn schema_at(&self, func: &str, path: &[&str]) -> Option<&Value> {
        let mut node = self.schemas.get(func)?;
        for seg in path {
            node = if *seg == "[]" { node.get("items")? } else { node.get("properties")?.get(*seg)? };
        }
        Some(node)
    }

    /// The schema of `param` of `func`, when declared.
    pub fn param_schema(&self, func: &str, param: &str) -> Option<&Value> {
        self.schemas.get(func)?.get("properties")?.get(param)
    }

    /// The `parameters` schema of `func`, when the request declares it.
    pub fn parameters(&self, func: &str) -> Option<&Value> {
        self.schemas.get(func)
    }

    /// The declared type of `param` of `func`; `None` when the schema does
    /// not declare that parameter.
    pub fn declared_type(&self, func: &str, param: &str) -> Option<ParamType> {
        self.funcs.get(func).and_then(|p| p.get(param)).copied()
    }

    /// Whether `param` of `func` admits `null` (`"type": [..., "null"]`).
    pub fn nullable(&self, func: &str, param: &str) -> bool {
        let Some(node) = self.schemas.get(func).and_then(|s| s.get("properties")?.get(param)) else {
            return false;
        };
        match node.get("type") {
            Some(Value::String(s)) => s == "null",
            Some(Value::Array(a)) => a.iter().any(|v| v.as_str() == Some("null")),
            _ => false,
        }
    }

    /// Whether `func`'s schema declares any properties.
    pub fn has_params(&self, func: &str) -> bool {
        self.funcs.get(func).is_some_and(|p| !p.is_empty())
    }

    /// The declared type of `param` of `func`; String when either is unknown.
    pub fn param_type(&self, func: &str, param: &str) -> ParamType {
        self.funcs.get(func).and_then(|p| p.get(param)).copied().unwrap_or(ParamType::String)
    }
}

/// Converts a non-string parameter's text to JSON text, falling back to a
/// JSON string of the text when it does not read as the declared type.
pub fn convert_value(text: &str, ty: ParamType, out: &mut String) {
    let t = text.trim();
    if t.eq_ignore_ascii_case("null") {
        out.push_str("null");
        return;
    }
    let ok = match ty {
        ParamType::String => false,
        // Python's int() is exact however long: the digits are kept, for a
        // number too.
        ParamType::Integer | ParamType::Number => match (py_int(t), ty) {
            (Some(d), _) => {
                out.push_str(&d);
                true
            }
            (None, ParamType::Number) => match py_float(t) {
                Some(x) if x.is_finite() => {
                    out.push_str(&number_text(x));
                    true
                }
                _ => false,
            },
            (None, _) => false,
        },
        ParamType::Boolean => match t.to_ascii_lowercase().as_str() {
            "true" | "false" => {
                out.push_str(&t.to_ascii_lowercase());
                true
            }
            _ => false,
        },
        ParamType::Json => match serde_json::from_str::<Value>(t) {
            Ok(v) => {
                crate::json::to_python_json(&v, out);
                true
            }
            Err(_) => false,
        },
    };
    if !ok {
        out.push('"');
        crate::json::escape_into(out, text);
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let cases = [
            ("42", ParamType::Integer, "42"),
            (
                "-00012345678901234567890123456789012345678901234567890",
                ParamType::Integer,
                "-12345678901234567890123456789012345678901234567890",
            ),
            ("4x", ParamType::Integer, "\"4x\""),
            ("3.14", ParamType::Number, "3.14"),
            ("2", ParamType::Number, "2"),
            ("True", ParamType::Boolean, "true"),
            ("{\"a\":1}", ParamType::Json, "{\"a\": 1}"),
            ("not json", ParamType::Json, "\"not json\""),
            ("null", ParamType::Integer, "null"),
        ];
        for (text, ty, want) in cases {
            let mut s = String::new();
            convert_value(text, ty, &mut s);
            assert_eq!(s, want, "{text:?} as {ty:?}");
        }
    }

    #[test]
    fn reads_both_tool_shapes() {
        let v: Value = serde_json::from_str(
            r#"[{"type":"function","function":{"name":"f","parameters":{"properties":{"n":{"type":"integer"}}}}},
                {"type":"function","name":"g","parameters":{"properties":{"o":{"anyOf":[{"type":"object"}]}}}}]"#,
        )
        .unwrap();
        let t = Tools::from_json(&v);
        assert_eq!(t.param_type("f", "n"), ParamType::Integer);
        assert_eq!(t.param_type("g", "o"), ParamType::Json);
        assert_eq!(t.param_type("g", "missing"), ParamType::String);
    }
}
