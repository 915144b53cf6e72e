//! Properties of the protocol layer over every registered parser pair:
//! for any output (random "marker soup" of the pair's spellings, JSON and
//! arbitrary characters), any cut, and any mix of `tool_choice`, tools,
//! `parallel_tool_calls`, `include_reasoning` and thinking switches,
//! - the streamed choice folds to exactly the one-shot message and reason;
//! - `finish_reason` is `tool_calls` exactly when calls were sent (and the
//!   choice was not a named function);
//! - `include_reasoning: false` hides reasoning in every step;
//! - `tool_choice: none` sends no call, `parallel_tool_calls: false` at most
//!   one, a named choice only that function (unless the family writes a
//!   named choice in its own format, where vLLM returns what it wrote);
//! - every call has an id, a non-empty name, and JSON arguments;
//! - in the Responses and Anthropic dialects, the stream folds to exactly
//!   the one-shot answer: the same items (blocks) in the same order, added
//!   in output order; items (blocks) never overlap: one is open at a time,
//!   as both APIs stream them.
//!
//! `SIFT_FUZZ_CASES=N` runs N cases instead of the default 256.

use llmsift_core::{Folder, Message, ParserFactory, Registry};
use llmsift_protocol::{
    complete, sse, Api, ChatCompletionRequest, CheckedRequest, ChoiceProcessor, FinishReason, Options,
    ResponseMeta, Session,
};
use proptest::prelude::*;
use serde_json::{json, Value};

mod common;
use std::sync::OnceLock;

struct Pair {
    factory: ParserFactory,
    frags: Vec<String>,
}

fn pairs() -> &'static Vec<Pair> {
    static P: OnceLock<Vec<Pair>> = OnceLock::new();
    P.get_or_init(|| {
        let r = Registry::builtin();
        let mut rs: Vec<Option<&str>> = r.reasoning_names().map(Some).collect();
        rs.push(None);
        let ts: Vec<&str> = r.tool_names().collect();
        let mut out = vec![];
        for rn in &rs {
            for tn in &ts {
                let factory = r.factory(*rn, Some(tn)).expect("built-in pair compiles");
                let mut frags: Vec<String> = factory.format().spellings().map(str::to_string).collect();
                for f in [
                    "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
                    "[{\"name\": \"f\", \"parameters\": {\"x\": 1}}]",
                    "{\"x\": 1}",
                    "{\"name\": \"\", \"arguments\": {}}",
                    "get_weather",
                    "{",
                    "}",
                    "\"",
                    "\n",
                    "functions.get_weather:0",
                    "words ",
                ] {
                    frags.push(f.to_string());
                }
                out.push(Pair { factory, frags });
            }
        }
        out
    })
}

fn cases() -> u32 {
    std::env::var("SIFT_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

/// A request body from the bits of `knobs`.
fn request(knobs: u16) -> CheckedRequest {
    let tools = json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
            "properties": {"x": {"type": "integer"}}}}}
    ]);
    let mut b = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    if knobs & 1 == 0 {
        b["tools"] = tools;
        match (knobs >> 1) & 7 {
            0 => {}
            1 => b["tool_choice"] = json!("none"),
            2 => b["tool_choice"] = json!("auto"),
            3 => b["tool_choice"] = json!("required"),
            _ => b["tool_choice"] = json!({"type": "function", "function": {"name": "get_weather"}}),
        }
    }
    if knobs & 0x10 != 0 {
        b["parallel_tool_calls"] = json!(false);
    }
    if knobs & 0x20 != 0 {
        b["include_reasoning"] = json!(false);
    }
    match (knobs >> 6) & 3 {
        1 => b["chat_template_kwargs"] = json!({"enable_thinking": false}),
        2 => b["chat_template_kwargs"] = json!({"thinking": true}),
        _ => {}
    }
    let mut req = ChatCompletionRequest::from_value(b).unwrap().check().expect("a valid request");
    req.id_seed = Some(3);
    req
}

/// A random output of `pair`: characters and the pair's own fragments.
fn soup(pair: &Pair, picks: &[(prop::sample::Index, char, u8)]) -> String {
    let mut text = String::new();
    for (i, ch, kind) in picks {
        match kind {
            0 => text.push(*ch),
            _ => text.push_str(&pair.frags[i.index(pair.frags.len())]),
        }
    }
    text
}

