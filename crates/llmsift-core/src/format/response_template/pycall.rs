//! transformers' `python-call-list` content parser: a strict grammar of
//! keyword-argument calls, `[get_weather(city="Paris"), ping()]`, read into
//! `[{"name": ..., "arguments": {...}}]`. Written after the grammar in
//! `content_parsers.py` rule for rule (white space is `[ \t\n\r]`, strings are
//! single- or double-quoted on one line with JSON's escapes plus `\'`,
//! integers within ±(2^53 − 1), nesting at most 100 deep), so that a list
//! reads exactly as there or is [`Malformed`].

use serde_json::{Map, Number, Value};

/// A body the parser rejects (transformers raises on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub String);

/// A Python float as a JSON value (`None` spelling for NaN and infinities,
/// which JSON lacks).
pub(crate) fn float_value(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

const MAX_DEPTH: usize = 100;
const MAX_INTEGER: i64 = (1 << 53) - 1;

struct R<'a> {
    s: &'a str,
    i: usize,
}

type Res<T> = Result<T, Malformed>;

impl R<'_> {
    fn fail<T>(&self, m: &str) -> Res<T> {
        Err(Malformed(format!("python-call-list: {m} at position {}", self.i)))
    }
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.as_bytes().get(self.i) {
            self.i += 1;
        }
    }
    fn at(&mut self, c: u8) -> bool {
        self.ws();
        self.s.as_bytes().get(self.i) == Some(&c)
    }
    fn expect(&mut self, c: u8) -> Res<()> {
        if !self.at(c) {
            return self.fail(&format!("expected {:?}", c as char));
        }
        self.i += 1;
        Ok(())
    }

    fn items<T>(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Res<T>) -> Res<Vec<T>> {
        let mut out = vec![];
        if self.at(close) {
            self.i += 1;
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.at(close) {
                self.i += 1;
                return Ok(out);
            }
            self.expect(b',')?;
        }
    }

    fn unique(&self, pairs: Vec<(String, Value)>) -> Res<Value> {
        let mut out = Map::new();
        for (k, v) in pairs {
            if out.contains_key(&k) {
                return self.fail(&format!("repeated name {k:?}"));
            }
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }

    /// `_CALL_LIST_NAME`: `[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*`.
    fn name_len(&self) -> usize {
        let b = &self.s.as_bytes()[self.i..];
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if b.first().is_none_or(|c| !(c.is_ascii_alphabetic() || *c == b'_')) {
            return 0;
        }
        let mut j = 1;
        while j < b.len() && word(b[j]) {
            j += 1;
        }
        while j + 1 < b.len() && matches!(b[j], b'-' | b'.') && word(b[j + 1]) {
            j += 1;
            while j < b.len() && word(b[j]) {
                j += 1;
            }
        }
        j
    }

    fn string(&mut self) -> Res<String> {
        let q = self.s.as_bytes()[self.i];
        let body_start = self.i + 1;
        let mut j = body_start;
        let b = self.s.as_bytes();
        // `'((?:[^'\\\n\r]|\\.)*)'` (and the double-quoted twin), DOTALL.
        loop {
            match b.get(j) {
                None | Some(b'\n' | b'\r') => return self.fail("invalid string"),
                Some(&c) if c == q => break,
                Some(b'\\') => {
                    j += 1;
                    match self.s[j..].chars().next() {
                        None => return self.fail("invalid string"),
                        Some(c) => j += c.len_utf8(),
                    }
                }
                Some(_) => j += self.s[j..].chars().next().map_or(1, char::len_utf8),
            }
        }
        let body = &self.s[body_start..j];
        let mut out = String::new();
        let mut it = body.char_indices().peekable();
        while let Some((_, c)) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let (k, e) = it.next().unwrap_or((0, ' '));
            let simple = match e {
                '\\' => Some('\\'),
                '\'' => Some('\''),
                '"' => Some('"'),
                '/' => Some('/'),
                'b' => Some('\x08'),
                'f' => Some('\x0c'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                _ => None,
            };
            if let Some(s) = simple {
                out.push(s);
                continue;
            }
            let hex4 = |at: usize| -> Option<u32> {
                let h = body.get(at..at + 4)?;
                h.bytes().all(|c| c.is_ascii_hexdigit()).then(|| u32::from_str_radix(h, 16).ok()).flatten()
            };
            let Some(mut code) = (e == 'u').then(|| hex4(k + 1)).flatten() else {
                return self.fail("unsupported escape in the string starting");
            };
            let mut skip = 4;
            if (0xD800..=0xDBFF).contains(&code) && body[k + 5..].starts_with("\\u") {
                if let Some(low) = hex4(k + 7).filter(|l| (0xDC00..=0xDFFF).contains(l)) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    skip = 10;
                }
            }
            let Some(ch) = char::from_u32(code) else {
                return self.fail("lone surrogate escape in the string starting");
            };
            out.push(ch);
            for _ in 0..skip {
                it.next();
            }
        }
        self.i = j + 1;
        Ok(out)
    }

    fn number(&mut self) -> Option<Res<Value>> {
        // `-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
        let b = self.s.as_bytes();
        let start = self.i;
        let mut j = start;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        match b.get(j) {
            Some(b'0') => j += 1,
            Some(b'1'..=b'9') => {
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
            }
            _ => return None,
        }
        let mut integer = true;
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
            integer = false;
            j += 1;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            let mut k = j + 1;
            if matches!(b.get(k), Some(b'+' | b'-')) {
                k += 1;
            }
            if b.get(k).is_some_and(u8::is_ascii_digit) {
                integer = false;
                while b.get(k).is_some_and(u8::is_ascii_digit) {
                    k += 1;
                }
                j = k;
            }
        }
        let t = &self.s[start..j];
        if integer {
            let v = t.parse::<i64>().ok().filter(|v| t.len() <= 17 && v.abs() <= MAX_INTEGER);
            let Some(v) = v else {
                return Some(self.fail("integer outside the range of -(2^53 - 1) to 2^53 - 1"));
            };
            self.i = j;
            return Some(Ok(Value::from(v)));
        }
        let f: f64 = t.parse().unwrap_or(f64::INFINITY);
        if f.is_infinite() {
            return Some(self.fail("number too large"));
        }
        self.i = j;
        Some(Ok(float_value(f)))
    }

    fn value(&mut self, depth: usize) -> Res<Value> {
        if self.at(b'\'') || self.at(b'"') {
            return self.string().map(Value::String);
        }
        if self.at(b'[') || self.at(b'{') {
            if depth >= MAX_DEPTH {
                return self.fail("lists and dicts nested more than 100 levels deep");
            }
            let open = self.s.as_bytes()[self.i];
            self.i += 1;
            if open == b'[' {
                return self.items(b']', |r| r.value(depth + 1)).map(Value::Array);
            }
            let pairs = self.items(b'}', |r| r.pair(depth + 1))?;
            return self.unique(pairs);
        }
        if let Some(n) = self.number() {
            return n;
        }
        let n = self.name_len();
        let v = match &self.s[self.i..self.i + n] {
            "True" | "true" => Value::Bool(true),
            "False" | "false" => Value::Bool(false),
            "None" | "null" => Value::Null,
            _ => return self.fail("expected a string, number, list, dict, True, False or None"),
        };
        self.i += n;
        Ok(v)
    }

    fn pair(&mut self, depth: usize) -> Res<(String, Value)> {
        if !(self.at(b'\'') || self.at(b'"')) {
            return self.fail("dict keys must be strings");
        }
        let k = self.string()?;
        self.expect(b':')?;
        Ok((k, self.value(depth)?))
    }

    fn name(&mut self, what: &str) -> Res<String> {
        self.ws();
        let n = self.name_len();
        if n == 0 {
            return self.fail(&format!("expected {what}"));
        }
        let s = self.s[self.i..self.i + n].to_string();
        self.i += n;
        Ok(s)
    }

    fn argument(&mut self) -> Res<(String, Value)> {
        let k = self.name("a keyword argument")?;
        if !self.at(b'=') {
            return self.fail("expected '=' (positional arguments are not supported)");
        }
        self.i += 1;
        Ok((k, self.value(0)?))
    }

    fn call(&mut self) -> Res<Value> {
        let name = self.name("a function name")?;
        self.expect(b'(')?;
        let args = self.items(b')', Self::argument)?;
        let args = self.unique(args)?;
        let mut m = Map::new();
        m.insert("name".into(), Value::String(name));
        m.insert("arguments".into(), args);
        Ok(Value::Object(m))
    }
}

/// Parses a call list.
pub(crate) fn python_call_list(text: &str) -> Result<Value, Malformed> {
    let mut r = R { s: text, i: 0 };
    r.expect(b'[')?;
    let calls = r.items(b']', R::call)?;
    r.ws();
    if r.i != text.len() {
        return r.fail("unexpected content after the closing ']'");
    }
    Ok(Value::Array(calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_calls() {
        assert_eq!(
            python_call_list(r#"[get_weather(city='Paris', days=3, x=[1.5, None, {"a": True}]), ping()]"#)
                .unwrap(),
            json!([{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "x": [1.5, null, {"a": true}]}},
                   {"name": "ping", "arguments": {}}])
        );
        assert!(python_call_list("[f(1)]").is_err());
        assert!(python_call_list("[f(a=1,)]").is_err());
        assert!(python_call_list("[f(a=1, a=2)]").is_err());
        assert!(python_call_list("[f(a=9007199254740992)]").is_err());
        assert_eq!(
            python_call_list(r#"[f(s="\u00e9\ud83d\ude00")]"#).unwrap(),
            json!([{"name": "f", "arguments": {"s": "é😀"}}])
        );
    }
}
