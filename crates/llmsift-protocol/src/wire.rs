//! Chat Completions wire types: the request as clients send it, the
//! response, the stream chunks, usage.
//!
//! Owns the JSON shapes only; no rule lives here (request checks are in
//! [`crate::check`], what goes into a message is decided by
//! [`crate::processor`]).
//!
//! Invariants:
//! - unknown request fields are ignored, never an error;
//! - an assistant message's reasoning is read from `reasoning` or the legacy
//!   `reasoning_content`, and written under the key its [`ReasoningField`]
//!   names (vLLM's `reasoning` by default);
//! - an empty `tool_calls` list is not written (vLLM drops it too).

use crate::finish::FinishReason;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// A Chat Completions request (`POST /v1/chat/completions`), the fields the
/// protocol layer reads. Everything else in the body is ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionRequest {
    /// The conversation.
    #[serde(default)]
    pub messages: Vec<ChatMessage>,
    /// The model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Functions the model may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolParam>>,
    /// `none`, `auto`, `required`, or a named function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceParam>,
    /// `false`: at most one call is returned (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// `false`: no reasoning in the output (default true; vLLM extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_reasoning: Option<bool>,
    /// Whether the detokenizer skips special tokens (default true; vLLM
    /// extension, which the parsers' rules may turn off: see
    /// [`crate::CheckedRequest::skips_special_tokens`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_special_tokens: Option<bool>,
    /// Arguments for the chat template (thinking switches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// `none`, `minimal`, `low`, `medium`, `high`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Return log probabilities of the output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// How many alternatives per position (needs `logprobs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<i64>,
    /// Return the output token ids per choice (vLLM extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_token_ids: Option<bool>,
    /// Stream the answer as server-sent events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Deprecated output limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Output limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u64>,
    /// Number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// Emit each tool call only once it closes; a call the output's end cut
    /// is its text as content (Sift extension; default: the model's
    /// setting, `atomic_calls` in the gateway's configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_calls: Option<bool>,
}

impl ChatCompletionRequest {
    /// Reads a request body (a JSON object).
    pub fn from_json(body: &str) -> Result<ChatCompletionRequest, crate::ProtocolError> {
        let v: Value = serde_json::from_str(body)
            .map_err(|e| crate::ProtocolError::InvalidBody { message: e.to_string() })?;
        ChatCompletionRequest::from_value(v)
    }

    /// Reads a request from a JSON value (an object).
    pub fn from_value(v: Value) -> Result<ChatCompletionRequest, crate::ProtocolError> {
        if !v.is_object() {
            return Err(crate::ProtocolError::InvalidBody {
                message: "the request body must be a JSON object".into(),
            });
        }
        serde_json::from_value(v).map_err(|e| crate::ProtocolError::InvalidBody { message: e.to_string() })
    }
}

/// `stream_options`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Send a last chunk with usage (and no choices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_usage: Option<bool>,
    /// Usage on every chunk (vLLM extension; read, not produced here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuous_usage_stats: Option<bool>,
}

/// One message of the conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, `tool`, `developer`.
    pub role: String,
    /// Text, or a list of content parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<MessageContent>,
    /// Optional participant name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Calls an assistant message made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallParam>>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An assistant message's reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Legacy spelling of `reasoning`, accepted on input only.
    #[serde(default, skip_serializing)]
    pub reasoning_content: Option<String>,
}

impl ChatMessage {
    /// The reasoning, from `reasoning` or else the legacy `reasoning_content`.
    pub fn reasoning(&self) -> Option<&str> {
        self.reasoning.as_deref().or(self.reasoning_content.as_deref())
    }
}

/// A message's `content`: a string, or content parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Parts (`{"type": "text", "text": …}`, images, …), kept as JSON.
    Parts(Vec<Value>),
}

impl MessageContent {
    /// The text: the string, or the `text` parts joined.
    pub fn text(&self) -> String {
        match self {
            MessageContent::Text(s) => s.clone(),
            MessageContent::Parts(p) => {
                p.iter().filter_map(|v| v.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
            }
        }
    }
}

/// A call inside an assistant message of the conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallParam {
    /// The call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `function`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The function and its arguments.
    pub function: FunctionCall,
}

/// A function call: name and JSON arguments text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The function name.
    pub name: String,
    /// The arguments as JSON text.
    #[serde(default)]
    pub arguments: String,
}

/// One entry of `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolParam {
    /// `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function's definition.
    pub function: FunctionDefinition,
}

fn function_type() -> String {
    "function".to_string()
}

/// A function definition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionDefinition {
    /// The function name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// Strict schema adherence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// `tool_choice` as sent: a mode string or an object naming a function.
/// Kept loose so that [`crate::check`] can answer malformed values with
/// vLLM's messages instead of a generic JSON error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolChoiceParam {
    /// `"none"`, `"auto"`, `"required"` (anything else is refused by the checks).
    Mode(String),
    /// `{"type": "function", "function": {"name": …}}`.
    Object(NamedToolChoiceParam),
}

impl ToolChoiceParam {
    /// A named-function choice.
    pub fn named(name: &str) -> ToolChoiceParam {
        ToolChoiceParam::Object(NamedToolChoiceParam {
            kind: Some("function".into()),
            function: Some(serde_json::json!({ "name": name })),
        })
    }
}

