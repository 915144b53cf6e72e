//! Nested XML arguments (text kind `{ kind = "xml", prefix, max_depth, mixed_text }`).
//!
//! The body of a call is a sequence of elements, each tag introduced by the
//! format's `prefix` (MiniMax-M3's `]<]minimax[>[`):
//! `PREFIX<key>value PREFIX</key>`, nested to any depth up to `max_depth`.
//! This kernel owns turning that body into the call's `arguments`:
//!
//! - an element with text only is a leaf: without a schema its text is kept
//!   verbatim as a string; with one it is coerced by the schema's types (vLLM's
//!   `coerce_to_schema_type`: null > integer > number > boolean > object >
//!   array > string, then JSON, then the text), and an empty leaf whose schema
//!   is a container and not a string is `[]` or `{}`;
//! - an element with children is an array when its schema (or the first
//!   `anyOf`/`oneOf` container alternative) is an array (child names are
//!   ignored: `<item>`), otherwise an object whose repeated names collect into
//!   a list; text mixed with children is kept under `mixed_text` (`$text`,
//!   with `$` prepended until no child uses the name);
//! - parsing stops at the first malformed or unterminated element (or one
//!   deeper than `max_depth`), keeping the parameters before it.
//!
//! Invariants: the arguments are written once, when the call ends (converted
//! values are not prefix-stable while elements arrive: a repeated name turns
//! a scalar into a list), so streaming equals one-shot under every split; the
//! body is the only state kept (the open call's memory); recursion is bounded
//! by `max_depth`, which the compiler caps; the output is always valid JSON.

use crate::coerce::{coerce, schema_types, Typed};
use crate::format::compiled::XmlCfg;
use crate::json::escape_into;
use crate::pylit::{float_repr, py_space, py_strip};
use crate::schema::Tools;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The argument writer of one call with XML arguments.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct XmlArgs {
    cfg: XmlCfg,
    name: String,
    /// The request's tools: relinked on resume.
    #[serde(skip)]
    pub(super) tools: Arc<Tools>,
    body: String,
}

/// A parsed element: its text, or its named children in order.
enum Elem {
    Text(String),
    Kids(Vec<(String, Elem)>),
}

/// A converted value, printed the way Python's `json.dumps` prints it.
enum V {
    Null,
    Bool(bool),
    /// A number's JSON text.
    Num(String),
    Str(String),
    Arr(Vec<V>),
    Obj(Vec<(String, V)>),
}

impl XmlArgs {
    pub fn new(cfg: &XmlCfg, name: &str, tools: Arc<Tools>) -> XmlArgs {
        XmlArgs { cfg: cfg.clone(), name: name.trim().to_string(), tools, body: String::new() }
    }

    /// Body text, in any split.
    pub fn text(&mut self, s: &str) {
        self.body.push_str(s);
    }

    /// Writes the arguments object.
    pub fn finish(&mut self, out: &mut String) {
        let params = Parser { cfg: &self.cfg, text: &self.body }.params();
        let props =
            self.tools.parameters(&self.name).and_then(|p| p.get("properties")).and_then(Value::as_object);
        let v = convert_object(&params, props, None, &self.cfg.mixed_text);
        write(&v, out);
        self.body.clear();
    }
}

struct Parser<'a> {
    cfg: &'a XmlCfg,
    text: &'a str,
}

impl Parser<'_> {
    fn starts_at(&self, pos: usize, a: &str, b: &str) -> bool {
        let rest = &self.text.as_bytes()[pos..];
        rest.starts_with(a.as_bytes()) && rest[a.len()..].starts_with(b.as_bytes())
    }

    /// The top-level parameters, up to the first malformed element.
    fn params(&self) -> Vec<(String, Elem)> {
        let mut out = vec![];
        let mut pos = 0;
        loop {
            pos += self.text[pos..].len() - self.text[pos..].trim_start_matches(py_space).len();
            if !self.starts_at(pos, &self.cfg.prefix, "<") {
                return out;
            }
            match self.element(pos, 1) {
                Some((name, v, end)) => {
                    out.push((name, v));
                    pos = end;
                }
                None => return out,
            }
        }
    }

    /// The element whose start tag is at `pos`; `None` when malformed.
    fn element(&self, pos: usize, depth: usize) -> Option<(String, Elem, usize)> {
        if depth > self.cfg.max_depth {
            return None;
        }
        let t = self.text;
        let name_start = pos + self.cfg.prefix.len() + 1;
        let name_end = name_start + t[name_start..].find('>')?;
        if name_end == name_start {
            return None;
        }
        let name = &t[name_start..name_end];
        if name.starts_with('/') || py_strip(name).is_empty() {
            return None;
        }
        let mut pos = name_end + 1;
        let mut body = String::new();
        let mut kids = vec![];
        loop {
            let marker = pos + t[pos..].find(self.cfg.prefix.as_str())?;
            body.push_str(&t[pos..marker]);
            let after = marker + self.cfg.prefix.len();
            if t[after..].starts_with("</")
                && t[after + 2..].starts_with(name)
                && t[after + 2 + name.len()..].starts_with('>')
            {
                pos = after + 2 + name.len() + 1;
                break;
            }
            if !t[after..].starts_with('<') {
                return None;
            }
            let (kn, kv, end) = self.element(marker, depth + 1)?;
            kids.push((kn, kv));
            pos = end;
        }
        if kids.is_empty() {
            return Some((name.to_string(), Elem::Text(body), pos));
        }
        if !py_strip(&body).is_empty() {
            let mut field = self.cfg.mixed_text.clone();
            while kids.iter().any(|(n, _)| *n == field) {
                field.insert(0, '$');
            }
            kids.push((field, Elem::Text(body)));
        }
        Some((name.to_string(), Elem::Kids(kids), pos))
    }
}

