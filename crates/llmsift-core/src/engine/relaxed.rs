//! Relaxed object notation to JSON: Gemma's call bodies
//! `{key:<|"|>text<|"|>,n:42,on:true,o:{k:v},l:[a,b]}` (unquoted keys, bare
//! values, strings between delimiter markers that the lexer recognises, so
//! the kernel sees `str_open`/`str_text`/`str_close` instead of the markers).
//!
//! Output is JSON built by appending only: structure is emitted when read,
//! string text streams escaped, a bare value is held until it ends, and a
//! separator is held until the next member starts, so a truncated body is
//! always completed by `finish` into valid JSON.
//!
//! Bare values are read per [`Bare`]: as JSON literals when they are one
//! (`42`, `true`; otherwise a string), or typed by the tool's schema for
//! top-level keys (no schema: a string), as vLLM's standalone parser and its
//! unified engine respectively do. In schema mode a delimited string whose
//! schema allows more than a string is held and typed at its close, as the
//! engine's `_fix_arg_types` does (`<|"|>{"k": 1}<|"|>` for an object).

use crate::json::escape_into;
use crate::schema::{convert_value, ParamType, Tools};
use std::sync::Arc;

/// How bare values are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Bare {
    /// JSON literal when the text is one, else a string.
    Literal,
    /// Typed by the tool schema (top-level keys); otherwise a string.
    Schema,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum St {
    Start,
    Key,
    InKey,
    Value,
    InBare,
    After,
    Done,
}

/// The relaxed-body writer of one call.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Relaxed {
    mode: Bare,
    func: String,
    /// The request's tools: relinked on resume.
    #[serde(skip)]
    pub(super) tools: Arc<Tools>,
    /// Open containers and how many members each has emitted.
    stack: Vec<(u8, usize)>,
    /// The schema path of each open container below the root (`"[]"`: array items).
    path: Vec<String>,
    st: St,
    key: String,
    bare: String,
    in_string: bool,
    key_string: bool,
    /// Text after the body closed.
    junk: bool,
    /// A string whose schema allows more than a string (schema mode): its
    /// text, held and typed at close as vLLM's engine types it
    /// (`_fix_arg_types`: `coerce_to_schema_type`).
    coerce: Option<(Vec<String>, String)>,
}

impl Relaxed {
    pub fn new(mode: Bare, func: &str, tools: Arc<Tools>) -> Relaxed {
        Relaxed {
            mode,
            func: func.to_string(),
            tools,
            stack: vec![],
            path: vec![],
            st: St::Start,
            key: String::new(),
            bare: String::new(),
            in_string: false,
            key_string: false,
            junk: false,
            coerce: None,
        }
    }

    /// Emits the separator owed before a new member of the innermost container.
    fn member(&mut self, out: &mut String) {
        if let Some((_, n)) = self.stack.last_mut() {
            if *n > 0 {
                out.push_str(", ");
            }
            *n += 1;
        }
    }

    fn open(&mut self, c: u8, out: &mut String) {
        if !self.stack.is_empty() {
            let seg = if self.in_array() { "[]".to_string() } else { self.key.clone() };
            self.path.push(seg);
        }
        out.push(c as char);
        self.stack.push((c, 0));
        self.st = if c == b'{' { St::Key } else { St::Value };
    }

    fn close(&mut self, out: &mut String) {
        if let Some((c, _)) = self.stack.pop() {
            out.push(if c == b'{' { '}' } else { ']' });
            if !self.stack.is_empty() {
                self.path.pop();
            }
        }
        self.st = if self.stack.is_empty() { St::Done } else { St::After };
    }

    fn in_array(&self) -> bool {
        self.stack.last().is_some_and(|(c, _)| *c == b'[')
    }

