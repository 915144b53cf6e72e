//! The content parsers of transformers' `content_parsers.py` (`text`, `int`,
//! `float`, `bool`, `json` with its dialect knobs, `xml-inline`, `kv-lines`,
//! `python-call-list`), each a function of a region's whole body. Their
//! arguments are read once, when the template loads; a body a parser
//! rejects is a [`Malformed`] value (transformers raises), never a panic.

use super::pycall::{float_value, python_call_list, Malformed};
use super::regex::Regex;
use super::TemplateError;
use crate::pylit::{py_float, py_int, py_space, py_strip};
use serde_json::{Map, Value};

/// `json`'s knobs.
#[derive(Debug, Clone, Default)]
pub(crate) struct JsonArgs {
    pub unquoted_keys: bool,
    pub string_delims: Vec<(String, String)>,
    pub allow_non_json: bool,
    pub strip: bool,
}

/// `xml-inline`'s arguments.
#[derive(Debug, Clone)]
pub(crate) struct XmlArgs {
    pub tag: Regex,
    pub key: usize,
    pub value: Option<usize>,
    pub value_parser: Option<Box<Parser>>,
    pub merge: bool,
    /// `value_parser_by`: the group, and the parser per capture.
    pub by: Option<(usize, Vec<(String, Parser)>)>,
}

/// `kv-lines`' arguments.
#[derive(Debug, Clone)]
pub(crate) struct KvArgs {
    pub line_sep: String,
    pub kv_sep: String,
    pub strip: bool,
    pub value_parser: Option<Box<Parser>>,
}

/// A content parser with its arguments.
#[derive(Debug, Clone)]
pub(crate) enum Parser {
    Text { strip: bool },
    Int { strip: bool },
    Float { strip: bool },
    Bool { strip: bool },
    Json(JsonArgs),
    XmlInline(Box<XmlArgs>),
    KvLines(Box<KvArgs>),
    PythonCallList,
}

