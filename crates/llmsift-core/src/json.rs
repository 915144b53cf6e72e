//! Incremental JSON: a byte-at-a-time validator with a safe watermark, a
//! repair suffix, and Python-compatible string escaping.
//!
//! Tool arguments stream while they are still incomplete. The contract
//! ("the watermark"): [`JsonScanner::safe`] is the length of the longest
//! prefix of the input that can be emitted now, such that
//! `prefix + more bytes + repair` is always the final text. Concretely the
//! bytes above the watermark are only: white space outside strings, a comma
//! (until the next member starts), and an unfinished escape sequence. Every
//! other byte is final the moment it is validated, because whatever follows,
//! a truncated document is completed by *appending* ([`JsonScanner::repair`]:
//! close the string, finish `tru`→`true`, `1.`→`1.0`, a dangling key gets
//! `: null`, open containers are closed). So emitted fragments are always a
//! prefix of the final arguments, and the final arguments are valid JSON.
//!
//! Invariants: nesting deeper than [`MAX_DEPTH`] is invalid (bounded stack);
//! the scanner never looks at a byte twice.

/// Deepest nesting accepted before the document is declared invalid: the
/// kernels' hard ceiling, above the default of [`crate::Limits::max_depth`]
/// so that the limit, not the kernel, cuts a deep call (and says so).
pub const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum St {
    /// Nothing yet; the first non-space byte starts the document.
    Start,
    /// After `{`: a key or `}`.
    ObjFirst,
    /// After `,` in an object: a key.
    ObjKey,
    /// Inside a key string; `esc` counts escape progress (0 none, 1 after `\`, 2..=5 hex).
    Key { esc: u8 },
    /// After a key: `:`.
    Colon,
    /// After `:`: a value.
    ObjValue,
    /// After `[`: a value or `]`.
    ArrFirst,
    /// After `,` in an array: a value.
    ArrValue,
    /// Inside a string value.
    Str { esc: u8 },
    /// Inside `true`, `false` or `null`.
    Lit {
        #[serde(with = "literal")]
        lit: literal::Lit,
        pos: u8,
    },
    /// Inside a number; `last` is its last byte class.
    Num { last: NumAt },
    /// After a complete value: `,` or a closer (or the end at top level).
    After,
    /// The top-level value is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum NumAt {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpInt,
}

/// What feeding bytes led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// All bytes consumed; the document is still open.
    More,
    /// The top-level value closed; `used` bytes of this input belong to it.
    Complete {
        /// Bytes of the input that belong to the document.
        used: usize,
    },
    /// Byte `at` of this input is not valid JSON here; nothing from it on was consumed.
    Invalid {
        /// Offset of the offending byte in this input.
        at: usize,
    },
}

/// A streaming JSON validator (see the module docs for the watermark contract).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct JsonScanner {
    stack: Vec<u8>,
    st: St,
    fed: usize,
    safe: usize,
    /// The state right after the watermark's last byte (the bytes above it
    /// never change the stack), so the state of the emitted prefix alone
    /// can be had without scanning it again ([`JsonScanner::sync_to_watermark`]).
    safe_st: St,
    /// The deepest nesting reached so far.
    peak: u16,
    /// An invalid byte was seen; `st` keeps the state before it, for repair.
    bad: bool,
}