    /// The schema types of the value about to be read, when the schema
    /// allows more than a string (schema mode only).
    fn coerced_types(&self) -> Option<Vec<String>> {
        if self.mode != Bare::Schema {
            return None;
        }
        let last = if self.in_array() { "[]" } else { self.key.as_str() };
        let path: Vec<&str> = self.path.iter().map(String::as_str).chain(std::iter::once(last)).collect();
        let schema = self.tools.schema_at(&self.func, &path).filter(|s| s.is_object())?;
        let types = crate::coerce::schema_types(schema);
        (types != ["string"]).then_some(types)
    }

    fn bare_end(&mut self, out: &mut String) {
        let text = std::mem::take(&mut self.bare);
        let t = text.trim();
        if self.mode == Bare::Schema {
            // The engine reads a bare value as text, then types it by the
            // schema (`_fix_arg_types`); with no schema it stays text.
            match self.coerced_types() {
                Some(types) => crate::coerce::write_typed(t, crate::coerce::coerce(t, &types), out),
                None => {
                    out.push('"');
                    escape_into(out, t);
                    out.push('"');
                }
            }
            self.st = St::After;
            return;
        }
        let ty = match self.mode {
            Bare::Literal => ParamType::Json,
            Bare::Schema => {
                let last = if self.in_array() { "[]" } else { self.key.as_str() };
                let path: Vec<&str> =
                    self.path.iter().map(String::as_str).chain(std::iter::once(last)).collect();
                self.tools.type_at(&self.func, &path).unwrap_or(ParamType::String)
            }
        };
        // A JSON literal only: Rust's float syntax also takes `049`, `+1`,
        // `1.` and `.5`, which are not JSON (fuzz: `"min_stars": 049`).
        let literal = matches!(t, "true" | "false" | "null")
            || (t.starts_with(|c: char| c == '-' || c.is_ascii_digit())
                && serde_json::from_str::<serde_json::Number>(t).is_ok());
        match ty {
            ParamType::Json if literal => out.push_str(t),
            ParamType::Json | ParamType::String => {
                out.push('"');
                escape_into(out, t);
                out.push('"');
            }
            other => convert_value(t, other, out),
        }
        self.st = St::After;
    }

    /// Structural text (outside string delimiters).
    pub fn text(&mut self, s: &str, out: &mut String) {
        for (i, c) in s.char_indices() {
            let b = c as u32;
            let ws = c.is_whitespace();
            match self.st {
                St::Start => {
                    if c == '{' {
                        self.open(b'{', out);
                    }
                }
                St::Key => match c {
                    '}' => self.close(out),
                    ',' => {}
                    _ if ws => {}
                    _ => {
                        self.key.clear();
                        self.key.push(c);
                        self.st = St::InKey;
                    }
                },
                St::InKey => {
                    if c == ':' {
                        let key = self.key.trim().to_string();
                        self.key = key;
                        self.member(out);
                        out.push('"');
                        escape_into(out, &self.key);
                        out.push_str("\": ");
                        self.st = St::Value;
                    } else {
                        self.key.push(c);
                    }
                }
                St::Value => match c {
                    _ if ws => {}
                    '{' | '[' => {
                        if !self.in_array() || self.stack.is_empty() {
                            // The member separator of an object was owed at the key.
                        } else {
                            self.member(out);
                        }
                        self.open(b as u8, out);
                    }
                    ']' if self.in_array() => self.close(out),
                    '}' | ']' | ',' => {
                        // A key with no value.
                        if !self.in_array() {
                            out.push_str("null");
                            self.st = St::After;
                            self.text(&s[i..i + c.len_utf8()], out);
                        }
                    }
                    _ => {
                        if self.in_array() {
                            self.member(out);
                        }
                        self.bare.clear();
                        self.bare.push(c);
                        self.st = St::InBare;
                    }
                },
                St::InBare => match c {
                    ',' | '}' | ']' => {
                        self.bare_end(out);
                        self.text(&s[i..i + c.len_utf8()], out);
                    }
                    _ => self.bare.push(c),
                },
                St::After => match c {
                    ',' => self.st = if self.in_array() { St::Value } else { St::Key },
                    '}' | ']' => self.close(out),
                    _ => {}
                },
                St::Done => self.junk |= !ws,
            }
        }
    }

