//! What a render is given, and how messages are prepared for the template.

use serde_json::{Map, Value as Json};

use crate::time::DateTime;
use crate::TemplateError;

/// The names a message's reasoning goes by, in transformers' order of
/// preference (`reasoning_content` is the one most templates read).
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// Template variables a keyword argument may not shadow (transformers passes
/// them as named arguments, so Python would reject the duplicate).
const RESERVED: [&str; 4] = ["messages", "tools", "documents", "add_generation_prompt"];

/// One call of `apply_chat_template(..., tokenize=False)`.
///
/// Messages, tools and documents are OpenAI-style JSON objects. Before the
/// template sees them, messages are normalised as transformers and vLLM do:
/// keys whose value is `null` are dropped, each `tool_calls[].function.arguments`
/// that is a JSON string is parsed into an object, and reasoning given under
/// any of `reasoning_content`, `thinking`, `reasoning` is also passed under
/// the others (see [`normalize_messages`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderRequest {
    /// The conversation.
    pub messages: Vec<Json>,
    /// Tool definitions; `None` renders with `tools = None` (not an empty list).
    pub tools: Option<Vec<Json>>,
    /// Documents for retrieval templates; `None` renders with `documents = None`.
    pub documents: Option<Vec<Json>>,
    /// Whether to end with the header of a new assistant turn.
    pub add_generation_prompt: bool,
    /// Extra template variables (`chat_template_kwargs`: `enable_thinking`,
    /// `thinking`, `reasoning_effort`, …). They override the special tokens
    /// (`bos_token`, …), as in transformers.
    pub kwargs: Map<String, Json>,
    /// A named template of a tokenizer config (e.g. `"tool_use"`); `None`
    /// picks as transformers does. Ignored by [`ChatTemplate::render`](crate::ChatTemplate::render).
    pub template_name: Option<String>,
    /// The date `strftime_now` formats; `None` is the current UTC time.
    pub now: Option<DateTime>,
}

impl RenderRequest {
    /// A request for these messages, with nothing else set.
    pub fn new(messages: Vec<Json>) -> RenderRequest {
        RenderRequest { messages, ..RenderRequest::default() }
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: Vec<Json>) -> RenderRequest {
        self.tools = Some(tools);
        self
    }

    /// Sets the documents.
    pub fn with_documents(mut self, documents: Vec<Json>) -> RenderRequest {
        self.documents = Some(documents);
        self
    }

    /// Sets `add_generation_prompt`.
    pub fn with_generation_prompt(mut self, yes: bool) -> RenderRequest {
        self.add_generation_prompt = yes;
        self
    }

    /// Adds one template variable (a `chat_template_kwargs` entry).
    pub fn with_kwarg(mut self, name: impl Into<String>, value: Json) -> RenderRequest {
        self.kwargs.insert(name.into(), value);
        self
    }

    /// Adds template variables (`chat_template_kwargs`).
    pub fn with_kwargs(mut self, kwargs: Map<String, Json>) -> RenderRequest {
        self.kwargs.extend(kwargs);
        self
    }

    /// Asks for a named template of a tokenizer config.
    pub fn with_template_name(mut self, name: impl Into<String>) -> RenderRequest {
        self.template_name = Some(name.into());
        self
    }

    /// Pins the date `strftime_now` formats.
    pub fn with_now(mut self, now: DateTime) -> RenderRequest {
        self.now = Some(now);
        self
    }

    /// Checks the keyword arguments do not shadow a named argument.
    pub(crate) fn check_kwargs(&self) -> Result<(), TemplateError> {
        match RESERVED.iter().find(|name| self.kwargs.contains_key(**name)) {
            Some(name) => Err(TemplateError::Request(format!(
                "keyword argument {name:?} is reserved (it is set by the request itself)"
            ))),
            None => Ok(()),
        }
    }
}

/// Prepares messages for a template, as transformers' `apply_chat_template`
/// and vLLM do:
///
/// 1. every message must be an object, and there must be at least one;
/// 2. keys whose value is `null` are dropped (transformers);
/// 3. a tool call's `function.arguments` JSON string is parsed into an
///    object (vLLM; a string that is not JSON is kept);
/// 4. reasoning under `reasoning_content`, `thinking` or `reasoning` (the
///    first present, in that order) is also set as `reasoning` when absent
///    (Sift, so templates that read either name work), then as transformers
///    does: `thinking` when absent (placed first) and `reasoning_content`.
pub fn normalize_messages(messages: &[Json]) -> Result<Vec<Json>, TemplateError> {
    if messages.is_empty() {
        return Err(TemplateError::Request("cannot apply a chat template to an empty conversation".into()));
    }
    messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let Json::Object(message) = message else {
                return Err(TemplateError::Request(format!("message {i} is not an object")));
            };
            Ok(Json::Object(normalize_message(message)))
        })
        .collect()
}

fn normalize_message(message: &Map<String, Json>) -> Map<String, Json> {
    let mut out: Map<String, Json> =
        message.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
    if let Some(Json::Array(calls)) = out.get_mut("tool_calls") {
        for call in calls {
            let Some(Json::Object(function)) = call.get_mut("function") else { continue };
            if let Some(Json::String(arguments)) = function.get("arguments") {
                if let Ok(parsed) = serde_json::from_str::<Json>(arguments) {
                    function.insert("arguments".into(), parsed);
                }
            }
        }
    }
    let reasoning = REASONING_FIELDS.iter().find_map(|k| out.get(*k)).cloned();
    let Some(reasoning) = reasoning else { return out };
    out.entry("reasoning").or_insert_with(|| reasoning.clone());
    // Python: {"thinking": reasoning, **message, "reasoning_content": reasoning}
    let mut aliased = Map::with_capacity(out.len() + 2);
    aliased.insert("thinking".into(), reasoning.clone());
    for (k, v) in out {
        aliased.insert(k, v);
    }
    aliased.insert("reasoning_content".into(), reasoning);
    aliased
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalises_like_transformers_and_vllm() {
        let messages = vec![json!({
            "role": "assistant",
            "content": null,
            "reasoning": "why",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}},
                           {"type": "function", "function": {"name": "g", "arguments": "not json"}}]
        })];
        let out = normalize_messages(&messages).unwrap();
        let m = out[0].as_object().unwrap();
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(keys, ["thinking", "role", "reasoning", "tool_calls", "reasoning_content"]);
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], json!({"a": 1}));
        assert_eq!(m["tool_calls"][1]["function"]["arguments"], json!("not json"));
        assert_eq!(m["reasoning_content"], json!("why"));
        assert_eq!(m["thinking"], json!("why"));
    }

    #[test]
    fn rejects_bad_requests() {
        assert!(normalize_messages(&[]).is_err());
        assert!(normalize_messages(&[json!("hi")]).is_err());
        let req = RenderRequest::new(vec![]).with_kwarg("messages", json!([]));
        assert!(req.check_kwargs().is_err());
    }
}
