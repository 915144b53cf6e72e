//! Request checks as data (`tests/data/request_checks.json`), the error
//! body's shape, and reading assistant messages.

use llmsift_protocol::{ChatCompletionRequest, CheckOptions, CheckedRequest, ProtocolError};
use serde_json::{json, Map, Value};

fn resolved(c: &CheckedRequest, key: &str) -> Value {
    match key {
        "tool_choice" => json!(c.tool_choice.label()),
        "tools" => json!(c.tools.len()),
        "parallel_tool_calls" => json!(c.parallel_tool_calls),
        "include_reasoning" => json!(c.include_reasoning),
        "stream" => json!(c.stream),
        "include_usage" => json!(c.include_usage),
        "return_token_ids" => json!(c.return_token_ids),
        "n" => json!(c.n),
        "max_tokens" => json!(c.max_tokens),
        "history_tool_calls" => json!(c.history_tool_calls),
        "chat_template_kwargs" => json!(c.chat_template_kwargs),
        other => panic!("unknown expectation {other}"),
    }
}

#[test]
fn request_checks() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/request_checks.json"))
            .unwrap();
    let t: Value = serde_json::from_str(&text).unwrap();
    for case in t["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut body = case["request"].clone();
        if body["tools"] == "tools" {
            body["tools"] = t["tools"].clone();
        }
        if body.get("messages").is_none() {
            body["messages"] = json!([{"role": "user", "content": "hi"}]);
        }
        let mut opts = CheckOptions::default();
        if let Some(o) = case.get("options") {
            if let Some(a) = o.get("auto_tools") {
                opts.auto_tools = a.as_bool().unwrap();
            }
            if let Some(Value::Object(k)) = o.get("default_chat_template_kwargs") {
                opts.default_chat_template_kwargs = Some(k.clone());
            }
        }
        let got = ChatCompletionRequest::from_value(body)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .check_with(&opts);
        match (case.get("expect"), case.get("error"), got) {
            (Some(want), None, Ok(c)) => {
                for (k, v) in want.as_object().unwrap() {
                    assert_eq!(&resolved(&c, k), v, "{name}: {k}");
                }
            }
            (None, Some(want), Err(e)) => {
                let body = e.to_json();
                assert_eq!(e.status(), 400, "{name}");
                assert_eq!(body["error"]["message"], want["message"], "{name}");
                assert_eq!(body["error"]["param"], want["param"], "{name}");
                assert_eq!(body["error"]["type"], "BadRequestError", "{name}");
                assert_eq!(body["error"]["code"], 400, "{name}");
            }
            (_, _, got) => panic!("{name}: unexpected {got:?}"),
        }
    }
}

#[test]
fn skip_special_tokens_as_vllm_decides() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/skip_special_tokens.json"))
            .unwrap();
    let t: Value = serde_json::from_str(&text).unwrap();
    let mut wrong = vec![];
    for case in t["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let reg = llmsift_core::Registry::builtin();
        let f = reg.factory(case["reasoning_parser"].as_str(), case["tool_parser"].as_str()).unwrap();
        let mut body = case["request"].clone();
        body["messages"] = json!([{"role": "user", "content": "hi"}]);
        let c = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
        let want = case.get("sift_skip").unwrap_or(&case["skip"]).as_bool().unwrap();
        if c.skips_special_tokens(&f) != want {
            wrong.push(format!("{name}: vLLM skips {} ({})", case["skip"], case["why"]));
        }
    }
    assert!(wrong.is_empty(), "{} differ:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn error_body_is_openai_shaped() {
    let e = ProtocolError::ToolChoiceWithoutTools;
    assert_eq!(
        e.to_json(),
        json!({"error": {
            "message": "When using `tool_choice`, `tools` must be set.",
            "type": "BadRequestError",
            "param": "tool_choice",
            "code": 400
        }})
    );
    assert_eq!(e.to_string(), "When using `tool_choice`, `tools` must be set.");
}

#[test]
fn bodies_that_are_not_requests() {
    for body in ["not json", "[]", r#"{"messages": 3}"#, r#"{"messages": [], "tools": [{"function": {}}]}"#] {
        let e = ChatCompletionRequest::from_json(body).unwrap_err();
        assert!(matches!(e, ProtocolError::InvalidBody { .. }), "{body}");
        assert_eq!(e.status(), 400);
        assert_eq!(e.to_json()["error"]["param"], Value::Null);
    }
}

#[test]
fn assistant_reasoning_in_either_spelling() {
    let r = ChatCompletionRequest::from_json(
        r#"{"messages": [{"role": "assistant", "reasoning_content": "old"}, {"role": "assistant", "reasoning": "new"}]}"#,
    )
    .unwrap();
    assert_eq!(r.messages[0].reasoning(), Some("old"));
    assert_eq!(r.messages[1].reasoning(), Some("new"));
    // Written back under the current name only.
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["messages"][0], json!({"role": "assistant"}));
    assert_eq!(v["messages"][1], json!({"role": "assistant", "reasoning": "new"}));
}

#[test]
fn to_core_carries_the_parsing_fields() {
    let body = json!({
        "messages": [],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}}],
        "tool_choice": "required",
        "include_reasoning": false,
        "chat_template_kwargs": {"enable_thinking": false},
        "reasoning_effort": "low"
    });
    let mut c = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    c.prompt = Some("<|im_start|>assistant\n<think>\n".into());
    c.id_seed = Some(9);
    let r = c.to_core();
    assert_eq!(r.tool_choice, llmsift_core::ToolChoice::Required);
    assert!(!r.include_reasoning);
    assert_eq!(r.tools.param_type("f", "n"), llmsift_core::ParamType::Integer);
    let mut k = Map::new();
    k.insert("enable_thinking".into(), json!(false));
    assert_eq!(r.chat_template_kwargs, Some(Value::Object(k)));
    assert_eq!(r.reasoning_effort.as_deref(), Some("low"));
    assert_eq!(r.prompt.as_deref(), Some("<|im_start|>assistant\n<think>\n"));
    assert_eq!(r.id_seed, Some(9));
}
