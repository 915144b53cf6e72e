//! The `chat` backend's own counts and llama.cpp's guided fields, end to
//! end (part of `gateway_fidelity`: its replay backend and gateway).
//!
//! - usage: a chat backend is asked for its `usage`
//!   (`stream_options.include_usage`) and its counts are the answer's, in
//!   Chat Completions, Responses and Anthropic Messages, streamed and not;
//!   the replay's counts differ from the gateway's own (it counts the
//!   messages' JSON text, the gateway its rendered template; the gateway
//!   has no ids to count output with), so a gateway count cannot pass.
//!   Every answer is validated with the SDKs' types.
//! - `guided_fields = "llamacpp"` on a chat backend: Sift's own grammar or
//!   `json_schema` instead of the backend's `tool_choice`, where it applies
//!   from the first token; the backend's own fields otherwise.

use super::{request, schema, sdk_validate, setup, tool, Setup};
use serde_json::{json, Value};

/// The `data:` payloads of an SSE text (`[DONE]` left out).
fn payloads(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("frame JSON"))
        .collect()
}

/// The backend's own `(prompt, completion)` counts for the body the gateway
/// sent it: the same body asked of the replay directly.
fn backend_usage(s: &Setup, sent: &Value) -> (u64, u64) {
    let r = reqwest::blocking::Client::new()
        .post(format!("http://{}/v1/chat/completions", s.backend.1))
        .header("content-type", "application/json")
        .body(sent.to_string())
        .send()
        .expect("the replay answers");
    let frames = payloads(&r.text().unwrap());
    s.sent(); // forget this request
    let u = frames.iter().rev().find(|f| f["usage"].is_object()).expect("a usage frame");
    assert_eq!(u["choices"], json!([]), "{u}");
    (u["usage"]["prompt_tokens"].as_u64().unwrap(), u["usage"]["completion_tokens"].as_u64().unwrap())
}

/// One dialect's request: its path and body (a forced call when `call`).
fn ask(api: &str, call: bool, stream: bool) -> (&'static str, Value) {
    let params = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    match api {
        "chat" => {
            let mut b = request("chat", &json!({"stream": stream, "tool_choice": "required"}));
            if stream {
                b["stream_options"] = json!({"include_usage": true});
            }
            if !call {
                b.as_object_mut().unwrap().remove("tools");
                b.as_object_mut().unwrap().remove("tool_choice");
            }
            ("/v1/chat/completions", b)
        }
        "responses" => {
            let mut b = json!({"model": "chat", "input": "Weather in Paris?", "stream": stream,
                "max_output_tokens": 200});
            if call {
                b["tools"] = json!([{"type": "function", "name": "get_weather", "parameters": params}]);
                b["tool_choice"] = json!("required");
            }
            ("/v1/responses", b)
        }
        _ => {
            let mut b = json!({"model": "chat", "max_tokens": 200, "stream": stream,
                "messages": [{"role": "user", "content": "Weather in Paris?"}]});
            if call {
                b["tools"] = json!([{"name": "get_weather", "input_schema": params}]);
                b["tool_choice"] = json!({"type": "any"});
            }
            ("/v1/messages", b)
        }
    }
}

/// `(prompt, completion)` as the answer reports them, and the prompt the
/// answer reported before the backend's count came (Anthropic's
/// `message_start`: the gateway's own rendering).
fn reported(api: &str, stream: bool, text: &str) -> ((u64, u64), Option<u64>) {
    let n = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("a count: {text}"));
    match (api, stream) {
        ("chat", false) => {
            let v: Value = serde_json::from_str(text).unwrap();
            let u = &v["usage"];
            assert_eq!(n(&u["total_tokens"]), n(&u["prompt_tokens"]) + n(&u["completion_tokens"]));
            ((n(&u["prompt_tokens"]), n(&u["completion_tokens"])), None)
        }
        ("chat", true) => {
            let last = payloads(text).pop().expect("frames");
            let u = &last["usage"];
            assert_eq!(n(&u["total_tokens"]), n(&u["prompt_tokens"]) + n(&u["completion_tokens"]));
            ((n(&u["prompt_tokens"]), n(&u["completion_tokens"])), None)
        }
        ("responses", _) => {
            let r = match stream {
                false => serde_json::from_str::<Value>(text).unwrap(),
                true => payloads(text).pop().expect("events")["response"].clone(),
            };
            let u = &r["usage"];
            assert_eq!(n(&u["total_tokens"]), n(&u["input_tokens"]) + n(&u["output_tokens"]));
            ((n(&u["input_tokens"]), n(&u["output_tokens"])), None)
        }
        (_, false) => {
            let v: Value = serde_json::from_str(text).unwrap();
            ((n(&v["usage"]["input_tokens"]), n(&v["usage"]["output_tokens"])), None)
        }
        (_, true) => {
            let events = payloads(text);
            let start = events.iter().find(|e| e["type"] == "message_start").expect("message_start");
            let delta = events.iter().find(|e| e["type"] == "message_delta").expect("message_delta");
            let u = &delta["usage"];
            (
                (n(&u["input_tokens"]), n(&u["output_tokens"])),
                Some(n(&start["message"]["usage"]["input_tokens"])),
            )
        }
    }
}

