//! The token view end to end, on the real tokenizers fetched by
//! `scripts/fetch-assets.sh`: markers matched by id, outputs streamed token
//! by token through the incremental detokenizer, and missing markers refused
//! when a format is bound.

use llmsift_core::{Folder, FormatError, Message, ParserFactory, ReasoningCounter, Registry, Request, Tools};
use llmsift_tokenizers::TokenizerView;
use std::sync::{Arc, OnceLock};

fn load(name: &str) -> TokenizerView {
    TokenizerView::named(name).unwrap_or_else(|e| panic!("{e} (run scripts/fetch-assets.sh)"))
}

fn qwen3() -> &'static TokenizerView {
    static T: OnceLock<TokenizerView> = OnceLock::new();
    T.get_or_init(|| load("qwen3"))
}

fn bound(view: &TokenizerView, r: Option<&str>, t: Option<&str>) -> ParserFactory {
    Registry::builtin().factory(r, t).unwrap().bind(view).expect("markers are single tokens")
}

fn tools() -> Arc<Tools> {
    let v = serde_json::json!([{"type": "function", "function": {"name": "write_file",
        "parameters": {"properties": {"path": {"type": "string"}, "mode": {"type": "integer"}}}}}]);
    Arc::new(Tools::from_json(&v))
}

/// Streams `text` token by token through the detokenizer, ids alongside.
fn token_stream(f: &ParserFactory, view: &TokenizerView, req: &Request, text: &str) -> Message {
    let ids = view.encode(text).unwrap();
    let mut det = view.detokenizer();
    let mut p = f.parser(req);
    let mut fold = Folder::default();
    for &id in &ids {
        let t = det.push(id).unwrap_or_default();
        fold.push(&p.push(&t, Some(&[id])));
    }
    fold.push(&p.push(&det.finish(), Some(&[])));
    fold.push(&p.finish());
    fold.finish()
}

const QWEN_CODER: &str = "Write it out.\n</think>\n\n<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.py\n</parameter>\n<parameter=mode>\n644\n</parameter>\n</function>\n</tool_call>";

#[test]
fn qwen3_markers_are_what_the_engine_expects() {
    let v = qwen3();
    assert_eq!(v.encode("</think>").unwrap().len(), 1);
    assert_eq!(v.encode("<parameter=").unwrap().len(), 3);
    assert_eq!(v.encode("\"}}\n").unwrap().len(), 1);
}

