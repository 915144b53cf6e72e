//! The Jinja environment, configured as transformers configures Jinja2.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Rest, Value, ValueKind, ValueOrKwargs};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State, UndefinedBehavior};

use crate::python;
use crate::time::DateTime;
use crate::TemplateError;

/// The name the template is registered under in its environment.
const NAME: &str = "chat_template";

/// The marker attached to the error `raise_exception` returns, so the
/// render can report [`TemplateError::Raised`] with the template's message.
#[derive(Debug)]
struct Raised(String);

impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

/// Rewrites transformers' `{% generation %}` / `{% endgeneration %}` tags
/// (its AssistantTracker extension, a no-op block when rendering text) into
/// `{% if true %}` / `{% endif %}`: a block that changes nothing, with the
/// same whitespace control, so `trim_blocks`/`lstrip_blocks` and `-`/`+`
/// act on the tags exactly as in Jinja2.
pub(crate) fn rewrite_generation_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        let mut i = 2;
        let bytes = tag.as_bytes();
        if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
            i += 1;
        }
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let word_end =
            i + tag[i..].find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(tag.len() - i);
        let replacement = match &tag[i..word_end] {
            "generation" => Some("if true"),
            "endgeneration" => Some("endif"),
            _ => None,
        };
        match replacement {
            Some(word) => {
                out.push_str(&tag[..i]);
                out.push_str(word);
                rest = &tag[word_end..];
            }
            None => {
                out.push_str("{%");
                rest = &tag[2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `raise_exception(message)`.
fn raise_exception(message: Value) -> Result<Value, Error> {
    let message = python::py_str(&message);
    Err(Error::new(ErrorKind::InvalidOperation, message.clone()).with_source(Raised(message)))
}

/// `|string`: Python's `str()`.
fn string_filter(value: Value) -> Value {
    if value.kind() == ValueKind::String {
        value
    } else {
        Value::from(python::py_str(&value))
    }
}

/// `|tojson`: transformers' `json.dumps` wrapper.
fn tojson_filter(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    python::tojson(&value, &args, kwargs)
}

/// Jinja2's `sequence` test: anything with a length and item access
/// (strings, lists, dicts).
fn is_sequence(value: Value) -> bool {
    matches!(value.kind(), ValueKind::String | ValueKind::Seq | ValueKind::Map)
}

/// The `none` test, knowing [`python::PyNone`].
fn is_none_test(value: Value) -> bool {
    python::is_none(&value)
}

/// Jinja2's `iterable` test: `iter(value)` succeeds. Strings, lists,
/// dicts, generators and undefined are iterable; `None` is not.
fn is_iterable(value: Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Iterable | ValueKind::Undefined
    )
}

/// Python's `str.splitlines()`.
fn splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\r' => match chars.peek() {
                Some((_, '\n')) => {
                    chars.next();
                    i + 2
                }
                _ => i + 1,
            },
            '\n' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        lines.push(&s[start..i]);
        start = end;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// Jinja2's `indent(width=4, first=False, blank=False)`, `width` a number
/// of spaces or a string.
fn indent_filter(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    const NAMES: [&str; 3] = ["width", "first", "blank"];
    if args.len() > NAMES.len() {
        return Err(Error::new(ErrorKind::TooManyArguments, "indent takes at most 3 arguments"));
    }
    let mut given: [Option<Value>; 3] = Default::default();
    for (slot, arg) in given.iter_mut().zip(args.iter()) {
        *slot = Some(arg.clone());
    }
    for (i, name) in NAMES.iter().enumerate() {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            given[i] = Some(v);
        }
    }
    kwargs.assert_all_used()?;
    let [width, first, blank] = given;
    let indention = match &width {
        None => "    ".to_string(),
        Some(w) => match w.as_str() {
            Some(s) => s.to_string(),
            None => " ".repeat(w.as_i64().unwrap_or(0).max(0) as usize),
        },
    };
    let s = python::py_str(&value) + "\n";
    let lines = splitlines(&s);
    let mut rv = String::with_capacity(s.len() * 2);
    if blank.as_ref().is_some_and(Value::is_true) {
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                rv.push('\n');
                rv.push_str(&indention);
            }
            rv.push_str(line);
        }
    } else {
        rv.push_str(lines.first().copied().unwrap_or_default());
        for line in lines.iter().skip(1) {
            rv.push('\n');
            if !line.is_empty() {
                rv.push_str(&indention);
            }
            rv.push_str(line);
        }
    }
    if first.as_ref().is_some_and(Value::is_true) {
        rv.insert_str(0, &indention);
    }
    Ok(if value.is_safe() { Value::from_safe_string(rv) } else { Value::from(rv) })
}

