//! The scale-out tier end to end: `sift serve --demo` processes on
//! 127.0.0.1 driven over HTTP the way a router drives vLLM's render and
//! derender servers.
//!
//! - Two replicas with one `--state-key`: a generation derendered chunk by
//!   chunk, alternately through each, folds to exactly what one process
//!   gives streamed, and to its non-streaming answer (every demo model, 1-
//!   and 4-token chunks).
//! - Bad `stream_state`s are 400s naming the check: forged, truncated,
//!   another request's, another key's, another version's.
//! - Every request and response body validates against the committed
//!   JSON schemas (`tests/scaleout/schemas/`).

use base64::Engine as _;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod proc;
#[path = "scaleout/schema.rs"]
mod schema;
use proc::{start, Proc};

const KEY: &str = "replicas-share-this-state-key";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `sift serve --demo` with a state key, once it says where it listens.
fn replica(key: &str) -> Proc {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sift"));
    cmd.args(["serve", "--demo", "--port", "0", "--state-key", key]);
    start(cmd, Duration::from_secs(120))
}

fn post(p: &Proc, path: &str, body: &Value) -> (u16, Value) {
    let r = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
        .post(format!("http://{}{path}", p.addr))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .expect("the replica answers");
    let status = r.status().as_u16();
    let text = r.text().expect("a body");
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}")))
}

/// A call whose body and answer must fit the endpoint's schemas.
fn call(p: &Proc, path: &str, schema_name: &str, body: &Value) -> Value {
    schema::check(&format!("{schema_name}.request"), body);
    let (status, v) = post(p, path, body);
    assert_eq!(status, 200, "{path}: {v}");
    schema::check(&format!("{schema_name}.response"), &v);
    v
}

struct Demo {
    name: String,
    tokenizer: String,
    output: String,
}

fn demos() -> Vec<Demo> {
    ["qwen3", "qwen3-coder", "deepseek-r1", "gpt-oss"]
        .iter()
        .map(|f| {
            let text =
                std::fs::read_to_string(root().join(format!("crates/llmsift-serve/demo/{f}.json"))).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            Demo {
                name: v["name"].as_str().unwrap().into(),
                tokenizer: v["tokenizer"].as_str().unwrap().into(),
                output: v["with_tools"].as_str().unwrap().into(),
            }
        })
        .collect()
}

fn chat_request(model: &str) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"]}}}],
        "stream": true,
        "stream_options": {"include_usage": true},
    })
}

/// The folded chunks: reasoning, content, calls (name, arguments; ids must
/// be one per call and stable), finish reason and usage.
fn fold(chunks: &[Value]) -> Value {
    let (mut r, mut c, mut calls, mut fin, mut usage) =
        (String::new(), String::new(), vec![], Value::Null, Value::Null);
    let mut ids: Vec<String> = vec![];
    for ch in chunks {
        for choice in ch["choices"].as_array().into_iter().flatten() {
            let d = &choice["delta"];
            r += d["reasoning"].as_str().unwrap_or_default();
            c += d["content"].as_str().unwrap_or_default();
            for t in d["tool_calls"].as_array().into_iter().flatten() {
                let i = t["index"].as_u64().unwrap() as usize;
                if i == calls.len() {
                    calls.push((String::new(), String::new()));
                    ids.push(t["id"].as_str().expect("a call's first fragment has its id").into());
                } else {
                    assert!(t["id"].is_null(), "an id only in a call's first fragment");
                }
                calls[i].0 += t["function"]["name"].as_str().unwrap_or_default();
                calls[i].1 += t["function"]["arguments"].as_str().unwrap_or_default();
            }
            if !choice["finish_reason"].is_null() {
                fin = choice["finish_reason"].clone();
            }
        }
        if !ch["usage"].is_null() {
            usage = ch["usage"].clone();
        }
    }
    json!({"reasoning": r, "content": c, "calls": calls, "finish": fin, "usage": usage})
}

fn chunk_body(
    model: &str,
    prompt: &[u64],
    req: &Value,
    rid: &str,
    ids: &[u32],
    last: bool,
    state: &Value,
) -> Value {
    json!({
        "stream": true,
        "model": model,
        "generate_chunk": {"request_id": rid, "choices": [{"index": 0, "token_ids": ids, "finish_reason": if last { json!("stop") } else { Value::Null }}]},
        "stream_state": state,
        "prompt_tokens": prompt.len(),
        "prompt_token_ids": prompt,
        "chat_request": req,
    })
}

