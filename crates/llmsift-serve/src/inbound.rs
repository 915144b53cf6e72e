//! Request bodies of the three dialects, read into one Chat Completions
//! request.
//!
//! Owns the translation of a Responses request (`input`, `instructions`,
//! flat `tools`, `max_output_tokens`) and an Anthropic Messages request
//! (`system`, content blocks, `tools` with `input_schema`, `tool_choice`
//! `any`/`tool`) into the Chat Completions fields the protocol layer
//! checks, and the naming of the field at fault when a body does not fit.
//!
//! Invariant: every refusal here is a 400 whose `param` is the JSON path of
//! the offending field (`messages[0].content`, `n`, …) when there is one.

use crate::error::ApiError;
use llmsift_protocol::{Api, ChatCompletionRequest};
use serde_json::{json, Map, Value};

/// Reads a body in dialect `api`: the Chat Completions form of the
/// request, and that form as JSON (its other fields are
/// [`crate::outbound`]'s to forward or refuse).
pub fn read(api: Api, bytes: &[u8]) -> Result<(ChatCompletionRequest, Value), ApiError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}"), None))?;
    let Value::Object(body) = v else {
        return Err(ApiError::bad_request("the request body must be a JSON object", None));
    };
    let chat = match api {
        Api::Chat => {
            if !body.contains_key("messages") {
                return Err(ApiError::bad_request("`messages` is required", Some("messages".into())));
            }
            Value::Object(body)
        }
        Api::Responses => responses(&body)?,
        Api::Anthropic => anthropic(&body)?,
    };
    let req: ChatCompletionRequest = serde_path_to_error::deserialize(&chat).map_err(|e| {
        let path = e.path().to_string();
        let param = (path != ".").then_some(path);
        let msg = match &param {
            Some(p) => format!("invalid value for `{p}`: {}", e.inner()),
            None => e.inner().to_string(),
        };
        ApiError::bad_request(msg, param)
    })?;
    Ok((req, chat))
}

fn bad(field: &str, what: &str) -> ApiError {
    ApiError::bad_request(format!("invalid value for `{field}`: {what}"), Some(field.to_string()))
}

fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[(&str, &str)]) {
    for (a, b) in keys {
        if let Some(v) = from.get(*a) {
            to.insert((*b).to_string(), v.clone());
        }
    }
}

/// The text of a string or of a list of `{"type": …text…, "text": …}` parts.
fn text_of(v: &Value, field: &str) -> Result<String, ApiError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            Ok(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect())
        }
        Value::Null => Ok(String::new()),
        _ => Err(bad(field, "expected a string or a list of content parts")),
    }
}

fn responses(body: &Map<String, Value>) -> Result<Value, ApiError> {
    // The Responses API carries logprobs on `output_text` parts, asked for
    // with `include`; `top_logprobs` alone asks for them too (it has no
    // other meaning), where vLLM would ignore it.
    let asks =
        |v: &Value| v.as_array().is_some_and(|a| a.iter().any(|x| x == "message.output_text.logprobs"));
    let top = match body.get("top_logprobs") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_i64() {
            Some(n @ 0..=20) => Some(n),
            _ => return Err(bad("top_logprobs", "expected an integer from 0 to 20")),
        },
    };
    let logprobs = body.get("include").is_some_and(asks) || top.is_some_and(|n| n > 0);
    let mut out = Map::new();
    copy(
        body,
        &mut out,
        &[
            ("model", "model"),
            ("stream", "stream"),
            ("parallel_tool_calls", "parallel_tool_calls"),
            ("max_output_tokens", "max_tokens"),
            ("temperature", "temperature"),
            ("top_p", "top_p"),
        ],
    );
    if logprobs {
        out.insert("logprobs".into(), json!(true));
        if let Some(n) = top {
            out.insert("top_logprobs".into(), json!(n));
        }
    }
    let mut messages = Vec::new();
    if let Some(i) = body.get("instructions").filter(|v| !v.is_null()) {
        messages.push(json!({"role": "system", "content": text_of(i, "instructions")?}));
    }
    match body.get("input") {
        None => return Err(ApiError::bad_request("`input` is required", Some("input".into()))),
        Some(Value::String(s)) => messages.push(json!({"role": "user", "content": s})),
        Some(Value::Array(items)) => {
            for (k, item) in items.iter().enumerate() {
                let field = format!("input[{k}]");
                match item.get("type").and_then(Value::as_str) {
                    Some("function_call") => messages.push(json!({"role": "assistant", "content": null,
                        "tool_calls": [{"id": item.get("call_id"), "type": "function", "function": {
                            "name": item.get("name"), "arguments": item.get("arguments")}}]})),
                    Some("function_call_output") => messages.push(json!({"role": "tool",
                        "tool_call_id": item.get("call_id"), "content": text_of(item.get("output").unwrap_or(&Value::Null), &field)?})),
                    Some("reasoning") => {}
                    _ => {
                        let role = item.get("role").and_then(Value::as_str).ok_or_else(|| bad(&field, "an input item needs a `role`"))?;
                        let content = text_of(item.get("content").unwrap_or(&Value::Null), &format!("{field}.content"))?;
                        messages.push(json!({"role": role, "content": content}));
                    }
                }
            }
        }
        Some(_) => return Err(bad("input", "expected a string or a list of items")),
    }
    out.insert("messages".into(), Value::Array(messages));
    if let Some(Value::Array(tools)) = body.get("tools") {
        let tools: Vec<Value> = tools
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
            .map(|t| json!({"type": "function", "function": {"name": t.get("name"), "description": t.get("description"),
                "parameters": t.get("parameters")}}))
            .collect();
        out.insert("tools".into(), Value::Array(tools));
    }
    if let Some(tc) = body.get("tool_choice") {
        let tc = match tc.get("name") {
            Some(name) => json!({"type": "function", "function": {"name": name}}),
            None => tc.clone(),
        };
        out.insert("tool_choice".into(), tc);
    }
    if let Some(e) = body.get("reasoning").and_then(|r| r.get("effort")) {
        out.insert("reasoning_effort".into(), e.clone());
    }
    Ok(Value::Object(out))
}