/// The first `array` or `object` alternative of a schema: (is array, schema).
fn container(schema: &Value) -> Option<(bool, &Value)> {
    let types = schema.get("type").filter(|t| !t.is_null());
    for (kind, arr) in [("array", true), ("object", false)] {
        let hit = match types {
            Some(Value::String(s)) => s == kind,
            Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(kind)),
            _ => false,
        };
        if hit {
            return Some((arr, schema));
        }
    }
    if types.is_none() {
        if schema.get("items").is_some() {
            return Some((true, schema));
        }
        if schema.get("properties").is_some() || schema.get("additionalProperties").is_some() {
            return Some((false, schema));
        }
    }
    for key in ["anyOf", "oneOf"] {
        for choice in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            if choice.is_object() {
                if let Some(found) = container(choice) {
                    return Some(found);
                }
            }
        }
    }
    None
}

fn convert(e: &Elem, schema: Option<&Value>, mixed: &str) -> V {
    let schema = schema.filter(|s| s.is_object());
    let cont = schema.and_then(container);
    match e {
        Elem::Text(text) => {
            let Some(schema) = schema else { return V::Str(text.clone()) };
            let types = schema_types(schema);
            if let Some((arr, _)) = cont {
                if !types.iter().any(|t| t == "string") && py_strip(text).is_empty() {
                    return if arr { V::Arr(vec![]) } else { V::Obj(vec![]) };
                }
            }
            match coerce(text, &types) {
                // JSON text then meets the engine's `_fix_arg_types`, which
                // types what nests inside by `properties` and `items`.
                Typed::Json(mut v) => {
                    crate::coerce::fix_value(&mut v, schema);
                    typed(text, Typed::Json(v))
                }
                t => typed(text, t),
            }
        }
        Elem::Kids(kids) => match cont {
            Some((true, s)) => V::Arr(kids.iter().map(|(_, k)| convert(k, s.get("items"), mixed)).collect()),
            Some((false, s)) => convert_object(
                kids,
                s.get("properties").and_then(Value::as_object),
                s.get("additionalProperties"),
                mixed,
            ),
            None => convert_object(kids, None, None, mixed),
        },
    }
}

/// Named elements to an object; a repeated name collects its values into a list.
fn convert_object(
    kids: &[(String, Elem)],
    props: Option<&Map<String, Value>>,
    additional: Option<&Value>,
    mixed: &str,
) -> V {
    let mut out: Vec<(String, V)> = vec![];
    let mut at: HashMap<&str, (usize, bool)> = HashMap::new();
    for (name, e) in kids {
        let schema = match props.and_then(|p| p.get(name)) {
            Some(s) => Some(s),
            None => additional,
        };
        let v = convert(e, schema, mixed);
        match at.get_mut(name.as_str()) {
            None => {
                at.insert(name, (out.len(), false));
                out.push((name.clone(), v));
            }
            Some((i, repeated)) => {
                let slot = &mut out[*i].1;
                if *repeated {
                    if let V::Arr(a) = slot {
                        a.push(v);
                    }
                } else {
                    let first = std::mem::replace(slot, V::Null);
                    *slot = V::Arr(vec![first, v]);
                    *repeated = true;
                }
            }
        }
    }
    V::Obj(out)
}

/// A coerced leaf as a value.
fn typed(text: &str, t: Typed) -> V {
    match t {
        Typed::Null => V::Null,
        Typed::Bool(b) => V::Bool(b),
        Typed::Num(n) => V::Num(n),
        Typed::Json(v) => from_json(&v).unwrap_or_else(|| V::Str(text.to_string())),
        Typed::Str => V::Str(text.to_string()),
    }
}

fn from_json(v: &Value) -> Option<V> {
    Some(match v {
        Value::Null => V::Null,
        Value::Bool(b) => V::Bool(*b),
        Value::Number(n) => match n.as_f64() {
            _ if n.is_i64() || n.is_u64() => V::Num(n.to_string()),
            Some(x) if x.is_finite() => V::Num(float_repr(x)),
            _ => return None,
        },
        Value::String(s) => V::Str(s.clone()),
        Value::Array(a) => V::Arr(a.iter().map(from_json).collect::<Option<_>>()?),
        Value::Object(m) => {
            V::Obj(m.iter().map(|(k, x)| Some((k.clone(), from_json(x)?))).collect::<Option<_>>()?)
        }
    })
}

