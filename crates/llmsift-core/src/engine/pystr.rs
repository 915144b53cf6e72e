//! One Python string value, a char at a time, as `ast.parse` reads it:
//! `'…'` and `"…"`, triple-quoted `'''…'''`, the `r`, `u` and `f` prefixes
//! (an f-string only without placeholders: `{{` and `}}` are braces, a
//! `{x}` is not a literal), Python's escapes (`\n`, `\x41`, `\u00e9`, octal
//! `\101`, an unknown escape kept whole), and implicit concatenation of
//! adjacent literals (`'a' "b"` is `"ab"`). Bytes (`b'…'`) are not text.
//!
//! The decoded text is written JSON-escaped as it is read, so a long string
//! streams. A closing quote is held until the next non-space char tells
//! what it was, because two readings need that char:
//!
//! - another quote (or a prefix and a quote) continues the same value;
//! - a char that cannot follow a string in a call (none of `,)]}:`, a
//!   quote or a prefix) means the quote was part of the text: models nest
//!   unescaped same-style quotes in shell commands
//!   (`command='sed -n '360,450p' f.py'`). vLLM's LFM2 parser recovers such
//!   strings (`escape_nested_quotes_in_strings`: the one later quote that
//!   can close the string); this kernel takes the first quote followed by a
//!   closer, which is the same string whenever the rest is a call list, and
//!   decides on the bytes seen so far, so streaming equals one-shot.
//!
//! Invariant: output is appended only; held text (the quote and the spaces
//! after it, at most two prefix letters) is written once it is decided.

use crate::json::escape_into;

/// What a char did to the string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SStep {
    /// Consumed.
    Ok,
    /// The string ended before this char, which is not consumed.
    Closed,
    /// Not a valid string here (bytes, an f-string placeholder, a bad escape).
    Bad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Phase {
    /// Opening quotes seen (1, or 2: an empty string or a triple quote).
    Open(u8),
    Body,
    /// Closing quotes of a triple-quoted string seen so far (1 or 2).
    Quotes(u8),
    /// A closing quote read; spaces after it are held.
    End,
    /// Letters after a closing quote: the prefix of a next literal?
    Prefix,
}

/// Chars that may follow a string literal inside a call list.
fn closer(c: char) -> bool {
    matches!(c, ',' | ')' | ']' | '}' | ':')
}

/// A valid string prefix's flags `(raw, fstring)`; `None` for bytes or a
/// word that is no prefix.
fn prefix_flags(p: &str) -> Option<(bool, bool)> {
    let p = p.to_ascii_lowercase();
    match p.as_str() {
        "" | "u" => Some((false, false)),
        "r" => Some((true, false)),
        "f" => Some((false, true)),
        "fr" | "rf" => Some((true, true)),
        _ => None,
    }
}

/// Whether a word before a quote is a string prefix at all (bytes included):
/// a bare token ending in one starts a string, not a name.
pub(crate) fn is_prefix(p: &str) -> bool {
    p.len() <= 2 && p.chars().all(|c| "rRuUfFbB".contains(c)) && !p.is_empty()
}

/// One Python string value (possibly several adjacent literals).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct PyStr {
    phase: Phase,
    quote: char,
    triple: bool,
    raw: bool,
    fstr: bool,
    /// A single `{` or `}` of an f-string waiting for its twin.
    brace: Option<char>,
    /// An unfinished escape, backslash included.
    esc: String,
    /// Spaces after a closing quote, then prefix letters.
    held: String,
    letters: String,
    /// A closing quote turned out to be text: from then on only a quote
    /// followed by a closer ends the value (no concatenation, no prefix),
    /// as vLLM's recovery only tries such closing quotes.
    broken: bool,
    /// Some literal of the value was an f-string (Python's `JoinedStr`,
    /// which vLLM reads as a value but not as a dict key).
    pub joined: bool,
}

impl PyStr {
    /// A string opened by `quote` after `prefix` (`""`, `r`, `f`, …); `None`
    /// for a prefix that is not text (bytes).
    pub fn open(prefix: &str, quote: char) -> Option<PyStr> {
        let (raw, fstr) = prefix_flags(prefix)?;
        Some(PyStr {
            phase: Phase::Open(1),
            quote,
            triple: false,
            raw,
            fstr,
            brace: None,
            esc: String::new(),
            held: String::new(),
            letters: String::new(),
            broken: false,
            joined: fstr,
        })
    }