/// Python truthiness of an optional argument (`default` when absent).
pub(crate) fn truthy(v: Option<&Value>, default: bool) -> bool {
    match v {
        None => default,
        Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

fn unsupported(scope: &str, m: impl std::fmt::Display) -> TemplateError {
    TemplateError::Unsupported { message: format!("{scope}: {m}") }
}

fn invalid(scope: &str, m: impl std::fmt::Display) -> TemplateError {
    TemplateError::Invalid { message: format!("{scope}: {m}") }
}

fn string_arg(
    scope: &str,
    args: &Map<String, Value>,
    key: &str,
    default: &str,
) -> Result<String, TemplateError> {
    match args.get(key) {
        None => Ok(default.to_string()),
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(v) => Err(unsupported(scope, format!("{key} must be a non-empty string, got {v}"))),
    }
}

/// A `{"name": ..., "args": {...}}` sub-parser.
fn sub_parser(scope: &str, v: &Value) -> Result<Parser, TemplateError> {
    let o =
        v.as_object().ok_or_else(|| unsupported(scope, format!("a value parser must be a dict, got {v}")))?;
    let name = match o.get("name") {
        None => "text",
        Some(Value::String(s)) => s,
        Some(v) => return Err(unsupported(scope, format!("value parser name {v}"))),
    };
    let args = match o.get("args") {
        None => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(v) => return Err(unsupported(scope, format!("value parser args {v}"))),
    };
    Parser::new(scope, name, &args)
}

impl Parser {
    /// The parser `name` with `args`, checked as far as transformers' would
    /// fail on every body.
    pub(crate) fn new(scope: &str, name: &str, args: &Map<String, Value>) -> Result<Parser, TemplateError> {
        let strip = truthy(args.get("strip"), true);
        Ok(match name {
            "text" => Parser::Text { strip },
            "int" => Parser::Int { strip },
            "float" => Parser::Float { strip },
            "bool" => Parser::Bool { strip },
            "json" => {
                let mut string_delims = vec![];
                match args.get("string_delims") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(a)) => {
                        for d in a {
                            match d
                                .as_array()
                                .map(|p| p.iter().map(Value::as_str).collect::<Vec<_>>())
                                .as_deref()
                            {
                                Some([Some(o), Some(c)]) if !o.is_empty() && !c.is_empty() => {
                                    string_delims.push((o.to_string(), c.to_string()))
                                }
                                _ => {
                                    return Err(unsupported(
                                        scope,
                                        format!("string_delims entry {d} is not a pair of non-empty strings"),
                                    ))
                                }
                            }
                        }
                    }
                    Some(v) => return Err(unsupported(scope, format!("string_delims {v} is not a list"))),
                }
                Parser::Json(JsonArgs {
                    unquoted_keys: truthy(args.get("unquoted_keys"), false),
                    string_delims,
                    allow_non_json: truthy(args.get("allow_non_json"), false),
                    strip,
                })
            }
            "xml-inline" => {
                let pat = match args.get("tag_pattern") {
                    Some(Value::String(p)) => p,
                    None | Some(Value::Null) => {
                        return Err(invalid(scope, "xml-inline: 'tag_pattern' content_arg is required"))
                    }
                    Some(v) => return Err(unsupported(scope, format!("tag_pattern {v} is not a string"))),
                };
                let tag =
                    Regex::new(pat).map_err(|e| unsupported(scope, format!("tag_pattern {pat:?}: {e}")))?;
                let key = tag
                    .group_index("key")
                    .ok_or_else(|| invalid(scope, "xml-inline: tag_pattern must have a named group 'key'"))?;
                let value = tag.group_index("value");
                let value_parser = match args.get("value_parser") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(Box::new(sub_parser(scope, v)?)),
                };
                let by = match args.get("value_parser_by") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        let (g, parsers) =
                            match (v.get("group"), v.get("parsers")) {
                                (Some(Value::String(g)), Some(Value::Object(p))) => (g, p),
                                _ => return Err(invalid(
                                    scope,
                                    "xml-inline: 'value_parser_by' must be a dict with 'group' and 'parsers'",
                                )),
                            };
                        let g = tag.group_index(g).ok_or_else(|| {
                            invalid(scope, format!("xml-inline: value_parser_by names group '{g}', which tag_pattern does not define"))
                        })?;
                        let ps = parsers
                            .iter()
                            .map(|(k, p)| Ok((k.clone(), sub_parser(scope, p)?)))
                            .collect::<Result<_, TemplateError>>()?;
                        Some((g, ps))
                    }
                };
                let merge = truthy(args.get("merge_duplicates"), false);
                Parser::XmlInline(Box::new(XmlArgs { tag, key, value, value_parser, merge, by }))
            }
            "kv-lines" => Parser::KvLines(Box::new(KvArgs {
                line_sep: string_arg(scope, args, "line_sep", "\n")?,
                kv_sep: string_arg(scope, args, "kv_sep", ":")?,
                strip,
                value_parser: match args.get("value_parser") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(Box::new(sub_parser(scope, v)?)),
                },
            })),
            "python-call-list" => Parser::PythonCallList,
            other => {
                let known =
                    ["bool", "float", "int", "json", "kv-lines", "python-call-list", "text", "xml-inline"];
                return Err(invalid(
                    scope,
                    format!("unknown content parser '{other}'. Available: {known:?}"),
                ));
            }
        })
    }

    /// Whether the parser's syntax tells strings from typed literals
    /// (transformers' `TYPED_STRUCTURED_PARSERS`).
    pub(crate) fn typed(&self) -> bool {
        matches!(self, Parser::Json(_) | Parser::PythonCallList)
    }

    /// `value_parser_by` is set: the output says how each value reads.
    pub(crate) fn reads_by_group(&self) -> bool {
        matches!(self, Parser::XmlInline(x) if x.by.is_some())
    }

    /// Parses a region's body.
    pub(crate) fn parse(&self, text: &str) -> Result<Value, Malformed> {
        match self {
            Parser::Text { strip } => Ok(Value::String(strip_if(text, *strip).to_string())),
            Parser::Int { strip } => int_value(strip_if(text, *strip)),
            Parser::Float { strip } => {
                let f =
                    py_float(strip_if(text, *strip)).ok_or_else(|| Malformed(format!("float: {text:?}")))?;
                Ok(float_value(f))
            }
            Parser::Bool { strip } => {
                let t = strip_if(text, *strip).to_lowercase();
                Ok(Value::Bool(t == "true" || t == "1"))
            }
            Parser::Json(a) => json(text, a),
            Parser::XmlInline(x) => xml_inline(text, x),
            Parser::KvLines(k) => kv_lines(text, k),
            Parser::PythonCallList => python_call_list(text),
        }
    }
}

