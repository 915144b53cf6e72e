//! The protocol rules as a table (`tests/data/protocol_table.json`): every
//! row is answered one-shot and streamed, and both must give the row's
//! expected message and `finish_reason`.

use llmsift_protocol::{
    chat, sse, Api, ChatCompletionRequest, ChoiceProcessor, FinishReason, Options, ResponseMeta, Session,
};
use serde_json::{json, Value};

fn table() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/protocol_table.json"))
            .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The request body of a row.
fn body(t: &Value, row: &Value, stream: bool) -> Value {
    let mut b = json!({
        "model": "m",
        "messages": [{"role": "user", "content": "Weather and time in Paris?"}],
        "logprobs": true,
        "return_token_ids": true,
        "parallel_tool_calls": row["parallel_tool_calls"],
        "include_reasoning": row["include_reasoning"],
    });
    match row["tool_choice"].as_str().unwrap() {
        "absent" => b["tools"] = t["tools"].clone(),
        "absent_no_tools" => {}
        "named" => {
            b["tools"] = t["tools"].clone();
            b["tool_choice"] = json!({"type": "function", "function": {"name": "get_weather"}});
        }
        mode => {
            b["tools"] = t["tools"].clone();
            b["tool_choice"] = json!(mode);
        }
    }
    if stream {
        b["stream"] = json!(true);
        b["stream_options"] = json!({"include_usage": true});
    }
    b
}

/// Cuts `s` into pieces of at most `n` bytes on char boundaries.
fn pieces(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

fn options() -> Options {
    // The ids below are stand-ins (one per delta), not a vocabulary's.
    Options { match_markers_by_id: false, ..Options::default() }
}

fn meta() -> ResponseMeta {
    ResponseMeta { id: "chatcmpl-table".into(), model: "m".into(), created: 1, prompt_tokens: 7 }
}

/// The message part of a row's expectation, in response form.
fn expected_message(t: &Value, row: &Value) -> Value {
    let e = &row["expect"];
    let calls: Vec<Value> = e["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| json!({"name": n, "arguments": t["calls"][n.as_str().unwrap()]}))
        .collect();
    json!({"reasoning": e["reasoning"], "content": e["content"], "calls": calls})
}

/// A response message reduced to what the table states (ids are checked apart).
fn reduce(m: &Value) -> Value {
    let calls: Vec<Value> = m["tool_calls"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| json!({"name": c["function"]["name"], "arguments": c["function"]["arguments"]}))
                .collect()
        })
        .unwrap_or_default();
    json!({"reasoning": m["reasoning"], "content": m["content"], "calls": calls})
}

fn check_id(id: &str, what: &str) {
    let hex = id.strip_prefix("chatcmpl-tool-").unwrap_or_else(|| panic!("{what}: id {id}"));
    assert!(hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()), "{what}: id {id}");
}

