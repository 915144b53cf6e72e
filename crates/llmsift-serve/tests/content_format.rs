//! The chat-template content format per model (`chat_template_content_format`,
//! vLLM's `--chat-template-content-format`) through the render endpoint:
//! Gemma 4's template iterates over message content, so vLLM's `auto`
//! detects `openai` and gives each content as a list of text parts, which
//! its system branch (`messages[0]['content'] | trim`) prints as Python's
//! repr of the list. A model with `vllm_compat` (default `auto`) or with
//! `openai` renders that; the default model and `string` render the text.

use axum::body::Body;
use axum::http::Request;
use llmsift_serve::config::ContentFormatOption;
use llmsift_serve::{app, AppState, Config, Models};
use llmsift_tokenizers::TokenizerView;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tower::ServiceExt;

/// A model directory: Qwen3's tokenizer, its config carrying Gemma 4's template.
fn model_dir() -> PathBuf {
    let demo =
        llmsift_serve::models::demo_models().into_iter().find(|m| m.name() == "qwen3-demo").expect("demo");
    let tok = demo.tokenizer_path().expect("tokenizer");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let assets = std::env::var_os("SIFT_ASSETS").map(PathBuf::from).unwrap_or_else(|| root.join(".assets"));
    let gemma = std::fs::read_to_string(assets.join("templates/google-gemma-4-31B-it.jinja"))
        .expect(".assets/templates (scripts/fetch-assets.sh)");
    let dir = std::env::temp_dir().join(format!("sift-content-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&tok, dir.join("tokenizer.json")).unwrap();
    let cfg_path = tok.with_file_name("tokenizer_config.json");
    let mut cfg: Value = serde_json::from_str(&std::fs::read_to_string(cfg_path).unwrap()).unwrap();
    cfg["chat_template"] = json!(gemma);
    std::fs::write(dir.join("tokenizer_config.json"), cfg.to_string()).unwrap();
    dir
}

fn state() -> AppState {
    let dir = model_dir();
    let model = |name: &str, compat: bool, format: Option<ContentFormatOption>| llmsift_serve::ModelConfig {
        served_model_name: Some(name.into()),
        backend: Some(llmsift_serve::BackendKind::Completions),
        backend_url: Some("http://127.0.0.1:9".into()),
        model_dir: Some(dir.clone()),
        vllm_compat: compat,
        chat_template_content_format: format,
        ..Default::default()
    };
    let models = vec![
        model("given", false, None),
        model("compat", true, None),
        model("openai", false, Some(ContentFormatOption::Openai)),
        model("string", false, Some(ContentFormatOption::String)),
        model("compat-string", true, Some(ContentFormatOption::String)),
    ];
    let config = Config { models, ..Config::default() };
    AppState::new(Models::build(&config).expect("the models build"), config.limits.clone(), None, Vec::new())
}

/// The prompt the render endpoint tokenized, decoded.
async fn prompt(s: &AppState, model: &str, content: Value) -> String {
    let body = json!({"model": model, "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": content}]});
    let req = Request::post("/v1/chat/completions/render")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app(s.clone()).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let v: Value =
        serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap();
    assert_eq!(status, 200, "{model}: {v}");
    let ids: Vec<u32> = serde_json::from_value(v["token_ids"].clone()).unwrap();
    static VIEW: std::sync::OnceLock<TokenizerView> = std::sync::OnceLock::new();
    VIEW.get_or_init(|| TokenizerView::named("qwen3").unwrap()).decode_with(&ids, false)
}

#[tokio::test]
async fn the_openai_form_reaches_the_template() {
    let s = state();
    let parts = json!([{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}]);
    let repr = "[{'type': 'text', 'text': 'You are terse.'}]";
    for model in ["compat", "openai"] {
        let p = prompt(&s, model, json!("Hi")).await;
        assert!(p.contains(repr), "{model}: the system content is the list of parts: {p}");
        // The user turn iterates over the parts: one text each.
        assert_eq!(prompt(&s, model, parts.clone()).await.matches("there").count(), 1, "{model}");
    }
    for model in ["given", "string", "compat-string"] {
        let p = prompt(&s, model, json!("Hi")).await;
        assert!(p.contains("You are terse.") && !p.contains("'type'"), "{model}: the text: {p}");
    }
    // `string` joins the user's parts with a newline; as given, the template reads the list.
    assert!(prompt(&s, "string", parts.clone()).await.contains("Hi\nthere"));
    assert!(prompt(&s, "given", parts).await.contains("Hithere"));
}
