//! The streaming derender's whole carried state (stream processor, parser,
//! detokenizer window, chunk metadata), driven in process through
//! `app(state)`: over a 32,000-token Qwen3 + Hermes generation with
//! kilobyte-long calls, `sift_state` stays within 2 KiB at every chunk, and
//! the chunks fold to the non-streaming derender's message.

use axum::body::Body;
use axum::http::Request;
use llmsift_serve::{app, AppState, Config, Models};
use llmsift_tokenizers::TokenizerView;
use serde_json::{json, Value};
use tower::ServiceExt;

fn state() -> AppState {
    let models =
        llmsift_serve::models::demo_models().into_iter().filter(|m| m.name() == "qwen3-demo").collect();
    let config = Config { models, ..Config::default() };
    AppState::new(
        Models::build(&config).expect("the demo model builds"),
        config.limits.clone(),
        None,
        Vec::new(),
    )
}

async fn call(s: &AppState, path: &str, body: &Value) -> Value {
    let req = Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app(s.clone()).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(status, 200, "{v}");
    v
}

fn output(view: &TokenizerView) -> Vec<u32> {
    let mut text = String::from("<think>\n");
    for i in 0..600 {
        text.push_str(&format!("Step {i}: the weather tool needs a city; Paris, of course. "));
    }
    text.push_str("\n</think>\n\nChecking.\n");
    for c in 0..5 {
        let note: String = (0..300).map(|i| format!("note {c}.{i} \\\"quoted\\\" ")).collect();
        text.push_str(&format!(
            "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\", \"note\": \"{note}\"}}}}\n</tool_call>\n"
        ));
    }
    let mut ids = view.encode(&text).unwrap();
    let filler = view.encode(" And more content, plainly written.").unwrap();
    while ids.len() < 32_000 {
        ids.extend_from_slice(&filler);
    }
    ids.truncate(32_000);
    ids
}

#[tokio::test]
async fn the_carried_state_stays_within_2_kib_over_32k_tokens() {
    let s = state();
    let view = TokenizerView::named("qwen3").expect("qwen3 tokenizer (scripts/fetch-assets.sh)");
    let chat = json!({
        "model": "qwen3-demo",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "note": {"type": "string"}}}}}],
    });
    let prompt = call(&s, "/v1/chat/completions/render", &chat).await["token_ids"].clone();
    let out = output(&view);
    let whole = call(&s, "/v1/chat/completions/derender", &json!({
        "generate_response": {"request_id": "bound", "choices": [{"index": 0, "token_ids": out, "finish_reason": "stop"}]},
        "prompt_token_ids": prompt, "chat_request": chat,
    }))
    .await;
    let (mut state, mut largest, mut content, mut args) = (Value::Null, (0, 0), String::new(), String::new());
    let parts: Vec<&[u32]> = out.chunks(8).collect();
    for (k, part) in parts.iter().enumerate() {
        let last = k + 1 == parts.len();
        let v = call(
            &s,
            "/v1/chat/completions/derender",
            &json!({
                "stream": true,
                "generate_chunk": {"request_id": "bound", "choices": [{"index": 0, "token_ids": part,
                    "finish_reason": if last { json!("stop") } else { Value::Null }}]},
                "stream_state": state, "prompt_token_ids": prompt, "chat_request": chat,
            }),
        )
        .await;
        state = v["stream_state"].clone();
        let n = state["sift_state"].as_str().unwrap().len();
        if n > largest.0 {
            largest = (n, k * 8);
        }
        let d = &v["chunk"]["choices"][0]["delta"];
        content += d["content"].as_str().unwrap_or_default();
        for t in d["tool_calls"].as_array().into_iter().flatten() {
            args += t["function"]["arguments"].as_str().unwrap_or_default();
        }
    }
    let m = &whole["choices"][0]["message"];
    assert_eq!(content, m["content"].as_str().unwrap());
    let whole_args: String = m["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(args, whole_args);
    assert_eq!(m["tool_calls"].as_array().unwrap().len(), 5);
    assert!(largest.0 <= 2048, "sift_state reached {} bytes at token {}", largest.0, largest.1);
    eprintln!("largest sift_state over 32,000 tokens: {} bytes (at token {})", largest.0, largest.1);
}
