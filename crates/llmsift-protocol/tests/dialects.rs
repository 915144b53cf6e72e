//! One reasoning + content + call example in every dialect, one-shot and
//! streamed, against expected JSON files (`tests/data/dialects/`; rewrite
//! them with `SIFT_BLESS=1`). Also: the one-shot answer of each dialect is
//! its folded stream, SSE framing, the `reasoning_content` option, call ids
//! per family, and usage with a reasoning counter.

use serde_json::{json, Value};

mod common;
use common::fold_anthropic;
use llmsift_protocol::{
    complete, sse, Api, ChatCompletionRequest, CheckedRequest, FinishReason, IdStyle, Options,
    ReasoningField, ResponseMeta, Session,
};

const OUTPUT: &str = "The user wants Paris weather; one call will do.</think>\n\nLet me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";

fn request(stream: bool) -> CheckedRequest {
    let mut body = json!({
        "model": "qwen3-coder",
        "messages": [{"role": "user", "content": "Weather in Paris for 3 days?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    });
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    let mut r = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    r.id_seed = Some(7);
    r
}

fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "chatcmpl-dialects".into(),
        model: "qwen3-coder".into(),
        created: 1_700_000_000,
        prompt_tokens: 21,
    }
}

fn factory() -> llmsift_core::ParserFactory {
    llmsift_core::Registry::builtin().factory(Some("qwen3"), Some("qwen3_coder")).unwrap()
}

/// The stream of `api` over fixed 9-byte deltas, as `[event?, data]` frames.
fn stream(api: Api, opts: &Options) -> Vec<Value> {
    let f = factory();
    let mut s = Session::new(api, &f, &request(true), &meta(), opts);
    let mut frames = Vec::new();
    let mut rest = OUTPUT;
    while !rest.is_empty() {
        let mut n = 9.min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        frames.extend(s.push(&rest[..n], None, None));
        rest = &rest[n..];
    }
    frames.extend(s.finish(FinishReason::Stop));
    sse::parse(&frames.concat())
        .into_iter()
        .map(|(event, data)| {
            let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
            match event {
                Some(e) => json!({"event": e, "data": data}),
                None => data,
            }
        })
        .collect()
}

fn one_shot(api: Api, opts: &Options) -> Value {
    complete(api, &factory(), &request(false), &meta(), opts, OUTPUT, None, FinishReason::Stop)
}

fn expect_file(name: &str, got: &Value) {
    let path = format!("{}/tests/data/dialects/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let pretty = serde_json::to_string_pretty(got).unwrap() + "\n";
    if std::env::var_os("SIFT_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
        std::fs::write(&path, &pretty).unwrap();
        return;
    }
    let want =
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{path} missing: run with SIFT_BLESS=1"));
    let want: Value = serde_json::from_str(&want).unwrap();
    assert_eq!(got, &want, "{name} differs from {path}\n{pretty}");
}

#[test]
fn chat_completions() {
    let opts = Options::default();
    let one = one_shot(Api::Chat, &opts);
    expect_file("chat", &one);
    expect_file("chat_stream", &Value::Array(stream(Api::Chat, &opts)));
    let m = &one["choices"][0]["message"];
    assert_eq!(m["reasoning"], "The user wants Paris weather; one call will do.");
    assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(one["choices"][0]["finish_reason"], "tool_calls");
}

#[test]
fn responses_api() {
    let opts = Options::default();
    let one = one_shot(Api::Responses, &opts);
    expect_file("responses", &one);
    let events = stream(Api::Responses, &opts);
    expect_file("responses_stream", &Value::Array(events.clone()));
    // The stream's last event carries exactly the one-shot response.
    let last = events.last().unwrap();
    assert_eq!(last["event"], "response.completed");
    assert_eq!(last["data"]["response"], one);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["data"]["sequence_number"], json!(i));
        assert_eq!(e["event"], e["data"]["type"]);
    }
    let kinds: Vec<&str> =
        one["output"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["reasoning", "message", "function_call"]);
}

#[test]
fn anthropic_messages() {
    let opts = Options::default();
    let one = one_shot(Api::Anthropic, &opts);
    expect_file("anthropic", &one);
    let events = stream(Api::Anthropic, &opts);
    expect_file("anthropic_stream", &Value::Array(events.clone()));
    assert_eq!(one["stop_reason"], "tool_use");
    let kinds: Vec<&str> =
        one["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"]);
    assert_eq!(one["content"][2]["input"], json!({"city": "Paris", "days": 3}));
    // Folding the events gives the one-shot message.
    assert_eq!(fold_anthropic(&events), one);
}

