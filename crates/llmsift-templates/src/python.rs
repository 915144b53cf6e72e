//! Python's spelling of values: `str()` / `repr()` (what Jinja2 prints for
//! `{{ value }}`, `|string` and `~`) and `json.dumps` (transformers' `tojson`).

use std::fmt::{self, Write};
use std::sync::Arc;

use minijinja::value::{Kwargs, Object, ObjectRepr, ValueKind};
use minijinja::{Error, ErrorKind, Value};

/// Python's `None` where Jinja2 and minijinja disagree about it: minijinja
/// iterates `none` as an empty sequence, Python raises `TypeError`. The
/// top-level `tools` and `documents` are passed as this object when absent,
/// so `{% for tool in tools %}` fails as in transformers, while `is none`,
/// truthiness, printing (`None`) and `tojson` (`null`) behave as for `None`.
#[derive(Debug)]
pub(crate) struct PyNone;

impl Object for PyNone {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn is_true(self: &Arc<Self>) -> bool {
        false
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("None")
    }
}

/// Whether a value is Python's `None` (minijinja's `none` or [`PyNone`]).
pub(crate) fn is_none(value: &Value) -> bool {
    value.is_none() || value.downcast_object_ref::<PyNone>().is_some()
}

/// `float.__repr__`: the shortest round-tripping digits, in fixed notation
/// for decimal exponents in `-4..16` and scientific notation otherwise.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Rust's `{:e}` is the shortest round-trip form: "-1.2345e-7", "0e0".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Python's `str(value)`, as Jinja2 prints a value.
pub(crate) fn py_str(value: &Value) -> String {
    let mut out = String::new();
    write_str(&mut out, value);
    out
}

/// Appends Python's `str(value)`.
pub(crate) fn write_str(out: &mut String, value: &Value) {
    match value.kind() {
        ValueKind::String => out.push_str(value.as_str().unwrap_or_default()),
        ValueKind::Undefined => {}
        _ => write_repr(out, value),
    }
}

/// Appends Python's `repr(value)`.
fn write_repr(out: &mut String, value: &Value) {
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => write_number(out, value),
        ValueKind::String => write_str_repr(out, value.as_str().unwrap_or_default()),
        ValueKind::Seq | ValueKind::Iterable => {
            let (open, close) = if is_tuple(value) { ('(', ')') } else { ('[', ']') };
            out.push(open);
            let mut n = 0;
            if let Ok(iter) = value.try_iter() {
                for (i, item) in iter.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_repr(out, &item);
                    n += 1;
                }
            }
            if open == '(' && n == 1 {
                out.push(',');
            }
            out.push(close);
        }
        ValueKind::Map => {
            out.push('{');
            if let Ok(iter) = value.try_iter() {
                for (i, key) in iter.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_repr(out, &key);
                    out.push_str(": ");
                    write_repr(out, &value.get_item(&key).unwrap_or_default());
                }
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// Whether a sequence is a tuple (what `dict.items()` yields, for example).
fn is_tuple(value: &Value) -> bool {
    value.as_object().is_some_and(|o| o.downcast_ref::<minijinja::value::Tuple>().is_some())
}

fn write_number(out: &mut String, value: &Value) {
    if let Some(f) = as_f64_exact(value) {
        out.push_str(&float_repr(f));
    } else {
        let _ = write!(out, "{value}");
    }
}

/// The value as a float if it is one (integers are spelled as integers).
fn as_f64_exact(value: &Value) -> Option<f64> {
    if value.kind() == ValueKind::Number && !value.is_integer() {
        f64::try_from(value.clone()).ok()
    } else {
        None
    }
}

/// Python's `repr(str)`: single quotes unless the text has a `'` and no `"`.
fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let n = c as u32;
                let _ = if n < 0x100 {
                    write!(out, "\\x{n:02x}")
                } else if n < 0x10000 {
                    write!(out, "\\u{n:04x}")
                } else {
                    write!(out, "\\U{n:08x}")
                };
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// An approximation of Python's `str.isprintable` for one character: false
/// for control characters, separators other than the space, the common
/// format characters and private-use code points.
fn is_printable(c: char) -> bool {
    let n = c as u32;
    !(n < 0x20
        || (0x7f..=0xa0).contains(&n)
        || n == 0xad
        || n == 0x1680
        || (0x2000..=0x200f).contains(&n)
        || (0x2028..=0x202f).contains(&n)
        || (0x205f..=0x2064).contains(&n)
        || (0x2066..=0x206f).contains(&n)
        || n == 0x3000
        || n == 0xfeff
        || (0xfff9..=0xfffb).contains(&n)
        || (0xe000..=0xf8ff).contains(&n)
        || n >= 0xf0000)
}

/// Options of Python's `json.dumps` that transformers' `tojson` exposes.
struct JsonOptions {
    ensure_ascii: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

/// transformers' `tojson` filter:
/// `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`,
/// arguments positional or by keyword, in that order.
pub(crate) fn tojson(value: &Value, args: &[Value], kwargs: Kwargs) -> Result<Value, Error> {
    const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > NAMES.len() {
        return Err(Error::new(ErrorKind::TooManyArguments, "tojson takes at most 4 arguments"));
    }
    let mut given: [Option<Value>; 4] = Default::default();
    for (slot, arg) in given.iter_mut().zip(args) {
        *slot = Some(arg.clone());
    }
    for (i, name) in NAMES.iter().enumerate() {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            if given[i].is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("tojson() got multiple values for argument '{name}'"),
                ));
            }
            given[i] = Some(v);
        }
    }
    kwargs.assert_all_used()?;
    let [ensure_ascii, indent, separators, sort_keys] = given;
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => Some(match v.as_str() {
            Some(s) => s.to_string(),
            None => match v.as_i64() {
                Some(n) => " ".repeat(n.max(0) as usize),
                None => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: indent must be an int or str",
                    ))
                }
            },
        }),
    };
    let (item_sep, key_sep) = match separators {
        Some(v) if !v.is_none() => {
            let parts: Vec<Value> = v.try_iter()?.collect();
            match parts.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => {
                    (a.as_str().unwrap_or_default().to_string(), b.as_str().unwrap_or_default().to_string())
                }
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: separators must be two strings",
                    ))
                }
            }
        }
        _ if indent.is_some() => (",".into(), ": ".into()),
        _ => (", ".into(), ": ".into()),
    };
    let opts = JsonOptions {
        ensure_ascii: ensure_ascii.is_some_and(|v| v.is_true()),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.is_some_and(|v| v.is_true()),
    };
    let mut out = String::new();
    dump(&mut out, value, &opts, 0)?;
    Ok(Value::from(out))
}

