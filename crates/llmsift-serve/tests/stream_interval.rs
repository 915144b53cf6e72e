//! `stream_interval` (vLLM's: tokens per streamed chunk) done by the
//! gateway, driven in process over the demo backend, which sends one token
//! per chunk: for every demo model and interval, the stream folds to
//! exactly the interval-1 stream, carries the same token ids, and sends a
//! delta on the first token, then one per N tokens, then the last; the
//! model's `stream_interval` is a floor the request raises; 0 is a 400.

use axum::body::Body;
use axum::http::Request;
use llmsift_protocol::sse;
use llmsift_serve::{app, AppState, Config, Models};
use serde_json::{json, Value};
use tower::ServiceExt;

fn state(floor: Option<u32>) -> AppState {
    let mut models = llmsift_serve::models::demo_models();
    for m in &mut models {
        m.stream_interval = floor;
    }
    let config = Config { models, ..Config::default() };
    AppState::new(
        Models::build(&config).expect("the demo models build"),
        config.limits.clone(),
        None,
        Vec::new(),
    )
}

async fn call(s: &AppState, body: Value) -> (u16, String) {
    let req = Request::post("/v1/chat/completions")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app(s.clone()).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

/// The stream folded (reasoning, content, calls, finish) and the token ids
/// of each frame that carried some.
fn fold(stream: &str) -> (Value, Vec<Vec<u64>>) {
    let (mut r, mut c, mut calls, mut fin, mut frames) =
        (String::new(), String::new(), Vec::<(String, String)>::new(), Value::Null, vec![]);
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
            let ids: Vec<u64> =
                ch["token_ids"].as_array().into_iter().flatten().map(|i| i.as_u64().unwrap()).collect();
            if !ids.is_empty() {
                frames.push(ids);
            }
        }
    }
    (json!({"reasoning": r, "content": c, "calls": calls, "finish": fin}), frames)
}

fn request(model: &str, interval: Option<u32>) -> Value {
    let mut body = json!({"model": model, "stream": true, "return_token_ids": true,
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}}]});
    if let Some(n) = interval {
        body["stream_interval"] = json!(n);
    }
    body
}

/// At most one frame per `n` tokens after the first, the last one apart.
fn spaced(frames: &[Vec<u64>], n: usize) -> bool {
    let total: usize = frames.iter().map(Vec::len).sum();
    frames.len() <= 2 + total.saturating_sub(1) / n
        && frames.iter().skip(1).rev().skip(1).all(|f| f.len() >= n)
}

#[tokio::test]
async fn deltas_are_held_to_the_interval_and_fold_to_the_same_answer() {
    let s = state(None);
    let names: Vec<String> =
        llmsift_serve::models::demo_models().iter().map(|m| m.name().to_string()).collect();
    assert!(names.len() >= 3, "{names:?}");
    for model in &names {
        let (status, one) = call(&s, request(model, None)).await;
        assert_eq!(status, 200, "{one}");
        let (want, frames1) = fold(&one);
        let ids: Vec<u64> = frames1.concat();
        assert!(ids.len() > 8, "{model}: {} tokens", ids.len());
        for n in [2u32, 4, 7] {
            let (status, text) = call(&s, request(model, Some(n))).await;
            assert_eq!(status, 200, "{text}");
            let (got, frames) = fold(&text);
            assert_eq!(got, want, "{model}, stream_interval {n}: the same answer");
            assert_eq!(frames.concat(), ids, "{model}, stream_interval {n}: the same token ids");
            assert!(spaced(&frames, n as usize), "{model}, stream_interval {n}: frames {frames:?}");
            assert!(frames.len() < frames1.len(), "{model}, stream_interval {n}: fewer frames");
        }
    }
}

#[tokio::test]
async fn the_models_interval_is_a_floor_and_zero_is_refused() {
    let s = state(Some(4));
    let model = "qwen3-demo";
    let (_, floor) = call(&s, request(model, None)).await;
    let (_, lower) = call(&s, request(model, Some(2))).await;
    let (_, higher) = call(&s, request(model, Some(6))).await;
    assert!(spaced(&fold(&floor).1, 4) && spaced(&fold(&lower).1, 4), "the model's 4 holds");
    assert_eq!(fold(&floor).1, fold(&lower).1, "a lower request is clamped up to the model's");
    assert!(spaced(&fold(&higher).1, 6), "a higher request raises it");
    assert_eq!(fold(&floor).0, fold(&higher).0);
    let (status, text) = call(&s, request(model, Some(0))).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("\"param\":\"stream_interval\""), "{text}");
}
