//! Responses API wire types: the response object, its output items and
//! content parts, and the streaming events.
//!
//! Owns the JSON shapes only, as the official SDK's `Response` and
//! `ResponseStreamEvent` types read them (every field they require is
//! always written, `null` where Sift has no value); what goes into them is
//! decided by [`super::ResponsesStream`].

use crate::check::{CheckedRequest, ToolChoiceMode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A Responses API response object.
///
/// Besides the output, it echoes the request's settings as the Responses
/// API does (`tools`, `tool_choice`, `parallel_tool_calls`, the output
/// limit, the reasoning effort); sampling settings Sift never sees
/// (`temperature`, `top_p`) are `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseObject {
    /// The response id.
    pub id: String,
    /// `response`.
    pub object: String,
    /// Unix seconds.
    pub created_at: u64,
    /// The model name.
    pub model: String,
    /// `in_progress`, `completed`, `incomplete`, `cancelled`.
    pub status: String,
    /// Always null (a model output never fails).
    #[serde(default)]
    pub error: Option<Value>,
    /// Why the response is incomplete (`max_output_tokens`).
    pub incomplete_details: Option<IncompleteDetails>,
    /// Always null (the prompt is the caller's).
    #[serde(default)]
    pub instructions: Option<Value>,
    /// The request's output limit.
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// The output items.
    pub output: Vec<OutputItem>,
    /// Whether more than one call may be returned.
    pub parallel_tool_calls: bool,
    /// The reasoning settings: the request's `reasoning_effort`.
    #[serde(default)]
    pub reasoning: Option<ReasoningConfig>,
    /// Not known here: null.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The resolved `tool_choice`.
    pub tool_choice: ResponseToolChoice,
    /// The request's tools, in the Responses shape.
    pub tools: Vec<FunctionTool>,
    /// Not known here: null.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Token counts, once completed.
    pub usage: Option<ResponseUsage>,
}

impl ResponseObject {
    /// An empty `in_progress` response echoing the request's settings.
    pub fn new(id: &str, model: &str, created_at: u64, req: &CheckedRequest) -> ResponseObject {
        ResponseObject {
            id: id.to_string(),
            object: "response".into(),
            created_at,
            model: model.to_string(),
            status: "in_progress".into(),
            error: None,
            incomplete_details: None,
            instructions: None,
            max_output_tokens: req.max_tokens,
            output: Vec::new(),
            parallel_tool_calls: req.parallel_tool_calls,
            reasoning: req
                .reasoning_effort
                .as_ref()
                .map(|e| ReasoningConfig { effort: Some(e.clone()), summary: None }),
            temperature: None,
            tool_choice: ResponseToolChoice::from(&req.tool_choice),
            tools: req
                .tools
                .iter()
                .map(|t| FunctionTool {
                    kind: "function".into(),
                    name: t.function.name.clone(),
                    description: t.function.description.clone(),
                    parameters: t.function.parameters.clone(),
                    strict: t.function.strict,
                })
                .collect(),
            top_p: None,
            usage: None,
        }
    }
}

/// `reasoning`: the effort the request asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningConfig {
    /// `none`, `minimal`, `low`, `medium`, `high`, …
    pub effort: Option<String>,
    /// Always null (no summaries are made).
    pub summary: Option<String>,
}

/// A function tool as the Responses API lists it (flat, not nested under
/// `function` as in Chat Completions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    /// `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    pub parameters: Option<Value>,
    /// Strict schema adherence, as requested.
    pub strict: Option<bool>,
}

/// `tool_choice` in a response: a mode, or the named function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResponseToolChoice {
    /// `none`, `auto`, `required`.
    Mode(String),
    /// `{"type": "function", "name": …}`.
    Function {
        /// `function`.
        #[serde(rename = "type")]
        kind: String,
        /// The function name.
        name: String,
    },
}

impl From<&ToolChoiceMode> for ResponseToolChoice {
    fn from(m: &ToolChoiceMode) -> ResponseToolChoice {
        match m {
            ToolChoiceMode::Named(name) => {
                ResponseToolChoice::Function { kind: "function".into(), name: name.clone() }
            }
            other => ResponseToolChoice::Mode(other.label().to_string()),
        }
    }
}

/// `incomplete_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens`.
    pub reason: String,
}

/// Responses API usage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// `{"cached_tokens": 0, "cache_write_tokens": 0}` (not tracked here).
    pub input_tokens_details: CachedTokens,
    /// Output tokens.
    pub output_tokens: u64,
    /// Reasoning share of the output.
    pub output_tokens_details: ReasoningTokens,
    /// The sum.
    pub total_tokens: u64,
}

/// `input_tokens_details` (prompt caching is not tracked here: zeros).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedTokens {
    /// Prompt tokens served from cache.
    pub cached_tokens: u64,
    /// Prompt tokens written to the cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// `output_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningTokens {
    /// Output tokens spent reasoning (0 when not counted).
    pub reasoning_tokens: u64,
}

