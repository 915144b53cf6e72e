//! Scoring an answer against a case's `expected`, with the same rules as
//! `shared/corpus/check.py`: text fields compared after trimming (empty is
//! null), tool names in order, arguments as parsed JSON values; separately,
//! streamed and one-shot messages must be identical byte for byte.
//!
//! One addition for Sift's own cases, which `check.py` never reads: an
//! expected call with `arguments_text` (a string) must have exactly those
//! arguments, byte for byte. It states a call the output's end cut, whose
//! arguments are the incomplete JSON the model wrote (no JSON value to
//! compare; the corpus's `arguments_raw` accepts any answer).

use serde_json::Value;

fn norm(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Differences between `expected` and an answer's message (empty: agrees).
pub fn compare(expected: &Value, msg: &Value) -> Vec<String> {
    let mut diffs = vec![];
    if !msg.is_object() {
        return vec!["no message".into()];
    }
    for field in ["reasoning", "content"] {
        let (e, a) = (norm(expected.get(field)), norm(msg.get(field)));
        if e != a {
            diffs.push(format!("{field}: expected {e:?}, got {a:?}"));
        }
    }
    let empty = vec![];
    let exp = expected.get("tool_calls").and_then(Value::as_array).unwrap_or(&empty);
    let got = msg.get("tool_calls").and_then(Value::as_array).unwrap_or(&empty);
    let name = |c: &Value, f: bool| {
        let c = if f { c.get("function").unwrap_or(&Value::Null) } else { c };
        c.get("name").and_then(Value::as_str).unwrap_or("").to_string()
    };
    let en: Vec<String> = exp.iter().map(|c| name(c, false)).collect();
    let gn: Vec<String> = got.iter().map(|c| name(c, true)).collect();
    if en != gn {
        diffs.push(format!("tool names: expected {en:?}, got {gn:?}"));
        return diffs;
    }
    for (i, (e, g)) in exp.iter().zip(got).enumerate() {
        if g.get("id").and_then(Value::as_str).is_none_or(|s| s.trim().is_empty()) {
            diffs.push(format!("tool {i}: id is not a non-empty string"));
        }
        let raw = g.get("function").and_then(|f| f.get("arguments")).and_then(Value::as_str).unwrap_or("");
        let parsed = parse_arguments(raw);
        if let Some(text) = e.get("arguments_text").and_then(Value::as_str) {
            // Sift's own cases: the arguments exactly as this text (a call
            // the output's end cut: the incomplete JSON written, issue 23).
            if raw != text {
                diffs.push(format!("tool {i} arguments: expected exactly {text:?}, got {raw:?}"));
            }
            continue;
        }
        match e.get("arguments") {
            Some(Value::Null) | None if e.get("arguments_raw").is_some() => {
                // vLLM produced invalid JSON: any valid JSON answer, or the same text, is accepted.
            }
            ev => {
                if parsed.as_ref() != ev {
                    diffs.push(format!("tool {i} arguments: expected {ev:?}, got {raw:?}"));
                }
            }
        }
    }
    diffs
}

/// Parses arguments text as check.py's `json.loads` does: nesting deeper than
/// serde_json's default limit of 128 is read too (up to the case depth limit).
fn parse_arguments(raw: &str) -> Option<Value> {
    if crate::case::json_depth(raw) > crate::case::MAX_CASE_DEPTH {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    de.disable_recursion_limit();
    let v = <Value as serde::Deserialize>::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// Whether two messages are identical in reasoning, content, names and arguments text.
pub fn exact(a: &Value, b: &Value) -> bool {
    let calls = |m: &Value| -> Vec<(Value, Value)> {
        m.get("tool_calls")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        let f = c.get("function").cloned().unwrap_or(Value::Null);
                        (
                            f.get("name").cloned().unwrap_or(Value::Null),
                            f.get("arguments").cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    a.get("reasoning") == b.get("reasoning") && a.get("content") == b.get("content") && calls(a) == calls(b)
}

/// A known-disagreements list (`id<TAB>reason` per line, `#` comments):
/// case id → reason. The tests check the lists exactly.
pub fn known_disagreements(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, why) = l.split_once('\t').expect("id<TAB>reason");
            (id.to_string(), why.to_string())
        })
        .collect()
}