#[test]
fn dialects_agree_without_reasoning() {
    // include_reasoning=false reaches every dialect through the same steps.
    let mut r = request(false);
    r.include_reasoning = false;
    let f = factory();
    let (m, o) = (meta(), Options::default());
    let chat = complete(Api::Chat, &f, &r, &m, &o, OUTPUT, None, FinishReason::Stop);
    assert_eq!(chat["choices"][0]["message"]["reasoning"], Value::Null);
    let resp = complete(Api::Responses, &f, &r, &m, &o, OUTPUT, None, FinishReason::Stop);
    assert!(resp["output"].as_array().unwrap().iter().all(|i| i["type"] != "reasoning"));
    let anth = complete(Api::Anthropic, &f, &r, &m, &o, OUTPUT, None, FinishReason::Stop);
    assert!(anth["content"].as_array().unwrap().iter().all(|b| b["type"] != "thinking"));
}

#[test]
fn length_in_every_dialect() {
    let f = factory();
    let (r, m, o) = (request(false), meta(), Options::default());
    let cut = &OUTPUT[..OUTPUT.find("<parameter=days>").unwrap()];
    let chat = complete(Api::Chat, &f, &r, &m, &o, cut, None, FinishReason::Length);
    assert_eq!(chat["choices"][0]["finish_reason"], "length");
    let resp = complete(Api::Responses, &f, &r, &m, &o, cut, None, FinishReason::Length);
    assert_eq!(resp["status"], "incomplete");
    assert_eq!(resp["incomplete_details"], json!({"reason": "max_output_tokens"}));
    let anth = complete(Api::Anthropic, &f, &r, &m, &o, cut, None, FinishReason::Length);
    assert_eq!(anth["stop_reason"], "max_tokens");
}

#[test]
fn sse_framing() {
    let frames = {
        let f = factory();
        let mut s = Session::new(Api::Chat, &f, &request(true), &meta(), &Options::default());
        let mut v = s.push(OUTPUT, None, None);
        v.extend(s.finish(FinishReason::Stop));
        v
    };
    for fr in &frames {
        assert!(fr.starts_with("data: ") && fr.ends_with("\n\n"), "{fr:?}");
        assert_eq!(fr.matches('\n').count(), 2, "one line per frame: {fr:?}");
    }
    assert_eq!(frames.last().unwrap(), "data: [DONE]\n\n");
    let usage: Value = serde_json::from_str(&frames[frames.len() - 2][6..]).unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 21);

    let f = factory();
    let mut s = Session::new(Api::Anthropic, &f, &request(true), &meta(), &Options::default());
    let mut v = s.push(OUTPUT, None, None);
    v.extend(s.finish(FinishReason::Stop));
    assert!(v[0].starts_with("event: message_start\ndata: {\"type\":\"message_start\""));
    assert_eq!(v.last().unwrap(), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    assert!(v.iter().all(|f| !f.contains("[DONE]")));
    // Nothing after the end.
    assert!(s.finish(FinishReason::Stop).is_empty());
    assert!(s.push("more", None, None).is_empty());
}

#[test]
fn reasoning_content_option() {
    let opts = Options { reasoning_field: ReasoningField::ReasoningContent, ..Options::default() };
    let one = one_shot(Api::Chat, &opts);
    let m = &one["choices"][0]["message"];
    assert_eq!(m["reasoning_content"], "The user wants Paris weather; one call will do.");
    assert!(m.get("reasoning").is_none());
    let frames = stream(Api::Chat, &opts);
    let keys: Vec<String> = frames
        .iter()
        .filter_map(|f| f["choices"][0]["delta"].as_object())
        .flat_map(|d| d.keys().cloned().collect::<Vec<_>>())
        .collect();
    assert!(keys.iter().any(|k| k == "reasoning_content"));
    assert!(!keys.iter().any(|k| k == "reasoning"));
}

