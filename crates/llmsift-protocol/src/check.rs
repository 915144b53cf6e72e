//! Request checks, as vLLM's `ChatCompletionRequest` validators and serving
//! layer do them, and the conversion of a checked request into what the
//! core parser needs.
//!
//! Owns the resolution of `tool_choice`:
//! - absent (or `null`): `auto` when `tools` is non-empty, else `none`;
//! - `none`: accepted with or without tools;
//! - anything else without `tools`: refused ("When using `tool_choice`,
//!   `tools` must be set.");
//! - `auto` / `required` with `tools: []`: `none` (OpenAI's behaviour);
//! - a named function must name one of `tools`.
//!
//! Invariant: a [`CheckedRequest`] is always consistent — its tool choice
//! is resolved (never "unset"), `Named` names a declared tool, and any
//! choice other than `None` comes with at least one tool.

use crate::error::ProtocolError;
use crate::wire::{ChatCompletionRequest, ToolChoiceParam, ToolParam};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The resolved `tool_choice`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoiceMode {
    /// No calls are parsed or returned.
    None,
    /// The model may call; calls are parsed in the tool parser's format.
    Auto,
    /// The model must call: the output is a JSON array of calls.
    Required,
    /// The model calls this function: the output is its arguments.
    Named(String),
}

impl ToolChoiceMode {
    /// The core's form.
    pub fn to_core(&self) -> llmsift_core::ToolChoice {
        match self {
            ToolChoiceMode::None => llmsift_core::ToolChoice::None,
            ToolChoiceMode::Auto => llmsift_core::ToolChoice::Auto,
            ToolChoiceMode::Required => llmsift_core::ToolChoice::Required,
            ToolChoiceMode::Named(n) => llmsift_core::ToolChoice::Named(n.clone()),
        }
    }

    /// The wire spelling (`none`, `auto`, `required`, or the function name).
    pub fn label(&self) -> &str {
        match self {
            ToolChoiceMode::None => "none",
            ToolChoiceMode::Auto => "auto",
            ToolChoiceMode::Required => "required",
            ToolChoiceMode::Named(n) => n,
        }
    }
}

/// Server-side settings the checks depend on.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The server parses calls for `tool_choice: auto` (vLLM's
    /// `--enable-auto-tool-choice` with a `--tool-call-parser`). When false,
    /// a request resolving to `auto` is refused.
    pub auto_tools: bool,
    /// Server-wide `chat_template_kwargs` defaults; the request's own win.
    pub default_chat_template_kwargs: Option<Map<String, Value>>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions { auto_tools: true, default_chat_template_kwargs: None }
    }
}

/// A request that passed the checks, with every default resolved.
#[derive(Debug, Clone)]
pub struct CheckedRequest {
    /// The resolved tool choice.
    pub tool_choice: ToolChoiceMode,
    /// The request's tools (empty when none were given, or `[]` was dropped).
    pub tools: Vec<ToolParam>,
    /// The same tools, indexed for the core.
    pub core_tools: Arc<llmsift_core::Tools>,
    /// `parallel_tool_calls` (default true).
    pub parallel_tool_calls: bool,
    /// `include_reasoning` (default true).
    pub include_reasoning: bool,
    /// `stream` (default false).
    pub stream: bool,
    /// `stream_options.include_usage` (default false).
    pub include_usage: bool,
    /// `logprobs` (default false).
    pub logprobs: bool,
    /// `top_logprobs`.
    pub top_logprobs: Option<i64>,
    /// `return_token_ids` (default false).
    pub return_token_ids: bool,
    /// Calls made by assistant messages earlier in the conversation (Kimi ids count on from here).
    pub history_tool_calls: usize,
    /// The effective `chat_template_kwargs`: server defaults, then the
    /// request's, then `enable_thinking` derived from `reasoning_effort`
    /// when the request did not set it (as vLLM renders the template).
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// `reasoning_effort`.
    pub reasoning_effort: Option<String>,
    /// `max_completion_tokens`, else `max_tokens`.
    pub max_tokens: Option<u64>,
    /// `n` (default 1).
    pub n: u32,
    /// The model name, when given.
    pub model: Option<String>,
    /// The rendered prompt's text (or its end), when the caller has it: it
    /// decides whether the output starts inside reasoning.
    pub prompt: Option<String>,
    /// Seed for generated call ids (deterministic output); random when `None`.
    pub id_seed: Option<u64>,
    /// The request's own `skip_special_tokens` (`None`: vLLM's default, true).
    pub skip_special_tokens: Option<bool>,
    /// The request's own `atomic_calls` (`None`: the deployment's
    /// [`crate::Options::atomic_calls`]).
    pub atomic_calls: Option<bool>,
}

