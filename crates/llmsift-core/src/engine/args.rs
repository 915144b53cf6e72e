//! Argument writers: turn what the model wrote into the call's `arguments`
//! JSON text, emitting only bytes below the watermark (see [`crate::json`]).
//!
//! - [`RawJson`]: the model writes JSON; bytes pass through unchanged once
//!   validated, leading junk before the first `{` (a code fence) is skipped,
//!   anything after the value closes or after an invalid byte is ignored, and
//!   `finish` appends the repair suffix.
//! - [`Params`]: XML-like `<parameter=k>v</parameter>` pairs become a JSON
//!   object. String values stream as they arrive, escaped, minus one wrapping
//!   newline on each side; other types are held until the parameter closes and
//!   converted by the tool's schema (or, with `coerce_values`, by vLLM's
//!   `coerce_to_schema_type`).

use crate::format::compiled::ParamForce;
use crate::json::{escape_into, JsonScanner, Scan};
use crate::pylit::py_space;
use crate::schema::{convert_value, ParamType};

/// Pass-through JSON with a watermark.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct RawJson {
    scan: JsonScanner,
    /// Accepted bytes above the watermark.
    held: String,
    emitted: usize,
    started: bool,
    stopped: bool,
}

impl RawJson {
    /// True once the value is complete or broke off.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// True once the value closed properly.
    pub fn complete(&self) -> bool {
        self.scan.is_complete()
    }

    /// True inside an open string of a value still being read.
    pub fn in_string(&self) -> bool {
        self.started && !self.stopped && self.scan.in_string()
    }

    /// Non-white-space bytes accepted (for commit decisions).
    pub fn fed(&self) -> usize {
        self.scan.fed()
    }

    /// The scanner: what it marks safe is exactly what this writer emitted.
    pub fn scanner(&self) -> &JsonScanner {
        &self.scan
    }

    /// The scanner, once the writer is done.
    pub fn into_scanner(self) -> JsonScanner {
        self.scan
    }

    /// Feeds text; returns how many bytes belonged to the value (the rest is
    /// not JSON of this value). With `skip_lead`, bytes before the first `{`
    /// are consumed and ignored: arguments are an object, so a `[` is not
    /// where they start (fuzz: `[A` for a named tool_choice gave `[]`).
    pub fn feed(&mut self, s: &str, skip_lead: bool, out: &mut String) -> usize {
        if self.stopped {
            return 0;
        }
        let mut s = s;
        let mut skipped = 0;
        if !self.started {
            let b = s.as_bytes();
            let first = b.iter().position(|&c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
            match first {
                None => return s.len(),
                Some(i) if skip_lead => match b[i..].iter().position(|&c| c == b'{') {
                    Some(j) => {
                        skipped = i + j;
                        s = &s[i + j..];
                    }
                    None => return s.len(),
                },
                Some(i) => {
                    skipped = i;
                    s = &s[i..];
                }
            }
            self.started = true;
        }
        let used = match self.scan.feed(s.as_bytes()) {
            Scan::More => s.len(),
            Scan::Complete { used } => {
                self.stopped = true;
                used
            }
            Scan::Invalid { at } => {
                self.stopped = true;
                at
            }
        };
        let safe = self.scan.safe();
        let take = safe - self.emitted;
        if self.held.is_empty() && take <= used {
            out.push_str(&s[..take]);
            self.held.push_str(&s[take..used]);
        } else {
            self.held.push_str(&s[..used]);
            out.push_str(&self.held[..take]);
            self.held.drain(..take);
        }
        self.emitted = safe;
        skipped + used
    }

    /// Bytes the model wrote that are accepted but above the watermark (not
    /// sent yet): what a cut value keeps when it is not completed.
    pub fn unsent(&self) -> &str {
        if self.stopped {
            ""
        } else {
            &self.held
        }
    }

    /// Completes the value: `{}` when nothing came, else the repair suffix.
    pub fn finish(&mut self, out: &mut String) {
        match self.scan.repair() {
            None => out.push_str("{}"),
            Some(rep) => out.push_str(&rep),
        }
        self.held.clear();
        self.stopped = true;
    }
}

/// One open parameter value.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Value {
    ty: ParamType,
    /// Non-string: the whole text. String: held text not yet emitted.
    buf: String,
    /// String: nothing emitted yet (the opening quote is still held).
    at_start: bool,
    /// String: no value text has come yet, so a newline now is the leading
    /// wrapping one. Only the value's first byte can be: once it is dropped
    /// the buffer is empty again, and a second newline in a later delta must
    /// not be taken for it (fuzz: `\n` | `\n<too…` streamed `"<too` while
    /// one shot kept the second newline).
    fresh: bool,
    /// String: text is kept exactly as written (inside a CDATA section).
    verbatim: bool,
    /// String: `null` is text, never JSON `null`.
    literal: bool,
    /// Typed at close as vLLM's parser engine types it (the `coerce_values`
    /// policy), instead of by `ty`.
    coerce: Option<Coerce>,
}

