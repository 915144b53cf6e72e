//! Python literals to JSON, a char at a time, as vLLM's pythonic parsers read
//! them (`ast.parse`, `get_parameter_value`, then `json.dumps`): strings
//! ([`super::pystr`]), numbers ([`py_number_literal`]), `True`/`False`/`None`
//! (and JSON's `true`/`false`/`null`), a sign before a number, lists,
//! tuples (`(1, 2)` is `[1, 2]`, while `(1)` is just `1`), dicts (keys are
//! strings, numbers or `True`/`False`/`None`, written as `json.dumps` writes
//! them: `{1: 'a'}` is `{"1": "a"}`) and sets (`{'a', 'b'}` is `["a", "b"]`,
//! in source order).
//!
//! Output is appended only. A `{` or `(` is undecided until the char after
//! its first member says dict or set, tuple or parentheses: until then that
//! member's text is buffered in the frame (bounded by the member) and
//! written once decided. A bare token is held until it ends, and
//! [`PyValue::finish`] completes a truncated value into valid JSON, also
//! after a char was refused ([`Py::Bad`] changes no state).

use super::pystr::{is_prefix, PyStr, SStep};
use crate::json::escape_into;
use crate::pylit::py_number_literal;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum St {
    /// Expecting a value (or a closer right after an opener or a comma).
    Value,
    /// Inside a string value.
    Str,
    /// Inside a bare token.
    Bare,
    /// After a dict key: `:`.
    Colon,
    /// After a value: `,`, a closer, or the end.
    After,
    /// The top-level value is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Kind {
    List,
    Tuple,
    Dict,
    Set,
    /// `{` before its first member's follower: a dict or a set.
    Brace,
    /// `(` before its first member's follower: a tuple or parentheses.
    Paren,
}

/// The first member of an undecided `{`: whether it may be a dict key.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
enum First {
    #[default]
    Unset,
    /// A plain string (buffered): a key or a set member.
    Key,
    /// A container or an f-string (buffered): only a set member.
    NotKey,
    /// A bare token's JSON text (not yet written) and whether it may be a
    /// key (a signed number is an expression, which vLLM refuses as a key).
    Bare(String, bool),
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Frame {
    kind: Kind,
    /// Members begun.
    n: usize,
    /// In a dict: the next value is a key.
    key_next: bool,
    /// Text written inside an undecided frame.
    buf: Option<String>,
    first: First,
}

/// What a char did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Py {
    /// Consumed.
    Ok,
    /// Not part of the value: the value ended before this char.
    End,
    /// Invalid here. The value is left as it was before this char, so
    /// [`PyValue::finish`] still completes what was read into valid JSON
    /// (a committed call cut by a bad byte keeps object arguments).
    Bad,
}

/// One Python literal being converted.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct PyValue {
    stack: Vec<Frame>,
    st: Option<St>,
    s: Option<PyStr>,
    bare: String,
}

/// Where text goes: the innermost undecided frame's buffer, else `out`.
fn sink<'a>(stack: &'a mut [Frame], out: &'a mut String) -> &'a mut String {
    match stack.iter_mut().rev().find_map(|f| f.buf.as_mut()) {
        Some(b) => b,
        None => out,
    }
}

/// A bare token's JSON text and whether it may be a dict key.
fn bare_json(t: &str) -> Option<(String, bool)> {
    let lit = match t {
        "True" | "true" => Some("true"),
        "False" | "false" => Some("false"),
        "None" | "null" => Some("null"),
        _ => None,
    };
    if let Some(l) = lit {
        return Some((l.to_string(), true));
    }
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let n = py_number_literal(body)?;
    let json = if neg && n != "0" { format!("-{n}") } else { n };
    Some((json, body.len() == t.len()))
}

impl PyValue {
    fn st(&self) -> St {
        self.st.unwrap_or(St::Value)
    }

    /// True once the value is complete.
    pub fn done(&self) -> bool {
        self.st == Some(St::Done)
    }

    fn w(&mut self, out: &mut String, s: &str) {
        sink(&mut self.stack, out).push_str(s);
    }

    fn top(&self) -> Option<Kind> {
        self.stack.last().map(|f| f.kind)
    }

    fn in_key(&self) -> bool {
        self.stack.last().is_some_and(|f| f.kind == Kind::Dict && f.key_next)
    }

    /// Inside the first member of an undecided `{`.
    fn brace_first(&self) -> bool {
        self.top() == Some(Kind::Brace)
    }

    fn set_first(&mut self, first: First) {
        if let Some(f) = self.stack.last_mut().filter(|f| f.kind == Kind::Brace) {
            f.first = first;
        }
    }

    fn value_end(&mut self) {
        self.st = Some(if self.stack.is_empty() { St::Done } else { St::After });
    }