/// The object form of `tool_choice`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedToolChoiceParam {
    /// `function`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `{"name": …}` (checked, not trusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<Value>,
}

/// Which key carries reasoning in Chat Completions output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReasoningField {
    /// `reasoning` (vLLM's current name).
    #[default]
    Reasoning,
    /// `reasoning_content` (the legacy name some clients still read).
    ReasoningContent,
}

impl ReasoningField {
    /// The JSON key.
    pub fn key(self) -> &'static str {
        match self {
            ReasoningField::Reasoning => "reasoning",
            ReasoningField::ReasoningContent => "reasoning_content",
        }
    }
}

/// A non-streaming response (`object: chat.completion`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionResponse {
    /// `chatcmpl-…`.
    pub id: String,
    /// `chat.completion`.
    pub object: String,
    /// Unix seconds.
    pub created: u64,
    /// The model name.
    pub model: String,
    /// One per choice.
    pub choices: Vec<Choice>,
    /// Token counts.
    pub usage: Usage,
}

/// One choice of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The choice's index.
    pub index: u32,
    /// The assistant message.
    pub message: AssistantMessage,
    /// Log probabilities (`{"content": [...]}`), when asked and not hidden.
    pub logprobs: Option<Value>,
    /// Why generation ended.
    pub finish_reason: FinishReason,
    /// The stop string or token that ended generation (vLLM extension; not tracked here).
    pub stop_reason: Option<Value>,
    /// Output token ids, with `return_token_ids` (vLLM extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ids: Option<Vec<u32>>,
}

/// The assistant message of a response.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct AssistantMessage {
    /// `assistant`.
    pub role: String,
    /// The answer text.
    #[serde(default)]
    pub content: Option<String>,
    /// The reasoning.
    #[serde(default, alias = "reasoning_content")]
    pub reasoning: Option<String>,
    /// The calls.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// The key reasoning is written under.
    #[serde(skip)]
    pub reasoning_field: ReasoningField,
}

impl Serialize for AssistantMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("role", &self.role)?;
        m.serialize_entry("content", &self.content)?;
        m.serialize_entry(self.reasoning_field.key(), &self.reasoning)?;
        if !self.tool_calls.is_empty() {
            m.serialize_entry("tool_calls", &self.tool_calls)?;
        }
        m.end()
    }
}

/// A complete call in a response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id.
    pub id: String,
    /// `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Name and arguments.
    pub function: FunctionCall,
}

/// Token counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// The sum.
    pub total_tokens: u64,
    /// Breakdown of the output tokens; present when reasoning is counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionTokensDetails {
    /// Output tokens spent reasoning.
    pub reasoning_tokens: u64,
}

/// A stream chunk (`object: chat.completion.chunk`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionChunk {
    /// The response id (same on every chunk).
    pub id: String,
    /// `chat.completion.chunk`.
    pub object: String,
    /// Unix seconds.
    pub created: u64,
    /// The model name.
    pub model: String,
    /// Choice deltas; empty on the usage chunk.
    pub choices: Vec<ChunkChoice>,
    /// Usage, on the last chunk when `stream_options.include_usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// One choice's part of a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    /// The choice's index.
    pub index: u32,
    /// What this chunk adds.
    pub delta: ChunkDelta,
    /// Log probabilities of this chunk's tokens.
    pub logprobs: Option<Value>,
    /// Set on the choice's last chunk only.
    pub finish_reason: Option<FinishReason>,
    /// This chunk's token ids, with `return_token_ids`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ids: Option<Vec<u32>>,
}

/// The `delta` of a chunk. Fields are written only when present.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChunkDelta {
    /// `assistant`, on the first chunk only.
    #[serde(default)]
    pub role: Option<String>,
    /// Answer text.
    #[serde(default)]
    pub content: Option<String>,
    /// Reasoning text.
    #[serde(default, alias = "reasoning_content")]
    pub reasoning: Option<String>,
    /// Call fragments.
    #[serde(default)]
    pub tool_calls: Vec<ChunkToolCall>,
    /// The key reasoning is written under.
    #[serde(skip)]
    pub reasoning_field: ReasoningField,
}

impl Serialize for ChunkDelta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(r) = &self.role {
            m.serialize_entry("role", r)?;
        }
        if let Some(c) = &self.content {
            m.serialize_entry("content", c)?;
        }
        if let Some(r) = &self.reasoning {
            m.serialize_entry(self.reasoning_field.key(), r)?;
        }
        if !self.tool_calls.is_empty() {
            m.serialize_entry("tool_calls", &self.tool_calls)?;
        }
        m.end()
    }
}

/// A fragment of one call in a chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkToolCall {
    /// The call's position in the message.
    pub index: usize,
    /// The call id, in the call's first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `function`, in the call's first fragment.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name (first fragment) and the next piece of the arguments.
    pub function: ChunkFunction,
}

/// The function part of a call fragment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkFunction {
    /// The name, in the call's first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The next piece of the arguments JSON text.
    #[serde(default)]
    pub arguments: String,
}