impl ChatCompletionRequest {
    /// Checks the request with default server options.
    pub fn check(&self) -> Result<CheckedRequest, ProtocolError> {
        self.check_with(&CheckOptions::default())
    }

    /// Checks the request and resolves its defaults.
    pub fn check_with(&self, opts: &CheckOptions) -> Result<CheckedRequest, ProtocolError> {
        let stream = self.stream.unwrap_or(false);
        if self.stream_options.is_some() && !stream {
            return Err(ProtocolError::StreamOptionsWithoutStream);
        }
        let logprobs = self.logprobs.unwrap_or(false);
        if let Some(t) = self.top_logprobs {
            if t < 0 && t != -1 {
                return Err(ProtocolError::InvalidTopLogprobs { value: t });
            }
            if (t == -1 || t > 0) && !logprobs {
                return Err(ProtocolError::TopLogprobsWithoutLogprobs);
            }
        }
        let (tool_choice, tools) = resolve_tools(self)?;
        if tool_choice == ToolChoiceMode::Auto && !opts.auto_tools {
            return Err(ProtocolError::AutoToolsDisabled);
        }
        let core_tools =
            Arc::new(llmsift_core::Tools::from_json(&serde_json::to_value(&tools).expect("tools serialize")));
        let history_tool_calls = self
            .messages
            .iter()
            .filter(|m| m.role == "assistant")
            .map(|m| m.tool_calls.as_ref().map_or(0, Vec::len))
            .sum();
        Ok(CheckedRequest {
            tool_choice,
            tools,
            core_tools,
            parallel_tool_calls: self.parallel_tool_calls.unwrap_or(true),
            include_reasoning: self.include_reasoning.unwrap_or(true),
            skip_special_tokens: self.skip_special_tokens,
            stream,
            include_usage: stream
                && self.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false),
            logprobs,
            top_logprobs: self.top_logprobs,
            return_token_ids: self.return_token_ids.unwrap_or(false),
            history_tool_calls,
            chat_template_kwargs: effective_kwargs(self, opts),
            reasoning_effort: self.reasoning_effort.clone(),
            max_tokens: self.max_completion_tokens.or(self.max_tokens),
            n: self.n.unwrap_or(1),
            model: self.model.clone(),
            prompt: None,
            id_seed: None,
            atomic_calls: self.atomic_calls,
        })
    }
}

fn effective_kwargs(req: &ChatCompletionRequest, opts: &CheckOptions) -> Option<Map<String, Value>> {
    let mut out = opts.default_chat_template_kwargs.clone().unwrap_or_default();
    if let Some(k) = &req.chat_template_kwargs {
        for (key, v) in k {
            out.insert(key.clone(), v.clone());
        }
    }
    let user_set = req.chat_template_kwargs.as_ref().is_some_and(|k| k.contains_key("enable_thinking"));
    if let Some(effort) = &req.reasoning_effort {
        if !user_set {
            out.insert("enable_thinking".into(), Value::Bool(effort != "none"));
        }
    }
    (!out.is_empty()).then_some(out)
}

