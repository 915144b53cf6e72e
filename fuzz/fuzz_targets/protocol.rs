//! (d) The request checks and the three dialects. The input's first line
//! is a request body (JSON), the second the parser pair, the rest the model
//! output. Checks: a body is a typed error or a checked request, never a
//! panic; a checked request answers in Chat Completions, Responses and
//! Anthropic Messages, streamed (in cuts) and one-shot, without a panic,
//! and the Responses stream's final `response` is the one-shot response.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use llmsift_core::Registry;
use llmsift_protocol::{complete, sse, Api, ChatCompletionRequest, FinishReason, Options, ResponseMeta, Session};

/// The answer without its generated ids (random per run without a seed).
fn no_ids(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(items) = v.get_mut("output").and_then(|o| o.as_array_mut()) {
        for it in items.iter_mut().filter_map(|i| i.as_object_mut()) {
            it.remove("id");
            it.remove("call_id");
        }
    }
    v
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(3, '\n');
    let (body, pair, output) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    let Ok(req) = ChatCompletionRequest::from_json(body) else { return };
    let Ok(req) = req.check() else { return };
    let r = Registry::builtin();
    let mut w = pair.split(' ');
    let rn = w.next().filter(|n| r.reasoning(n).is_ok());
    let tn = w.next().filter(|n| r.tool(n).is_ok());
    let f = r.factory(rn, tn).expect("registered names");
    let meta = ResponseMeta { id: "fuzz".into(), model: "m".into(), created: 1, prompt_tokens: 3 };
    let opts = Options::default();
    let engine = if common::hash(data) & 1 == 0 { FinishReason::Stop } else { FinishReason::Length };
    let cut = common::pieces(output, common::hash(data));
    for api in [Api::Chat, Api::Responses, Api::Anthropic] {
        let one = complete(api, &f, &req, &meta, &opts, output, None, engine);
        let mut s = Session::new(api, &f, &req, &meta, &opts);
        let mut frames = vec![];
        for p in &cut {
            frames.extend(s.push(p, None, None));
        }
        frames.extend(s.finish(engine));
        if api == Api::Responses {
            let events = sse::parse(&frames.concat());
            let last = events.iter().rev().find(|(_, d)| d != "[DONE]").expect("a final event");
            let v: serde_json::Value = serde_json::from_str(&last.1).expect("an event is JSON");
            assert_eq!(no_ids(v["response"].clone()), no_ids(one), "responses: streamed differs from one-shot");
        }
    }
});
