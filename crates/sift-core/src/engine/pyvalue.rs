//! Python literals to JSON, a byte at a time: strings (`'…'`, `"…"`, with
//! Python escapes), numbers, `True`/`False`/`None` (and the JSON spellings),
//! lists, tuples and dicts. Output is appended only: a string streams as it
//! is read, a bare token is held until it ends, and [`PyValue::finish`]
//! completes a truncated value into valid JSON.

use crate::json::escape_into;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Expecting a value (or a closer right after an opener).
    Value,
    /// Inside a string opened by `quote`; `esc` holds an unfinished escape.
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

/// What a byte did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Py {
    /// Consumed.
    Ok,
    /// Not part of the value: the value ended before this byte.
    End,
    /// Invalid here.
    Bad,
}

/// One Python literal being converted.
#[derive(Debug, Default)]
pub(crate) struct PyValue {
    /// Open containers: `[`, `(` or `{`, with members emitted and, for dicts,
    /// whether the next value is a key.
    stack: Vec<(u8, usize, bool)>,
    st: Option<St>,
    quote: u8,
    esc: String,
    bare: String,
}

fn bare_json(t: &str, out: &mut String) -> bool {
    match t {
        "True" | "true" => out.push_str("true"),
        "False" | "false" => out.push_str("false"),
        "None" | "null" => out.push_str("null"),
        _ => {
            let num = t.strip_prefix('+').unwrap_or(t);
            match num.parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    if serde_json::from_str::<serde_json::Number>(num).is_ok() {
                        out.push_str(num);
                    } else {
                        out.push_str(&serde_json::Number::from_f64(x).map_or("0".into(), |n| n.to_string()));
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

impl PyValue {
    fn st(&self) -> St {
        self.st.unwrap_or(St::Value)
    }

    /// True once the value is complete.
    pub fn done(&self) -> bool {
        self.st == Some(St::Done)
    }

    fn value_end(&mut self) {
        self.st = Some(if self.stack.is_empty() { St::Done } else { St::After });
    }

    /// Emits `, ` before a new member of the innermost container (a dict's
    /// value follows its key without one).
    fn member(&mut self, out: &mut String) {
        if let Some((kind, n, key_next)) = self.stack.last_mut() {
            if *kind == b'{' && !*key_next {
                return;
            }
            if *n > 0 {
                out.push_str(", ");
            }
            *n += 1;
        }
    }

    fn close(&mut self, c: u8, out: &mut String) -> Py {
        let want = match c {
            b']' => b'[',
            b')' => b'(',
            _ => b'{',
        };
        match self.stack.last() {
            Some((o, _, _)) if *o == want => {}
            _ => return Py::Bad,
        }
        self.stack.pop();
        out.push(if c == b'}' { '}' } else { ']' });
        self.value_end();
        Py::Ok
    }

    /// Feeds one char.
    pub fn push(&mut self, c: char, out: &mut String) -> Py {
        let b = if c.is_ascii() { c as u8 } else { 0x80 };
        match self.st() {
            St::Done => Py::End,
            St::Str => {
                if !self.esc.is_empty() {
                    self.esc.push(c);
                    return self.escape(out);
                }
                match c {
                    '\\' => self.esc.push(c),
                    _ if b == self.quote => {
                        out.push('"');
                        self.after_string();
                    }
                    _ => {
                        let mut tmp = [0u8; 4];
                        escape_into(out, c.encode_utf8(&mut tmp));
                    }
                }
                Py::Ok
            }
            St::Bare => {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_') {
                    self.bare.push(c);
                    return Py::Ok;
                }
                let t = std::mem::take(&mut self.bare);
                if !bare_json(&t, out) {
                    return Py::Bad;
                }
                self.value_end();
                self.push(c, out)
            }
            St::Value => match c {
                _ if c.is_whitespace() => Py::Ok,
                '[' | '(' | '{' => {
                    self.member(out);
                    out.push(if c == '{' { '{' } else { '[' });
                    self.stack.push((b, 0, c == '{'));
                    Py::Ok
                }
                ']' | ')' | '}' if self.stack.last().is_some_and(|(_, n, _)| *n == 0) => self.close(b, out),
                '\'' | '"' => {
                    self.member(out);
                    self.quote = b;
                    out.push('"');
                    self.st = Some(St::Str);
                    Py::Ok
                }
                _ if c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.') => {
                    if matches!(self.stack.last(), Some((b'{', _, true))) {
                        return Py::Bad; // JSON keys must be strings
                    }
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
                    out.push_str(": ");
                    if let Some(top) = self.stack.last_mut() {
                        top.2 = false;
                    }
                    self.st = Some(St::Value);
                    Py::Ok
                }
                _ => Py::Bad,
            },
            St::After => match c {
                _ if c.is_whitespace() => Py::Ok,
                ',' => {
                    if let Some(top) = self.stack.last_mut() {
                        if top.0 == b'{' {
                            top.2 = true;
                        }
                    }
                    self.st = Some(St::Value);
                    Py::Ok
                }
                ']' | ')' | '}' => self.close(b, out),
                _ => Py::Bad,
            },
        }
    }

    fn after_string(&mut self) {
        match self.stack.last() {
            Some((b'{', _, true)) => self.st = Some(St::Colon),
            _ => self.value_end(),
        }
    }

    fn escape(&mut self, out: &mut String) -> Py {
        let e = self.esc.as_str();
        let need = match e.as_bytes().get(1) {
            Some(b'x') => 4,
            Some(b'u') => 6,
            Some(b'U') => 10,
            _ => 2,
        };
        if e.len() < need {
            return Py::Ok;
        }
        let decoded: Option<String> = match &e[1..2] {
            "n" => Some("\n".into()),
            "t" => Some("\t".into()),
            "r" => Some("\r".into()),
            "\\" => Some("\\".into()),
            "'" => Some("'".into()),
            "\"" => Some("\"".into()),
            "0" => Some("\0".into()),
            "x" | "u" | "U" => {
                u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32).map(String::from)
            }
            "\n" => Some(String::new()),
            _ => Some(e.to_string()),
        };
        self.esc.clear();
        match decoded {
            Some(s) => {
                escape_into(out, &s);
                Py::Ok
            }
            None => Py::Bad,
        }
    }

    /// Ends the value at the end of input: closes what is open. False when
    /// nothing at all was read.
    pub fn finish(&mut self, out: &mut String) -> bool {
        match self.st {
            None => return false,
            Some(St::Str) => out.push('"'),
            Some(St::Bare) => {
                let t = std::mem::take(&mut self.bare);
                if !bare_json(&t, out) {
                    out.push('"');
                    escape_into(out, &t);
                    out.push('"');
                }
            }
            Some(St::Colon) => out.push_str(": null"),
            Some(St::Value) if matches!(self.stack.last(), Some((b'{', n, false)) if *n > 0) => {
                out.push_str("null")
            }
            _ => {}
        }
        if self.st == Some(St::Value) && matches!(self.stack.last(), Some((b'{', _, true))) {
            // A dict waiting for a key after a held comma: nothing to add.
        }
        while let Some((c, _, _)) = self.stack.pop() {
            out.push(if c == b'{' { '}' } else { ']' });
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
        assert_eq!(conv("[1, 'ab").0, r#"[1, "ab"]"#);
        assert_eq!(conv("37)").1, Py::End);
    }
}

/// Keyword arguments `k=v, …` to a JSON object.
#[derive(Debug, Default)]
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
