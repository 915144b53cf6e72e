//! Tool schemas typed for Sift's reading: each function's `parameters`
//! with its local `$ref`s followed (`#/$defs/…`, `#/definitions/…`, any
//! `#/…` pointer) and the containers of its unions (`anyOf`, `oneOf`,
//! `allOf`, a type list) lifted to the union itself, so that every lookup
//! by path (`properties`, `items`) and every type list finds what the
//! schema means. Built once per request, when its parser is built
//! ([`crate::schema::Tools::typed`]); under vLLM's reading the schemas stay
//! as written (vLLM follows no `$ref`).
//!
//! Invariants: bounded: a `$ref` is followed at most [`REF_HOPS`] deep on
//! one path and the resolved tree has at most [`NODES`] objects, past
//! which a `$ref` stays as written (a recursive schema cannot blow up); a
//! schema that holds no `$ref` and no union is returned unchanged.

use serde_json::{Map, Value};

/// How many `$ref`s one path may follow.
const REF_HOPS: usize = 8;
/// How many schema objects a resolved tree may hold.
const NODES: usize = 20_000;

/// Whether `schema` holds anything to resolve.
pub(crate) fn needs_resolving(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.contains_key("$ref")
                || m.contains_key("anyOf")
                || m.contains_key("oneOf")
                || m.contains_key("allOf")
                || m.values().any(needs_resolving)
        }
        Value::Array(a) => a.iter().any(needs_resolving),
        _ => false,
    }
}

/// `root` (a function's `parameters`) resolved.
pub(crate) fn resolve(root: &Value) -> Value {
    let mut budget = NODES;
    resolve_node(root, root, 0, &mut budget)
}

fn resolve_node(node: &Value, root: &Value, hops: usize, budget: &mut usize) -> Value {
    let Value::Object(m) = node else { return node.clone() };
    if *budget == 0 {
        return node.clone();
    }
    *budget -= 1;
    if let Some(target) = m.get("$ref").and_then(Value::as_str).and_then(|r| pointer(root, r)) {
        if hops < REF_HOPS {
            let mut t = match resolve_node(target, root, hops + 1, budget) {
                Value::Object(t) => t,
                other => return other,
            };
            // Keys beside the `$ref` (a description, a `type` list adding
            // `null`) apply too, and win.
            for (k, v) in m.iter().filter(|(k, _)| k.as_str() != "$ref") {
                t.insert(k.clone(), resolve_child(k, v, root, hops, budget));
            }
            return Value::Object(t);
        }
    }
    let mut out = Map::with_capacity(m.len());
    for (k, v) in m {
        out.insert(k.clone(), resolve_child(k, v, root, hops, budget));
    }
    lift_unions(&mut out);
    Value::Object(out)
}

fn resolve_child(key: &str, v: &Value, root: &Value, hops: usize, budget: &mut usize) -> Value {
    match (key, v) {
        ("properties" | "patternProperties", Value::Object(props)) => Value::Object(
            props.iter().map(|(k, s)| (k.clone(), resolve_node(s, root, hops, budget))).collect(),
        ),
        ("items" | "additionalProperties", _) => resolve_node(v, root, hops, budget),
        ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(alts)) => {
            Value::Array(alts.iter().map(|s| resolve_node(s, root, hops, budget)).collect())
        }
        // Definitions are reached through the `$ref`s that name them.
        _ => v.clone(),
    }
}

/// A union's object and array alternatives lend it their `properties`
/// (the first alternative that declares a key wins) and `items`, so a path
/// through `{"anyOf": [{"type": "object", "properties": …}, {"type": "null"}]}`
/// goes on; the alternatives themselves stay for the type list.
fn lift_unions(out: &mut Map<String, Value>) {
    let mut props: Map<String, Value> = match out.get("properties") {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    let mut items = out.get("items").cloned();
    let mut lifted = false;
    for key in ["anyOf", "oneOf", "allOf"] {
        for alt in out.get(key).and_then(Value::as_array).into_iter().flatten() {
            if let Some(Value::Object(p)) = alt.get("properties") {
                for (k, s) in p {
                    if !props.contains_key(k) {
                        props.insert(k.clone(), s.clone());
                        lifted = true;
                    }
                }
            }
            if items.is_none() {
                if let Some(i) = alt.get("items") {
                    items = Some(i.clone());
                    lifted = true;
                }
            }
        }
    }
    if lifted {
        if !props.is_empty() {
            out.insert("properties".into(), Value::Object(props));
        }
        if let Some(i) = items {
            out.insert("items".into(), i);
        }
    }
}

/// A local reference (`#`, `#/$defs/Point`, `#/definitions/a~1b`), as a
/// JSON pointer into `root`; any other reference is not followed.
fn pointer<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let p = r.strip_prefix('#')?;
    if p.is_empty() {
        return Some(root);
    }
    root.pointer(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_and_unions_resolve() {
        let s = json!({
            "type": "object",
            "properties": {
                "p": {"$ref": "#/$defs/Point"},
                "q": {"anyOf": [{"$ref": "#/definitions/Box"}, {"type": "null"}]},
                "r": {"$ref": "#/$defs/Point", "type": ["object", "null"]}
            },
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "definitions": {"Box": {"type": "object", "properties": {"w": {"type": "number"}}}}
        });
        let r = resolve(&s);
        assert_eq!(r.pointer("/properties/p/properties/x/type"), Some(&json!("integer")));
        assert_eq!(r.pointer("/properties/q/properties/w/type"), Some(&json!("number")));
        assert_eq!(r.pointer("/properties/r/type"), Some(&json!(["object", "null"])));
        assert_eq!(r.pointer("/properties/r/properties/x/type"), Some(&json!("integer")));
    }

    #[test]
    fn recursive_refs_are_bounded() {
        let s = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/T"}},
            "$defs": {"T": {"type": "object", "properties": {"l": {"$ref": "#/$defs/T"}, "r": {"$ref": "#/$defs/T"}, "v": {"type": "integer"}}}}
        });
        let r = resolve(&s);
        assert_eq!(
            r.pointer("/properties/tree/properties/l/properties/r/properties/v/type"),
            Some(&json!("integer"))
        );
        assert!(serde_json::to_string(&r).unwrap().len() < 20_000_000);
        assert!(!needs_resolving(&json!({"type": "object", "properties": {"a": {"type": "integer"}}})));
    }
}