impl Default for JsonScanner {
    fn default() -> Self {
        Self::new()
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl JsonScanner {
    /// A scanner expecting one JSON value.
    pub fn new() -> Self {
        JsonScanner {
            stack: Vec::new(),
            st: St::Start,
            fed: 0,
            safe: 0,
            safe_st: St::Start,
            peak: 0,
            bad: false,
        }
    }

    /// Bytes accepted so far.
    pub fn fed(&self) -> usize {
        self.fed
    }

    /// Length of the prefix that may be emitted (the watermark).
    pub fn safe(&self) -> usize {
        self.safe
    }

    /// Containers open right now (at most [`MAX_DEPTH`]).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// The deepest nesting reached so far.
    pub(crate) fn peak(&self) -> usize {
        usize::from(self.peak)
    }

    /// Becomes the state `w` had right after its watermark: what a scanner
    /// fed exactly `w`'s first [`safe`](Self::safe) bytes would be. Reuses
    /// this scanner's stack allocation.
    pub(crate) fn sync_to_watermark(&mut self, w: &JsonScanner) {
        self.stack.clone_from(&w.stack);
        self.st = w.safe_st;
        self.safe_st = w.safe_st;
        self.fed = w.safe;
        self.safe = w.safe;
        self.peak = w.peak;
        self.bad = false;
    }

    /// True once the top-level value is complete.
    pub fn is_complete(&self) -> bool {
        self.st == St::Done
    }

    /// True once an invalid byte was seen.
    pub fn is_invalid(&self) -> bool {
        self.bad
    }

    /// True inside an open string (a key or a value), before any invalid byte.
    pub fn in_string(&self) -> bool {
        !self.bad && matches!(self.st, St::Str { .. } | St::Key { .. })
    }

    /// True while nothing but white space was fed.
    pub fn is_empty(&self) -> bool {
        self.st == St::Start
    }

    /// Feeds bytes; stops at the end of the top-level value or at an invalid byte.
    pub fn feed(&mut self, input: &[u8]) -> Scan {
        if self.bad {
            return Scan::Invalid { at: 0 };
        }
        let mut i = 0;
        while i < input.len() {
            if self.st == (St::Str { esc: 0 }) {
                let run = string_run(&input[i..]);
                if run > 0 {
                    i += run;
                    self.fed += run;
                    self.safe = self.fed;
                    self.safe_st = self.st;
                    continue;
                }
            }
            let b = input[i];
            i += 1;
            let i = i - 1;
            if self.st == St::Done {
                return Scan::Complete { used: i };
            }
            let before = (self.st, self.stack.len());
            if !self.step(b) {
                // A number that ended before the bad byte may have moved on.
                if self.stack.len() == before.1 {
                    self.st = before.0;
                }
                self.bad = true;
                return Scan::Invalid { at: i };
            }
            self.fed += 1;
            if self.is_final_byte(b) {
                self.safe = self.fed;
                self.safe_st = self.st;
            }
        }
        if self.st == St::Done {
            Scan::Complete { used: input.len() }
        } else {
            Scan::More
        }
    }

    /// Whether the byte just accepted is final (raises the watermark).
    fn is_final_byte(&self, b: u8) -> bool {
        match self.st {
            St::Str { esc } | St::Key { esc } => esc == 0,
            _ => !(is_ws(b) || b == b','),
        }
    }

    fn open(&mut self, c: u8) -> bool {
        if self.stack.len() >= MAX_DEPTH {
            return false;
        }
        self.stack.push(c);
        // At most MAX_DEPTH (256): fits.
        self.peak = self.peak.max(self.stack.len() as u16);
        self.st = if c == b'{' { St::ObjFirst } else { St::ArrFirst };
        true
    }

    fn close(&mut self, c: u8) -> bool {
        let want = if c == b'}' { b'{' } else { b'[' };
        if self.stack.last() != Some(&want) {
            return false;
        }
        self.stack.pop();
        self.st = if self.stack.is_empty() { St::Done } else { St::After };
        true
    }

    fn value_end(&mut self) {
        self.st = if self.stack.is_empty() { St::Done } else { St::After };
    }

    /// Starts a value at byte `b`; false when `b` cannot start one.
    fn start_value(&mut self, b: u8) -> bool {
        match b {
            b'{' | b'[' => self.open(b),
            b'"' => {
                self.st = St::Str { esc: 0 };
                true
            }
            b't' => self.lit(b"true"),
            b'f' => self.lit(b"false"),
            b'n' => self.lit(b"null"),
            b'-' => {
                self.st = St::Num { last: NumAt::Minus };
                true
            }
            b'0' => {
                self.st = St::Num { last: NumAt::Zero };
                true
            }
            b'1'..=b'9' => {
                self.st = St::Num { last: NumAt::Int };
                true
            }
            _ => false,
        }
    }

    fn lit(&mut self, lit: &'static [u8]) -> bool {
        self.st = St::Lit { lit, pos: 1 };
        true
    }

    fn step(&mut self, b: u8) -> bool {
        match self.st {
            St::Start => is_ws(b) || self.start_value(b),
            St::ObjFirst => match b {
                _ if is_ws(b) => true,
                b'"' => {
                    self.st = St::Key { esc: 0 };
                    true
                }
                b'}' => self.close(b),
                _ => false,
            },
            St::ObjKey => match b {
                _ if is_ws(b) => true,
                b'"' => {
                    self.st = St::Key { esc: 0 };
                    true
                }
                _ => false,
            },
            St::Key { esc } => match string_step(esc, b) {
                StrStep::Esc(e) => {
                    self.st = St::Key { esc: e };
                    true
                }
                StrStep::End => {
                    self.st = St::Colon;
                    true
                }
                StrStep::Bad => false,
            },
            St::Colon => match b {
                _ if is_ws(b) => true,
                b':' => {
                    self.st = St::ObjValue;
                    true
                }
                _ => false,
            },
            St::ObjValue | St::ArrValue => is_ws(b) || self.start_value(b),
            St::ArrFirst => match b {
                _ if is_ws(b) => true,
                b']' => self.close(b),
                _ => self.start_value(b),
            },
            St::Str { esc } => match string_step(esc, b) {
                StrStep::Esc(e) => {
                    self.st = St::Str { esc: e };
                    true
                }
                StrStep::End => {
                    self.value_end();
                    true
                }
                StrStep::Bad => false,
            },
            St::Lit { lit, pos } => {
                if lit[pos as usize] != b {
                    return false;
                }
                if pos as usize + 1 == lit.len() {
                    self.value_end();
                } else {
                    self.st = St::Lit { lit, pos: pos + 1 };
                }
                true
            }
            St::Num { last } => {
                let next = match (last, b) {
                    (NumAt::Minus, b'0') => Some(NumAt::Zero),
                    (NumAt::Minus, b'1'..=b'9') => Some(NumAt::Int),
                    (NumAt::Int, b'0'..=b'9') => Some(NumAt::Int),
                    (NumAt::Zero | NumAt::Int, b'.') => Some(NumAt::Dot),
                    (NumAt::Dot | NumAt::Frac, b'0'..=b'9') => Some(NumAt::Frac),
                    (NumAt::Zero | NumAt::Int | NumAt::Frac, b'e' | b'E') => Some(NumAt::Exp),
                    (NumAt::Exp, b'+' | b'-') => Some(NumAt::ExpSign),
                    (NumAt::Exp | NumAt::ExpSign | NumAt::ExpInt, b'0'..=b'9') => Some(NumAt::ExpInt),
                    _ => None,
                };
                match next {
                    Some(n) => {
                        self.st = St::Num { last: n };
                        true
                    }
                    None if matches!(last, NumAt::Zero | NumAt::Int | NumAt::Frac | NumAt::ExpInt) => {
                        // The number ended; this byte belongs to what follows it.
                        self.value_end();
                        if self.st == St::Done {
                            return is_ws(b);
                        }
                        self.step(b)
                    }
                    None => false,
                }
            }
            St::After => match b {
                _ if is_ws(b) => true,
                b',' => {
                    self.st = if self.stack.last() == Some(&b'{') { St::ObjKey } else { St::ArrValue };
                    true
                }
                b'}' | b']' => self.close(b),
                _ => false,
            },
            St::Done => is_ws(b),
        }
    }

    /// The bytes to append to the first [`safe`](Self::safe) bytes so they form
    /// a valid document. Empty when the value is complete; `None` when nothing
    /// but white space was fed.
    pub fn repair(&self) -> Option<String> {
        let mut out = String::new();
        let mut in_obj_after_key = false;
        match self.st {
            St::Start => return None,
            St::Done => return Some(out),
            St::Key { .. } => {
                out.push_str("\": null");
            }
            St::Colon => out.push_str(": null"),
            St::ObjValue => out.push_str("null"),
            St::Str { .. } => out.push('"'),
            St::Lit { lit, pos } => out.push_str(std::str::from_utf8(&lit[pos as usize..]).unwrap_or("")),
            St::Num { last } => {
                if matches!(last, NumAt::Minus | NumAt::Dot | NumAt::Exp | NumAt::ExpSign) {
                    out.push('0');
                }
            }
            // A held comma is not emitted: these read as "after a value".
            St::ObjFirst | St::ObjKey | St::ArrFirst | St::ArrValue | St::After => {
                in_obj_after_key = false;
            }
        }
        let _ = in_obj_after_key;
        for &c in self.stack.iter().rev() {
            out.push(if c == b'{' { '}' } else { ']' });
        }
        Some(out)
    }
}

/// The length of the run at the start of `b` that leaves a string value
/// open with no escape pending: plain bytes (anything but `"`, `\\` and
/// control bytes) and whole two-byte escapes (`\\n`, `\\"`, …). Every byte of
/// it is final, so the scanner takes the run in one step. It stops before a
/// quote, a control byte, a `\\u` escape, a bad escape or a backslash at the
/// end of `b`, which the byte-wise path decides.
fn string_run(b: &[u8]) -> usize {
    let mut i = 0;
    loop {
        // Eight bytes at a time: the lowest flagged byte of a word is the
        // first special one (a borrow only flags bytes above a true match);
        // the last few bytes one at a time.
        i = loop {
            match b.get(i..i + 8) {
                Some(w) => {
                    let m = special_bytes(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
                    if m != 0 {
                        break i + (m.trailing_zeros() / 8) as usize;
                    }
                    i += 8;
                }
                None => {
                    while b.get(i).is_some_and(|&c| c != b'"' && c != b'\\' && c >= 0x20) {
                        i += 1;
                    }
                    break i;
                }
            }
        };
        match b.get(i..i + 2) {
            Some([b'\\', b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't']) => i += 2,
            _ => return i,
        }
    }
}

/// The high bit of each byte of `w` that is `"`, `\\` or below 0x20 (and
/// possibly of bytes above the first such one).
fn special_bytes(w: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    let ctrl = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * u64::from(b'"'));
    let quote = q.wrapping_sub(ONES) & !q;
    let bs = w ^ (ONES * u64::from(b'\\'));
    let back = bs.wrapping_sub(ONES) & !bs;
    (ctrl | quote | back) & (ONES << 7)
}

enum StrStep {
    Esc(u8),
    End,
    Bad,
}

fn string_step(esc: u8, b: u8) -> StrStep {
    match esc {
        0 => match b {
            b'"' => StrStep::End,
            b'\\' => StrStep::Esc(1),
            0..=0x1f => StrStep::Bad,
            _ => StrStep::Esc(0),
        },
        1 => match b {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => StrStep::Esc(0),
            b'u' => StrStep::Esc(2),
            _ => StrStep::Bad,
        },
        2..=5 => {
            if b.is_ascii_hexdigit() {
                StrStep::Esc(if esc == 5 { 0 } else { esc + 1 })
            } else {
                StrStep::Bad
            }
        }
        _ => StrStep::Bad,
    }
}

/// Appends `s` to `out` as the inside of a JSON string, escaped the way
/// Python's `json.dumps(..., ensure_ascii=False)` does.
pub fn escape_into(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let rep: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if rep.is_empty() {
            out.push_str(&format!("\\u{:04x}", b));
        } else {
            out.push_str(rep);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// Serialises a JSON value the way Python's `json.dumps(v, ensure_ascii=False)`
/// does (`", "` and `": "` separators), so arguments read like vLLM's.
pub fn to_python_json(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => {
            out.push('"');
            escape_into(out, s);
            out.push('"');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                to_python_json(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('"');
                escape_into(out, k);
                out.push_str("\": ");
                to_python_json(x, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str) -> (JsonScanner, Scan) {
        let mut j = JsonScanner::new();
        let r = j.feed(s.as_bytes());
        (j, r)
    }

    /// Every prefix, cut at its watermark and repaired, is valid JSON, and the
    /// emitted prefixes only ever grow along the final text.
    #[test]
    fn every_prefix_repairs_to_valid_json() {
        let docs = [
            r#"{"a": [1, 2.5e-3, true, false, null], "b": {"c": "x\"y\\z\u00e9"}, "d": -0.5}"#,
            r#"{"text": "He said \"hi\"", "n": 10, "e": {}, "f": []}"#,
            r#"[{"x": 1}, {"y": [[], [1]]}]"#,
        ];
        for doc in docs {
            let mut last_safe = 0;
            for cut in 0..=doc.len() {
                let (j, r) = run(&doc[..cut]);
                assert!(!matches!(r, Scan::Invalid { .. }), "{doc} cut {cut}");
                assert!(j.safe() >= last_safe);
                last_safe = j.safe();
                if let Some(rep) = j.repair() {
                    let text = format!("{}{}", &doc[..j.safe()], rep);
                    assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "{text:?}");
                }
            }
            assert_eq!(last_safe, doc.len());
        }
    }

    #[test]
    fn invalid_and_complete() {
        assert_eq!(run("{invalid").1, Scan::Invalid { at: 1 });
        assert_eq!(run(r#"{"a":1} tail"#).1, Scan::Complete { used: 7 });
        assert_eq!(run("{\"a\": 1\n```").1, Scan::Invalid { at: 8 });
        let (j, _) = run("{\"city\": \"Tokyo\"\n");
        assert_eq!(
            format!("{}{}", &"{\"city\": \"Tokyo\""[..j.safe()], j.repair().unwrap()),
            "{\"city\": \"Tokyo\"}"
        );
    }

    #[test]
    fn held_bytes() {
        let (j, _) = run(r#"{"a": 1, "#);
        assert_eq!(j.safe(), 7);
        let (j, _) = run(r#"{"a": "x\u00"#);
        assert_eq!(j.safe(), 8);
        let (j, _) = run(r#"{"a": tr"#);
        assert_eq!(j.repair().unwrap(), "ue}");
    }

    /// The word-at-a-time string run equals the byte-by-byte rule, for
    /// every special byte at every offset of a word and every escape.
    #[test]
    fn string_runs_match_the_bytewise_rule() {
        fn naive(b: &[u8]) -> usize {
            let mut i = 0;
            loop {
                match b.get(i) {
                    Some(b'\\') => match b.get(i + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                        _ => return i,
                    },
                    Some(&c) if c != b'"' && c >= 0x20 => i += 1,
                    _ => return i,
                }
            }
        }
        let specials: &[&[u8]] = &[
            b"\"",
            b"\\",
            b"\x00",
            b"\x1f",
            b"\\n",
            b"\\\\",
            b"\\u0041",
            b"\\x",
            b"\x7f",
            "\u{e9}".as_bytes(),
        ];
        for n in 0..20 {
            for sp in specials {
                for tail in [&b""[..], b"ab", b"\"x", b"\\"] {
                    let mut b = vec![b'a'; n];
                    b.extend_from_slice(sp);
                    b.extend_from_slice(&b"z".repeat(9));
                    b.extend_from_slice(tail);
                    for end in 0..=b.len() {
                        assert_eq!(string_run(&b[..end]), naive(&b[..end]), "{:?}", &b[..end]);
                    }
                }
            }
        }
        // Dense mixes of the bytes that matter, with their neighbours
        // (`#` and `]` follow `"` and `\\` by one; 0x20 and 0x7f bound the
        // control range), from a fixed-seed generator.
        let alphabet = b"a\"\\nu/#]\x00\x1f\x20\x7f\xc3\xa9 ";
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut b = Vec::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = (x % 40) as usize;
            let mut y = x;
            for _ in 0..n {
                y = y.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                b.push(alphabet[(y >> 59) as usize % alphabet.len()]);
            }
            assert_eq!(string_run(&b), naive(&b), "{b:?}");
        }
    }

    #[test]
    fn depth_limit() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert!(matches!(run(&deep).1, Scan::Invalid { .. }));
    }

    #[test]
    fn python_escaping() {
        let mut s = String::new();
        escape_into(&mut s, "a\"b\\c\nd\u{1}é");
        assert_eq!(s, "a\\\"b\\\\c\\nd\\u0001é");
    }
}

/// `St::Lit`'s literal in a carried state (`crate::state`): its first byte,
/// read back as the one static literal it starts.
mod literal {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Named, so serde's derive does not take the field for borrowed bytes.
    pub type Lit = &'static [u8];

    const LITERALS: [&[u8]; 3] = [b"true", b"false", b"null"];

    pub fn serialize<S: Serializer>(lit: &&'static [u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(lit.first().copied().unwrap_or(0))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'static [u8], D::Error> {
        let b = u8::deserialize(d)?;
        LITERALS
            .into_iter()
            .find(|l| l[0] == b)
            .ok_or_else(|| serde::de::Error::custom("unknown JSON literal"))
    }
}