    /// A string delimiter opened.
    pub fn str_open(&mut self, out: &mut String) {
        match self.st {
            St::Value => {
                if self.in_array() {
                    self.member(out);
                }
                self.coerce = self.coerced_types().map(|t| (t, String::new()));
                if self.coerce.is_none() {
                    out.push('"');
                }
                self.in_string = true;
            }
            St::Key => {
                self.key.clear();
                self.key_string = true;
            }
            _ => {}
        }
    }

    /// Text between string delimiters.
    pub fn str_text(&mut self, s: &str, out: &mut String) {
        if let (true, Some((_, held))) = (self.in_string, &mut self.coerce) {
            held.push_str(s);
        } else if self.in_string {
            escape_into(out, s);
        } else if self.key_string {
            self.key.push_str(s);
        }
    }

    /// A string delimiter closed.
    pub fn str_close(&mut self, out: &mut String) {
        if std::mem::take(&mut self.in_string) {
            match self.coerce.take() {
                Some((types, text)) => {
                    crate::coerce::write_typed(&text, crate::coerce::coerce(&text, &types), out)
                }
                None => out.push('"'),
            }
            self.st = St::After;
        } else if std::mem::take(&mut self.key_string) {
            self.st = St::InKey;
        }
    }

    /// The body closed properly, with nothing after it.
    pub fn valid(&self) -> bool {
        self.st == St::Done && !self.junk
    }

    /// Completes the JSON.
    pub fn finish(&mut self, out: &mut String) {
        if self.in_string {
            self.str_close(out);
        }
        match self.st {
            St::Start => {
                out.push_str("{}");
                return;
            }
            St::InBare => self.bare_end(out),
            St::Value if !self.in_array() => out.push_str("null"),
            _ => {}
        }
        while !self.stack.is_empty() {
            self.close(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(parts: &[(bool, &str)], mode: Bare) -> String {
        let mut r = Relaxed::new(mode, "f", Arc::new(Tools::default()));
        let mut out = String::new();
        for (is_str, s) in parts {
            if *is_str {
                r.str_open(&mut out);
                r.str_text(s, &mut out);
                r.str_close(&mut out);
            } else {
                r.text(s, &mut out);
            }
        }
        r.finish(&mut out);
        out
    }

    #[test]
    fn bodies() {
        let p = [
            (false, "{query:"),
            (true, "vllm, parser"),
            (false, ",filters:{language:"),
            (true, "py"),
            (false, ",min_stars:100},tags:["),
            (true, "ml"),
            (false, ","),
            (true, "x"),
            (false, "],limit:10,ok:true}"),
        ];
        let want = r#"{"query": "vllm, parser", "filters": {"language": "py", "min_stars": 100}, "tags": ["ml", "x"], "limit": 10, "ok": true}"#;
        assert_eq!(run(&p, Bare::Literal), want);
        assert_eq!(run(&[(false, "{n:42,b:true}")], Bare::Schema), r#"{"n": "42", "b": "true"}"#);
        assert_eq!(run(&[(false, "{}")], Bare::Literal), "{}");
        assert_eq!(run(&[(false, "{a:1,b:")], Bare::Literal), r#"{"a": 1, "b": null}"#);
        assert_eq!(run(&[(false, "{a:[1,2")], Bare::Literal), r#"{"a": [1, 2]}"#);
        // Not JSON numbers, so strings (fuzz: `049` went out as a number).
        assert_eq!(
            run(&[(false, "{a:049,b:+1,c:1.,d:.5,e:-0.5e3,f:1e999}")], Bare::Literal),
            r#"{"a": "049", "b": "+1", "c": "1.", "d": ".5", "e": -0.5e3, "f": "1e999"}"#
        );
    }
}
