//! `vllm_one_shot`: vLLM's one-shot decisions that need the whole output
//! (`[one_shot]` in the format files, `src/whole.rs`). Off by default; on,
//! a format with such decisions holds the output to its end and answers as
//! vLLM's one-shot parser does, under every cut; a format without them
//! streams as usual.

use llmsift_core::{Delta, FormatError, Message, Registry, Request, ToolChoice};

fn parse(r: Option<&str>, t: Option<&str>, req: &Request, text: &str) -> Message {
    Registry::builtin().factory(r, t).unwrap().parse(req, text, None)
}

fn one_shot() -> Request {
    Request { vllm_one_shot: true, id_seed: Some(1), ..Request::default() }
}

/// Every byte cut (at char boundaries) folds to the one-shot message.
fn every_cut_agrees(r: Option<&str>, t: Option<&str>, req: &Request, text: &str) {
    let f = Registry::builtin().factory(r, t).unwrap();
    let whole = f.parse(req, text, None);
    for cut in (0..=text.len()).filter(|i| text.is_char_boundary(*i)) {
        let mut p = f.parser(req);
        let mut d = Delta::default();
        p.push_into(&text[..cut], None, &mut d);
        p.push_into(&text[cut..], None, &mut d);
        p.finish_into(&mut d);
        let mut fold = llmsift_core::Folder::default();
        fold.push(&d);
        assert_eq!(fold.finish(), whole, "cut at {cut} of {text:?}");
    }
}

#[test]
fn a_start_marker_in_the_answer_splits_the_output_only_when_asked() {
    let text = "first thoughts</think>An answer <think>x";
    let default = parse(Some("deepseek_r1"), None, &Request::default(), text);
    assert_eq!(default.reasoning.as_deref(), Some("first thoughts"));
    assert_eq!(default.content.as_deref(), Some("An answer <think>x"));
    // vLLM: `partition("<think>")` drops everything before the first start
    // marker, text in no field: only with `vllm_text_loss` too.
    let alone = parse(Some("deepseek_r1"), None, &one_shot(), text);
    assert_eq!(alone, default);
    let lossy = Request { vllm_text_loss: true, ..one_shot() };
    let vllm = parse(Some("deepseek_r1"), None, &lossy, text);
    assert_eq!((vllm.reasoning.as_deref(), vllm.content.as_deref()), (Some("x"), None));
    every_cut_agrees(Some("deepseek_r1"), None, &lossy, text);
}

#[test]
fn unterminated_reasoning_is_content_with_its_calls() {
    let text = "<think>plan\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
    let default = parse(Some("olmo3"), Some("hermes"), &Request::default(), text);
    assert!(default.tool_calls.is_empty() && default.reasoning.is_some());
    let vllm = parse(Some("olmo3"), Some("hermes"), &one_shot(), text);
    assert_eq!(vllm.content.as_deref(), Some("<think>plan\n"));
    assert_eq!(vllm.tool_calls.len(), 1);
    assert_eq!(vllm.tool_calls[0].arguments, "{\"a\": 1}");
    every_cut_agrees(Some("olmo3"), Some("hermes"), &one_shot(), text);
    // No tool parser, or `none`: the whole output as written.
    let none = Request { tool_choice: ToolChoice::None, ..one_shot() };
    assert_eq!(parse(Some("olmo3"), Some("hermes"), &none, text).content.as_deref(), Some(text));
}

#[test]
fn text_after_a_call_list_makes_it_content() {
    let text = "[get_weather(city='Paris')]\nand then";
    let default = parse(None, Some("pythonic"), &Request::default(), text);
    assert_eq!(default.tool_calls.len(), 1);
    let vllm = parse(None, Some("pythonic"), &one_shot(), text);
    assert!(vllm.tool_calls.is_empty());
    assert_eq!(vllm.content.as_deref(), Some(text));
    every_cut_agrees(None, Some("pythonic"), &one_shot(), text);
    // The list alone is still a call.
    assert_eq!(parse(None, Some("pythonic"), &one_shot(), "[f(a=1)]").tool_calls.len(), 1);
}

#[test]
fn a_closer_inside_a_json_string_follows_each_parsers_class() {
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"code\": \"x</tool_call>y\"}}\n</tool_call>";
    // vLLM's Hermes parser (hermes, and the alias qwen3_json): the whole output is content.
    for name in ["hermes", "qwen3_json"] {
        let m = parse(None, Some(name), &one_shot(), text);
        assert!(m.tool_calls.is_empty(), "{name}");
        assert_eq!(m.content.as_deref(), Some(text), "{name}");
        assert_eq!(parse(None, Some(name), &Request::default(), text).tool_calls.len(), 1, "{name}");
    }
    // vLLM's ERNIE parser (the file `qwen3_json` is an alias in) reads the whole call.
    assert_eq!(parse(None, Some("ernie45"), &one_shot(), text).tool_calls.len(), 1);
}

#[test]
fn only_formats_with_decisions_hold_the_output() {
    let req = one_shot();
    let held = Registry::builtin().factory(Some("olmo3"), None).unwrap();
    let mut p = held.parser(&req);
    assert!(p.push("<think>thinking", None).is_empty(), "held to the end");
    assert_eq!(p.finish().content, "<think>thinking", "no end marker: content");
    let streamed = Registry::builtin().factory(Some("qwen3"), None).unwrap();
    let mut p = streamed.parser(&req);
    assert_eq!(p.push("<think>thinking", None).reasoning, "thinking");
}

#[test]
fn a_one_shot_table_names_terminals_of_its_file() {
    let bad = r#"
name = "x"
kind = "reasoning"
[terminals]
a = ["<a>"]
[states.content]
text = "content"
[vllm.one_shot]
split = { at = "nope" }
"#;
    let e = Registry::default().add_file("reasoning/x.toml", bad).unwrap_err();
    assert_eq!(e.to_string(), "reasoning/x.toml: [vllm.one_shot] split: no terminal `nope`");
    // An alias's own one-shot table is checked as the file's is.
    let alias = r#"
name = "y"
kind = "reasoning"
[alias.z.vllm.one_shot]
split = { at = "nope" }
[states.content]
text = "content"
"#;
    assert!(matches!(Registry::default().add_toml(alias), Err(FormatError::BadKey { .. })));
}