/// One output item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// The model's reasoning.
    Reasoning {
        /// `rs_…`.
        id: String,
        /// Always empty (no summaries are made).
        summary: Vec<Value>,
        /// The reasoning text, as `reasoning_text` parts.
        content: Vec<ContentPart>,
        /// `in_progress` or `completed`.
        status: String,
    },
    /// The visible answer.
    Message {
        /// `msg_…`.
        id: String,
        /// `assistant`.
        role: String,
        /// The text, as `output_text` parts.
        content: Vec<ContentPart>,
        /// `in_progress` or `completed`.
        status: String,
    },
    /// A tool call.
    FunctionCall {
        /// `fc_…`.
        id: String,
        /// The call id (the Chat Completions tool call id).
        call_id: String,
        /// The function name.
        name: String,
        /// The arguments JSON text.
        arguments: String,
        /// `in_progress` or `completed`.
        status: String,
    },
}

/// A content part of a reasoning or message item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Reasoning text.
    ReasoningText {
        /// The text.
        text: String,
    },
    /// Answer text.
    OutputText {
        /// The text.
        text: String,
        /// Always empty.
        annotations: Vec<Value>,
        /// The answer tokens' logprobs (`include: ["message.output_text.logprobs"]`);
        /// empty when none were asked for.
        #[serde(default)]
        logprobs: Vec<Value>,
    },
}

/// A Responses API streaming event. Serialized with its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ResponsesEvent {
    /// The response exists (status `in_progress`, no output).
    #[serde(rename = "response.created")]
    Created {
        /// Event counter.
        sequence_number: u64,
        /// The response so far.
        response: Box<ResponseObject>,
    },
    /// Generation is under way.
    #[serde(rename = "response.in_progress")]
    InProgress {
        /// Event counter.
        sequence_number: u64,
        /// The response so far.
        response: Box<ResponseObject>,
    },
    /// An item opens.
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded {
        /// Event counter.
        sequence_number: u64,
        /// The item's position in `output`.
        output_index: usize,
        /// The item, empty, `in_progress`.
        item: OutputItem,
    },
    /// A text part opens.
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The part, empty.
        part: ContentPart,
    },
    /// More reasoning text.
    #[serde(rename = "response.reasoning_text.delta")]
    ReasoningTextDelta {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The text.
        delta: String,
    },
    /// The reasoning text is complete.
    #[serde(rename = "response.reasoning_text.done")]
    ReasoningTextDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The whole text.
        text: String,
    },
    /// More answer text.
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The text.
        delta: String,
        /// The logprobs of the answer tokens this event covers (empty when none were asked for).
        logprobs: Vec<Value>,
    },
    /// The answer text is complete.
    #[serde(rename = "response.output_text.done")]
    OutputTextDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The whole text.
        text: String,
        /// The logprobs of the answer tokens this event covers (empty when none were asked for).
        logprobs: Vec<Value>,
    },
    /// A text part is complete.
    #[serde(rename = "response.content_part.done")]
    ContentPartDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The part's position.
        content_index: usize,
        /// The whole part.
        part: ContentPart,
    },
    /// More call arguments.
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The next piece of the arguments JSON text.
        delta: String,
    },
    /// The call's arguments are complete.
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        /// Event counter.
        sequence_number: u64,
        /// The item id.
        item_id: String,
        /// The item's position.
        output_index: usize,
        /// The function name.
        name: String,
        /// The whole arguments JSON text.
        arguments: String,
    },
    /// An item is complete.
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        /// Event counter.
        sequence_number: u64,
        /// The item's position.
        output_index: usize,
        /// The whole item, `completed`.
        item: OutputItem,
    },
    /// The response is complete (status `completed` or `cancelled`).
    #[serde(rename = "response.completed")]
    Completed {
        /// Event counter.
        sequence_number: u64,
        /// The whole response.
        response: Box<ResponseObject>,
    },
    /// The response was cut short by the output limit (status `incomplete`).
    #[serde(rename = "response.incomplete")]
    Incomplete {
        /// Event counter.
        sequence_number: u64,
        /// The whole response.
        response: Box<ResponseObject>,
    },
}

impl ResponsesEvent {
    /// The event's `type` (the SSE `event:` name).
    pub fn event_type(&self) -> &'static str {
        match self {
            ResponsesEvent::Created { .. } => "response.created",
            ResponsesEvent::InProgress { .. } => "response.in_progress",
            ResponsesEvent::OutputItemAdded { .. } => "response.output_item.added",
            ResponsesEvent::ContentPartAdded { .. } => "response.content_part.added",
            ResponsesEvent::ReasoningTextDelta { .. } => "response.reasoning_text.delta",
            ResponsesEvent::ReasoningTextDone { .. } => "response.reasoning_text.done",
            ResponsesEvent::OutputTextDelta { .. } => "response.output_text.delta",
            ResponsesEvent::OutputTextDone { .. } => "response.output_text.done",
            ResponsesEvent::ContentPartDone { .. } => "response.content_part.done",
            ResponsesEvent::FunctionCallArgumentsDelta { .. } => "response.function_call_arguments.delta",
            ResponsesEvent::FunctionCallArgumentsDone { .. } => "response.function_call_arguments.done",
            ResponsesEvent::OutputItemDone { .. } => "response.output_item.done",
            ResponsesEvent::Completed { .. } => "response.completed",
            ResponsesEvent::Incomplete { .. } => "response.incomplete",
        }
    }
}
