//! Unit tests: templates of each kind, one-shot and at every byte cut.

use super::*;
use crate::message::{Delta, Folder, Message};
use crate::schema::Tools;
use serde_json::{json, Value};
use std::sync::Arc;

fn run(tpl: &Value, prompt: Option<&str>, cuts: &[&str]) -> Message {
    let t = Arc::new(load(tpl).unwrap());
    let set = StreamSettings {
        tools: Arc::new(Tools::default()),
        calls: true,
        include_reasoning: true,
        id_seed: Some(1),
    };
    let mut s = Stream::new(t, set, prompt);
    let mut f = Folder::default();
    for c in cuts {
        let mut d = Delta::default();
        s.push(c, &mut d);
        f.push(&d);
    }
    let mut d = Delta::default();
    s.finish(&mut d);
    f.push(&d);
    f.finish()
}

/// One-shot, and equal under every cut into two and char by char.
fn check(tpl: &Value, prompt: Option<&str>, text: &str) -> Message {
    let one = run(tpl, prompt, &[text]);
    for (i, _) in text.char_indices().skip(1) {
        assert_eq!(run(tpl, prompt, &[&text[..i], &text[i..]]), one, "cut at {i} of {text:?}");
    }
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(run(tpl, prompt, &refs), one, "char by char {text:?}");
    one
}

fn qwen3() -> Value {
    json!({"defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*", "content": "text"},
        "tool_calls": {"open": "<tool_call>", "close_pattern": "</tool_call>\\s*", "repeats": true, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": "<\\|im_end\\|>\\s*", "content": "text"}}})
}

#[test]
fn qwen3_reasoning_content_and_calls() {
    let m = check(
        &qwen3(),
        Some("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
        "<think>\nplan\n</think>\n\nSure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call><|im_end|>",
    );
    assert_eq!(m.reasoning.as_deref(), Some("plan"));
    assert_eq!(m.content.as_deref(), Some("Sure."));
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].name, "f");
    assert_eq!(m.tool_calls[0].arguments, "{\"x\": 1}");
}

#[test]
fn prompt_opens_reasoning_and_is_never_written() {
    let m = check(&qwen3(), Some("<|im_start|>assistant\n<think>\n"), "r1 r2</think>answer");
    assert_eq!(m.reasoning.as_deref(), Some("r1 r2"));
    assert_eq!(m.content.as_deref(), Some("answer"));
}

#[test]
fn lookahead_open_and_dollar_close() {
    let tpl = json!({"start_anchor": "<｜Assistant｜><think>\n", "fields": {
        "reasoning_content": {"open_pattern": "(?=[\\s\\S]*?</think>)", "close_pattern": "</think>\\s*"},
        "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*|$"}}});
    let m = check(&tpl, Some("<｜Assistant｜><think>\n"), "why\n</think>\n\nbecause\n");
    assert_eq!((m.reasoning.as_deref(), m.content.as_deref()), (Some("why"), Some("because")));
    let m = check(&tpl, Some("<｜Assistant｜><think>\n"), "just text");
    assert_eq!((m.reasoning.as_deref(), m.content.as_deref()), (None, Some("just text")));
}

#[test]
fn named_captures_xml_inline_and_join() {
    let tpl = json!({"start_anchor": "<a>", "fields": {
        "thinking": {"open": "<t>", "close": "</t>", "repeats": true, "join": "\n"},
        "tool_calls": {"open_pattern": "<tool_call>(?P<name>\\S+)\\n?", "close_pattern": "</tool_call>\\s*",
            "repeats": true, "content": "xml-inline",
            "content_args": {"tag_pattern": "<arg_key>(?P<key>[^<]+)</arg_key>\\s*\\n<arg_value>(?P<value>.*?)</arg_value>",
                             "value_parser": {"name": "json", "args": {"allow_non_json": true}}},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
        "content": {}}});
    let m = check(
        &tpl,
        None,
        "<t>a</t>x<t> b </t>y<tool_call>get\n<arg_key>k</arg_key>\n<arg_value>[1]</arg_value></tool_call>",
    );
    assert_eq!(m.reasoning.as_deref(), Some("a\nb"));
    assert_eq!(m.content.as_deref(), Some("xy"));
    assert_eq!((m.tool_calls[0].name.as_str(), m.tool_calls[0].arguments.as_str()), ("get", "{\"k\": [1]}"));
}

#[test]
fn python_call_list_each() {
    let tpl = json!({"start_anchor": "<a>", "fields": {
        "tool_calls": {"open": "<|tool_call_start|>", "close": "<|tool_call_end|>", "content": "python-call-list",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
            "transform_each": true},
        "content": {}}});
    let m = check(&tpl, None, "hi <|tool_call_start|>[f(a=1), g(b='x')]<|tool_call_end|>");
    assert_eq!(m.tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["f", "g"]);
}

#[test]
fn refusals_say_why() {
    let e = load(&json!({"start_anchor": "<a>", "fields": {"answer": {}}})).unwrap_err();
    assert!(matches!(e, TemplateError::Unsupported { .. }), "{e}");
    let e = load(&json!({"start_anchor": "<a>", "fields": {"content": {"open_pattern": "(?<=x)y"}}}))
        .unwrap_err();
    assert!(e.to_string().contains("lookbehind"), "{e}");
    let e = load(&json!({"fields": {"content": {}}})).unwrap_err();
    assert!(matches!(e, TemplateError::Invalid { .. }), "{e}");
}