fn resolve_tools(req: &ChatCompletionRequest) -> Result<(ToolChoiceMode, Vec<ToolParam>), ProtocolError> {
    let tools = req.tools.clone();
    let nonempty = tools.as_ref().is_some_and(|t| !t.is_empty());
    let choice = match &req.tool_choice {
        None => {
            let mode = if nonempty { ToolChoiceMode::Auto } else { ToolChoiceMode::None };
            return Ok((mode, tools.unwrap_or_default()));
        }
        Some(ToolChoiceParam::Mode(m)) if m == "none" => {
            return Ok((ToolChoiceMode::None, tools.unwrap_or_default()));
        }
        Some(c) => c,
    };
    let Some(tools) = tools else {
        return Err(ProtocolError::ToolChoiceWithoutTools);
    };
    let mode = match choice {
        ToolChoiceParam::Mode(m) if m == "auto" => ToolChoiceMode::Auto,
        ToolChoiceParam::Mode(m) if m == "required" => ToolChoiceMode::Required,
        ToolChoiceParam::Mode(m) => return Err(ProtocolError::InvalidToolChoice { value: m.clone() }),
        ToolChoiceParam::Object(o) => {
            let Some(Value::Object(f)) = &o.function else {
                let shown = o.function.as_ref().map_or("None".to_string(), Value::to_string);
                return Err(ProtocolError::MalformedNamedToolChoice {
                    message: format!("Invalid value for `function`: `{shown}` in `tool_choice`!"),
                    param: "tool_choice.function",
                });
            };
            let name = match f.get("name") {
                None => {
                    return Err(ProtocolError::MalformedNamedToolChoice {
                        message: "Expected field `name` in `function` in `tool_choice`!".into(),
                        param: "tool_choice.function.name",
                    })
                }
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                Some(other) => {
                    let shown = other.as_str().map_or_else(|| other.to_string(), str::to_string);
                    return Err(ProtocolError::MalformedNamedToolChoice {
                        message: format!("Invalid `name` in `function`: `{shown}` in `tool_choice`!"),
                        param: "tool_choice.function.name",
                    });
                }
            };
            if !tools.iter().any(|t| t.function.name == name) {
                return Err(ProtocolError::UnknownNamedTool { name });
            }
            ToolChoiceMode::Named(name)
        }
    };
    if tools.is_empty() {
        // `auto` / `required` with an empty list behave like `none`.
        return Ok((ToolChoiceMode::None, tools));
    }
    Ok((mode, tools))
}

impl CheckedRequest {
    /// What the core parser needs from this request.
    pub fn to_core(&self) -> llmsift_core::Request {
        llmsift_core::Request {
            tools: Arc::clone(&self.core_tools),
            tool_choice: self.tool_choice.to_core(),
            include_reasoning: self.include_reasoning,
            chat_template_kwargs: self.chat_template_kwargs.clone().map(Value::Object),
            prompt: self.prompt.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            init_kwargs: None,
            id_seed: self.id_seed,
            vllm_text_loss: false,
            vllm_one_shot: false,
            choice_as_json: false,
            byte_spans: false,
            atomic_calls: self.atomic_calls.unwrap_or(false),
        }
    }

    /// Whether the engine must detokenize this request's output with special
    /// tokens skipped, as vLLM does: the request's `skip_special_tokens`
    /// (default true), turned off by the pair's `adjust_request` rules
    /// (`keep_special_tokens` in its format files). The caller applies it
    /// where text is made: with a tokenizer, `llmsift_tokenizers`'
    /// `Detokenizer::with_skip` (and the skipped ids are not passed on);
    /// with text only, a `MarkerStrip` over the spellings the deployment
    /// lists, since text alone does not say which markers were special.
    pub fn skips_special_tokens(&self, factory: &llmsift_core::ParserFactory) -> bool {
        let tools = !self.tools.is_empty();
        let none = self.tool_choice == ToolChoiceMode::None;
        factory.format().skips_special_tokens(self.skip_special_tokens, tools, none)
    }

    /// Whether tool calls may appear in the output at all.
    pub fn wants_calls(&self) -> bool {
        self.tool_choice != ToolChoiceMode::None
    }

    /// Whether the choice is a named function (its `finish_reason` stays `stop`).
    pub fn is_named(&self) -> bool {
        matches!(self.tool_choice, ToolChoiceMode::Named(_))
    }
}
