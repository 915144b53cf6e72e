//! Unwrapping a wrapper parameter (`[calls] unwrap_params`).
//!
//! DSML models sometimes write a call's whole arguments as one parameter
//! named `arguments` (or another listed wrapper) holding a JSON object. vLLM
//! (`_repair_param_dict`) then gives the call the inner object as its
//! arguments when: the wrapper is the call's only parameter, the function's
//! schema declares parameters but not the wrapper, the wrapped value is an
//! object (or a string that reads as one), and every key of that object is a
//! declared parameter. Otherwise the arguments stay as written.
//!
//! Streaming: when the first parameter a call opens is such a wrapper, the
//! engine holds the call's argument text (nothing of it is emitted) until a
//! second parameter opens (the held text is released unchanged and the call
//! streams on) or the call ends (the held text, now whole, is resolved here).
//! Both points are markers, so the outcome never depends on how the input
//! was cut; and what was emitted before is always a prefix of the final
//! arguments (nothing was emitted for the held call).

use crate::json::to_python_json;
use crate::schema::Tools;
use serde_json::Value;

/// Whether the first parameter `key` of a call to `func` must be held: it is
/// a listed wrapper the function (which declares parameters) does not declare.
pub(crate) fn holds(wrappers: &[String], tools: &Tools, func: &str, key: &str) -> bool {
    wrappers.iter().any(|w| w == key) && tools.has_params(func) && tools.declared_type(func, key).is_none()
}

/// Writes the final arguments of a held call: the wrapped object when the
/// wrapper unwraps, else `args` unchanged.
pub(crate) fn resolve(args: &str, wrappers: &[String], tools: &Tools, func: &str, out: &mut String) {
    if let Some(inner) = unwrapped(args, wrappers, tools, func) {
        to_python_json(&inner, out);
    } else {
        out.push_str(args);
    }
}

fn unwrapped(args: &str, wrappers: &[String], tools: &Tools, func: &str) -> Option<Value> {
    if !tools.has_params(func) {
        return None;
    }
    let Ok(Value::Object(outer)) = serde_json::from_str::<Value>(args) else {
        return None;
    };
    if outer.len() != 1 {
        return None;
    }
    let (key, inner) = outer.into_iter().next()?;
    if !wrappers.contains(&key) || tools.declared_type(func, &key).is_some() {
        return None;
    }
    let inner = match inner {
        Value::String(s) => serde_json::from_str::<Value>(&s).ok()?,
        v => v,
    };
    let Value::Object(m) = &inner else { return None };
    m.keys().all(|k| tools.declared_type(func, k).is_some()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Tools {
        Tools::from_json(
            &serde_json::from_str(
                r#"[{"type":"function","function":{"name":"w","parameters":{"properties":
                    {"location":{"type":"string"},"unit":{"type":"string"}}}}},
                    {"type":"function","function":{"name":"bare","parameters":{}}}]"#,
            )
            .unwrap(),
        )
    }

    fn run(args: &str, func: &str) -> String {
        let mut out = String::new();
        resolve(args, &["arguments".into(), "input".into()], &tools(), func, &mut out);
        out
    }

    #[test]
    fn unwraps_only_a_declared_object() {
        assert_eq!(run(r#"{"arguments": {"location": "NYC"}}"#, "w"), r#"{"location": "NYC"}"#);
        assert_eq!(run(r#"{"input": "{\"unit\":\"C\"}"}"#, "w"), r#"{"unit": "C"}"#);
        // An undeclared inner key, a second parameter, no schema, not JSON: as written.
        for (args, func) in [
            (r#"{"arguments": {"other": 1}}"#, "w"),
            (r#"{"arguments": {"location": "NYC"}, "unit": "C"}"#, "w"),
            (r#"{"arguments": {"location": "NYC"}}"#, "bare"),
            (r#"{"arguments": "not json"}"#, "w"),
            (r#"{"arguments": [1]}"#, "w"),
        ] {
            assert_eq!(run(args, func), args);
        }
        assert!(holds(&["arguments".into()], &tools(), "w", "arguments"));
        assert!(!holds(&["arguments".into()], &tools(), "w", "location"));
        assert!(!holds(&["arguments".into()], &tools(), "bare", "arguments"));
    }
}