/// Streams `out` in `size`-token chunks, call `k` going to `replicas[k % n]`.
fn stream(
    replicas: &[&Proc],
    model: &str,
    prompt: &[u64],
    req: &Value,
    rid: &str,
    out: &[u32],
    size: usize,
) -> (Vec<Value>, usize) {
    let (mut state, mut chunks, mut largest) = (Value::Null, vec![], 0);
    let parts: Vec<&[u32]> = out.chunks(size).collect();
    for (k, part) in parts.iter().enumerate() {
        let body = chunk_body(model, prompt, req, rid, part, k + 1 == parts.len(), &state);
        let v = call(
            replicas[k % replicas.len()],
            "/v1/chat/completions/derender",
            "chat_derender_stream",
            &body,
        );
        state = v["stream_state"].clone();
        largest = largest.max(state["sift_state"].as_str().unwrap().len());
        chunks.push(v["chunk"].clone());
    }
    (chunks, largest)
}

fn tokenize(tokenizer: &str, text: &str) -> Vec<u32> {
    let view =
        llmsift_tokenizers::TokenizerView::named(tokenizer).expect("tokenizer (scripts/fetch-assets.sh)");
    view.encode(text).unwrap()
}

#[test]
fn a_generation_through_two_replicas_is_the_one_process_answer() {
    let (a, b) = (replica(KEY), replica(KEY));
    for demo in demos() {
        let req = chat_request(&demo.name);
        let g = call(&a, "/v1/chat/completions/render", "chat_render", &req);
        let prompt: Vec<u64> =
            g["token_ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        assert!(!prompt.is_empty(), "{}: {g}", demo.name);
        let out = tokenize(&demo.tokenizer, &demo.output);
        let whole = call(
            &a,
            "/v1/chat/completions/derender",
            "chat_derender",
            &json!({
                "model": demo.name,
                "generate_response": {"request_id": "whole", "choices": [{"index": 0, "token_ids": out, "finish_reason": "stop"}]},
                "prompt_tokens": prompt.len(), "prompt_token_ids": prompt, "chat_request": req,
            }),
        );
        let m = &whole["choices"][0]["message"];
        for size in [1, 4] {
            let (one, _) = stream(&[&a], &demo.name, &prompt, &req, "one", &out, size);
            let (two, largest) = stream(&[&a, &b], &demo.name, &prompt, &req, "two", &out, size);
            let (f1, f2) = (fold(&one), fold(&two));
            assert_eq!(f1, f2, "{} in {size}-token chunks: two replicas differ from one", demo.name);
            assert_eq!(one.len(), two.len());
            let calls: Vec<Value> = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| json!([t["function"]["name"], t["function"]["arguments"]]))
                .collect();
            assert_eq!(f2["calls"], json!(calls), "{}: streamed calls = the whole answer's", demo.name);
            assert_eq!(
                f2["reasoning"].as_str().unwrap(),
                m["reasoning"].as_str().unwrap_or_default(),
                "{}",
                demo.name
            );
            assert_eq!(
                f2["content"].as_str().unwrap(),
                m["content"].as_str().unwrap_or_default(),
                "{}",
                demo.name
            );
            assert_eq!(f2["finish"], whole["choices"][0]["finish_reason"], "{}", demo.name);
            assert_eq!(f2["usage"]["completion_tokens"], json!(out.len()), "{}", demo.name);
            assert!(largest <= 2048, "{}: a state of {largest} bytes", demo.name);
            assert_eq!(one[0]["choices"][0]["delta"]["role"], "assistant");
        }
    }
}

/// The state after two chunks of the qwen3 demo, and what the next call needs.
fn midway(p: &Proc) -> (Value, Vec<u64>, Value, Vec<u32>) {
    let req = chat_request("qwen3-demo");
    let g = call(p, "/v1/chat/completions/render", "chat_render", &req);
    let prompt: Vec<u64> = g["token_ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    let out = tokenize("qwen3", &demos()[0].output);
    let mut state = Value::Null;
    for k in 0..2 {
        let body = chunk_body("qwen3-demo", &prompt, &req, "r1", &out[k * 4..k * 4 + 4], false, &state);
        state =
            call(p, "/v1/chat/completions/derender", "chat_derender_stream", &body)["stream_state"].clone();
    }
    (state, prompt, req, out)
}

fn refused(p: &Proc, body: &Value, code: &str) {
    let (status, v) = post(p, "/v1/chat/completions/derender", body);
    assert_eq!(status, 400, "{code}: {v}");
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains(code), "{code}: {msg}");
    assert_eq!(v["error"]["param"], "stream_state", "{v}");
}