/// `text` cut at `cuts` (sorted, moved to char boundaries), the last piece
/// possibly empty.
fn pieces<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut sorted = cuts.to_vec();
    sorted.sort_unstable();
    let (mut out, mut start) = (vec![], 0);
    for c in sorted {
        let mut c = c.min(text.len());
        while !text.is_char_boundary(c) {
            c += 1;
        }
        if c > start {
            out.push(&text[start..c]);
            start = c;
        }
    }
    out.push(&text[start..]);
    out
}

fn fold(steps: &[llmsift_protocol::Step]) -> Message {
    let mut f = Folder::default();
    for s in steps {
        f.push(&s.delta);
    }
    f.finish()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn streamed_choices_keep_the_protocol_rules(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..4), 0..30),
        cuts in prop::collection::vec(0usize..300, 0..12),
        knobs in any::<u16>(),
        pick in any::<prop::sample::Index>(),
        truncated in any::<bool>(),
    ) {
        let pair = &pairs()[pick.index(pairs().len())];
        let text = soup(pair, &picks);
        let req = request(knobs);
        let engine = if truncated { FinishReason::Length } else { FinishReason::Stop };
        let name = pair.factory.format().name().to_string();
        let opts = Options::default();

        let one = ChoiceProcessor::new(&pair.factory, &req, &opts).complete(&text, None, None, engine);

        let mut p = ChoiceProcessor::new(&pair.factory, &req, &opts);
        let mut steps = vec![];
        for piece in pieces(&text, &cuts) {
            steps.extend(p.push(piece, None, None));
        }
        let last = p.finish(engine);
        let reason = last.finish_reason;
        steps.push(last);
        let streamed = fold(&steps);

        prop_assert_eq!(&streamed, &one.message, "{} {:?} knobs {:#x}", name, text, knobs);
        prop_assert_eq!(reason, Some(one.finish_reason), "{} {:?}", name, text);
        let m = &one.message;
        let named = req.is_named();
        // A call the output's end cut keeps its arguments as written (not
        // JSON, issue 23): it is the last one, and the finish is `length`.
        let cut = m.tool_calls.last().is_some_and(|c| serde_json::from_str::<Value>(&c.arguments).is_err());
        let want = if cut && engine == FinishReason::Stop {
            FinishReason::Length
        } else if !m.tool_calls.is_empty() && !named && engine == FinishReason::Stop {
            FinishReason::ToolCalls
        } else {
            engine
        };
        prop_assert_eq!(one.finish_reason, want, "{} {:?} knobs {:#x}", name, text, knobs);
        if !req.include_reasoning {
            prop_assert!(m.reasoning.is_none() && steps.iter().all(|s| s.delta.reasoning.is_empty()),
                "reasoning shown: {} {:?}", name, text);
        }
        if !req.wants_calls() {
            prop_assert!(m.tool_calls.is_empty(), "calls with tool_choice none: {} {:?}", name, text);
        }
        if !req.parallel_tool_calls {
            prop_assert!(m.tool_calls.len() <= 1, "parallel_tool_calls false: {} {:?}", name, text);
        }
        for (i, c) in m.tool_calls.iter().enumerate() {
            // A call that never got a name is content or dropped, never a
            // call (even where vLLM's parser answers one named "").
            prop_assert!(!c.id.is_empty(), "{} {:?}: {:?}", name, text, c);
            prop_assert!(!c.name.trim().is_empty(), "empty name: {} {:?}: {:?}", name, text, c);
            let last_cut = cut && i + 1 == m.tool_calls.len();
            prop_assert!(last_cut || serde_json::from_str::<Value>(&c.arguments).is_ok(),
                "{} {:?}: arguments {:?}", name, text, c.arguments);
            if named && !pair.factory.format().choice_in_own_format() {
                prop_assert_eq!(&c.name, "get_weather", "{} {:?}", name, text);
            }
        }
    }
}

fn meta() -> ResponseMeta {
    ResponseMeta { id: "resp-prop".into(), model: "m".into(), created: 1, prompt_tokens: 3 }
}