    /// After a scalar: a dict key waits for `:`.
    fn scalar_end(&mut self) {
        if self.in_key() {
            self.st = Some(St::Colon);
        } else {
            self.value_end();
        }
    }

    /// Counts a new member of the innermost container and writes `, `
    /// before all but the first (a dict's value follows its key without one).
    fn member(&mut self, out: &mut String) {
        let Some(f) = self.stack.last_mut() else { return };
        if f.kind == Kind::Dict && !f.key_next {
            return;
        }
        let sep = f.n > 0;
        f.n += 1;
        if sep {
            self.w(out, ", ");
        }
    }

    fn open(&mut self, c: char, out: &mut String) -> Py {
        if self.in_key() {
            return Py::Bad; // vLLM reads only literal constants as keys
        }
        self.member(out);
        self.set_first(First::NotKey);
        let (kind, buf) = match c {
            '[' => (Kind::List, None),
            '(' => (Kind::Paren, Some(String::new())),
            _ => (Kind::Brace, Some(String::new())),
        };
        if kind == Kind::List {
            self.w(out, "[");
        }
        self.stack.push(Frame { kind, n: 0, key_next: false, buf, first: First::Unset });
        self.st = Some(St::Value);
        Py::Ok
    }

    /// Decides the innermost undecided frame and writes its opener and
    /// buffered text. False when a dict's first key cannot be a key.
    ///
    /// A refusal changes nothing, so [`PyValue::finish`] still completes the
    /// frame (as a set) into valid JSON.
    fn decide(&mut self, kind: Kind, out: &mut String) -> bool {
        let Some(f) = self.stack.last_mut() else { return false };
        if kind == Kind::Dict && matches!(f.first, First::NotKey | First::Bare(_, false)) {
            return false;
        }
        let buf = f.buf.take().unwrap_or_default();
        let text = match (kind, std::mem::take(&mut f.first)) {
            (Kind::Dict, First::Bare(j, _)) => format!("{{\"{j}\"{buf}"),
            (Kind::Dict, _) => format!("{{{buf}"),
            (_, First::Bare(j, _)) => format!("[{j}{buf}"),
            _ => format!("[{buf}"),
        };
        f.kind = kind;
        self.w(out, &text);
        true
    }

    fn close(&mut self, c: char, out: &mut String) -> Py {
        let ok = matches!(
            (c, self.top()),
            (']', Some(Kind::List))
                | (')', Some(Kind::Tuple | Kind::Paren))
                | ('}', Some(Kind::Dict | Kind::Set | Kind::Brace))
        );
        if !ok || !self.close_top(out) {
            return Py::Bad;
        }
        self.value_end();
        Py::Ok
    }

    /// Pops the innermost frame, writing its closer (an undecided frame is
    /// decided by how it closes).
    fn close_top(&mut self, out: &mut String) -> bool {
        let Some(f) = self.stack.last() else { return false };
        match (f.kind, f.n) {
            (Kind::Brace, 0) => {
                self.decide(Kind::Dict, out);
                self.w(out, "}");
            }
            (Kind::Brace, _) => {
                self.decide(Kind::Set, out);
                self.w(out, "]");
            }
            (Kind::Paren, n) => {
                // `()` is an empty tuple; `(x)` is just `x`.
                let buf = self.stack.pop().and_then(|f| f.buf).unwrap_or_default();
                self.w(out, if n == 0 { "[]" } else { &buf });
                return true;
            }
            (Kind::Dict, _) => self.w(out, "}"),
            _ => self.w(out, "]"),
        }
        self.stack.pop();
        true
    }

    fn end_string(&mut self, out: &mut String) -> Py {
        let joined = self.s.as_ref().is_some_and(|s| s.joined);
        if joined && self.in_key() {
            // Refused before anything is written: `finish` closes the key.
            return Py::Bad;
        }
        self.s = None;
        self.w(out, "\"");
        if joined {
            self.set_first(First::NotKey);
        }
        self.scalar_end();
        Py::Ok
    }

    fn end_bare(&mut self, out: &mut String) -> Py {
        // A refused token stays held, so `finish` writes it as a string.
        let Some((json, key_ok)) = bare_json(&self.bare) else { return Py::Bad };
        if !key_ok && self.in_key() {
            return Py::Bad;
        }
        self.bare.clear();
        if self.brace_first() {
            self.set_first(First::Bare(json, key_ok));
        } else if self.in_key() {
            self.w(out, &format!("\"{json}\""));
        } else {
            self.w(out, &json);
        }
        self.scalar_end();
        Py::Ok
    }

