//! `sift parse --request` on the bundled example (`examples/qwen3-coder-request.json`).

use serde_json::Value;
use std::process::Command;

fn sift(args: &[&str]) -> (bool, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO_BIN_EXE_sift")).args(args).current_dir(root).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn answers_the_bundled_request() {
    let example = "examples/qwen3-coder-request.json";

    // One-shot Chat Completions.
    let (ok, text) = sift(&["parse", "--request", example]);
    assert!(ok, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["id"], "chatcmpl-example");
    let c = &v["choices"][0];
    assert_eq!(c["finish_reason"], "tool_calls");
    assert!(c["message"]["reasoning"].as_str().unwrap().starts_with("The user wants the weather"));
    let calls = c["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["function"]["arguments"], "{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(calls[1]["function"]["arguments"], "{\"city\": \"Tokyo\", \"days\": 1}");
    assert_eq!(v["usage"]["prompt_tokens"], 42);

    // Streamed, the same answer folded; the stream ends with [DONE].
    let (ok, text) = sift(&["parse", "--request", example, "--stream"]);
    assert!(ok);
    assert!(text.ends_with("data: [DONE]\n\n"));
    let mut args = String::new();
    for frame in text.split("\n\n").filter(|f| f.starts_with("data: {")) {
        let chunk: Value = serde_json::from_str(&frame[6..]).unwrap();
        for tc in chunk["choices"][0]["delta"]["tool_calls"].as_array().into_iter().flatten() {
            args.push_str(tc["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    assert_eq!(args, "{\"city\": \"Paris\", \"days\": 3}{\"city\": \"Tokyo\", \"days\": 1}");

    // The other dialects.
    let (ok, text) = sift(&["parse", "--request", example, "--api", "anthropic"]);
    assert!(ok);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["stop_reason"], "tool_use");
    let (ok, text) = sift(&["parse", "--request", example, "--api", "responses", "--stream"]);
    assert!(ok);
    assert!(text.starts_with("event: response.created\n"));
    assert!(text.contains("event: response.completed\n"));

    // A request the checks refuse: the OpenAI error body, exit status 1.
    let bad = std::env::temp_dir().join(format!("sift-bad-request-{}.json", std::process::id()));
    std::fs::write(&bad, r#"{"request": {"messages": [], "tool_choice": "required"}, "output": "x"}"#)
        .unwrap();
    let (ok, text) = sift(&["parse", "--request", bad.to_str().unwrap()]);
    std::fs::remove_file(&bad).ok();
    assert!(!ok);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["message"], "When using `tool_choice`, `tools` must be set.");
    assert_eq!(v["error"]["code"], 400);
}
