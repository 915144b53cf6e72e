//! The vLLM-compatible settings per model (`vllm_compat`): the same output
//! derendered for a model with them answers as vLLM does (a parameter the
//! output cuts is dropped from the call, `docs/deviations.md`), the default
//! model keeps the text; and with them the streamed derender still folds
//! to the whole answer.

use axum::body::Body;
use axum::http::Request;
use llmsift_serve::{app, AppState, Config, Models};
use llmsift_tokenizers::TokenizerView;
use serde_json::{json, Value};
use tower::ServiceExt;

const OUTPUT: &str = "Plan.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew\nYork";

fn state() -> AppState {
    let mut models: Vec<_> =
        llmsift_serve::models::demo_models().into_iter().filter(|m| m.name() == "qwen3-coder-demo").collect();
    let mut compat = models[0].clone();
    compat.served_model_name = Some("qwen3-coder-vllm".into());
    compat.vllm_compat = true;
    models.push(compat);
    let config = Config { models, ..Config::default() };
    AppState::new(Models::build(&config).expect("the models build"), config.limits.clone(), None, Vec::new())
}

async fn call(s: &AppState, body: &Value) -> Value {
    let req = Request::post("/v1/chat/completions/derender")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app(s.clone()).oneshot(req).await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap()
}

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Weather in New York?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}}]})
}

#[tokio::test]
async fn a_model_with_vllm_compat_answers_as_vllm() {
    let s = state();
    let ids = TokenizerView::named("qwen3").unwrap().encode(OUTPUT).unwrap();
    let mut args = vec![];
    for model in ["qwen3-coder-demo", "qwen3-coder-vllm"] {
        let whole = call(&s, &json!({"model": model, "chat_request": chat(model),
            "generate_response": {"request_id": "c", "choices": [{"index": 0, "token_ids": ids, "finish_reason": "length"}]}}))
        .await;
        let call0 = &whole["choices"][0]["message"]["tool_calls"][0]["function"];
        assert_eq!(call0["name"], "get_weather", "{whole}");
        let (mut state, mut streamed) = (Value::Null, String::new());
        for (k, id) in ids.iter().enumerate() {
            let v = call(
                &s,
                &json!({"stream": true, "model": model, "chat_request": chat(model), "stream_state": state,
                "generate_chunk": {"request_id": "c", "choices": [{"index": 0, "token_ids": [id],
                    "finish_reason": if k + 1 == ids.len() { json!("length") } else { Value::Null }}]}}),
            )
            .await;
            state = v["stream_state"].clone();
            for t in v["chunk"]["choices"][0]["delta"]["tool_calls"].as_array().into_iter().flatten() {
                streamed += t["function"]["arguments"].as_str().unwrap_or_default();
            }
        }
        assert_eq!(streamed, call0["arguments"].as_str().unwrap(), "{model}: streamed = whole");
        args.push(call0["arguments"].as_str().unwrap().to_string());
    }
    assert!(args[0].contains("New"), "Sift keeps the cut parameter: {}", args[0]);
    assert_eq!(args[1], "{}", "vLLM drops the parameter the output cuts");
}