#[test]
fn bad_states_are_400s_that_say_which() {
    let (a, other) = (replica(KEY), replica("another-deployment-key"));
    let (state, prompt, req, out) = midway(&a);
    let next = |st: &Value, rid: &str| chunk_body("qwen3-demo", &prompt, &req, rid, &out[8..12], false, st);
    let token = state["sift_state"].as_str().unwrap().to_string();
    let with = |t: &str| {
        let mut s = state.clone();
        s["sift_state"] = json!(t);
        s
    };
    // The good state continues.
    assert_eq!(post(&a, "/v1/chat/completions/derender", &next(&state, "r1")).0, 200);

    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut bytes = b64.decode(&token).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    refused(&a, &next(&with(&b64.encode(&bytes)), "r1"), "state_forged");
    refused(&a, &next(&with(&token[..token.len() - 7]), "r1"), "state_truncated");
    refused(&a, &next(&state, "r2"), "state_other_request");
    refused(&other, &next(&state, "r1"), "state_forged");
    let mut old = b64.decode(&token).unwrap();
    old[1] = 0;
    refused(&a, &next(&with(&b64.encode(&old)), "r1"), "state_other_version");
    refused(&a, &next(&with("%%% not a state %%%"), "r1"), "state_malformed");
    // Another model: another request, bound to its model.
    let mut body = next(&state, "r1");
    body["model"] = json!("qwen3-coder-demo");
    body["chat_request"]["model"] = json!("qwen3-coder-demo");
    refused(&a, &body, "state_other_request");
    // vLLM's own replay state is read (its buffer replayed once).
    let replay = json!({"output_token_ids": &out[..8], "output_chunk_lens": [4, 4], "role_sent": true});
    let (status, v) = post(&a, "/v1/chat/completions/derender", &next(&replay, "r1"));
    assert_eq!(status, 200, "{v}");
    let (_, good) = post(&a, "/v1/chat/completions/derender", &next(&state, "r1"));
    assert_eq!(v["chunk"]["choices"], good["chunk"]["choices"]);
}

#[test]
fn every_render_and_the_completions_derender_fit_the_schemas() {
    let a = replica(KEY);
    let chat = chat_request("qwen3-demo");
    call(&a, "/v1/chat/completions/render", "chat_render", &chat);
    call(
        &a,
        "/v1/messages/render",
        "messages_render",
        &json!({
            "model": "qwen3-demo", "max_tokens": 64,
            "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        }),
    );
    call(
        &a,
        "/v1/responses/render",
        "responses_render",
        &json!({
            "model": "qwen3-demo", "input": "What's the weather in Paris?", "max_output_tokens": 64,
        }),
    );
    let gens = call(
        &a,
        "/v1/completions/render",
        "completions_render",
        &json!({
            "model": "qwen3-demo", "prompt": ["Once upon", "a time"], "max_tokens": 8,
        }),
    );
    assert_eq!(gens.as_array().unwrap().len(), 2);
    let out = tokenize("qwen3", " there was a crab 🦀 named Ferris.");
    let whole = call(
        &a,
        "/v1/completions/derender",
        "completions_derender",
        &json!({
            "model": "qwen3-demo",
            "generate_responses": [{"request_id": "c1", "choices": [{"index": 0, "token_ids": out, "finish_reason": "length"}]}],
            "prompt_tokens": [2],
        }),
    );
    let text = whole["choices"][0]["text"].as_str().unwrap().to_string();
    assert_eq!(text, " there was a crab 🦀 named Ferris.");
    let (mut state, mut streamed) = (Value::Null, String::new());
    for (k, part) in out.chunks(1).enumerate() {
        let v = call(
            &a,
            "/v1/completions/derender",
            "completions_derender_stream",
            &json!({
                "stream": true, "model": "qwen3-demo",
                "generate_chunk": {"request_id": "c1", "choices": [{"index": 0, "token_ids": part,
                    "finish_reason": if k + 1 == out.len() { json!("length") } else { Value::Null }}]},
                "stream_state": state,
            }),
        );
        state = v["stream_state"].clone();
        streamed += v["chunk"]["choices"][0]["text"].as_str().unwrap();
    }
    assert_eq!(streamed, text);
}