fn not_serializable(what: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("Object of type {what} is not JSON serializable"))
}

fn newline_indent(out: &mut String, opts: &JsonOptions, level: usize) {
    if let Some(indent) = &opts.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(indent);
        }
    }
}

fn dump(out: &mut String, value: &Value, opts: &JsonOptions, level: usize) -> Result<(), Error> {
    match value.kind() {
        ValueKind::Undefined => return Err(not_serializable("Undefined")),
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => match as_f64_exact(value) {
            Some(f) if f.is_nan() => out.push_str("NaN"),
            Some(f) if f.is_infinite() => out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" }),
            Some(f) => out.push_str(&float_repr(f)),
            None => {
                let _ = write!(out, "{value}");
            }
        },
        ValueKind::String => dump_str(out, value.as_str().unwrap_or_default(), opts.ensure_ascii),
        ValueKind::Seq => {
            let items: Vec<Value> = value.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_sep);
                }
                newline_indent(out, opts, level + 1);
                dump(out, item, opts, level + 1)?;
            }
            newline_indent(out, opts, level);
            out.push(']');
        }
        ValueKind::Map => {
            let mut entries = Vec::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                entries.push((json_key(&key)?, item));
            }
            if entries.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            if opts.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_sep);
                }
                newline_indent(out, opts, level + 1);
                dump_str(out, key, opts.ensure_ascii);
                out.push_str(&opts.key_sep);
                dump(out, item, opts, level + 1)?;
            }
            newline_indent(out, opts, level);
            out.push('}');
        }
        ValueKind::Iterable => return Err(not_serializable("generator")),
        ValueKind::Plain if is_none(value) => out.push_str("null"),
        _ => return Err(not_serializable(&value.kind().to_string())),
    }
    Ok(())
}

/// A key as `json.dumps` spells it: strings as they are, numbers, booleans
/// and None converted; anything else is an error.
fn json_key(key: &Value) -> Result<String, Error> {
    Ok(match key.kind() {
        ValueKind::String => key.as_str().unwrap_or_default().to_string(),
        ValueKind::None => "null".into(),
        ValueKind::Bool => (if key.is_true() { "true" } else { "false" }).into(),
        ValueKind::Number => match as_f64_exact(key) {
            Some(f) => float_repr(f),
            None => key.to_string(),
        },
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("keys must be str, int, float, bool or None, not {}", key.kind()),
            ))
        }
    })
}

/// A JSON string literal as Python's encoder writes it.
fn dump_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_python() {
        for (f, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (21.5, "21.5"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e-7, "1e-07"),
            (2.5e300, "2.5e+300"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(float_repr(f), s, "{f}");
        }
    }

    #[test]
    fn repr_like_python() {
        let v = Value::from(minijinja::value::Serde(
            serde_json::json!({"a": [1, 2.5, true, null, "it's"], "b": "x\n\"y\""}),
        ));
        assert_eq!(py_str(&v), r#"{'a': [1, 2.5, True, None, "it's"], 'b': 'x\n"y"'}"#);
        assert_eq!(py_str(&Value::from("plain")), "plain");
        assert_eq!(py_str(&Value::from(false)), "False");
    }

    #[test]
    fn json_like_python() {
        let v = Value::from(minijinja::value::Serde(
            serde_json::json!({"b": "Zürich <&>", "a": [1, 2.0, {}], "c": []}),
        ));
        let dump = |args: &[Value], kw: Vec<(&str, Value)>| {
            tojson(&v, args, Kwargs::from_iter(kw)).unwrap().as_str().unwrap().to_string()
        };
        assert_eq!(dump(&[], vec![]), r#"{"b": "Zürich <&>", "a": [1, 2.0, {}], "c": []}"#);
        assert_eq!(
            dump(&[], vec![("ensure_ascii", Value::from(true)), ("sort_keys", Value::from(true))]),
            r#"{"a": [1, 2.0, {}], "b": "Z\u00fcrich <&>", "c": []}"#
        );
        assert_eq!(
            dump(&[], vec![("indent", Value::from(2))]),
            "{\n  \"b\": \"Zürich <&>\",\n  \"a\": [\n    1,\n    2.0,\n    {}\n  ],\n  \"c\": []\n}"
        );
        assert_eq!(
            dump(&[], vec![("separators", Value::from(vec![",", ":"]))]),
            r#"{"b":"Zürich <&>","a":[1,2.0,{}],"c":[]}"#
        );
        let emoji = tojson(
            &Value::from("😀\u{7f}"),
            &[Value::from(true)],
            Kwargs::from_iter(Vec::<(&str, Value)>::new()),
        )
        .unwrap();
        assert_eq!(emoji.as_str().unwrap(), r#""\ud83d\ude00\u007f""#);
        assert!(tojson(&Value::UNDEFINED, &[], Kwargs::from_iter(Vec::<(&str, Value)>::new())).is_err());
    }
}
