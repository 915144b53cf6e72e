//! The gateway driven in process through `app(state)` (no port): for each
//! dialect, the streamed answer folds to the one-shot answer, over the demo
//! backend replaying Qwen3 token by token.

use axum::body::Body;
use axum::http::Request;
use llmsift_protocol::sse;
use llmsift_serve::{app, AppState, Config, Models};
use serde_json::{json, Value};
use tower::ServiceExt;

fn state() -> AppState {
    let models =
        llmsift_serve::models::demo_models().into_iter().filter(|m| m.name() == "qwen3-demo").collect();
    let config = Config { models, ..Config::default() };
    let models = Models::build(&config).expect("the demo model builds");
    AppState::new(models, config.limits.clone(), None, Vec::new())
}

async fn call(s: &AppState, path: &str, body: Value) -> (u16, String) {
    let req = Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app(s.clone()).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

/// The Chat Completions stream folded into (reasoning, content, [(name, arguments)], finish).
fn fold_chat(stream: &str) -> Value {
    let (mut r, mut c, mut calls, mut fin) =
        (String::new(), String::new(), Vec::<(String, String)>::new(), Value::Null);
    for (_, data) in sse::parse(stream) {
        if data == "[DONE]" {
            continue;
        }
        let v: Value = serde_json::from_str(&data).unwrap();
        for ch in v["choices"].as_array().unwrap() {
            let d = &ch["delta"];
            r += d["reasoning"].as_str().unwrap_or_default();
            c += d["content"].as_str().unwrap_or_default();
            for t in d["tool_calls"].as_array().into_iter().flatten() {
                let i = t["index"].as_u64().unwrap() as usize;
                if i == calls.len() {
                    calls.push(Default::default());
                }
                calls[i].0 += t["function"]["name"].as_str().unwrap_or_default();
                calls[i].1 += t["function"]["arguments"].as_str().unwrap_or_default();
            }
            if !ch["finish_reason"].is_null() {
                fin = ch["finish_reason"].clone();
            }
        }
    }
    json!({"reasoning": r, "content": c, "calls": calls, "finish": fin})
}

fn chat_message(v: &Value) -> Value {
    let m = &v["choices"][0]["message"];
    let calls: Vec<(String, String)> = m["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["function"]["name"].as_str().unwrap().into(),
                t["function"]["arguments"].as_str().unwrap().into(),
            )
        })
        .collect();
    json!({"reasoning": m["reasoning"].as_str().unwrap_or_default(), "content": m["content"].as_str().unwrap_or_default(),
        "calls": calls, "finish": v["choices"][0]["finish_reason"]})
}

fn request(stream: bool, tools: bool) -> Value {
    let mut r = json!({"model": "qwen3-demo", "stream": stream, "messages": [{"role": "user", "content": "Weather in Paris?"}]});
    if tools {
        r["tools"] = json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]);
    }
    r
}

#[tokio::test]
async fn chat_stream_folds_to_one_shot() {
    let s = state();
    for tools in [true, false] {
        let (st, one) = call(&s, "/v1/chat/completions", request(false, tools)).await;
        assert_eq!(st, 200, "{one}");
        let (st, stream) = call(&s, "/v1/chat/completions", request(true, tools)).await;
        assert_eq!(st, 200, "{stream}");
        let folded = fold_chat(&stream);
        assert_eq!(folded, chat_message(&serde_json::from_str(&one).unwrap()));
        assert_eq!(folded["finish"], if tools { "tool_calls" } else { "stop" });
    }
}

/// The Anthropic stream folded into the one-shot message's content blocks.
fn fold_anthropic(stream: &str) -> Value {
    let mut blocks: Vec<Value> = Vec::new();
    let mut stop = Value::Null;
    let mut json_parts: Vec<String> = Vec::new();
    for (event, data) in sse::parse(stream) {
        let v: Value = serde_json::from_str(&data).unwrap();
        match event.as_deref() {
            Some("content_block_start") => {
                blocks.push(v["content_block"].clone());
                json_parts.push(String::new());
            }
            Some("content_block_delta") => {
                let i = v["index"].as_u64().unwrap() as usize;
                let d = &v["delta"];
                match d["type"].as_str().unwrap() {
                    "text_delta" => {
                        let t = blocks[i]["text"].as_str().unwrap().to_string() + d["text"].as_str().unwrap();
                        blocks[i]["text"] = json!(t);
                    }
                    "thinking_delta" => {
                        let t = blocks[i]["thinking"].as_str().unwrap().to_string()
                            + d["thinking"].as_str().unwrap();
                        blocks[i]["thinking"] = json!(t);
                    }
                    "input_json_delta" => json_parts[i] += d["partial_json"].as_str().unwrap(),
                    _ => {}
                }
            }
            Some("message_delta") => stop = v["delta"]["stop_reason"].clone(),
            _ => {}
        }
    }
    for (b, j) in blocks.iter_mut().zip(json_parts) {
        if b["type"] == "tool_use" {
            b["input"] = serde_json::from_str(&j).unwrap();
            b["id"] = json!("ID");
        }
        if b["type"] == "thinking" {
            b["signature"] = json!("SIG");
        }
    }
    json!({"content": blocks, "stop_reason": stop})
}

#[tokio::test]
async fn anthropic_stream_folds_to_one_shot() {
    let s = state();
    let mut req = request(false, true);
    req["max_tokens"] = json!(300);
    req["tools"] = json!([{"name": "get_weather", "input_schema": {"type": "object"}}]);
    let (st, one) = call(&s, "/v1/messages", req.clone()).await;
    assert_eq!(st, 200, "{one}");
    req["stream"] = json!(true);
    let (_, stream) = call(&s, "/v1/messages", req).await;
    let mut one: Value = serde_json::from_str(&one).unwrap();
    for b in one["content"].as_array_mut().unwrap() {
        if b["type"] == "tool_use" {
            b["id"] = json!("ID");
        }
        if b["type"] == "thinking" {
            b["signature"] = json!("SIG");
        }
    }
    assert_eq!(
        fold_anthropic(&stream),
        json!({"content": one["content"], "stop_reason": one["stop_reason"]})
    );
    assert_eq!(one["stop_reason"], "tool_use");
}

#[tokio::test]
async fn responses_stream_ends_with_the_one_shot_response() {
    let s = state();
    let req = json!({"model": "qwen3-demo", "input": "Weather in Paris?",
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]});
    let (st, one) = call(&s, "/v1/responses", req.clone()).await;
    assert_eq!(st, 200, "{one}");
    let mut sreq = req;
    sreq["stream"] = json!(true);
    let (_, stream) = call(&s, "/v1/responses", sreq).await;
    let frames = sse::parse(&stream);
    let (event, data) = frames.last().unwrap();
    assert_eq!(event.as_deref(), Some("response.completed"));
    let last: Value = serde_json::from_str(data).unwrap();
    let one: Value = serde_json::from_str(&one).unwrap();
    let shape = |v: &Value| -> Vec<(Value, Value)> {
        v["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["type"].clone(), i.get("arguments").cloned().unwrap_or(Value::Null)))
            .collect()
    };
    assert_eq!(shape(&last["response"]), shape(&one));
    assert_eq!(last["response"]["status"], one["status"]);
}
