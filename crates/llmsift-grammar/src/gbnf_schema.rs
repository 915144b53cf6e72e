//! A JSON schema written out as GBNF rules, for schemas inside a llama.cpp
//! grammar (a call's arguments, JSON after reasoning): GBNF cannot import a
//! schema the way llama.cpp's own `json_schema` field does.
//!
//! Covered: `type` (one name, or a list read as alternatives), `enum`,
//! `const`, `anyOf`/`oneOf`, objects' `properties` in their declared order
//! (the `required` ones always, the others optional; no other keys, as
//! llama.cpp's and xgrammar's converters do by default), arrays' `items`.
//! Any other schema, or keyword, reads as any JSON value: a constraint is
//! loosened where it cannot be written, never tightened. Nesting is capped
//! ([`MAX_DEPTH`]); deeper schemas read as any value.
//!
//! Invariant: rule names are `s<N>`, unique per grammar (the index is the
//! rule list's length when the rule is made); the shared rules (`value`,
//! `object`, `array`, `string`, `number`, `ws`) are the grammar's tail in
//! `gbnf.rs`.

use serde_json::{Map, Value};

/// Deeper schemas read as any JSON value.
pub const MAX_DEPTH: usize = 16;

/// The expression for a value following `schema`; new rules are pushed on `rules`.
pub fn rule(schema: &Value, rules: &mut Vec<String>) -> String {
    expr(schema, rules, 0)
}

fn expr(schema: &Value, rules: &mut Vec<String>, depth: usize) -> String {
    let Some(o) = schema.as_object().filter(|_| depth < MAX_DEPTH) else {
        return "value".into();
    };
    if let Some(c) = o.get("const") {
        return lit(&c.to_string());
    }
    if let Some(e) = o.get("enum").and_then(Value::as_array).filter(|e| !e.is_empty()) {
        return group(e.iter().map(|v| lit(&v.to_string())).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(a) = o.get(key).and_then(Value::as_array).filter(|a| !a.is_empty()) {
            return group(a.iter().map(|s| expr(s, rules, depth + 1)).collect());
        }
    }
    match o.get("type") {
        Some(Value::String(t)) => typed(t, o, rules, depth),
        Some(Value::Array(ts)) if !ts.is_empty() => group(
            ts.iter().map(|t| t.as_str().map_or("value".into(), |t| typed(t, o, rules, depth))).collect(),
        ),
        _ if o.contains_key("properties") => typed("object", o, rules, depth),
        _ => "value".into(),
    }
}

fn typed(t: &str, o: &Map<String, Value>, rules: &mut Vec<String>, depth: usize) -> String {
    match t {
        "string" => "string".into(),
        "number" => "number".into(),
        "integer" => r#"( "-"? ( "0" | [1-9] [0-9]* ) )"#.into(),
        "boolean" => r#"( "true" | "false" )"#.into(),
        "null" => r#""null""#.into(),
        "array" => match o.get("items") {
            Some(items) if items.is_object() => {
                let item = expr(items, rules, depth + 1);
                push(rules, format!(r#""[" ws ( {item} ws ( "," ws {item} ws )* )? "]""#))
            }
            _ => "array".into(),
        },
        "object" => match o.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) {
            Some(props) => object(props, o.get("required"), rules, depth),
            None => "object".into(),
        },
        _ => "value".into(),
    }
}

/// An object with these properties, in their order: a required member is
/// always there; an optional one may be left out, with its comma.
fn object(
    props: &Map<String, Value>,
    required: Option<&Value>,
    rules: &mut Vec<String>,
    depth: usize,
) -> String {
    let req: Vec<&str> =
        required.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let members: Vec<(String, bool)> = props
        .iter()
        .map(|(k, s)| {
            let key = lit(&Value::String(k.clone()).to_string());
            (format!("{key} ws \":\" ws {} ws", expr(s, rules, depth + 1)), req.contains(&k.as_str()))
        })
        .collect();
    // The members after the first one present: each behind its comma.
    let rest = |from: usize| -> String {
        members[from..]
            .iter()
            .map(|(m, r)| if *r { format!(" \",\" ws {m}") } else { format!(" ( \",\" ws {m} )?") })
            .collect()
    };
    // Which member comes first: any up to the first required one.
    let mut firsts = Vec::new();
    for (i, (m, r)) in members.iter().enumerate() {
        firsts.push(format!("{m}{}", rest(i + 1)));
        if *r {
            break;
        }
    }
    let inner = match members.iter().all(|(_, r)| !r) {
        true => format!("( {} )?", firsts.join(" | ")),
        false => group(firsts),
    };
    push(rules, format!(r#""{{" ws {inner} "}}""#))
}

fn group(alts: Vec<String>) -> String {
    if alts.len() == 1 {
        return alts.into_iter().next().expect("one");
    }
    format!("( {} )", alts.join(" | "))
}

fn push(rules: &mut Vec<String>, body: String) -> String {
    let name = format!("s{}", rules.len());
    rules.push(format!("{name} ::= {body}"));
    name
}

/// A GBNF string literal.
pub fn lit(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_types_and_fallbacks() {
        let mut rules = Vec::new();
        let s = json!({"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"enum": ["c", "f"]}, "days": {"type": "integer"}},
            "required": ["city"]});
        assert_eq!(rule(&s, &mut rules), "s0");
        assert_eq!(
            rules[0],
            r#"s0 ::= "{" ws "\"city\"" ws ":" ws string ws ( "," ws "\"unit\"" ws ":" ws ( "\"c\"" | "\"f\"" ) ws )? ( "," ws "\"days\"" ws ":" ws ( "-"? ( "0" | [1-9] [0-9]* ) ) ws )? "}""#
        );
        // Nothing required: any member may come first, or none.
        let mut rules = Vec::new();
        rule(&json!({"properties": {"a": {"type": "null"}, "b": true}}), &mut rules);
        assert_eq!(
            rules[0],
            r#"s0 ::= "{" ws ( "\"a\"" ws ":" ws "null" ws ( "," ws "\"b\"" ws ":" ws value ws )? | "\"b\"" ws ":" ws value ws )? "}""#
        );
        let mut rules = Vec::new();
        assert_eq!(rule(&json!(true), &mut rules), "value");
        assert_eq!(rule(&json!({"$ref": "#/x"}), &mut rules), "value");
        assert_eq!(rule(&json!({"type": "object"}), &mut rules), "object");
        assert_eq!(rule(&json!({"type": ["string", "null"]}), &mut rules), r#"( string | "null" )"#);
        assert_eq!(rule(&json!({"type": "array", "items": {"type": "number"}}), &mut rules), "s0");
        assert_eq!(rules, [r#"s0 ::= "[" ws ( number ws ( "," ws number ws )* )? "]""#]);
    }
}