/// Python's `int(str)` (base 10): surrounding whitespace, a sign, and
/// underscores between digits allowed.
fn parse_py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    let valid = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    if !valid {
        return None;
    }
    t.replace('_', "").parse().ok()
}

/// Python's `float(str)`.
fn parse_py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower.strip_prefix(['+', '-']).unwrap_or(&lower);
    if matches!(body, "inf" | "infinity" | "nan") {
        return lower.replace("infinity", "inf").parse().ok();
    }
    if body.is_empty()
        || !body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-' | '_'))
    {
        return None;
    }
    t.replace('_', "").parse().ok()
}

/// The value as Python's `float(value)` would have it, if it can.
fn to_py_float(value: &Value) -> Option<f64> {
    match value.kind() {
        ValueKind::Bool => Some(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => f64::try_from(value.clone()).ok(),
        ValueKind::String => parse_py_float(value.as_str().unwrap_or_default()),
        _ => None,
    }
}

/// Jinja2's `int(default=0, base=10)`: `int(value)`, else
/// `int(float(value))`, else the default.
fn int_filter(value: Value, default: Option<Value>) -> Value {
    let parsed = match value.kind() {
        ValueKind::Bool => Some(i64::from(value.is_true())),
        ValueKind::Number if value.is_integer() => return value,
        ValueKind::String => parse_py_int(value.as_str().unwrap_or_default()),
        _ => None,
    };
    let parsed = parsed.or_else(|| to_py_float(&value).filter(|f| f.is_finite()).map(|f| f.trunc() as i64));
    match parsed {
        Some(n) => Value::from(n),
        None => default.unwrap_or(Value::from(0)),
    }
}

/// Jinja2's `float(default=0.0)`.
fn float_filter(value: Value, default: Option<Value>) -> Value {
    match to_py_float(&value) {
        Some(f) => Value::from(f),
        None => default.unwrap_or(Value::from(0.0)),
    }
}

/// Jinja2's `wordcount`: the number of `\w+` runs.
fn wordcount_filter(value: Value) -> usize {
    let s = python::py_str(&value);
    let mut count = 0;
    let mut in_word = false;
    for c in s.chars() {
        let word = c.is_alphanumeric() || c == '_';
        if word && !in_word {
            count += 1;
        }
        in_word = word;
    }
    count
}

/// markupsafe's `escape`: `& < > ' "` as entities; safe strings unchanged.
fn escape_filter(value: Value) -> Value {
    if value.is_safe() {
        return value;
    }
    let s = python::py_str(&value);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            c => out.push(c),
        }
    }
    Value::from_safe_string(out)
}

/// What Jinja2's `map`, `select`, `reject`, `selectattr` and `rejectattr`
/// return: a Python generator. It iterates once (a second loop sees
/// nothing), is always true, has no length, cannot be indexed, reversed or
/// dumped to JSON; a `for` loop over it still knows `loop.length` and
/// `loop.last`, as Jinja2's loop does.
#[derive(Debug)]
struct Generator(Mutex<Option<Vec<Value>>>);

impl Object for Generator {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let items = self.0.lock().map(|mut items| items.take()).unwrap_or_default();
        Enumerator::Iter(Box::new(items.unwrap_or_default().into_iter()))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        None
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }
}

fn generator(items: Vec<Value>) -> Value {
    Value::from_object(Generator(Mutex::new(Some(items))))
}

/// Jinja2's `last`: `next(iter(reversed(value)))`, which fails for generators.
fn last_filter(value: Value) -> Result<Value, Error> {
    if value.downcast_object_ref::<Generator>().is_some() {
        return Err(Error::new(ErrorKind::InvalidOperation, "'generator' object is not reversible"));
    }
    minijinja::filters::last(value)
}

