//! A JSON Schema checker for the subset `docs/schemas/scale-out.json` uses
//! (`$ref` into `$defs`, `type`, `enum`, `const`, `anyOf`, `properties`,
//! `required`, `additionalProperties`, `items`, `minItems`, `maxItems`,
//! `minimum`, `minLength`, `maxLength`, and the one base64url `pattern`).
//! A keyword outside the subset fails the test rather than being skipped.

use serde_json::Value;
use std::sync::OnceLock;

fn doc() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/scale-out.json");
        serde_json::from_str(&std::fs::read_to_string(path).expect("docs/schemas/scale-out.json"))
            .expect("JSON")
    })
}

/// Panics with every place `v` breaks the schema `$defs[name]`.
pub fn check(name: &str, v: &Value) {
    let s = doc()["$defs"].get(name).unwrap_or_else(|| panic!("no schema {name}"));
    let mut errs = vec![];
    walk(s, v, "$", &mut errs);
    assert!(errs.is_empty(), "{name} does not fit its schema:\n{}\n{v}", errs.join("\n"));
}

fn is_type(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        other => panic!("unknown type {other}"),
    }
}

fn walk(s: &Value, v: &Value, at: &str, errs: &mut Vec<String>) {
    let Some(s) = s.as_object() else { return };
    for (k, want) in s {
        match k.as_str() {
            "description" | "title" | "$schema" => {}
            "$ref" => {
                let name = want.as_str().and_then(|r| r.strip_prefix("#/$defs/")).expect("a local $ref");
                walk(&doc()["$defs"][name], v, at, errs);
            }
            "type" => {
                let ok = match want {
                    Value::String(t) => is_type(t, v),
                    Value::Array(ts) => ts.iter().any(|t| is_type(t.as_str().unwrap(), v)),
                    _ => panic!("bad type"),
                };
                if !ok {
                    errs.push(format!("{at}: not of type {want}"));
                }
            }
            "enum" => {
                if !want.as_array().unwrap().contains(v) {
                    errs.push(format!("{at}: {v} not in {want}"));
                }
            }
            "const" => {
                if want != v {
                    errs.push(format!("{at}: {v} is not {want}"));
                }
            }
            "anyOf" => {
                let fits = want.as_array().unwrap().iter().any(|alt| {
                    let mut e = vec![];
                    walk(alt, v, at, &mut e);
                    e.is_empty()
                });
                if !fits {
                    errs.push(format!("{at}: fits no alternative"));
                }
            }
            "required" => {
                if let Some(o) = v.as_object() {
                    for r in want.as_array().unwrap() {
                        if !o.contains_key(r.as_str().unwrap()) {
                            errs.push(format!("{at}: missing {r}"));
                        }
                    }
                }
            }
            "properties" => {
                if let Some(o) = v.as_object() {
                    for (pk, ps) in want.as_object().unwrap() {
                        if let Some(pv) = o.get(pk) {
                            walk(ps, pv, &format!("{at}.{pk}"), errs);
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Some(o) = v.as_object() {
                    let known = s.get("properties").and_then(Value::as_object);
                    for (pk, pv) in o {
                        if known.is_some_and(|p| p.contains_key(pk)) {
                            continue;
                        }
                        match want {
                            Value::Bool(false) => errs.push(format!("{at}: unexpected field {pk}")),
                            Value::Bool(true) => {}
                            sch => walk(sch, pv, &format!("{at}.{pk}"), errs),
                        }
                    }
                }
            }
            "items" => {
                for (i, x) in v.as_array().into_iter().flatten().enumerate() {
                    walk(want, x, &format!("{at}[{i}]"), errs);
                }
            }
            "minItems" | "maxItems" => {
                if let Some(a) = v.as_array() {
                    let n = want.as_u64().unwrap() as usize;
                    if (k == "minItems" && a.len() < n) || (k == "maxItems" && a.len() > n) {
                        errs.push(format!("{at}: {} items breaks {k} {n}", a.len()));
                    }
                }
            }
            "minLength" | "maxLength" => {
                if let Some(t) = v.as_str() {
                    let n = want.as_u64().unwrap() as usize;
                    let len = t.chars().count();
                    if (k == "minLength" && len < n) || (k == "maxLength" && len > n) {
                        errs.push(format!("{at}: length {len} breaks {k} {n}"));
                    }
                }
            }
            "minimum" => {
                if let Some(x) = v.as_f64() {
                    if x < want.as_f64().unwrap() {
                        errs.push(format!("{at}: {x} below {want}"));
                    }
                }
            }
            "pattern" => {
                assert_eq!(want, "^[A-Za-z0-9_-]+$", "only the base64url pattern is supported");
                if let Some(t) = v.as_str() {
                    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    {
                        errs.push(format!("{at}: not base64url"));
                    }
                }
            }
            other => panic!("schema keyword {other} is not supported by this checker"),
        }
    }
}