/// How a held value is typed at close (`coerce_values`).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum Coerce {
    /// The text by `coerce_to_schema_type` over these types.
    Types(Vec<String>),
    /// The text read as JSON (else as a string), then typed against this
    /// schema as `_fix_arg_types` types a value (DSML's `string="false"`).
    Fix(serde_json::Value),
    /// vLLM's `schema_types.convert_value` with the types the schema admits
    /// (`None`: any), decoding Python literals too when the flag is set.
    Admitted(Option<Vec<String>>, bool),
}

/// How a parameter opens under vLLM's parser-engine typing.
#[derive(Debug)]
pub(crate) enum EngineOpen {
    /// Kept as text, `null` included (a string-only schema, or none).
    Text,
    /// Read as JSON, else as text (`param = "json"` with no schema).
    Json,
    /// Held whole and typed at close.
    Held(Coerce),
}

/// The engine typing of parameter `key` of `func`, or `None` when the
/// format's own typing applies: `param = "admitted…"` values follow vLLM's
/// `schema_types.convert_value`; with `coerce_values`, others follow
/// `_fix_arg_types` (typed only when the function declares properties and
/// the parameter has a schema object; a value written as JSON is read as
/// JSON first).
pub(crate) fn engine_open(
    tools: &crate::schema::Tools,
    func: &str,
    key: &str,
    force: Option<ParamForce>,
    coerce_values: bool,
) -> Option<EngineOpen> {
    if let Some(ParamForce::Admitted(literal)) = force {
        // vLLM's `parameter_types`: a declared parameter's schema types, else
        // the `additionalProperties` types; an unknown function admits any.
        let allowed = tools.parameters(func).and_then(|root| {
            let mut refs = std::collections::HashMap::new();
            let props = root.get("properties").and_then(serde_json::Value::as_object);
            match props.and_then(|p| p.get(key)) {
                Some(s) => crate::coerce::admitted_types(s, root, &mut refs),
                None => root
                    .get("additionalProperties")
                    .and_then(|a| crate::coerce::admitted_types(a, root, &mut refs)),
            }
        });
        return Some(EngineOpen::Held(Coerce::Admitted(allowed, literal)));
    }
    let json_forced = matches!(force, Some(ParamForce::Type(ParamType::Json)));
    if !coerce_values || !(force.is_none() || json_forced) {
        return None;
    }
    let schema = match tools.param_schema(func, key) {
        Some(s @ serde_json::Value::Object(_)) if tools.has_params(func) => Some(s.clone()),
        _ => None,
    };
    Some(match schema {
        Some(s) if json_forced => EngineOpen::Held(Coerce::Fix(s)),
        None if json_forced => EngineOpen::Json,
        None => EngineOpen::Text,
        Some(s) => {
            let types = crate::coerce::schema_types(&s);
            if types == ["string"] {
                EngineOpen::Text
            } else {
                EngineOpen::Held(Coerce::Types(types))
            }
        }
    })
}

/// XML-like parameters to a JSON object.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Params {
    count: usize,
    value: Option<Value>,
    /// Keys exactly as written (no trimming).
    pub verbatim_keys: bool,
    /// String values exactly as written (no wrapping newline, no `null`).
    pub verbatim_values: bool,
    /// String values lose surrounding white space (Python's `str.strip`) and
    /// are otherwise kept as written (`null` stays a string).
    pub trim_values: bool,
}

const NULL: &str = "null";

impl Params {
    /// Opens parameter `key` of type `ty`; a `literal` string value reads
    /// `null` as text.
    pub fn open_as(&mut self, key: &str, ty: ParamType, literal: bool, out: &mut String) {
        self.close(out);
        out.push_str(if self.count == 0 { "{\"" } else { ", \"" });
        escape_into(out, if self.verbatim_keys { key } else { key.trim() });
        out.push_str("\": ");
        self.count += 1;
        self.value = Some(Value {
            ty,
            buf: String::new(),
            at_start: true,
            fresh: true,
            literal,
            verbatim: false,
            coerce: None,
        });
    }

