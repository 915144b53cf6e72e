//! The answer (output line) shape.

use llmsift_core::{Delta, Message};
use serde::Serialize;
use serde_json::{json, Value};

/// One answer line.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The case id.
    pub id: String,
    /// The one-shot message (null on error).
    pub message: Value,
    /// What the server would report with the engine stopping normally.
    pub finish_reason: Value,
    /// `{"deltas", "message", "finish_reason"}` of the streaming run.
    pub stream: Value,
    /// `{"type", "message"}` when the case could not be run.
    pub error: Value,
}

impl Answer {
    /// An answer that reports an unusable case.
    pub fn error(id: &str, kind: &str, message: String) -> Answer {
        Answer {
            id: id.to_string(),
            message: Value::Null,
            finish_reason: Value::Null,
            stream: Value::Null,
            error: json!({"type": kind, "message": message}),
        }
    }
}

fn opt(s: &str) -> Value {
    if s.is_empty() {
        Value::Null
    } else {
        Value::String(s.to_string())
    }
}

/// A message as a non-streaming response's `message`.
pub fn message_json(m: &Message) -> Value {
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
        .collect();
    json!({
        "role": "assistant",
        "reasoning": m.reasoning,
        "content": m.content,
        "tool_calls": calls,
    })
}

/// A delta as a streaming chunk's `delta` (no role; only the fields it carries).
pub fn delta_json(d: &Delta) -> Value {
    let mut o = serde_json::Map::new();
    if !d.reasoning.is_empty() {
        o.insert("reasoning".into(), opt(&d.reasoning));
    }
    if !d.content.is_empty() {
        o.insert("content".into(), opt(&d.content));
    }
    if !d.tool_calls.is_empty() {
        let calls: Vec<Value> = d
            .tool_calls
            .iter()
            .map(|c| {
                let mut f = serde_json::Map::new();
                if let Some(n) = &c.name {
                    f.insert("name".into(), json!(n));
                }
                f.insert("arguments".into(), json!(c.arguments));
                let mut v = serde_json::Map::new();
                v.insert("index".into(), json!(c.index));
                if let Some(id) = &c.id {
                    v.insert("id".into(), json!(id));
                    v.insert("type".into(), json!("function"));
                }
                v.insert("function".into(), Value::Object(f));
                Value::Object(v)
            })
            .collect();
        o.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(o)
}
