//! The template round trip behind `sift check`: render an assistant turn
//! with reasoning and two tool calls through the model's own chat template,
//! parse the rendered turn back with a parser pair, and report whether the
//! same message comes out. A self-check per family: it catches a parser that
//! does not read what the template writes.

use llmsift_core::{Message, Registry, Request, Tools};
use llmsift_templates::{RenderRequest, TemplateSet};
use serde_json::{json, Value};
use std::sync::Arc;

/// The outcome of one round trip.
#[derive(Debug, Clone, Default)]
pub struct Roundtrip {
    /// The prompt the output was parsed after (the common prefix).
    pub prompt_tail: String,
    /// The rendered assistant turn, as the parser saw it.
    pub output: String,
    /// What the parser made of it.
    pub parsed: Option<Message>,
    /// Reasoning came back (or the template does not render reasoning).
    pub reasoning_ok: bool,
    /// Whether the template rendered the reasoning at all.
    pub template_keeps_reasoning: bool,
    /// The template drops reasoning from history, so the turn was parsed
    /// as the model writes it: after the generation prompt, the reasoning
    /// and its end marker, then what the template keeps.
    pub reasoning_reattached: bool,
    /// Both calls came back with the same names and arguments.
    pub calls_ok: bool,
    /// No stray content (template markup leaking into content); without a
    /// tool parser: the answer came back as the content.
    pub content_ok: bool,
    /// Why the round trip could not run (template error, unknown parser).
    pub error: Option<String>,
}

impl Roundtrip {
    /// Every check passed.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.reasoning_ok && self.calls_ok && self.content_ok
    }
}

const ANSWER: &str = "Paris will be sunny; Tokyo will rain.";
const REASONING: &str = "The user wants two cities, so I call the tool twice.";

/// End-of-turn markers a server stops on (they never reach the parser): the
/// output ends at the first of these.
const HARD_STOPS: &[&str] = &[
    "<|im_end|>",
    "<|eot_id|>",
    "<｜end▁of▁sentence｜>",
    "</s>",
    "<turn|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|endoftext|>",
    "<end_of_turn>",
    "<|end_of_text|>",
    "<seed:eos>",
    "<|end_of_msg|>",
    "[e~[",
    "</assistant>",
    "<|tool_response>",
    "<eos>",
    "[/INST]",
];

/// Markers that end a message but may separate messages of one turn
/// (harmony's `<|end|>`, Muse's `<|eom|>`): removed only at the very end.
const SOFT_STOPS: &[&str] = &["<|end|>", "<|return|>", "<|eom_id|>", "<|eot|>", "<|eom|>"];

fn tools() -> Vec<Value> {
    vec![json!({"type": "function", "function": {"name": "get_weather", "description": "Weather forecast",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]}}})]
}

fn calls(n: usize) -> Vec<(String, Value)> {
    let all = vec![
        ("get_weather".into(), json!({"city": "Paris", "days": 3})),
        ("get_weather".into(), json!({"city": "Tokyo", "days": 1})),
    ];
    all.into_iter().take(n).collect()
}

/// The request every round trip parses with: the test tool, thinking on.
fn thinking_request() -> Request {
    Request {
        tools: Arc::new(Tools::from_json(&Value::Array(tools()))),
        chat_template_kwargs: Some(json!({"enable_thinking": true, "thinking": true})),
        id_seed: Some(1),
        ..Request::default()
    }
}

/// Runs the round trip for a template set and a parser pair: with two calls,
/// or with one when the template refuses parallel calls (Llama 3.x).
pub fn roundtrip(
    templates: &TemplateSet,
    registry: &Registry,
    reasoning: Option<&str>,
    tool: Option<&str>,
) -> Roundtrip {
    let two = roundtrip_n(templates, registry, reasoning, tool, 2);
    if two.error.as_deref().is_some_and(|e| e.starts_with("template")) {
        let one = roundtrip_n(templates, registry, reasoning, tool, 1);
        if one.error.is_none() {
            return one;
        }
    }
    two
}