    fn text(out: &mut String, c: char) {
        let mut tmp = [0u8; 4];
        escape_into(out, c.encode_utf8(&mut tmp));
    }

    /// Feeds one char; decoded text is appended to `out` (JSON-escaped).
    pub fn push(&mut self, c: char, out: &mut String) -> SStep {
        match self.phase {
            Phase::Open(n) => {
                if c == self.quote {
                    if n == 1 {
                        self.phase = Phase::Open(2);
                    } else {
                        self.triple = true;
                        self.phase = Phase::Body;
                    }
                    return SStep::Ok;
                }
                self.phase = if n == 2 { Phase::End } else { Phase::Body };
                self.push(c, out)
            }
            Phase::Body => self.body(c, out),
            Phase::Quotes(k) => {
                if c == self.quote {
                    self.phase = if k == 2 { Phase::End } else { Phase::Quotes(k + 1) };
                    return SStep::Ok;
                }
                for _ in 0..k {
                    Self::text(out, self.quote);
                }
                self.phase = Phase::Body;
                self.body(c, out)
            }
            Phase::End => {
                if c.is_whitespace() {
                    self.held.push(c);
                    return SStep::Ok;
                }
                if self.broken && !closer(c) {
                    self.literal_quote(out);
                    return self.body(c, out);
                }
                if c == '\'' || c == '"' {
                    return self.next_literal("", c);
                }
                if c.is_ascii_alphabetic() {
                    self.letters.push(c);
                    self.phase = Phase::Prefix;
                    return SStep::Ok;
                }
                if closer(c) || self.triple {
                    return SStep::Closed;
                }
                self.literal_quote(out);
                self.body(c, out)
            }
            Phase::Prefix => {
                if (c == '\'' || c == '"') && is_prefix(&self.letters) {
                    let p = std::mem::take(&mut self.letters);
                    return self.next_literal(&p, c);
                }
                if c.is_ascii_alphabetic() && self.letters.len() < 2 {
                    self.letters.push(c);
                    return SStep::Ok;
                }
                if self.triple {
                    return SStep::Bad;
                }
                self.literal_quote(out);
                self.body(c, out)
            }
        }
    }

    /// The held closing quote was text after all: write it, the spaces and
    /// letters after it, and read on in the same literal.
    fn literal_quote(&mut self, out: &mut String) {
        Self::text(out, self.quote);
        escape_into(out, &self.held);
        escape_into(out, &self.letters);
        self.held.clear();
        self.letters.clear();
        self.broken = true;
        self.phase = Phase::Body;
    }

    fn next_literal(&mut self, prefix: &str, quote: char) -> SStep {
        let Some((raw, fstr)) = prefix_flags(prefix) else { return SStep::Bad };
        self.held.clear();
        self.quote = quote;
        self.triple = false;
        self.raw = raw;
        self.fstr = fstr;
        self.joined |= fstr;
        self.phase = Phase::Open(1);
        SStep::Ok
    }

    fn body(&mut self, c: char, out: &mut String) -> SStep {
        if !self.esc.is_empty() {
            return self.escape(c, out);
        }
        if let Some(b) = self.brace.take() {
            // `{{` / `}}` are one brace; anything else is a placeholder
            // (or a stray `}`), which is no literal.
            return if c == b {
                Self::text(out, b);
                SStep::Ok
            } else {
                SStep::Bad
            };
        }
        match c {
            '\\' => self.esc.push(c),
            '{' | '}' if self.fstr => self.brace = Some(c),
            _ if c == self.quote => self.phase = if self.triple { Phase::Quotes(1) } else { Phase::End },
            _ => Self::text(out, c),
        }
        SStep::Ok
    }