#[test]
fn chat_backend_usage_is_the_backends_own_in_every_dialect() {
    let s = setup();
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = String::new();
    for api in ["chat", "responses", "anthropic"] {
        for call in [false, true] {
            let mut one_shot = None;
            for stream in [false, true] {
                let case = format!("{api} call={call} stream={stream}");
                let (path, body) = ask(api, call, stream);
                let (status, text) = s.ask_at(path, &body);
                assert_eq!(status, 200, "{case}: {text}");
                let sent = s.sent().pop().expect("the backend was asked");
                assert_eq!(sent["stream_options"], json!({"include_usage": true}), "{case}: {sent}");
                let want = backend_usage(&s, &sent);
                assert!(want.1 > 0, "{case}: the replay made output");
                let (got, own_prompt) = reported(api, stream, &text);
                assert_eq!(got, want, "{case}: the backend's (prompt, completion) counts: {text}");
                if let Some(own) = own_prompt {
                    // Sent before the backend counted: the gateway's
                    // rendering, which the closing event corrects.
                    assert_ne!(own, want.0, "{case}: the counts must differ for the test to tell them apart");
                }
                let file = dir.path().join(format!("{}.txt", manifest.lines().count()));
                std::fs::write(&file, &text).unwrap();
                let mut m = json!({"name": case, "api": api, "stream": stream, "path": file});
                if stream && api == "chat" {
                    m["include_usage"] = json!(true);
                }
                manifest.push_str(&(m.to_string() + "\n"));
                // The stream reports what the one-shot answer reported.
                if stream {
                    assert_eq!(one_shot.take(), Some(got), "{case}");
                } else {
                    one_shot = Some(got);
                }
            }
        }
    }
    // The SDKs' types take every answer.
    sdk_validate(dir.path(), &manifest);
}

/// `guided_fields = "llamacpp"` on a chat backend (`chat-llamacpp`, with
/// `grammar_reasoning_chars = 64`): Sift's grammar, reasoning forced, or
/// `json_schema`, with `tool_choice: "none"` and no `response_format`; a
/// constraint that would have to wait for the model's own end marker
/// (`auto` with a strict tool: a lazy grammar, which llama.cpp's chat
/// endpoint does not take from a client) is not sent, and the backend is
/// never asked for its own guided calls.
/// The replay answers the raw text (`<think>…</think><tool_call>…`), which
/// Sift parses.
#[test]
fn chat_backend_that_is_llamacpp_gets_sifts_constraint() {
    let s = setup();
    let off = json!({"enable_thinking": false});
    let rf = json!({"type": "json_schema", "json_schema": {"name": "w", "schema": schema()}});
    let forced = "root ::= \"<think>\" [^<]{0,64} \"</think>\" ws ";
    let named = json!({"type": "function", "function": {"name": "get_weather"}});
    // The request's fields; the grammar's start (or `json_schema`); whether a call comes back.
    let cases = [
        (json!({"tool_choice": "required"}), Some(forced), None, true),
        (json!({"tool_choice": named}), Some(forced), None, true),
        (json!({"tool_choice": "required", "chat_template_kwargs": off}), Some("root ::= call"), None, false),
        (
            json!({"response_format": rf, "tool_choice": "none", "chat_template_kwargs": off}),
            None,
            Some(schema()),
            false,
        ),
        (json!({"tools": [tool(true)]}), None, None, true),
    ];
    for (patch, root, json_schema, call) in cases {
        for stream in [false, true] {
            let mut body = request("chat-llamacpp", &patch);
            body["stream"] = json!(stream);
            let (status, text, sent) = s.exchange(&body);
            assert_eq!(status, 200, "{patch} stream={stream}: {text}");
            let sent = sent.expect("the backend was asked");
            let g = sent.get("grammar").and_then(Value::as_str);
            assert_eq!(
                g.map(|g| root.is_some_and(|r| g.starts_with(r))),
                root.map(|_| true),
                "{patch}: {sent}"
            );
            assert_eq!(sent.get("json_schema"), json_schema.as_ref(), "{patch}: {sent}");
            assert_eq!(sent["tool_choice"], json!("none"), "{patch}: {sent}");
            assert_eq!(sent.get("response_format"), None, "{patch}: {sent}");
            assert_eq!(sent.get("grammar_lazy"), None, "{patch}: {sent}");
            if call {
                let msg = &super::folded(&text, stream)["choices"][0]["message"];
                assert_eq!(msg["tool_calls"][0]["function"]["name"], "get_weather", "{patch}: {text}");
            }
        }
    }
}