    fn open_string(&mut self, prefix: &str, quote: char, out: &mut String) -> Py {
        let Some(s) = PyStr::open(prefix, quote) else { return Py::Bad };
        if s.joined && self.in_key() {
            return Py::Bad;
        }
        self.set_first(if s.joined { First::NotKey } else { First::Key });
        self.s = Some(s);
        self.w(out, "\"");
        self.st = Some(St::Str);
        Py::Ok
    }

    /// Feeds one char.
    pub fn push(&mut self, c: char, out: &mut String) -> Py {
        match self.st() {
            St::Done => Py::End,
            St::Str => {
                let step = match &mut self.s {
                    Some(s) => s.push(c, sink(&mut self.stack, out)),
                    None => SStep::Bad,
                };
                match step {
                    SStep::Ok => Py::Ok,
                    SStep::Bad => Py::Bad,
                    SStep::Closed => match self.end_string(out) {
                        Py::Ok => self.push(c, out),
                        r => r,
                    },
                }
            }
            St::Bare => {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_') {
                    self.bare.push(c);
                    return Py::Ok;
                }
                if (c == '\'' || c == '"') && is_prefix(&self.bare) {
                    let p = std::mem::take(&mut self.bare);
                    return self.open_string(&p, c, out);
                }
                match self.end_bare(out) {
                    Py::Ok => self.push(c, out),
                    r => r,
                }
            }
            St::Value => match c {
                _ if c.is_whitespace() => Py::Ok,
                '[' | '(' | '{' => self.open(c, out),
                ']' | ')' | '}'
                    if !self.stack.last().is_some_and(|f| f.kind == Kind::Dict && !f.key_next) =>
                {
                    self.close(c, out)
                }
                '\'' | '"' => {
                    self.member(out);
                    self.open_string("", c, out)
                }
                _ if c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.') => {
                    self.member(out);
                    self.bare.clear();
                    self.bare.push(c);
                    self.st = Some(St::Bare);
                    Py::Ok
                }
                _ => Py::Bad,
            },
            St::Colon => match c {
                _ if c.is_whitespace() => Py::Ok,
                ':' => {
                    self.w(out, ": ");
                    if let Some(top) = self.stack.last_mut() {
                        top.key_next = false;
                    }
                    self.st = Some(St::Value);
                    Py::Ok
                }
                _ => Py::Bad,
            },
            St::After => match c {
                _ if c.is_whitespace() => Py::Ok,
                ',' => {
                    match self.top() {
                        Some(Kind::Brace) => {
                            self.decide(Kind::Set, out);
                        }
                        Some(Kind::Paren) => {
                            self.decide(Kind::Tuple, out);
                        }
                        _ => {}
                    }
                    if let Some(top) = self.stack.last_mut() {
                        if top.kind == Kind::Dict {
                            top.key_next = true;
                        }
                    }
                    self.st = Some(St::Value);
                    Py::Ok
                }
                ':' if self.brace_first() => {
                    if !self.decide(Kind::Dict, out) {
                        return Py::Bad;
                    }
                    self.st = Some(St::Colon);
                    self.push(c, out)
                }
                ']' | ')' | '}' => self.close(c, out),
                _ => Py::Bad,
            },
        }
    }

    /// Ends the value at the end of input if it is complete there (a closed
    /// string, a whole bare token): true when done.
    pub fn end(&mut self, out: &mut String) -> bool {
        let complete = match self.st() {
            St::Done => return true,
            St::Str => self.s.as_ref().is_some_and(PyStr::complete),
            St::Bare => bare_json(&self.bare).is_some(),
            _ => false,
        };
        complete && self.stack.is_empty() && self.finish(out)
    }

    /// Ends the value at the end of input: closes what is open. False when
    /// nothing at all was read.
    pub fn finish(&mut self, out: &mut String) -> bool {
        match self.st {
            None => return false,
            Some(St::Str) => {
                if let Some(s) = &mut self.s {
                    s.finish(sink(&mut self.stack, out));
                }
                self.s = None;
                self.w(out, "\"");
                if self.in_key() {
                    self.w(out, ": null");
                }
            }
            Some(St::Bare) => {
                let t = std::mem::take(&mut self.bare);
                match bare_json(&t) {
                    Some((j, k)) if self.brace_first() => self.set_first(First::Bare(j, k)),
                    Some((j, true)) if self.in_key() => self.w(out, &format!("\"{j}\": null")),
                    Some((j, _)) if !self.in_key() => self.w(out, &j),
                    _ => {
                        let mut q = String::from("\"");
                        escape_into(&mut q, &t);
                        q.push('"');
                        if self.in_key() {
                            q.push_str(": null");
                        }
                        self.w(out, &q);
                    }
                }
            }
            Some(St::Colon) => self.w(out, ": null"),
            Some(St::Value) if self.stack.last().is_some_and(|f| f.kind == Kind::Dict && !f.key_next) => {
                self.w(out, "null")
            }
            _ => {}
        }
        while let Some(f) = self.stack.last() {
            if f.kind == Kind::Brace && matches!(f.first, First::Key | First::Unset) && f.n > 0 {
                // A truncated `{'key`: a dict whose value never came.
                self.decide(Kind::Dict, out);
                self.w(out, ": null");
            }
            self.close_top(out);
        }
        self.st = Some(St::Done);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(s: &str) -> (String, Py) {
        let mut v = PyValue::default();
        let mut out = String::new();
        let mut last = Py::Ok;
        for c in s.chars() {
            last = v.push(c, &mut out);
            if last != Py::Ok {
                break;
            }
        }
        if last == Py::Ok {
            v.finish(&mut out);
        }
        (out, last)
    }

    #[test]
    fn literals() {
        assert_eq!(
            conv("{'city': 'SF', 'n': [1, 2.5, True, None]}").0,
            r#"{"city": "SF", "n": [1, 2.5, true, null]}"#
        );
        assert_eq!(conv(r#"'Martha\'s "x"'"#).0, r#""Martha's \"x\"""#);
        assert_eq!(conv("[]").0, "[]");
        assert_eq!(conv("{}").0, "{}");
        assert_eq!(conv("(1, 'a')").0, r#"[1, "a"]"#);
        assert_eq!(conv("('a')").0, r#""a""#);
        assert_eq!(conv("()").0, "[]");
        assert_eq!(conv("{'a', 'b', 'a'}").0, r#"["a", "b", "a"]"#);
        assert_eq!(conv("{1}").0, "[1]");
        assert_eq!(conv("{1: 'a', -2.5: 0x10, None: {(1,), 2}}").1, Py::Bad);
        assert_eq!(
            conv("{1: 'a', 2.5: 0x10, None: {(1,), 2}}").0,
            r#"{"1": "a", "2.5": 16, "null": [[1], 2]}"#
        );
        assert_eq!(conv("[1, 2,]").0, "[1, 2]");
        assert_eq!(conv("[1, 'ab").0, r#"[1, "ab"]"#);
        assert_eq!(conv("{'ke").0, r#"{"ke": null}"#);
        assert_eq!(conv("37)").1, Py::End);
        assert_eq!(conv("'a' )").1, Py::End);
        assert_eq!(conv("{f'a': 1}").1, Py::Bad);
    }

    /// Fuzz (`format_file`, an LFM2-style pythonic call): a refused char
    /// left a half-written state (`{""f"":` lost its buffered key), and
    /// finishing the value then wrote `{: null}`. Whatever char is refused,
    /// the value finished after it is JSON.
    #[test]
    fn a_refused_char_leaves_a_value_that_finishes_as_json() {
        for s in [
            r#"{""f"":1}"#,
            r#"{"a": 1, "b" f"c": 2}"#,
            r#"{f"x" "y": 1}"#,
            "{-1: 2}",
            "{'a': 1, -1: 2}",
            "{1x: 2}",
            "{'a': 1, 1x: 2}",
            "[1x, 2]",
            "{(1,): 2}",
            "{'a': [1}",
            "(1, f'{x}')",
            "{'a', 'b': 1}",
            "{'a': 1 'b'}",
            "'\\xZZ'",
        ] {
            let mut v = PyValue::default();
            let mut out = String::new();
            let refused = s.chars().any(|c| v.push(c, &mut out) == Py::Bad);
            assert!(refused, "{s:?} was accepted");
            v.finish(&mut out);
            assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{s:?} gave {out:?}");
        }
    }
}

/// Keyword arguments `k=v, …` to a JSON object.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct PyArgs {
    n: usize,
    value: Option<PyValue>,
}

impl PyArgs {
    /// Starts argument `key`.
    pub fn key(&mut self, key: &str, out: &mut String) {
        self.close_value(out);
        out.push_str(if self.n == 0 { "{\"" } else { ", \"" });
        escape_into(out, key);
        out.push_str("\": ");
        self.n += 1;
        self.value = Some(PyValue::default());
    }

    /// Feeds a char of the current value.
    pub fn push(&mut self, c: char, out: &mut String) -> Py {
        match &mut self.value {
            Some(v) => v.push(c, out),
            None => Py::Bad,
        }
    }

    /// Whether the current value is complete.
    pub fn value_done(&self) -> bool {
        self.value.as_ref().is_some_and(PyValue::done)
    }

    fn close_value(&mut self, out: &mut String) {
        if let Some(mut v) = self.value.take() {
            if !v.done() && !v.finish(out) {
                out.push_str("null");
            }
        }
    }

    /// Closes the object.
    pub fn finish(&mut self, out: &mut String) {
        self.close_value(out);
        out.push_str(if self.n == 0 { "{}" } else { "}" });
    }
}