#[test]
fn kimi_ids_count_on_from_the_conversation() {
    let f = llmsift_core::Registry::builtin().factory(Some("kimi_k2"), Some("kimi_k2")).unwrap();
    let body = json!({
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "tool_calls": [
                {"id": "functions.get_weather:0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
                {"id": "functions.get_time:1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "sun"},
            {"role": "user", "content": "again"}
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather"}}, {"type": "function", "function": {"name": "get_time"}}]
    });
    let req = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    assert_eq!(req.history_tool_calls, 2);
    let out = "Again.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
    let opts = Options { id_style: IdStyle::for_tool_parser(Some("kimi_k2")), ..Options::default() };
    let one = complete(Api::Chat, &f, &req, &meta(), &opts, out, None, FinishReason::Stop);
    let ids: Vec<&str> = one["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["functions.get_weather:2", "functions.get_time:3"]);
    // Streamed: the same ids in the first fragments.
    let mut s = Session::new(Api::Chat, &f, &req, &meta(), &opts);
    let mut frames: Vec<String> = out
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap())
        .flat_map(|c| s.push(c, None, None))
        .collect();
    frames.extend(s.finish(FinishReason::Stop));
    let text = frames.concat();
    assert!(
        text.contains("\"id\":\"functions.get_weather:2\"")
            && text.contains("\"id\":\"functions.get_time:3\"")
    );
    // Required (written in Kimi's own format, which vLLM's kimi_k2 parses as
    // auto): the model's index is replaced by the conversation's count.
    let body = json!({"messages": [], "tools": [{"type": "function", "function": {"name": "get_weather"}}], "tool_choice": "required"});
    let req = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    let one = complete(
        Api::Chat,
        &f,
        &req,
        &meta(),
        &opts,
        "Hm.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:7<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        None,
        FinishReason::Stop,
    );
    assert_eq!(one["choices"][0]["message"]["tool_calls"][0]["id"], "functions.get_weather:0");
}

#[test]
fn usage_counts_reasoning_tokens_on_ids() {
    // A stand-in vocabulary: the markers are single tokens, text is one token per char.
    let vocab = |m: &str| match m {
        "<think>" => Some(1),
        "</think>" => Some(2),
        "<tool_call>" => Some(3),
        "</tool_call>" => Some(4),
        _ => None,
    };
    let f = llmsift_core::Registry::builtin()
        .factory(Some("qwen3"), Some("hermes"))
        .unwrap()
        .bind(&vocab)
        .unwrap();
    let out = "abc</think>de<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let mut pieces: Vec<(String, u32)> = Vec::new();
    let mut rest = out;
    while !rest.is_empty() {
        let marker = ["</think>", "<tool_call>", "</tool_call>"].into_iter().find(|m| rest.starts_with(m));
        match marker {
            Some(m) => {
                pieces.push((m.to_string(), vocab(m).unwrap()));
                rest = &rest[m.len()..];
            }
            None => {
                let c = rest.chars().next().unwrap();
                pieces.push((c.to_string(), 100 + c as u32));
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    let body = json!({"messages": [], "stream": true, "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {"name": "f"}}]});
    let req = ChatCompletionRequest::from_value(body).unwrap().check().unwrap();
    let mut s = Session::new(Api::Chat, &f, &req, &meta(), &Options::default());
    let mut frames: Vec<String> = pieces.iter().flat_map(|(t, id)| s.push(t, Some(&[*id]), None)).collect();
    frames.extend(s.finish(FinishReason::Stop));
    let usage: Value = serde_json::from_str(&frames[frames.len() - 2][6..]).unwrap();
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 21, "completion_tokens": pieces.len(), "total_tokens": 21 + pieces.len(),
               "completion_tokens_details": {"reasoning_tokens": 3}})
    );
    assert!(frames.concat().contains("\"finish_reason\":\"tool_calls\""));
    // One-shot: the same counts.
    let req = ChatCompletionRequest::from_value(
        json!({"messages": [], "tools": [{"type": "function", "function": {"name": "f"}}]}),
    )
    .unwrap()
    .check()
    .unwrap();
    let ids: Vec<u32> = pieces.iter().map(|p| p.1).collect();
    let one =
        complete(Api::Chat, &f, &req, &meta(), &Options::default(), out, Some(&ids), FinishReason::Stop);
    assert_eq!(one["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
    assert_eq!(one["choices"][0]["message"]["reasoning"], "abc");
    // Without a vocabulary there is nothing to count on: no details.
    let plain = factory();
    let one = complete(Api::Chat, &plain, &req, &meta(), &Options::default(), out, None, FinishReason::Stop);
    assert!(one["usage"].get("completion_tokens_details").is_none());
}

#[test]
fn mistral_ids_for_calls_the_parser_makes() {
    // ernie45 reads a named tool_choice as the JSON arguments, whose call the
    // serving layer makes (a `chatcmpl-tool-` id even with Mistral's style).
    let f = llmsift_core::Registry::builtin().factory(None, Some("ernie45")).unwrap();
    let opts = Options { id_style: IdStyle::Mistral, ..Options::default() };
    let tools = json!([{"type": "function", "function": {"name": "f"}}]);
    let out = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
    let auto =
        ChatCompletionRequest::from_value(json!({"messages": [], "tools": tools})).unwrap().check().unwrap();
    let one = complete(Api::Chat, &f, &auto, &meta(), &opts, out, None, FinishReason::Stop);
    let id = one["choices"][0]["message"]["tool_calls"][0]["id"].as_str().unwrap();
    assert!(id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
    let named = json!({"messages": [], "tools": tools, "tool_choice": {"type": "function", "function": {"name": "f"}}});
    let named = ChatCompletionRequest::from_value(named).unwrap().check().unwrap();
    let one = complete(Api::Chat, &f, &named, &meta(), &opts, "{}", None, FinishReason::Stop);
    let id = one["choices"][0]["message"]["tool_calls"][0]["id"].as_str().unwrap();
    assert!(id.starts_with("chatcmpl-tool-"), "{id}");
    assert_eq!(one["choices"][0]["finish_reason"], "stop");
}

#[test]
fn abort_in_every_dialect() {
    let f = factory();
    let (r, m, o) = (request(false), meta(), Options::default());
    let chat = complete(Api::Chat, &f, &r, &m, &o, OUTPUT, None, FinishReason::Abort);
    assert_eq!(chat["choices"][0]["finish_reason"], "abort");
    let resp = complete(Api::Responses, &f, &r, &m, &o, OUTPUT, None, FinishReason::Abort);
    assert_eq!(resp["status"], "cancelled");
    let anth = complete(Api::Anthropic, &f, &r, &m, &o, OUTPUT, None, FinishReason::Abort);
    assert_eq!(anth["stop_reason"], Value::Null);
}

#[test]
fn text_after_a_call_keeps_the_order_and_the_call_whole() {
    // The call's arguments come with the text written after it: they still
    // go to the call's own item, and one-shot lists the items as the stream does.
    let text = "<tool_call><function=get_weather></think></tool_call>¡";
    let cut = text.find("</think>").unwrap();
    let f = factory();
    let (m, o) = (meta(), Options::default());
    for api in [Api::Responses, Api::Anthropic] {
        let mut s = Session::new(api, &f, &request(true), &m, &o);
        let mut frames = s.push(&text[..cut], None, None);
        frames.extend(s.push(&text[cut..], None, None));
        frames.extend(s.finish(FinishReason::Stop));
        let events: Vec<Value> = sse::parse(&frames.concat())
            .into_iter()
            .filter(|(_, d)| d != "[DONE]")
            .map(|(e, d)| json!({"event": e, "data": serde_json::from_str::<Value>(&d).unwrap()}))
            .collect();
        let one = complete(api, &f, &request(false), &m, &o, text, None, FinishReason::Stop);
        let streamed = match api {
            Api::Responses => events.last().unwrap()["data"]["response"].clone(),
            _ => fold_anthropic(&events),
        };
        assert_eq!(streamed, one, "{api}");
        let items = if api == Api::Responses { &one["output"] } else { &one["content"] };
        let kinds: Vec<&str> =
            items.as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
        let want = if api == Api::Responses { ["function_call", "message"] } else { ["tool_use", "text"] };
        assert_eq!(kinds, want, "{api}");
    }
}