fn anthropic(body: &Map<String, Value>) -> Result<Value, ApiError> {
    let mut out = Map::new();
    copy(
        body,
        &mut out,
        &[
            ("model", "model"),
            ("stream", "stream"),
            ("max_tokens", "max_tokens"),
            ("temperature", "temperature"),
            ("top_p", "top_p"),
            ("top_k", "top_k"),
            ("stop_sequences", "stop"),
        ],
    );
    let mut messages = Vec::new();
    if let Some(s) = body.get("system") {
        messages.push(json!({"role": "system", "content": text_of(s, "system")?}));
    }
    let Some(Value::Array(list)) = body.get("messages") else {
        return Err(ApiError::bad_request("`messages` is required (a list)", Some("messages".into())));
    };
    for (k, m) in list.iter().enumerate() {
        let field = format!("messages[{k}]");
        let role =
            m.get("role").and_then(Value::as_str).ok_or_else(|| bad(&field, "a message needs a `role`"))?;
        let blocks = match m.get("content") {
            Some(Value::String(s)) => {
                messages.push(json!({"role": role, "content": s}));
                continue;
            }
            Some(Value::Array(b)) => b,
            _ => return Err(bad(&format!("{field}.content"), "expected a string or a list of blocks")),
        };
        let (mut text, mut reasoning, mut calls) = (String::new(), String::new(), Vec::new());
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or_default()),
                Some("thinking") => reasoning.push_str(b.get("thinking").and_then(Value::as_str).unwrap_or_default()),
                Some("tool_use") => calls.push(json!({"id": b.get("id"), "type": "function", "function": {
                    "name": b.get("name"), "arguments": b.get("input").map_or("{}".to_string(), Value::to_string)}})),
                Some("tool_result") => messages.push(json!({"role": "tool", "tool_call_id": b.get("tool_use_id"),
                    "content": text_of(b.get("content").unwrap_or(&Value::Null), &format!("{field}.content"))?})),
                _ => {}
            }
        }
        if text.is_empty() && reasoning.is_empty() && calls.is_empty() {
            continue;
        }
        let mut msg = json!({"role": role, "content": text});
        if !reasoning.is_empty() {
            msg["reasoning"] = json!(reasoning);
        }
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        messages.push(msg);
    }
    out.insert("messages".into(), Value::Array(messages));
    if let Some(Value::Array(tools)) = body.get("tools") {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.get("name"), "description": t.get("description"),
                "parameters": t.get("input_schema")}}))
            .collect();
        out.insert("tools".into(), Value::Array(tools));
    }
    if let Some(tc) = body.get("tool_choice") {
        let mapped = match tc.get("type").and_then(Value::as_str) {
            Some("auto") => json!("auto"),
            Some("any") => json!("required"),
            Some("none") => json!("none"),
            Some("tool") => json!({"type": "function", "function": {"name": tc.get("name")}}),
            _ => {
                return Err(bad(
                    "tool_choice",
                    "expected {\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}",
                ))
            }
        };
        out.insert("tool_choice".into(), mapped);
        if tc.get("disable_parallel_tool_use") == Some(&Value::Bool(true)) {
            out.insert("parallel_tool_calls".into(), json!(false));
        }
    }
    if let Some(t) = body.get("thinking").and_then(|t| t.get("type")).and_then(Value::as_str) {
        let on = t == "enabled";
        out.insert("chat_template_kwargs".into(), json!({"enable_thinking": on}));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_field() {
        let e = read(Api::Chat, br#"{"messages": [], "n": "two"}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("n"));
        let e = read(Api::Chat, br#"{"messages": [{"role": 1}]}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("messages[0].role"));
        let e = read(Api::Chat, br#"{"model": "m"}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("messages"));
    }

    #[test]
    fn anthropic_and_responses_become_chat() {
        let (r, _) = read(
            Api::Anthropic,
            br#"{"model": "m", "max_tokens": 9, "system": "s", "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "any"}}"#,
        )
        .unwrap();
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.tools.unwrap()[0].function.name, "f");
        let (r, _) =
            read(Api::Responses, br#"{"input": "hi", "instructions": "s", "max_output_tokens": 5}"#).unwrap();
        assert_eq!((r.messages.len(), r.max_tokens), (2, Some(5)));
    }
}