/// Jinja2's `truncate(length=255, killwords=False, end='...', leeway=5)`.
fn truncate_filter(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    const NAMES: [&str; 4] = ["length", "killwords", "end", "leeway"];
    let mut given: [Option<Value>; 4] = Default::default();
    if args.len() > NAMES.len() {
        return Err(Error::new(ErrorKind::TooManyArguments, "truncate takes at most 4 arguments"));
    }
    for (slot, arg) in given.iter_mut().zip(args.iter()) {
        *slot = Some(arg.clone());
    }
    for (i, name) in NAMES.iter().enumerate() {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            given[i] = Some(v);
        }
    }
    kwargs.assert_all_used()?;
    let [length, killwords, end, leeway] = given;
    let s = python::py_str(&value);
    let chars: Vec<char> = s.chars().collect();
    let length = length.and_then(|v| v.as_i64()).unwrap_or(255).max(0) as usize;
    let end = end.map(|v| python::py_str(&v)).unwrap_or_else(|| "...".into());
    let leeway = leeway.and_then(|v| v.as_i64()).unwrap_or(5).max(0) as usize;
    let end_len = end.chars().count();
    if length < end_len {
        return Err(Error::new(ErrorKind::InvalidOperation, "expected length >= len(end)"));
    }
    if chars.len() <= length + leeway {
        return Ok(Value::from(s));
    }
    let head: String = chars[..length - end_len].iter().collect();
    if killwords.is_some_and(|v| v.is_true()) {
        return Ok(Value::from(head + &end));
    }
    let kept = match head.rfind(' ') {
        Some(i) => &head[..i],
        None => &head[..],
    };
    Ok(Value::from(format!("{kept}{end}")))
}

/// Jinja2's `center(width=80)`: Python's `str.center`.
fn center_filter(value: Value, width: Option<usize>) -> Value {
    let s = python::py_str(&value);
    let width = width.unwrap_or(80);
    let len = s.chars().count();
    if len >= width {
        return Value::from(s);
    }
    let marg = width - len;
    // CPython: left = marg / 2 + (marg & width & 1)
    let left = marg / 2 + (marg & width & 1);
    Value::from(format!("{}{s}{}", " ".repeat(left), " ".repeat(marg - left)))
}

/// Python's `str.title()`: upper-case a cased character that follows an
/// uncased one, lower-case the others.
fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        if prev_cased {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        prev_cased = c.is_lowercase() || c.is_uppercase();
    }
    out
}

/// Those filters start with `if value:`, so a falsy input (`None`
/// included) yields nothing rather than failing to iterate.
fn falsy_input(value: &Value) -> Option<Value> {
    (!value.is_true()).then(|| generator(Vec::new()))
}

fn map_filter(state: &mut State, value: Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    if let Some(empty) = falsy_input(&value) {
        return Ok(empty);
    }
    minijinja::filters::map(state, value, args).map(generator)
}

fn select_filter(
    state: &mut State,
    value: Value,
    test: Option<Cow<'_, str>>,
    args: Rest<ValueOrKwargs>,
) -> Result<Value, Error> {
    if let Some(empty) = falsy_input(&value) {
        return Ok(empty);
    }
    minijinja::filters::select(state, value, test, args).map(generator)
}

fn reject_filter(
    state: &mut State,
    value: Value,
    test: Option<Cow<'_, str>>,
    args: Rest<ValueOrKwargs>,
) -> Result<Value, Error> {
    if let Some(empty) = falsy_input(&value) {
        return Ok(empty);
    }
    minijinja::filters::reject(state, value, test, args).map(generator)
}

fn selectattr_filter(
    state: &mut State,
    value: Value,
    attr: Cow<'_, str>,
    test: Option<Cow<'_, str>>,
    args: Rest<ValueOrKwargs>,
) -> Result<Value, Error> {
    if let Some(empty) = falsy_input(&value) {
        return Ok(empty);
    }
    minijinja::filters::selectattr(state, value, attr, test, args).map(generator)
}

fn rejectattr_filter(
    state: &mut State,
    value: Value,
    attr: Cow<'_, str>,
    test: Option<Cow<'_, str>>,
    args: Rest<ValueOrKwargs>,
) -> Result<Value, Error> {
    if let Some(empty) = falsy_input(&value) {
        return Ok(empty);
    }
    minijinja::filters::rejectattr(state, value, attr, test, args).map(generator)
}

