//! Backend log probabilities read into Chat Completions entries, one per
//! output token: `{"token", "logprob", "bytes", "top_logprobs": [{"token",
//! "logprob", "bytes"}]}`.
//!
//! - `completions` (vLLM / SGLang): a choice's `logprobs` object with the
//!   parallel lists `tokens`, `token_logprobs`, `top_logprobs` (a map from
//!   token text to logprob per position), as `/v1/completions` sends them;
//! - `llamacpp`: a frame's `completion_probabilities` (`token`, `logprob`,
//!   `bytes`, `top_logprobs`);
//! - `chat`: a choice's `logprobs.content`, already in this shape.
//!
//! Invariant: a frame gives one entry per token it carries, in order, or
//! none at all (a shape that is not understood is never half read); a
//! missing or infinite logprob is vLLM's floor, -9999.0.

use crate::config::BackendKind;
use serde_json::{json, Value};

/// vLLM's value for a logprob that is not a finite number.
const FLOOR: f64 = -9999.0;

fn logprob(v: Option<&Value>) -> Value {
    json!(v.and_then(Value::as_f64).filter(|x| x.is_finite()).unwrap_or(FLOOR))
}

fn entry(token: &str, lp: Option<&Value>, bytes: Option<&Value>) -> Value {
    let bytes = match bytes {
        Some(b @ Value::Array(_)) => b.clone(),
        _ => json!(token.as_bytes()),
    };
    json!({"token": token, "logprob": logprob(lp), "bytes": bytes})
}

/// The entries of a frame's logprobs value, for a backend of `kind`.
pub(super) fn entries(kind: BackendKind, v: &Value) -> Option<Vec<Value>> {
    match kind {
        BackendKind::Chat => v.get("content")?.as_array().cloned(),
        BackendKind::Llamacpp => v.as_array()?.iter().map(llamacpp_entry).collect(),
        _ => completions(v),
    }
}

fn completions(v: &Value) -> Option<Vec<Value>> {
    let tokens = v.get("tokens")?.as_array()?;
    let lps = v.get("token_logprobs").and_then(Value::as_array);
    let tops = v.get("top_logprobs").and_then(Value::as_array);
    tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut e = entry(t.as_str()?, lps.and_then(|l| l.get(i)), None);
            let mut top: Vec<(String, f64)> = tops
                .and_then(|t| t.get(i))
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(FLOOR))).collect())
                .unwrap_or_default();
            // Most likely first, as Chat Completions lists them.
            top.sort_by(|a, b| b.1.total_cmp(&a.1));
            e["top_logprobs"] = top.iter().map(|(k, lp)| entry(k, Some(&json!(lp)), None)).collect();
            Some(e)
        })
        .collect()
}

fn llamacpp_entry(p: &Value) -> Option<Value> {
    let mut e = entry(p.get("token")?.as_str()?, p.get("logprob"), p.get("bytes"));
    let top = p.get("top_logprobs").and_then(Value::as_array).map(|t| {
        t.iter()
            .filter_map(|x| Some(entry(x.get("token")?.as_str()?, x.get("logprob"), x.get("bytes"))))
            .collect::<Vec<_>>()
    });
    e["top_logprobs"] = json!(top.unwrap_or_default());
    Some(e)
}

/// Keeps the first `top` alternatives of each entry (`-1`: all), as the
/// client asked with `top_logprobs`.
pub fn truncate(entries: &mut [Value], top: i64) {
    if top < 0 {
        return;
    }
    for e in entries {
        if let Some(t) = e.get_mut("top_logprobs").and_then(Value::as_array_mut) {
            t.truncate(top as usize);
        } else {
            e["top_logprobs"] = json!([]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backend_shape() {
        let vllm = json!({"tokens": ["a", "é"], "token_logprobs": [-0.5, null],
            "top_logprobs": [{"b": -2.0, "a": -0.5}, null], "text_offset": [0, 1]});
        let e = entries(BackendKind::Completions, &vllm).unwrap();
        assert_eq!(
            e[0],
            json!({"token": "a", "logprob": -0.5, "bytes": [97],
            "top_logprobs": [{"token": "a", "logprob": -0.5, "bytes": [97]}, {"token": "b", "logprob": -2.0, "bytes": [98]}]})
        );
        assert_eq!(e[1]["logprob"], -9999.0);
        assert_eq!(e[1]["bytes"], json!([195, 169]));
        let llama = json!([{"id": 1, "token": "x", "logprob": -1.0, "bytes": [120],
            "top_logprobs": [{"id": 1, "token": "x", "logprob": -1.0, "bytes": [120]}]}]);
        let e = entries(BackendKind::Llamacpp, &llama).unwrap();
        assert_eq!(e[0]["top_logprobs"][0]["token"], "x");
        let mut e = entries(
            BackendKind::Chat,
            &json!({"content": [{"token": "y", "logprob": -1.0,
            "bytes": [121], "top_logprobs": [{"token": "y", "logprob": -1.0, "bytes": [121]}]}]}),
        )
        .unwrap();
        truncate(&mut e, 0);
        assert_eq!(e[0]["top_logprobs"], json!([]));
        assert_eq!(entries(BackendKind::Completions, &json!({"tokens": [1]})), None);
    }
}
