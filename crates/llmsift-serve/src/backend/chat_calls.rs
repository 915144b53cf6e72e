//! A `chat` backend's own tool calls read back as the text of its guided
//! answer.
//!
//! A chat backend asked for `tool_choice` `required` or a named function
//! guides its output to JSON and answers with the calls it parsed from it,
//! in `delta.tool_calls` (vLLM 0.34's `serving_chat`, llama.cpp's server),
//! not in `delta.content`. The gateway reads a guided answer as vLLM's
//! guided JSON text (`Options::choice_as_json`), so the calls are written
//! back as that text, as they arrive: `[{"name": N, "parameters": ARGS},
//! …]` for `required` (the list's tail when the choice finishes), the
//! arguments alone for a named function. A call whose arguments never
//! came reads `{}`.
//!
//! Invariant: the text added for a choice is appended to that choice's
//! chunk of the same frame, after its content, so nothing the backend sent
//! is reordered or dropped; a frame without `tool_calls` or a finish is not
//! read twice.

use super::Chunk;
use serde_json::Value;
use std::collections::HashMap;

/// How the calls are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// vLLM's `required` JSON: a list of `{"name", "parameters"}`.
    List,
    /// A named function: its arguments.
    Args,
}

#[derive(Debug, Default)]
struct Open {
    /// Calls begun so far.
    calls: u32,
    /// Whether the last call's arguments have any text yet.
    args: bool,
}

/// The calls of one response, per choice.
#[derive(Debug)]
pub(super) struct ChatCalls {
    shape: Shape,
    open: HashMap<u32, Open>,
}

impl ChatCalls {
    /// For the `tool_choice` the backend was sent (none sent: no guided
    /// calls, nothing to read).
    pub(super) fn new(tool_choice: Option<&Value>) -> Option<ChatCalls> {
        let shape = match tool_choice? {
            Value::String(s) if s == "required" => Shape::List,
            Value::Object(_) => Shape::Args,
            _ => return None,
        };
        Some(ChatCalls { shape, open: HashMap::new() })
    }

    /// Adds the calls of the frame `data` to its `chunks`.
    pub(super) fn apply(&mut self, data: &str, chunks: &mut [Chunk]) {
        if data.contains("\"tool_calls\"") {
            if let Ok(v) = serde_json::from_str::<Value>(data) {
                for c in v.get("choices").and_then(Value::as_array).into_iter().flatten() {
                    let index = c.get("index").and_then(Value::as_u64).unwrap_or(0) as u32;
                    let calls = c.pointer("/delta/tool_calls").and_then(Value::as_array);
                    let text = self.calls(index, calls.into_iter().flatten());
                    if let Some(ch) = chunks.iter_mut().find(|ch| ch.index == index) {
                        ch.text.push_str(&text);
                    }
                }
            }
        }
        for ch in chunks.iter_mut().filter(|ch| ch.finish.is_some()) {
            if let Some(o) = self.open.remove(&ch.index) {
                let args = if o.args { "" } else { "{}" };
                match self.shape {
                    Shape::List => ch.text.push_str(&format!("{args}}}]")),
                    Shape::Args => ch.text.push_str(args),
                }
            }
        }
    }

    fn calls<'a>(&mut self, index: u32, calls: impl Iterator<Item = &'a Value>) -> String {
        let mut out = String::new();
        for tc in calls {
            let o = self.open.entry(index).or_default();
            let k = tc.get("index").and_then(Value::as_u64).map_or(o.calls.saturating_sub(1), |k| k as u32);
            if k >= o.calls || o.calls == 0 {
                if self.shape == Shape::List {
                    let name = tc.pointer("/function/name").cloned().unwrap_or(Value::String(String::new()));
                    match o.calls {
                        0 => out.push('['),
                        _ => out.push_str(if o.args { "}, " } else { "{}}, " }),
                    }
                    out.push_str(&format!("{{\"name\": {name}, \"parameters\": "));
                }
                o.calls = k + 1;
                o.args = false;
            }
            if let Some(a) =
                tc.pointer("/function/arguments").and_then(Value::as_str).filter(|a| !a.is_empty())
            {
                // A named function's answer is one call's arguments.
                if self.shape == Shape::List || o.calls == 1 {
                    out.push_str(a);
                    o.args = true;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsift_protocol::FinishReason;
    use serde_json::json;

    fn run(choice: Value, frames: &[Value]) -> String {
        let mut calls = ChatCalls::new(Some(&choice)).expect("guided");
        let mut text = String::new();
        for f in frames {
            let finish = f["choices"][0]["finish_reason"].as_str().map(|_| FinishReason::Stop);
            let content = f["choices"][0]["delta"]["content"].as_str().unwrap_or_default();
            let mut chunks = vec![Chunk { text: content.into(), finish, ..Chunk::default() }];
            calls.apply(&f.to_string(), &mut chunks);
            text.push_str(&chunks[0].text);
        }
        text
    }

    fn call(k: u64, name: Option<&str>, args: &str) -> Value {
        let mut f = json!({"arguments": args});
        if let Some(n) = name {
            f["name"] = json!(n);
        }
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": k, "function": f}]}, "finish_reason": null}]})
    }

    #[test]
    fn required_and_named_calls_become_the_guided_text() {
        let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
        let frames = [
            call(0, Some("a"), ""),
            call(0, None, "{\"x\": "),
            call(0, None, "1}"),
            call(1, Some("b"), ""),
            end.clone(),
        ];
        let text = run(json!("required"), &frames);
        assert_eq!(text, r#"[{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}]"#);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[1]["name"], "b");
        let named = json!({"type": "function", "function": {"name": "a"}});
        assert_eq!(run(named.clone(), &frames[..3]), "{\"x\": 1}");
        assert_eq!(run(named, &[call(0, Some("a"), ""), end.clone()]), "{}");
        // No calls: nothing added, content kept.
        let plain = json!({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]});
        assert_eq!(run(json!("required"), &[plain]), "hi");
        assert!(ChatCalls::new(Some(&json!("none"))).is_none());
    }
}