    /// Opens parameter `key` as vLLM's parser engine types it.
    pub fn open_engine(&mut self, key: &str, how: EngineOpen, out: &mut String) {
        match how {
            EngineOpen::Text => self.open_as(key, ParamType::String, true, out),
            EngineOpen::Json => self.open_as(key, ParamType::Json, false, out),
            EngineOpen::Held(c) => {
                self.open_as(key, ParamType::Json, false, out);
                if let Some(v) = &mut self.value {
                    v.coerce = Some(c);
                }
            }
        }
    }

    /// Appends value text.
    pub fn text(&mut self, s: &str, out: &mut String) {
        let Some(v) = &mut self.value else { return };
        if v.ty != ParamType::String {
            v.buf.push_str(s);
            return;
        }
        if self.trim_values {
            // Leading white space is dropped; trailing white space is held
            // until text follows it.
            let s = if v.at_start { s.trim_start_matches(py_space) } else { s };
            if s.is_empty() {
                return;
            }
            if v.at_start {
                out.push('"');
                v.at_start = false;
            }
            v.buf.push_str(s);
            let cut = v.buf.trim_end_matches(py_space).len();
            escape_into(out, &v.buf[..cut]);
            v.buf.drain(..cut);
            return;
        }
        if self.verbatim_values || v.verbatim {
            if v.at_start {
                out.push('"');
                v.at_start = false;
            }
            escape_into(out, s);
            return;
        }
        if s.is_empty() {
            return;
        }
        v.buf.push_str(s);
        if std::mem::take(&mut v.fresh) && v.buf.starts_with('\n') {
            v.buf.remove(0);
        }
        if v.at_start {
            if v.buf.is_empty() {
                return;
            }
            // A value that may still turn out to be `null` is held.
            if !v.literal
                && v.buf.len() <= NULL.len()
                && NULL.as_bytes()[..v.buf.len()].eq_ignore_ascii_case(v.buf.as_bytes())
            {
                return;
            }
            if !v.literal && v.buf.eq_ignore_ascii_case("null\n") {
                return;
            }
            out.push('"');
            v.at_start = false;
        }
        // Hold one trailing newline: it may be the wrapping one.
        let keep = usize::from(v.buf.ends_with('\n'));
        let cut = v.buf.len() - keep;
        escape_into(out, &v.buf[..cut]);
        v.buf.drain(..cut);
    }

    /// Switches the open string value to verbatim text (on: the text held so
    /// far is written as it is, the value is a string from here on) or back.
    pub fn set_verbatim(&mut self, on: bool, out: &mut String) {
        let Some(v) = &mut self.value else { return };
        if v.ty != ParamType::String || v.verbatim == on {
            return;
        }
        v.verbatim = on;
        if on {
            v.fresh = false;
            if v.at_start {
                out.push('"');
                v.at_start = false;
            }
            escape_into(out, &v.buf);
            v.buf.clear();
        }
    }

    /// Closes the open parameter, if any.
    pub fn close(&mut self, out: &mut String) {
        let Some(v) = self.value.take() else { return };
        if v.ty != ParamType::String {
            let mut text = v.buf.as_str();
            text = text.strip_prefix('\n').unwrap_or(text);
            text = text.strip_suffix('\n').unwrap_or(text);
            match &v.coerce {
                // Verbatim values keep their wrapping newlines for typing too.
                Some(Coerce::Types(types)) => {
                    let text = if self.verbatim_values { v.buf.as_str() } else { text };
                    crate::coerce::write_typed(text, crate::coerce::coerce(text, types), out)
                }
                // A verbatim value that does not read as JSON stays the raw text.
                Some(Coerce::Fix(schema)) => {
                    let text = if self.verbatim_values { v.buf.as_str() } else { text };
                    crate::coerce::write_fixed(text, schema, out)
                }
                Some(Coerce::Admitted(allowed, literal)) => {
                    let text = if self.verbatim_values { v.buf.as_str() } else { text };
                    // poolside's decoder strips the text first (and returns it
                    // stripped when nothing decodes); the kept raw text is not.
                    let decoded = if *literal {
                        let t = crate::pylit::py_strip(text);
                        super::checked::literal(t).unwrap_or_else(|| serde_json::Value::String(t.into()))
                    } else {
                        serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.into()))
                    };
                    // An integer keeps its exact digits (Python's int is unbounded).
                    let t = crate::pylit::py_strip(text);
                    let exact = crate::coerce::is_json_int(t).then_some(t);
                    let v = crate::coerce::convert_admitted(text, allowed.as_deref(), decoded);
                    match (exact, &v) {
                        (Some(d), serde_json::Value::Number(_)) => out.push_str(d),
                        _ => crate::json::to_python_json(&v, out),
                    }
                }
                None => convert_value(text, v.ty, out),
            }
            return;
        }
        if self.verbatim_values || self.trim_values {
            if v.at_start {
                out.push('"');
            }
            out.push('"');
            return;
        }
        let mut rest = v.buf.as_str();
        if v.at_start {
            let t = rest.strip_suffix('\n').unwrap_or(rest);
            if !v.literal && t.eq_ignore_ascii_case(NULL) {
                out.push_str("null");
                return;
            }
            out.push('"');
        }
        rest = rest.strip_suffix('\n').unwrap_or(rest);
        escape_into(out, rest);
        out.push('"');
    }

    /// Forgets the open parameter, whose text the caller threw away (a
    /// parameter the output's end cut, `cut_param_lost`).
    pub fn abandon(&mut self) {
        if self.value.take().is_some() {
            self.count -= 1;
        }
    }

    /// Closes the object.
    pub fn finish(&mut self, out: &mut String) {
        self.close(out);
        out.push_str(if self.count == 0 { "{}" } else { "}" });
    }
}