#[test]
fn protocol_table() {
    let t = table();
    let factory = llmsift_core::Registry::builtin()
        .factory(t["reasoning_parser"].as_str(), t["tool_call_parser"].as_str())
        .unwrap();
    let cases = t["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 48);
    for row in cases {
        let what = format!(
            "tool_choice={} parallel={} include_reasoning={} finish={}",
            row["tool_choice"], row["parallel_tool_calls"], row["include_reasoning"], row["finish"]
        );
        let output = t["outputs"][row["output"].as_str().unwrap()].as_str().unwrap();
        let finish = FinishReason::parse(row["finish"].as_str().unwrap()).unwrap();
        let hidden = !row["include_reasoning"].as_bool().unwrap();
        let want = expected_message(&t, row);
        let want_finish = &row["expect"]["finish_reason"];

        // One-shot.
        let mut req = ChatCompletionRequest::from_value(body(&t, row, false)).unwrap().check().unwrap();
        req.id_seed = Some(42);
        let ids: Vec<u32> = (0..output.len() as u32).collect();
        let choice = ChoiceProcessor::new(&factory, &req, &options()).complete(
            output,
            Some(&ids),
            Some(json!({"content": []})),
            finish,
        );
        let resp = serde_json::to_value(chat::response(&meta(), Default::default(), &[choice])).unwrap();
        let c = &resp["choices"][0];
        assert_eq!(reduce(&c["message"]), want, "one-shot {what}");
        assert_eq!(&c["finish_reason"], want_finish, "one-shot {what}");
        assert_eq!(c["logprobs"].is_null(), hidden, "one-shot logprobs {what}");
        assert_eq!(c.get("token_ids").is_none(), hidden, "one-shot token_ids {what}");
        assert_eq!(resp["usage"]["completion_tokens"], json!(output.len()), "{what}");
        for call in c["message"]["tool_calls"].as_array().into_iter().flatten() {
            check_id(call["id"].as_str().unwrap(), &what);
        }

        // Streamed, under two cuts.
        for n in [1, 5] {
            let mut req = ChatCompletionRequest::from_value(body(&t, row, true)).unwrap().check().unwrap();
            req.id_seed = Some(42);
            let mut s = Session::new(Api::Chat, &factory, &req, &meta(), &options());
            let parts = pieces(output, n);
            let mut frames = Vec::new();
            for (k, p) in parts.iter().enumerate() {
                let lp = json!({"content": [{"token": p, "logprob": -0.5}]});
                frames.extend(s.push(p, Some(&[k as u32]), Some(lp)));
            }
            frames.extend(s.finish(finish));
            let what = format!("streamed by {n}: {what}");
            let folded = fold(&frames, hidden, !row["parallel_tool_calls"].as_bool().unwrap(), &what);
            assert_eq!(reduce(&folded["message"]), want, "{what}");
            assert_eq!(&folded["finish_reason"], want_finish, "{what}");
            assert_eq!(folded["usage"]["completion_tokens"], json!(parts.len()), "{what}");
            // Same seed: the same ids as one-shot.
            assert_eq!(folded["message"]["tool_calls"], c["message"]["tool_calls"], "ids {what}");
        }
    }
}

/// Folds a Chat Completions SSE stream the way a client does, checking the
/// stream's shape on the way.
fn fold(frames: &[String], hidden: bool, single_call: bool, what: &str) -> Value {
    let text: String = frames.concat();
    let parsed = sse::parse(&text);
    assert_eq!(parsed.last().unwrap().1, "[DONE]", "{what}");
    let chunks: Vec<Value> =
        parsed[..parsed.len() - 1].iter().map(|(_, d)| serde_json::from_str(d).unwrap()).collect();
    assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}), "{what}");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]), "usage chunk {what}");
    let body = &chunks[..chunks.len() - 1];
    let (mut reasoning, mut content) = (String::new(), String::new());
    let mut calls: Vec<Value> = Vec::new();
    let mut finish = Value::Null;
    let mut saw_meta = false;
    for (i, ch) in body.iter().enumerate() {
        assert_eq!(ch["object"], "chat.completion.chunk");
        let c = &ch["choices"][0];
        let last = i == body.len() - 1;
        assert_eq!(c["finish_reason"].is_null(), !last, "finish_reason only on the last chunk: {what}");
        if last {
            finish = c["finish_reason"].clone();
        }
        let d = &c["delta"];
        if hidden {
            assert!(d.get("reasoning").is_none(), "reasoning leaked: {what}");
            assert!(c["logprobs"].is_null() && c.get("token_ids").is_none(), "metadata leaked: {what}");
        } else if !c["logprobs"].is_null() && c.get("token_ids").is_some() {
            saw_meta = true;
        }
        if i > 0 {
            assert!(d.get("role").is_none(), "{what}");
        }
        if let Some(r) = d.get("reasoning") {
            reasoning.push_str(r.as_str().unwrap());
        }
        if let Some(x) = d.get("content") {
            content.push_str(x.as_str().unwrap());
        }
        for tc in d["tool_calls"].as_array().into_iter().flatten() {
            let idx = tc["index"].as_u64().unwrap() as usize;
            assert!(!single_call || idx == 0, "parallel_tool_calls=false let index {idx} through: {what}");
            if idx == calls.len() {
                assert!(
                    tc.get("id").is_some() && tc["function"].get("name").is_some(),
                    "first fragment: {what}"
                );
                assert_eq!(tc["type"], "function");
                calls.push(json!({"id": tc["id"], "type": "function", "function": {"name": tc["function"]["name"], "arguments": ""}}));
            } else {
                assert!(
                    tc.get("id").is_none() && tc["function"].get("name").is_none(),
                    "later fragment: {what}"
                );
            }
            let args = calls[idx]["function"]["arguments"].as_str().unwrap().to_string()
                + tc["function"]["arguments"].as_str().unwrap_or("");
            calls[idx]["function"]["arguments"] = json!(args);
        }
    }
    assert!(hidden || saw_meta, "logprobs and token_ids expected: {what}");
    let opt = |s: String| if s.is_empty() { Value::Null } else { json!(s) };
    let mut message = json!({"reasoning": opt(reasoning), "content": opt(content)});
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    json!({"message": message, "finish_reason": finish, "usage": usage["usage"]})
}
