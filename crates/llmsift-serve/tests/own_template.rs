//! A model directory whose `tokenizer_config.json` ships a
//! `response_template`, served with no parser named: the gateway parses by
//! that template (under `hf`), and answers as the same model served with its
//! named parsers (Qwen3's `qwen3` + `hermes`) does; a template Sift refuses
//! stops the start with the reason. In process, over the demo backend
//! replaying Qwen3 token by token.

use axum::body::Body;
use axum::http::Request;
use llmsift_serve::config::BackendKind;
use llmsift_serve::{app, AppState, Config, Models};
use serde_json::{json, Value};
use std::path::PathBuf;
use tower::ServiceExt;

/// TRL's Qwen3 template (`add_response_schema`).
fn qwen3_template() -> Value {
    json!({"defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*", "content": "text"},
        "tool_calls": {"open": "<tool_call>", "close_pattern": "</tool_call>\\s*", "repeats": true, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": "<\\|im_end\\|>\\s*", "content": "text"}}})
}

/// A model directory: the demo's Qwen3 tokenizer files, its config carrying `template`.
fn model_dir(tag: &str, template: Value) -> PathBuf {
    let demo =
        llmsift_serve::models::demo_models().into_iter().find(|m| m.name() == "qwen3-demo").expect("demo");
    let tok = demo.tokenizer_path().expect("tokenizer");
    let dir = std::env::temp_dir().join(format!("sift-own-template-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&tok, dir.join("tokenizer.json")).unwrap();
    let cfg_path = tok.with_file_name("tokenizer_config.json");
    let mut cfg: Value = serde_json::from_str(&std::fs::read_to_string(cfg_path).unwrap()).unwrap();
    cfg["response_template"] = template;
    std::fs::write(dir.join("tokenizer_config.json"), cfg.to_string()).unwrap();
    dir
}

fn config(dir: PathBuf) -> Config {
    let mut named =
        llmsift_serve::models::demo_models().into_iter().find(|m| m.name() == "qwen3-demo").unwrap();
    let mut own = named.clone();
    own.served_model_name = Some("qwen3-own".into());
    own.model_dir = Some(dir);
    own.tokenizer = None;
    own.chat_template = None;
    own.reasoning_parser = None;
    own.tool_call_parser = None;
    own.backend = Some(BackendKind::Demo);
    own.recording = Some("qwen3-demo".into());
    named.served_model_name = Some("qwen3-demo".into());
    Config { models: vec![named, own], ..Config::default() }
}

async fn answer(s: &AppState, model: &str, tools: bool) -> Value {
    let mut body = json!({"model": model, "messages": [{"role": "user", "content": "Weather in Paris?"}]});
    if tools {
        body["tools"] = json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]);
    }
    let req = Request::post("/v1/chat/completions")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app(s.clone()).oneshot(req).await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let m = &v["choices"][0]["message"];
    let text = |k: &str| m[k].as_str().unwrap_or_default().trim().to_string();
    let calls: Vec<(String, Value)> = m["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let args = serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
            (c["function"]["name"].as_str().unwrap().to_string(), args)
        })
        .collect();
    json!({"reasoning": text("reasoning"), "content": text("content"), "calls": calls})
}

#[tokio::test]
async fn a_models_own_template_is_served_when_no_parser_is_named() {
    let config = config(model_dir("ok", qwen3_template()));
    let models = Models::build(&config).expect("builds");
    let own = models.route(Some("qwen3-own")).unwrap();
    assert_eq!(own.parsers, (Some("hf".to_string()), Some("hf".to_string())));
    assert!(own.factory.own_template().is_some());
    let s = AppState::new(models, config.limits.clone(), None, Vec::new());
    for tools in [true, false] {
        let (named, ours) = (answer(&s, "qwen3-demo", tools).await, answer(&s, "qwen3-own", tools).await);
        assert_eq!(named, ours, "tools: {tools}");
        assert!(!ours["reasoning"].as_str().unwrap().is_empty());
    }
}

#[test]
fn a_refused_template_stops_the_start_with_the_reason() {
    let mut t = qwen3_template();
    t["fields"]["answer"] = json!({"open": "<a>"});
    let Err(err) = Models::build(&config(model_dir("refused", t))) else { panic!("the template is refused") };
    let err = err.to_string();
    assert!(err.contains("field 'answer' has no place in a chat message"), "{err}");
}
