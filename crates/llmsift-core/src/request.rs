//! What a request says that parsing depends on ([`Request`], its
//! [`ToolChoice`]): the tools, the choice, the chat template's switches,
//! the prompt, and the request settings (`vllm_text_loss`,
//! `vllm_one_shot`, `byte_spans`, `atomic_calls`).
//!
//! Invariants: a request is read once, when its parser is built
//! (`ParserFactory::parser`, `engine::Policy::resolve`); nothing here is
//! consulted per token.

use crate::engine::Vllm;
use crate::schema::Tools;
use serde_json::Value;
use std::sync::Arc;

/// The request's `tool_choice`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// Not given: calls are parsed whenever a tool parser is named.
    #[default]
    Unset,
    /// `none`.
    None,
    /// `auto`.
    Auto,
    /// `required`: the output is a JSON array of `{"name", "parameters"}`.
    Required,
    /// A named function: the output is its arguments.
    Named(String),
}

impl ToolChoice {
    /// Reads the JSON form (`"auto"`, `{"type": "function", "function": {"name": …}}`).
    pub fn from_json(v: &Value) -> ToolChoice {
        match v {
            Value::String(s) => match s.as_str() {
                "none" => ToolChoice::None,
                "auto" => ToolChoice::Auto,
                "required" => ToolChoice::Required,
                _ => ToolChoice::Unset,
            },
            Value::Object(o) => {
                let f = o.get("function").unwrap_or(v);
                match f.get("name").and_then(Value::as_str) {
                    Some(n) => ToolChoice::Named(n.to_string()),
                    None => ToolChoice::Unset,
                }
            }
            _ => ToolChoice::Unset,
        }
    }
}

/// What a request says that parsing depends on.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request's tools (typing of XML-like parameters).
    pub tools: Arc<Tools>,
    /// The request's `tool_choice`.
    pub tool_choice: ToolChoice,
    /// `include_reasoning` (default true).
    pub include_reasoning: bool,
    /// `chat_template_kwargs` (thinking switches).
    pub chat_template_kwargs: Option<Value>,
    /// The end of the rendered prompt: decides whether output starts in reasoning.
    pub prompt: Option<String>,
    /// `reasoning_effort` (some families pick markers by it).
    pub reasoning_effort: Option<String>,
    /// Construction options vLLM passes to some parsers (`parser_init_kwargs`).
    pub init_kwargs: Option<Value>,
    /// Seed for generated call ids (deterministic tests); random when `None`.
    pub id_seed: Option<u64>,
    /// Reproduce vLLM's one-shot answer where it loses text that lands in no
    /// field (default false: Sift keeps the text): the content a family's
    /// vLLM parser drops after a call (`drop_content_after_calls`, `lost`
    /// text in its format file) or around calls (`[vllm.text_loss] text_around_calls`),
    /// and the calls' markup under `tool_choice: "none"` where vLLM parses
    /// the calls and drops them (`strip_when_none`); `docs/deviations.md`
    /// lists the families.
    pub vllm_text_loss: bool,
    /// Reproduce vLLM's one-shot answer where it is decided from the whole
    /// output and vLLM's own stream answers otherwise (default false: Sift
    /// streams as vLLM's stream does where the two agree on the text, and
    /// keeps what it streamed). For a format with such decisions (its
    /// `[vllm.one_shot]` table: a reasoning start marker written again, reasoning
    /// that never ends, text after a call list, a marker inside a JSON
    /// string) the parser holds the whole output and answers at its end;
    /// other formats stream as usual. `docs/deviations.md` lists them.
    pub vllm_one_shot: bool,
    /// Read `tool_choice: "required"` and named functions as vLLM's JSON
    /// answer (a list of `{"name", "parameters"}`, or the arguments), also
    /// for a family that writes forced calls in its own format: the output
    /// came from a backend that guided it to that JSON itself (a chat
    /// backend given `tool_choice`).
    pub choice_as_json: bool,
    /// Account for every output byte (default false): each delta also
    /// carries `spans`, the raw output it settled as runs of reasoning and
    /// content, calls' raw text, and dropped bytes with a reason, so the
    /// raw output is rebuilt exactly from the message and its spans
    /// (`crate::spans`, `docs/byte-spans.md`). Off, the parser does no work
    /// for it.
    pub byte_spans: bool,
    /// Emit a call only once it closes (default false). The call is held
    /// whole and then sent in one delta, and a call the output's end cut is
    /// its raw text as content, streamed and one-shot alike: an agent never
    /// sees a call it must not execute. By default a cut call stays a call
    /// whose arguments are exactly what was written (an incomplete JSON
    /// prefix, never completed) and [`Parser::cut_call`](crate::Parser::cut_call) reports it; under
    /// `vllm_text_loss` it is completed as vLLM completes it. This setting
    /// wins over `vllm_text_loss` for cut calls (`docs/deviations.md`).
    pub atomic_calls: bool,
}

impl Request {
    /// The two vLLM-compatibility flags and `atomic_calls`, for
    /// [`Policy::resolve`] (the parser's decisions are settled from them
    /// once, when it is built).
    pub(crate) fn vllm(&self) -> Vllm {
        Vllm {
            text_loss: self.vllm_text_loss,
            one_shot: self.vllm_one_shot,
            spans: self.byte_spans,
            atomic: self.atomic_calls,
        }
    }
}

impl Default for Request {
    fn default() -> Self {
        Request {
            tools: Arc::new(Tools::default()),
            tool_choice: ToolChoice::Unset,
            include_reasoning: true,
            chat_template_kwargs: None,
            prompt: None,
            reasoning_effort: None,
            init_kwargs: None,
            id_seed: None,
            vllm_text_loss: false,
            vllm_one_shot: false,
            choice_as_json: false,
            byte_spans: false,
            atomic_calls: false,
        }
    }
}
