//! Reading a `response_template` (transformers' `load_response_template`):
//! the checks transformers makes, with its messages, and the ones Sift adds
//! where a template is valid but its answer does not fit a Chat Completions
//! message. Everything is settled here, once per template; the stream reads
//! only the typed [`Template`].

use super::content::{truthy, Parser};
use super::regex::Regex;
use super::TemplateError;
use serde_json::{Map, Value};

/// What a field becomes in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `thinking`, `reasoning_content` or `reasoning`: the message's reasoning.
    Reasoning,
    /// `content`.
    Content,
    /// `tool_calls`.
    Calls,
}

/// A region delimiter. Literals compile to an alternation, longest first,
/// as transformers compiles them; whether a match at the edge of the text
/// can still grow is the matcher's own report, for literals and patterns.
#[derive(Debug, Clone)]
pub(crate) struct Anchor {
    pub re: Regex,
}

/// One field of a template.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub name: String,
    pub role: Role,
    pub open: Option<Anchor>,
    pub close: Option<Anchor>,
    pub parser: Parser,
    /// With `repeats` a field's values are kept in order (a list, or
    /// joined); Sift keeps every value in order either way, so only `join`
    /// is read on.
    pub join: Option<String>,
    pub transform: Option<Value>,
    pub transform_each: bool,
}

/// A compiled response template.
#[derive(Debug, Clone)]
pub struct Template {
    pub(crate) fields: Vec<Field>,
    /// The field without an opener (the implicit region), if any.
    pub(crate) implicit: Option<usize>,
    pub(crate) start: Anchor,
}

fn invalid(m: impl Into<String>) -> TemplateError {
    TemplateError::Invalid { message: m.into() }
}