/// Call ids the way vLLM makes them: `chatcmpl-tool-` and 16 hex digits.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct IdGen(u64);

impl IdGen {
    pub fn new(seed: Option<u64>) -> IdGen {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let seed = seed.unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            t ^ COUNTER.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
        });
        IdGen(seed)
    }

    pub fn next(&mut self) -> String {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        format!("chatcmpl-tool-{z:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(chunks: &[&str], ty: ParamType) -> String {
        let mut out = String::new();
        let mut p = Params::default();
        p.open_as("k", ty, false, &mut out);
        for c in chunks {
            p.text(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn string_values_trim_one_wrapping_newline_in_any_split() {
        let v = "\n    def foo():\n        return 1\n\n";
        let want = r#"{"k": "    def foo():\n        return 1\n"}"#;
        for cut in 0..=v.len() {
            assert_eq!(params(&[&v[..cut], &v[cut..]], ParamType::String), want);
        }
        // Only the first byte can be the leading wrapping newline, however
        // the newlines after it arrive (fuzz: `\n` | `\n<too` lost both).
        for chunks in [&["\n", "\nx"][..], &["\n", "\n", "x"], &["\n\n", "x"], &["\n\nx"]] {
            assert_eq!(params(chunks, ParamType::String), r#"{"k": "\nx"}"#, "{chunks:?}");
        }
        assert_eq!(params(&["\n", "\nnull"], ParamType::String), r#"{"k": "\nnull"}"#);
        assert_eq!(params(&["\nnu", "ll\n"], ParamType::String), r#"{"k": null}"#);
        assert_eq!(params(&["nul", "lx"], ParamType::String), r#"{"k": "nullx"}"#);
        assert_eq!(params(&["\n10\n"], ParamType::Integer), r#"{"k": 10}"#);
    }

    #[test]
    fn trimmed_string_values_in_any_split() {
        let v = " \n  a  b \u{a0}\n ";
        for cut in 0..=v.len() {
            if !v.is_char_boundary(cut) {
                continue;
            }
            let mut out = String::new();
            let mut p = Params { trim_values: true, ..Params::default() };
            p.open_as("k", ParamType::String, false, &mut out);
            p.text(&v[..cut], &mut out);
            p.text(&v[cut..], &mut out);
            p.finish(&mut out);
            assert_eq!(out, r#"{"k": "a  b"}"#);
        }
        let mut out = String::new();
        let mut p = Params { trim_values: true, ..Params::default() };
        p.open_as("k", ParamType::String, false, &mut out);
        p.text("null", &mut out);
        p.finish(&mut out);
        assert_eq!(out, r#"{"k": "null"}"#);
    }

    #[test]
    fn raw_json_skips_fence_and_repairs() {
        let mut out = String::new();
        let mut r = RawJson::default();
        let text = "\n```json\n{\"city\": \"Tokyo\"\n```";
        let used = r.feed(text, true, &mut out);
        assert!(r.stopped());
        assert!(used < text.len());
        r.finish(&mut out);
        assert_eq!(out, "{\"city\": \"Tokyo\"}");
    }
}