/// Python's `json.dumps(v, ensure_ascii=False)`.
fn write(v: &V, out: &mut String) {
    match v {
        V::Null => out.push_str("null"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Num(n) => out.push_str(n),
        V::Str(s) => {
            out.push('"');
            escape_into(out, s);
            out.push('"');
        }
        V::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(x, out);
            }
            out.push(']');
        }
        V::Obj(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('"');
                escape_into(out, k);
                out.push_str("\": ");
                write(x, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: &str = "]<]minimax[>[";

    fn el(name: &str, body: &str) -> String {
        format!("{NS}<{name}>{body}{NS}</{name}>")
    }

    fn run(body: &str, tools: &str, func: &str) -> String {
        let tools = Tools::from_json(&serde_json::from_str(tools).unwrap());
        let cfg = XmlCfg { prefix: NS.into(), max_depth: 128, mixed_text: "$text".into() };
        let mut x = XmlArgs::new(&cfg, func, Arc::new(tools));
        // Any split gives the same arguments.
        let mid = body.len() / 2;
        let mid = (0..=mid).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
        x.text(&body[..mid]);
        x.text(&body[mid..]);
        let mut out = String::new();
        x.finish(&mut out);
        out
    }

    const TOOLS: &str = r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{
        "user_id":{"type":"integer"},"note":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},
        "shipping":{"type":"object","properties":{"zip":{"type":"integer"}}},
        "either":{"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"string"}]},
        "x":{"type":"number"},"free":{"type":"object"}}}}}]"#;

    #[test]
    fn schema_types_nested_elements() {
        let body = el("tags", &(el("item", "a") + &el("item", "b")))
            + &el("shipping", &el("zip", "018956"))
            + &el("either", &(el("item", "1") + &el("item", "2")))
            + &el("free", &(el("t", "x") + &el("t", "y")));
        assert_eq!(
            run(&body, TOOLS, "f"),
            r#"{"tags": ["a", "b"], "shipping": {"zip": 18956}, "either": [1, 2], "free": {"t": ["x", "y"]}}"#
        );
        let empty = el("tags", "") + &el("shipping", "") + &el("note", "") + &el("either", "");
        assert_eq!(run(&empty, TOOLS, "f"), r#"{"tags": [], "shipping": {}, "note": "", "either": ""}"#);
    }

    #[test]
    fn verbatim_text_mixed_text_and_malformed_tails() {
        let body = el("note", "\n  a <b> & c\n") + &el("user_id", " 7 ");
        assert_eq!(run(&body, TOOLS, "f"), r#"{"note": "\n  a <b> & c\n", "user_id": 7}"#);
        let body = el("free", &format!("hi {} there", el("k", "v")))
            + &el("shipping", &format!("x{}", el("$text", "c")));
        assert_eq!(
            run(&body, TOOLS, "f"),
            r#"{"free": {"k": "v", "$text": "hi  there"}, "shipping": {"$text": "c", "$$text": "x"}}"#
        );
        for tail in [
            format!("junk{}", el("note", "d")),
            format!("{NS}<note>a{NS}</other>"),
            format!("{NS}<note>open"),
        ] {
            assert_eq!(run(&(el("user_id", "1") + &tail), TOOLS, "f"), r#"{"user_id": 1}"#);
        }
        assert_eq!(run("", TOOLS, "f"), "{}");
    }

    #[test]
    fn unknown_tool_keeps_text_and_depth_limit() {
        let body = el("n", "1") + &el("list", &(el("item", "a") + &el("item", "b")));
        assert_eq!(run(&body, "[]", "other"), r#"{"n": "1", "list": {"item": ["a", "b"]}}"#);
        let nested = |depth: usize| {
            let mut b = "v".to_string();
            for _ in 0..depth - 1 {
                b = el("n", &b);
            }
            el("free", &b)
        };
        assert!(run(&nested(128), "[]", "g").starts_with(r#"{"free": {"n": "#));
        assert_eq!(run(&nested(129), "[]", "g"), "{}");
    }

    #[test]
    fn python_numbers() {
        let t = |v: &str, ty: &str| {
            let mut s = String::new();
            write(&typed(v, coerce(v, &[ty.to_string()])), &mut s);
            s
        };
        assert_eq!(t("3.0", "number"), "3");
        assert_eq!(t("1e20", "number"), "100000000000000000000");
        assert_eq!(t("nan", "number"), "\"nan\"");
        assert_eq!(t("1", "boolean"), "true");
        assert_eq!(t("5", "boolean"), "5");
        assert_eq!(t("[1, 2.50]", "array"), "[1, 2.5]");
        assert_eq!(t("NULL", "null"), "null");
    }
}