/// The dialect's SSE stream for `text` cut at `cuts`, as `{event, data}` values.
fn dialect_stream(
    api: Api,
    f: &ParserFactory,
    req: &CheckedRequest,
    text: &str,
    cuts: &[usize],
    engine: FinishReason,
) -> Vec<Value> {
    let mut s = Session::new(api, f, req, &meta(), &Options::default());
    let mut frames = Vec::new();
    for piece in pieces(text, cuts) {
        frames.extend(s.push(piece, None, None));
    }
    frames.extend(s.finish(engine));
    sse::parse(&frames.concat())
        .into_iter()
        .filter(|(_, d)| d != "[DONE]")
        .map(|(e, d)| json!({"event": e, "data": serde_json::from_str::<Value>(&d).unwrap()}))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn dialect_streams_fold_to_their_one_shot_answers(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..4), 0..30),
        cuts in prop::collection::vec(0usize..300, 0..12),
        knobs in any::<u16>(),
        pick in any::<prop::sample::Index>(),
        truncated in any::<bool>(),
    ) {
        let pair = &pairs()[pick.index(pairs().len())];
        let text = soup(pair, &picks);
        let req = request(knobs);
        let engine = if truncated { FinishReason::Length } else { FinishReason::Stop };
        let name = pair.factory.format().name().to_string();
        let (f, o) = (&pair.factory, Options::default());

        let one = complete(Api::Responses, f, &req, &meta(), &o, &text, None, engine);
        let events = dialect_stream(Api::Responses, f, &req, &text, &cuts, engine);
        let last = events.last().unwrap();
        prop_assert_eq!(&last["data"]["response"], &one, "responses {} {:?} knobs {:#x}", name, text, knobs);
        // Items are added in output order, one open at a time, and every
        // event between an item's added and done events is that item's.
        let mut open = None;
        let mut added = 0;
        for e in &events {
            let Some(i) = e["data"]["output_index"].as_u64() else { continue };
            let kind = e["event"].as_str().unwrap_or("");
            if kind == "response.output_item.added" {
                prop_assert_eq!((open, i), (None, added), "{} {:?}", name, text);
                open = Some(i);
                added += 1;
            } else if kind == "response.output_item.done" {
                prop_assert_eq!(open.take(), Some(i), "{} {:?}", name, text);
            } else {
                prop_assert_eq!(Some(i), open, "{} {:?} {}", name, text, kind);
            }
        }

        let one = complete(Api::Anthropic, f, &req, &meta(), &o, &text, None, engine);
        let events = dialect_stream(Api::Anthropic, f, &req, &text, &cuts, engine);
        prop_assert_eq!(common::fold_anthropic(&events), one, "anthropic {} {:?} knobs {:#x}", name, text, knobs);
    }
}

/// Any JSON value: the shapes a careless or hostile client may send.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        prop_oneof![
            Just("none"),
            Just("auto"),
            Just("required"),
            Just("function"),
            Just("get_weather"),
            Just("object"),
            Just("string"),
            Just(""),
            Just("é")
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("type"),
                        Just("function"),
                        Just("name"),
                        Just("parameters"),
                        Just("properties"),
                        Just("strict"),
                        Just("description"),
                        Just("x")
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    /// Request checks on arbitrary bodies: a typed error or a checked
    /// request, never a panic; a checked request then drives a choice.
    #[test]
    fn any_request_body_is_checked_without_panic(
        fields in prop::collection::vec((
            prop_oneof![
                Just("tools"), Just("tool_choice"), Just("parallel_tool_calls"), Just("include_reasoning"),
                Just("chat_template_kwargs"), Just("reasoning_effort"), Just("logprobs"), Just("top_logprobs"),
                Just("stream"), Just("stream_options"), Just("max_tokens"), Just("n"), Just("messages")
            ],
            any_json(),
        ), 0..6),
        pick in any::<prop::sample::Index>(),
    ) {
        let mut body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        for (k, v) in &fields {
            body[*k] = v.clone();
        }
        let Ok(req) = ChatCompletionRequest::from_value(body) else { return Ok(()) };
        let Ok(checked) = req.check() else { return Ok(()) };
        let pair = &pairs()[pick.index(pairs().len())];
        let c = ChoiceProcessor::new(&pair.factory, &checked, &Options::default())
            .complete("<think>r</think>{\"name\": \"get_weather\", \"arguments\": {}}", None, None, FinishReason::Stop);
        for call in &c.message.tool_calls {
            prop_assert!(serde_json::from_str::<Value>(&call.arguments).is_ok());
        }
    }
}