fn strip_if(t: &str, strip: bool) -> &str {
    if strip {
        py_strip(t)
    } else {
        t
    }
}

/// Python's `int(text)` as a JSON number.
pub(crate) fn int_value(text: &str) -> Result<Value, Malformed> {
    let d = py_int(text).ok_or_else(|| Malformed(format!("int: {text:?}")))?;
    big_int(&d).ok_or_else(|| Malformed(format!("int out of range: {d}")))
}

/// Decimal text as a JSON integer (within 64 bits: beyond, Python's exact
/// value has no `serde_json` spelling without arbitrary precision).
pub(crate) fn big_int(d: &str) -> Option<Value> {
    d.parse::<i64>().map(Value::from).ok().or_else(|| d.parse::<u64>().map(Value::from).ok())
}

/// `json.loads`.
pub(crate) fn json_loads(text: &str) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = <Value as serde::Deserialize>::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

const LAX_OPEN: char = '\x01';
const LAX_CLOSE: char = '\x02';

fn json(text: &str, a: &JsonArgs) -> Result<Value, Malformed> {
    if !a.string_delims.is_empty() && text.contains([LAX_OPEN, LAX_CLOSE]) {
        return Err(Malformed("json: input contains reserved sentinel characters".into()));
    }
    let mut working = text.to_string();
    let mut captured: Vec<String> = vec![];
    for (open, close) in &a.string_delims {
        // `re.sub(escape(open) + "(.*?)" + escape(close), …)`, DOTALL.
        let mut out = String::with_capacity(working.len());
        let mut i = 0;
        while i <= working.len() {
            let rest = &working[i..];
            if rest.starts_with(open.as_str()) {
                if let Some(e) = rest[open.len()..].find(close.as_str()) {
                    captured.push(rest[open.len()..open.len() + e].to_string());
                    out.push(LAX_OPEN);
                    out.push_str(&(captured.len() - 1).to_string());
                    out.push(LAX_CLOSE);
                    i += open.len() + e + close.len();
                    continue;
                }
            }
            match rest.chars().next() {
                Some(c) => {
                    out.push(c);
                    i += c.len_utf8();
                }
                None => break,
            }
        }
        working = out;
    }
    if a.unquoted_keys {
        working = quote_keys(&working);
    }
    for (i, s) in captured.iter().enumerate() {
        let mut q = String::from("\"");
        crate::json::escape_into(&mut q, s);
        q.push('"');
        working = working.replace(&format!("{LAX_OPEN}{i}{LAX_CLOSE}"), &q);
    }
    match json_loads(&working) {
        Some(v) => Ok(v),
        None if a.allow_non_json => Ok(Value::String(strip_if(text, a.strip).to_string())),
        None => Err(Malformed(format!("json parser could not parse region as JSON: {text:?}"))),
    }
}

fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// transformers' bare-key quoting: `"(?:\\.|[^"\\])*"|(?<=[{,])(\s*)(\w+)(\s*):`
/// applied with `re.sub` (quoted strings are kept whole).
fn quote_keys(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    let mut prev: Option<char> = None;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with('"') {
            // A whole quoted string, escapes included.
            let mut j = 1;
            let b = rest.as_bytes();
            let mut closed = None;
            while j < b.len() {
                match b[j] {
                    b'\\' if j + 1 < b.len() => {
                        j += 1 + rest[j + 1..].chars().next().map_or(1, char::len_utf8);
                    }
                    b'\\' => break,
                    b'"' => {
                        closed = Some(j + 1);
                        break;
                    }
                    _ => j += 1,
                }
            }
            if let Some(e) = closed {
                out.push_str(&rest[..e]);
                prev = rest[..e].chars().next_back();
                i += e;
                continue;
            }
        }
        if matches!(prev, Some('{' | ',')) {
            let ws1 = rest.len() - rest.trim_start_matches(py_space).len();
            let after = &rest[ws1..];
            let w = after.len() - after.trim_start_matches(is_word).len();
            if w > 0 {
                let after2 = &after[w..];
                let ws2 = after2.len() - after2.trim_start_matches(py_space).len();
                if after2[ws2..].starts_with(':') {
                    out.push_str(&rest[..ws1]);
                    out.push('"');
                    out.push_str(&after[..w]);
                    out.push('"');
                    out.push_str(&after2[..ws2]);
                    out.push(':');
                    prev = Some(':');
                    i += ws1 + w + ws2 + 1;
                    continue;
                }
            }
        }
        let c = rest.chars().next().unwrap_or('\0');
        out.push(c);
        prev = Some(c);
        i += c.len_utf8();
    }
    out
}