fn roundtrip_n(
    templates: &TemplateSet,
    registry: &Registry,
    reasoning: Option<&str>,
    tool: Option<&str>,
    n: usize,
) -> Roundtrip {
    let mut r = Roundtrip::default();
    let factory = match registry.factory(reasoning, tool) {
        Ok(f) => f,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let user = vec![
        json!({"role": "user", "content": "What's the weather in Paris for 3 days and in Tokyo tomorrow?"}),
    ];
    // Ids of nine alphanumerics satisfy every template (Mistral insists).
    let tool_calls: Vec<Value> = calls(n)
        .iter()
        .enumerate()
        .map(|(i, (n, a))| json!({"id": format!("call{i:05}"), "type": "function", "function": {"name": n, "arguments": a.to_string()}}))
        .collect();
    // Without a tool parser the turn is reasoning and an answer instead.
    let assistant = if tool.is_some() {
        json!({"role": "assistant", "content": "", "reasoning_content": REASONING, "tool_calls": tool_calls})
    } else {
        json!({"role": "assistant", "content": ANSWER, "reasoning_content": REASONING})
    };
    let kwargs = |req: RenderRequest| {
        req.with_kwarg("enable_thinking", json!(true)).with_kwarg("thinking", json!(true))
    };
    let prompt = templates
        .render(&kwargs(RenderRequest::new(user.clone()).with_tools(tools()).with_generation_prompt(true)));
    let mut all = user.clone();
    all.push(assistant);
    let full = templates.render(&kwargs(RenderRequest::new(all).with_tools(tools())));
    let (prompt, full) = match (prompt, full) {
        (Ok(p), Ok(f)) => (p, f),
        (Err(e), _) | (_, Err(e)) => {
            r.error = Some(format!("template: {e}"));
            return r;
        }
    };
    let common = prompt.char_indices().zip(full.chars()).take_while(|((_, a), b)| a == b).count();
    let mut cut = prompt.char_indices().nth(common).map_or(prompt.len(), |(i, _)| i);
    // Never cut inside a marker both renders happen to start alike (`<` of
    // `<think>` and of `<｜tool▁calls▁begin｜>`): back off to its `<`.
    if let Some(lt) = prompt[..cut].rfind('<') {
        if !prompt[lt..cut].contains('>') {
            cut = lt;
        }
    }
    let mut output = full[cut..].to_string();
    if let Some(end) = HARD_STOPS.iter().filter_map(|s| output.find(s)).min() {
        output.truncate(end);
    }
    loop {
        let trimmed = output.trim_end();
        match SOFT_STOPS.iter().find(|s| trimmed.ends_with(*s)) {
            Some(s) => output = trimmed[..trimmed.len() - s.len()].to_string(),
            None => break,
        }
    }
    if n == 2 && tool.is_some() && !output.contains("Tokyo") {
        // The template renders only the first call (gpt-oss): check that one.
        return roundtrip_n(templates, registry, reasoning, tool, 1);
    }

    r.prompt_tail = prompt[..cut].chars().rev().take(80).collect::<Vec<_>>().into_iter().rev().collect();
    r.template_keeps_reasoning = full.contains(REASONING);
    // A template that drops reasoning from history (`content.split('</think>')[-1]`)
    // assumes the model wrote `reasoning</think>` before what it keeps: parse
    // that, after the whole generation prompt, as a server would see it.
    let mut prompt_used = &prompt[..cut];
    if !r.template_keeps_reasoning && reasoning.is_some() {
        let f = factory.format();
        if let Some(end) = f.reasoning_end_marker() {
            // Some templates keep the end marker (DeepSeek V3.1); a prompt that
            // does not open reasoning needs the start marker too (Mistral).
            let kept = output.trim_start().starts_with(end);
            let probe = Request { prompt: Some(prompt.clone()), ..thinking_request() };
            let open = if factory.parser(&probe).in_reasoning() {
                ""
            } else {
                f.reasoning_start_marker().unwrap_or("")
            };
            output = format!("{open}{REASONING}{}{output}", if kept { "" } else { end });
            prompt_used = &prompt;
            r.reasoning_reattached = true;
        }
    }
    let req = Request { prompt: Some(prompt_used.to_string()), ..thinking_request() };
    let m = factory.parse(&req, &output, None);
    r.reasoning_ok = !(r.template_keeps_reasoning || r.reasoning_reattached)
        || m.reasoning.as_deref().map(str::trim) == Some(REASONING);
    let got: Vec<(String, Option<Value>)> =
        m.tool_calls.iter().map(|c| (c.name.clone(), serde_json::from_str(&c.arguments).ok())).collect();
    if tool.is_some() {
        let want: Vec<(String, Option<Value>)> = calls(n).into_iter().map(|(n, a)| (n, Some(a))).collect();
        r.calls_ok = got == want;
        r.content_ok = m.content.as_deref().is_none_or(|c| c.trim().is_empty());
    } else {
        r.calls_ok = got.is_empty();
        r.content_ok = m.content.as_deref().map(str::trim) == Some(ANSWER);
    }
    r.output = output;
    r.parsed = Some(m);
    r
}