/// Python methods on values: minijinja-contrib's pycompat set.
fn unknown_method(state: &mut State, value: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    if let (Some(s), "title", []) = (value.as_str(), method, args) {
        return Ok(Value::from(py_title(s)));
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// A compiled template in its own environment.
#[derive(Debug)]
pub(crate) struct Compiled {
    env: Environment<'static>,
}

impl Compiled {
    /// Compiles a template source (after the `{% generation %}` rewrite).
    pub(crate) fn new(source: &str) -> Result<Compiled, TemplateError> {
        let mut env = Environment::new();
        let mut syntax = minijinja::syntax::SyntaxConfig::builder();
        syntax.trim_blocks(true).lstrip_blocks(true).keep_trailing_newline(false);
        env.set_syntax(syntax.build().map_err(|e| TemplateError::Syntax(e.to_string()))?);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(UndefinedBehavior::Lenient);
        env.set_formatter(|out, _state, value| {
            if value.kind() == ValueKind::String {
                out.write_str(value.as_str().unwrap_or_default())?;
            } else {
                out.write_str(&python::py_str(value))?;
            }
            Ok(())
        });
        env.set_unknown_method_callback(unknown_method);
        env.add_filter("tojson", tojson_filter);
        env.add_filter("string", string_filter);
        env.add_filter("indent", indent_filter);
        env.add_filter("int", int_filter);
        env.add_filter("last", last_filter);
        env.add_filter("truncate", truncate_filter);
        env.add_filter("center", center_filter);
        env.add_filter("float", float_filter);
        env.add_filter("wordcount", wordcount_filter);
        env.add_filter("escape", escape_filter);
        env.add_filter("e", escape_filter);
        env.add_filter("forceescape", escape_filter);
        env.add_filter("map", map_filter);
        env.add_filter("select", select_filter);
        env.add_filter("reject", reject_filter);
        env.add_filter("selectattr", selectattr_filter);
        env.add_filter("rejectattr", rejectattr_filter);
        env.add_test("sequence", is_sequence);
        env.add_test("iterable", is_iterable);
        env.add_test("none", is_none_test);
        env.add_function("raise_exception", raise_exception);
        env.add_template_owned(NAME, crate::markup::rewrite_markup_concat(&rewrite_generation_tags(source)))
            .map_err(|e| TemplateError::Syntax(describe(&e)))?;
        Ok(Compiled { env })
    }

    /// Renders with these variables; `strftime_now` formats `now`.
    pub(crate) fn render(
        &self,
        mut vars: BTreeMap<String, Value>,
        now: DateTime,
    ) -> Result<String, TemplateError> {
        vars.entry("strftime_now".into())
            .or_insert_with(|| Value::from_function(move |format: &str| now.strftime(format)));
        let template = self.env.get_template(NAME).map_err(|e| TemplateError::Render(describe(&e)))?;
        template.render(Value::from(vars)).map_err(|e| match raised_message(&e) {
            Some(message) => TemplateError::Raised(message),
            None => TemplateError::Render(describe(&e)),
        })
    }
}

/// The message of a `raise_exception` anywhere in the error's chain.
fn raised_message(error: &Error) -> Option<String> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(raised) = e.downcast_ref::<Raised>() {
            return Some(raised.0.clone());
        }
        current = e.source();
    }
    None
}

/// An error with its causes.
fn describe(error: &Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        message.push_str(": ");
        message.push_str(&e.to_string());
        source = e.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_python() {
        assert_eq!(parse_py_int(" -1_000 "), Some(-1000));
        assert_eq!(parse_py_int("4.7"), None);
        assert_eq!(parse_py_int("1__0"), None);
        assert_eq!(parse_py_float("4.7"), Some(4.7));
        assert_eq!(parse_py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_py_float("x"), None);
        assert_eq!(int_filter(Value::from("4.7"), None), Value::from(4));
        assert_eq!(int_filter(Value::from("x"), Some(Value::from(-1))), Value::from(-1));
        assert_eq!(float_filter(Value::from("x"), None), Value::from(0.0));
        assert_eq!(wordcount_filter(Value::from("a b_c, d!")), 3);
    }

    #[test]
    fn splitlines_like_python() {
        assert_eq!(splitlines("a\nb\r\nc\rd\n"), ["a", "b", "c", "d"]);
        assert_eq!(splitlines("a\n\n"), ["a", ""]);
        assert!(splitlines("").is_empty());
    }

    #[test]
    fn generation_tags_become_plain_blocks() {
        assert_eq!(
            rewrite_generation_tags("a{% generation %}b{%- endgeneration -%}c{{ '{%' }}{% if x %}"),
            "a{% if true %}b{%- endif -%}c{{ '{%' }}{% if x %}"
        );
    }
}