fn sub_parse(raw: Option<&str>, p: Option<&Parser>) -> Result<Value, Malformed> {
    match (raw, p) {
        (None, None) => Ok(Value::Null),
        (None, Some(_)) => Err(Malformed("a value group that took no part is parsed".into())),
        (Some(r), None) => Ok(Value::String(r.to_string())),
        (Some(r), Some(p)) => p.parse(r),
    }
}

fn xml_inline(text: &str, x: &XmlArgs) -> Result<Value, Malformed> {
    let mut out = Map::new();
    let mut merged = std::collections::HashSet::new();
    let mut at = 0;
    while let Some((m, groups)) = x.tag.find_at(text, at) {
        at = if m.end > m.start {
            m.end
        } else {
            m.end + text[m.end..].chars().next().map_or(1, char::len_utf8)
        };
        let key = groups[x.key]
            .clone()
            .ok_or_else(|| Malformed("xml-inline: the key group took no part".into()))?;
        let parser = match &x.by {
            None => x.value_parser.as_deref(),
            Some((g, ps)) => groups[*g]
                .as_deref()
                .and_then(|c| ps.iter().find(|(k, _)| k == c).map(|(_, p)| p))
                .or(x.value_parser.as_deref()),
        };
        let raw = match x.value {
            None => Some(""),
            Some(v) => groups[v].as_deref(),
        };
        let value = sub_parse(raw, parser)?;
        match out.get_mut(&key) {
            Some(old) if x.merge => {
                if merged.insert(key.clone()) {
                    let first = std::mem::take(old);
                    *old = Value::Array(vec![first]);
                }
                if let Value::Array(a) = old {
                    a.push(value);
                }
            }
            _ => {
                out.insert(key, value);
            }
        }
        if at > text.len() {
            break;
        }
    }
    Ok(Value::Object(out))
}

fn kv_lines(text: &str, k: &KvArgs) -> Result<Value, Malformed> {
    let mut out = Map::new();
    for line in text.split(k.line_sep.as_str()) {
        let line = strip_if(line, k.strip);
        if line.is_empty() {
            continue;
        }
        let Some((key, v)) = line.split_once(k.kv_sep.as_str()) else { continue };
        let (key, v) = (strip_if(key, k.strip), strip_if(v, k.strip));
        out.insert(key.to_string(), sub_parse(Some(v), k.value_parser.as_deref())?);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(name: &str, args: Value) -> Parser {
        Parser::new("t", name, args.as_object().unwrap()).unwrap()
    }

    #[test]
    fn json_dialect_of_gemma() {
        let g = p("json", json!({"string_delims": [["<|\"|>", "<|\"|>"]], "unquoted_keys": true}));
        assert_eq!(
            g.parse("{city:<|\"|>Paris, FR<|\"|>,n:7}").unwrap(),
            json!({"city": "Paris, FR", "n": 7})
        );
        assert!(g.parse("{city:").is_err());
        let lax = p("json", json!({"allow_non_json": true}));
        assert_eq!(lax.parse(" Paris ").unwrap(), json!("Paris"));
    }

    #[test]
    fn quote_keys_leaves_strings() {
        assert_eq!(quote_keys(r#"{a: "b, c: d", e :1}"#), r#"{"a": "b, c: d", "e" :1}"#);
    }

    #[test]
    fn xml_inline_and_kv_lines() {
        let x = p(
            "xml-inline",
            json!({"tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\s*(?P<value>.*?)\\s*</parameter>",
                   "value_parser": {"name": "json", "args": {"allow_non_json": true}}}),
        );
        assert_eq!(
            x.parse("<parameter=a>\n1\n</parameter><parameter=b>x y</parameter>").unwrap(),
            json!({"a": 1, "b": "x y"})
        );
        let kv = p("kv-lines", json!({"value_parser": {"name": "int"}}));
        assert_eq!(kv.parse("a: 1\nnope\n b :2").unwrap(), json!({"a": 1, "b": 2}));
    }
}