fn unsupported(m: impl Into<String>) -> TemplateError {
    TemplateError::Unsupported { message: m.into() }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn anchor(
    scope: &str,
    field: &Map<String, Value>,
    lit: &str,
    pat: &str,
) -> Result<Option<Anchor>, TemplateError> {
    if field.contains_key(lit) && field.contains_key(pat) {
        return Err(invalid(format!("{scope}: cannot specify both '{lit}' and '{pat}'")));
    }
    if let Some(raw) = field.get(lit) {
        let mut lits: Vec<String> = match raw {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => {
                if a.is_empty() {
                    return Err(invalid(format!("{scope}: '{lit}' list must contain at least one literal")));
                }
                a.iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or_else(|| invalid(format!("{scope}: '{lit}' list must contain only strings")))?
            }
            v => {
                return Err(invalid(format!(
                    "{scope}: '{lit}' must be a string or list of strings, got {}",
                    type_name(v)
                )))
            }
        };
        let mut seen = std::collections::HashSet::new();
        lits.retain(|s| seen.insert(s.clone()));
        if lits.iter().any(String::is_empty) {
            return Err(invalid(format!("{scope}: '{lit}' literals cannot be empty strings")));
        }
        return Ok(Some(Anchor { re: Regex::literals(&lits) }));
    }
    match field.get(pat) {
        None => Ok(None),
        Some(Value::String(p)) => {
            let re = Regex::new(p).map_err(|e| unsupported(format!("{scope}: {pat} {p:?}: {e}")))?;
            Ok(Some(Anchor { re }))
        }
        Some(v) => Err(invalid(format!("{scope}: invalid {pat} regex: got {}", type_name(v)))),
    }
}

const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

fn role(name: &str) -> Result<Role, TemplateError> {
    match name {
        "thinking" | "reasoning_content" | "reasoning" => Ok(Role::Reasoning),
        "content" => Ok(Role::Content),
        "tool_calls" => Ok(Role::Calls),
        n => Err(unsupported(format!(
            "field '{n}' has no place in a chat message (Sift reads thinking, reasoning_content, reasoning, content and tool_calls)"
        ))),
    }
}

fn build_field(name: &str, raw: &Value) -> Result<Field, TemplateError> {
    let scope = format!("Field '{name}'");
    let f = raw.as_object().ok_or_else(|| invalid(format!("{scope} must be a dict")))?;
    let mut unknown: Vec<&str> = f.keys().map(String::as_str).filter(|k| !FIELD_KEYS.contains(k)).collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(invalid(format!("{scope}: unknown keys {unknown:?}")));
    }
    let content = match f.get("content") {
        None => "text",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(invalid(format!("{scope}: unknown content parser {v}"))),
    };
    let args = match f.get("content_args") {
        None => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(unsupported(format!("{scope}: content_args must be a dict"))),
    };
    let open = anchor(&scope, f, "open", "open_pattern")?;
    let close = anchor(&scope, f, "close", "close_pattern")?;
    let join = match f.get("join") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => return Err(invalid(format!("{scope}: 'join' must be a string, got {}", type_name(v)))),
    };
    let repeats = truthy(f.get("repeats"), false);
    if join.is_some() && !repeats {
        return Err(invalid(format!("{scope}: 'join' requires 'repeats': true")));
    }
    let transform = f.get("transform").filter(|t| !t.is_null()).cloned();
    let transform_each = match f.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(invalid(format!("{scope}: transform_each must be a bool, got {}", type_name(v))))
        }
    };
    if transform_each && transform.is_none() {
        return Err(invalid(format!("{scope}: transform_each is set but no transform was provided")));
    }
    match &transform {
        Some(t) => super::transform::validate(&scope, t)?,
        None => {
            let mut names: Vec<&str> =
                open.iter().chain(close.iter()).flat_map(|a| a.re.group_names()).collect();
            if !names.is_empty() {
                names.sort_unstable();
                names.dedup();
                return Err(invalid(format!(
                    "{scope}: open_pattern/close_pattern declares named group(s) {names:?}, but the field has no 'transform'"
                )));
            }
        }
    }
    let parser = Parser::new(&scope, content, &args)?;
    let role = role(name)?;
    if role != Role::Calls {
        // Reasoning and content are strings in a message: only a text field,
        // untransformed, is one; a repeated one only when joined.
        if !matches!(parser, Parser::Text { .. }) || transform.is_some() {
            return Err(unsupported(format!(
                "{scope}: a {} field must be plain text (content \"text\", no transform) to be a message string",
                if role == Role::Reasoning { "reasoning" } else { "content" }
            )));
        }
        if repeats && join.is_none() {
            return Err(unsupported(format!(
                "{scope}: repeats without join gives a list, and a message's {} is one string",
                if role == Role::Reasoning { "reasoning" } else { "content" }
            )));
        }
    } else if join.is_some() {
        return Err(unsupported(format!("{scope}: joined tool calls are a string, not calls")));
    }
    Ok(Field { name: name.to_string(), role, open, close, parser, join, transform, transform_each })
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Reads and checks a template.
pub fn load(spec: &Value) -> Result<Template, TemplateError> {
    let spec = spec
        .as_object()
        .ok_or_else(|| invalid(format!("response_template must be a dict, got {}", type_name(spec))))?;
    if spec.get("version").is_some_and(|v| v.as_i64() != Some(1) && v.as_f64() != Some(1.0)) {
        return Err(invalid(format!("Unsupported response_template version: {}", spec["version"])));
    }
    let known = ["version", "defaults", "fields", "start_anchor", "start_anchor_pattern"];
    let mut unknown: Vec<&str> = spec.keys().map(String::as_str).filter(|k| !known.contains(k)).collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(invalid(format!("Unknown keys in response_template: {unknown:?}")));
    }
    let defaults = match spec.get("defaults") {
        None => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(invalid("response_template.defaults must be a dict")),
    };
    let fields_raw = match spec.get("fields") {
        Some(Value::Object(o)) if !o.is_empty() => o,
        _ => return Err(invalid("response_template.fields must be a non-empty dict")),
    };
    let mut fields: Vec<Field> =
        fields_raw.iter().map(|(n, f)| build_field(n, f)).collect::<Result<_, _>>()?;
    if !fields_raw.contains_key("content") && fields.iter().all(|f| f.open.is_some()) {
        // vLLM's `hf` serving: a template whose every field has an opener
        // gets an implicit `content` field, so text outside every region is
        // content rather than dropped (transformers drops it).
        fields.push(build_field("content", &Value::Object(Map::new()))?);
    }
    let implicit: Vec<usize> = (0..fields.len()).filter(|&i| fields[i].open.is_none()).collect();
    if implicit.len() > 1 {
        let names: Vec<&str> = implicit.iter().map(|&i| fields[i].name.as_str()).collect();
        return Err(invalid(format!(
            "At most one field may omit 'open'/'open_pattern' (that field becomes the implicit-open / leftover sink). Found: {}",
            names.join(", ")
        )));
    }
    let start = anchor("response_template", spec, "start_anchor", "start_anchor_pattern")?
        .ok_or_else(|| invalid("response_template must define 'start_anchor' or 'start_anchor_pattern'."))?;
    for (i, a) in fields.iter().enumerate() {
        if let Some(b) = fields[..i].iter().find(|b| b.role == a.role) {
            return Err(unsupported(format!(
                "fields '{}' and '{}' would both be the message's {:?}",
                b.name, a.name, a.role
            )));
        }
    }
    for (k, v) in &defaults {
        // A default shows only when its field never appears: an empty one
        // is what the message holds then anyway.
        if k != "role" && !empty(v) {
            return Err(unsupported(format!("default {k} = {v} has no place in a chat message")));
        }
    }
    Ok(Template { implicit: implicit.first().copied(), fields, start })
}

impl Template {
    /// Whether the template has a `tool_calls` field.
    pub fn has_calls(&self) -> bool {
        self.fields.iter().any(|f| f.role == Role::Calls)
    }

    /// Whether the template has a reasoning field.
    pub fn has_reasoning(&self) -> bool {
        self.fields.iter().any(|f| f.role == Role::Reasoning)
    }

    /// The prompt's tail after the last start anchor (all of it when the
    /// anchor does not occur), as transformers truncates the prefix.
    pub(crate) fn after_last_anchor<'p>(&self, prompt: &'p str) -> &'p str {
        let mut at = 0;
        let mut last = None;
        while let Some((m, _)) = self.start.re.find_at(prompt, at) {
            last = Some(m.end);
            at = if m.end > m.start {
                m.end
            } else {
                m.end + prompt[m.end..].chars().next().map_or(1, char::len_utf8)
            };
        }
        last.map_or(prompt, |e| &prompt[e..])
    }
}