    /// Escapes: raw strings keep the backslash and the char after it (a
    /// quote after a backslash never closes); otherwise Python's table.
    fn escape(&mut self, c: char, out: &mut String) -> SStep {
        if self.raw {
            self.esc.clear();
            Self::text(out, '\\');
            Self::text(out, c);
            return SStep::Ok;
        }
        let kind = self.esc.chars().nth(1);
        let Some(kind) = kind else {
            let simple = match c {
                'n' => Some('\n'),
                't' => Some('\t'),
                'r' => Some('\r'),
                'a' => Some('\x07'),
                'b' => Some('\x08'),
                'f' => Some('\x0c'),
                'v' => Some('\x0b'),
                '\\' | '\'' | '"' => Some(c),
                _ => None,
            };
            if let Some(s) = simple {
                self.esc.clear();
                Self::text(out, s);
                return SStep::Ok;
            }
            if c == '\n' {
                self.esc.clear(); // a line continuation
                return SStep::Ok;
            }
            if matches!(c, 'x' | 'u' | 'U') || c.is_digit(8) {
                self.esc.push(c);
                return SStep::Ok;
            }
            // An unknown escape is kept whole, as Python does.
            self.esc.clear();
            Self::text(out, '\\');
            Self::text(out, c);
            return SStep::Ok;
        };
        if kind.is_digit(8) {
            if c.is_digit(8) && self.esc.len() < 4 {
                self.esc.push(c);
                if self.esc.len() < 4 {
                    return SStep::Ok;
                }
                return self.emit_code(8, out);
            }
            if self.emit_code(8, out) == SStep::Bad {
                return SStep::Bad;
            }
            return self.body(c, out);
        }
        let need = match kind {
            'x' => 4,
            'u' => 6,
            _ => 10,
        };
        if !c.is_ascii_hexdigit() {
            return SStep::Bad;
        }
        self.esc.push(c);
        if self.esc.len() < need {
            return SStep::Ok;
        }
        self.emit_code(16, out)
    }

    fn emit_code(&mut self, radix: u32, out: &mut String) -> SStep {
        let digits = self.esc.trim_start_matches('\\').trim_start_matches(['x', 'u', 'U']);
        let ch = u32::from_str_radix(digits, radix).ok().and_then(char::from_u32);
        self.esc.clear();
        match ch {
            Some(ch) => {
                Self::text(out, ch);
                SStep::Ok
            }
            None => SStep::Bad,
        }
    }

    /// Whether the value is complete if the input ends now (a closing quote
    /// was read, or an empty `''`).
    pub fn complete(&self) -> bool {
        matches!(self.phase, Phase::End | Phase::Open(2))
    }

    /// Ends a truncated string: what was decoded stays, held quotes of a
    /// closing triple quote included.
    pub fn finish(&mut self, out: &mut String) {
        if let Phase::Quotes(k) = self.phase {
            for _ in 0..k {
                Self::text(out, self.quote);
            }
        }
        if self.phase == Phase::Prefix && !self.triple {
            self.literal_quote(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `s` (opening quote included) and returns the decoded text and
    /// what follows the string.
    fn read(s: &str) -> (String, String) {
        let mut chars = s.char_indices();
        let (_, q) = chars.next().unwrap();
        let mut p = PyStr::open("", q).unwrap();
        let mut out = String::new();
        for (i, c) in chars {
            match p.push(c, &mut out) {
                SStep::Ok => {}
                SStep::Closed => return (out, s[i..].to_string()),
                SStep::Bad => return (out, "BAD".into()),
            }
        }
        p.finish(&mut out);
        (out, String::new())
    }

    #[test]
    fn python_strings() {
        assert_eq!(read("'a\\'b')").0, "a'b");
        assert_eq!(read("'''a\"b''')"), ("a\\\"b".to_string(), ")".to_string()));
        assert_eq!(read("'a' \"b\")"), ("ab".to_string(), ")".to_string()));
        assert_eq!(read("'' ,"), (String::new(), ",".to_string()));
        assert_eq!(read("'\\101\\x42\\u00e9\\q')").0, "AB\u{e9}\\\\q");
        assert_eq!(read("'sed -n '360,450p' f.py')").0, "sed -n '360,450p' f.py");
        assert_eq!(read("'a' f'{{b}}')").0, "a{b}");
        assert_eq!(read("\"python3 -c \"print('x')\"\")").0, "python3 -c \\\"print('x')\\\"");
        assert_eq!(read("'a' f'{b}')").1, "BAD");
        assert_eq!(read("'a' b'x')").1, "BAD");
        assert_eq!(read("'a' r'\\d')").0, "a\\\\d");
    }
}