#[test]
fn qwen3_coder_token_by_token() {
    let v = qwen3();
    let f = bound(v, Some("qwen3"), Some("qwen3_coder"));
    let req = Request { tools: tools(), id_seed: Some(1), ..Request::default() };
    let ids = v.encode(QWEN_CODER).unwrap();
    let one = f.parse(&req, QWEN_CODER, Some(&ids));
    assert_eq!(one.reasoning.as_deref(), Some("Write it out.\n"));
    assert_eq!(one.tool_calls.len(), 1);
    assert_eq!(one.tool_calls[0].arguments, r#"{"path": "/tmp/a.py", "mode": 644}"#);
    assert_eq!(token_stream(&f, v, &req, QWEN_CODER), one);
    // Text-only parsing agrees with the token view here.
    let text_only = Registry::builtin().factory(Some("qwen3"), Some("qwen3_coder")).unwrap();
    assert_eq!(text_only.parse(&req, QWEN_CODER, None), one);
}

#[test]
fn hermes_token_by_token_with_merged_closing_token() {
    let v = qwen3();
    let f = bound(v, Some("qwen3"), Some("hermes"));
    let text = "Need weather.</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": {\"name\": \"Paris\"}}}\n</tool_call>";
    let req = Request { id_seed: Some(1), ..Request::default() };
    let one = f.parse(&req, text, Some(&v.encode(text).unwrap()));
    assert_eq!(one.tool_calls[0].arguments, r#"{"city": {"name": "Paris"}}"#);
    assert_eq!(token_stream(&f, v, &req, text), one);
}

#[test]
fn a_spelled_marker_without_its_id_is_text() {
    let v = qwen3();
    let f = bound(v, Some("qwen3"), None);
    let mut p = f.parser(&Request::default());
    let mut fold = Folder::default();
    // The ids carry no `</think>` token: the model wrote the characters.
    fold.push(&p.push("a </think> b", Some(&[64, 65])));
    fold.push(&p.finish());
    let m = fold.finish();
    assert_eq!(m.reasoning.as_deref(), Some("a </think> b"));
    assert_eq!(m.content, None);
}

#[test]
fn a_marker_whose_text_lags_its_id() {
    let v = qwen3();
    let f = bound(v, Some("qwen3"), None);
    let end = v.encode("</think>").unwrap();
    let mut p = f.parser(&Request::default());
    let mut fold = Folder::default();
    // The detokenizer holds the text back: the id comes first, the text later.
    fold.push(&p.push("thinking", Some(&end)));
    fold.push(&p.push("</think>answer", Some(&[])));
    // And a marker whose text never arrives is applied at finish.
    fold.push(&p.finish());
    let m = fold.finish();
    assert_eq!(m.reasoning.as_deref(), Some("thinking"));
    assert_eq!(m.content.as_deref(), Some("answer"));

    let mut p = f.parser(&Request::default());
    let mut fold = Folder::default();
    fold.push(&p.push("thinking", Some(&end)));
    fold.push(&p.finish());
    assert_eq!(fold.finish().reasoning.as_deref(), Some("thinking"));
}

#[test]
fn reasoning_tokens_are_counted_on_ids() {
    let v = qwen3();
    let f = bound(v, Some("qwen3"), None);
    let (start, end) = f.format().reasoning_token_ids().expect("qwen3 has think markers");
    let body = v.encode("step one, step two").unwrap();
    let mut ids = v.encode("<think>").unwrap();
    ids.extend(&body);
    ids.extend(v.encode("</think>done</think>").unwrap());
    let mut c = ReasoningCounter::new(start, end, false);
    c.push(&ids);
    assert_eq!(c.count(), body.len() as u64);
    assert!(c.is_reasoning_end());
}

#[test]
fn deepseek_r1_vocabulary_streams_v31_calls() {
    let v = load("deepseek_r1");
    let f = bound(&v, Some("deepseek_r1"), Some("deepseek_v31"));
    let text = "<think>Look it up.</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"rust 日本\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let req = Request { id_seed: Some(1), ..Request::default() };
    let one = f.parse(&req, text, Some(&v.encode(text).unwrap()));
    assert_eq!(one.reasoning.as_deref(), Some("Look it up."));
    assert_eq!(one.content.as_deref(), Some("Sure."));
    assert_eq!(one.tool_calls[0].name, "search");
    assert_eq!(one.tool_calls[0].arguments, "{\"q\": \"rust 日本\"}");
    assert_eq!(token_stream(&f, &v, &req, text), one);
}

#[test]
fn deepseek_v3_vocabulary_binds_tools_and_refuses_think_tokens() {
    let v = load("deepseek_v3");
    let f = bound(&v, None, Some("deepseek_v3"));
    let text = "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let req = Request { id_seed: Some(1), ..Request::default() };
    let one = f.parse(&req, text, Some(&v.encode(text).unwrap()));
    assert_eq!(one.tool_calls[0].arguments, "{\"city\": \"Tokyo\"}");
    assert_eq!(token_stream(&f, &v, &req, text), one);
    // R1's think markers are several tokens in the V3 vocabulary: refused at start-up, by name.
    let e = Registry::builtin().factory(Some("deepseek_r1"), None).unwrap().bind(&v).unwrap_err();
    assert_eq!(e, FormatError::MissingToken { marker: "</think>".into() });
}

#[test]
fn gptoss_harmony_token_by_token() {
    let v = load("gptoss");
    let f = bound(&v, Some("openai_gptoss"), Some("openai"));
    let req = Request { id_seed: Some(1), prompt: Some("<|start|>assistant".into()), ..Request::default() };
    // A call on the analysis channel, a call with the recipient in the role
    // header, then the final answer.
    let text = "<|channel|>analysis<|message|>Look up both.<|end|>\
<|start|>assistant<|channel|>analysis to=functions.lookup <|constrain|>json<|message|>{\"q\": \"a\"}<|call|>\
<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"東京\"}<|call|>\
<|start|>assistant<|channel|>final<|message|>Both done.<|return|>";
    let one = f.parse(&req, text, Some(&v.encode(text).unwrap()));
    assert_eq!(one.reasoning.as_deref(), Some("Look up both."));
    assert_eq!(one.content.as_deref(), Some("Both done."));
    let calls: Vec<_> = one.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
    assert_eq!(calls, [("lookup", "{\"q\": \"a\"}"), ("get_weather", "{\"city\": \"東京\"}")]);
    assert_eq!(token_stream(&f, &v, &req, text), one);
    // Without a tool parser the recipient's messages are not calls.
    let plain = bound(&v, Some("openai_gptoss"), None).parse(&req, text, None);
    assert!(plain.tool_calls.is_empty());
}
