//! Property: for every registered reasoning × tool pair, every
//! `tool_choice` and the per-request switches (thinking toggles,
//! `include_reasoning`, `reasoning_effort`, `vllm_text_loss`, a prompt tail), any output —
//! random "marker soup" of spellings, partial spellings, JSON and XML
//! fragments and arbitrary characters — parses without panicking,
//! streaming it in random cuts gives exactly the one-shot message, the
//! lexer never holds back a marker's length or more, and no tool call ever
//! has an empty name (a call that never got one is content or dropped).
//!
//! `SIFT_FUZZ_CASES=N` runs N cases instead of the default 512 (a longer
//! search: `SIFT_FUZZ_CASES=20000 cargo test --release -p llmsift-core --test no_panic`).

use llmsift_core::{Folder, ParserFactory, Registry, Request, ToolChoice, Tools};
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

struct Pair {
    factory: ParserFactory,
    frags: Vec<String>,
}

fn pairs() -> &'static Vec<Pair> {
    static P: OnceLock<Vec<Pair>> = OnceLock::new();
    P.get_or_init(|| {
        let r = Registry::builtin();
        let mut out = vec![];
        let mut rs: Vec<Option<&str>> = r.reasoning_names().map(Some).collect();
        rs.push(None);
        let mut ts: Vec<Option<&str>> = r.tool_names().map(Some).collect();
        ts.push(None);
        for rn in &rs {
            for tn in &ts {
                let factory = r.factory(*rn, *tn).expect("built-in pair compiles");
                let mut frags: Vec<String> = factory.format().spellings().map(str::to_string).collect();
                for s in frags.clone() {
                    let cut = s.char_indices().nth(s.chars().count() / 2).map_or(0, |(i, _)| i);
                    frags.push(s[..cut].to_string());
                }
                for f in [
                    "{\"name\": \"f\", \"arguments\": {",
                    // Calls whose name is empty or blank must never commit.
                    "{\"name\": \"\", \"arguments\": {}}",
                    "{\"name\": \" \", \"parameters\": {}}",
                    "[(x=1)]",
                    "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
                    "\"x\": [1, 2.5, true, null]",
                    "}",
                    "]",
                    "[",
                    "\"",
                    "\\",
                    ";",
                    "\n",
                    "city",
                    "functions.f:0",
                    "```json\n",
                    "é日本🙂",
                    " plain words ",
                ] {
                    frags.push(f.to_string());
                }
                out.push(Pair { factory, frags });
            }
        }
        out
    })
}

fn tools() -> Arc<Tools> {
    let v: serde_json::Value = serde_json::from_str(
        r#"[{"type":"function","function":{"name":"f","parameters":{"properties":{"x":{"type":"integer"},"city":{"type":"string"},"o":{"type":"object"}}}}}]"#,
    )
    .unwrap();
    Arc::new(Tools::from_json(&v))
}

fn stream(f: &ParserFactory, req: &Request, text: &str, cuts: &[usize]) -> llmsift_core::Message {
    let mut p = f.parser(req);
    let mut fold = Folder::default();
    let mut start = 0;
    for &c in cuts {
        let mut c = c.min(text.len());
        while !text.is_char_boundary(c) {
            c += 1;
        }
        if c > start {
            fold.push(&p.push(&text[start..c], None));
            start = c;
            // Prefix buffering holds less than one marker, whatever came before.
            assert!(p.held_bytes() < llmsift_core::MAX_HELD_BYTES, "held {} bytes", p.held_bytes());
        }
    }
    fold.push(&p.push(&text[start..], None));
    fold.push(&p.finish());
    fold.finish()
}

fn cases() -> u32 {
    std::env::var("SIFT_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(512)
}

/// The per-request switches vLLM's parsers read, picked by the bits of `flags`.
fn request(tools: &Arc<Tools>, tool_choice: ToolChoice, flags: u8, prompt: Option<String>) -> Request {
    let kwargs = match flags & 7 {
        1 => Some(serde_json::json!({"enable_thinking": false})),
        2 => Some(serde_json::json!({"enable_thinking": true})),
        3 => Some(serde_json::json!({"thinking": true})),
        4 => Some(serde_json::json!({"thinking": false})),
        5 => Some(serde_json::json!({"thinking_mode": "off"})),
        _ => None,
    };
    let effort = match (flags >> 3) & 3 {
        1 => Some("low".to_string()),
        2 => Some("high".to_string()),
        _ => None,
    };
    Request {
        tools: Arc::clone(tools),
        tool_choice,
        include_reasoning: flags & 0x20 == 0,
        // vLLM's text loss holds calls and parameters differently: the same
        // promises hold in that mode.
        vllm_text_loss: flags & 0x40 != 0,
        chat_template_kwargs: kwargs,
        prompt,
        reasoning_effort: effort,
        id_seed: Some(7),
        ..Request::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn marker_soup_streams_like_one_shot(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..4), 0..40),
        cuts in prop::collection::vec(0usize..400, 0..20),
        choice in 0u8..5,
        pick in any::<prop::sample::Index>(),
        flags in any::<u8>(),
        prompt in prop::option::of(prop::collection::vec(any::<prop::sample::Index>(), 1..3)),
    ) {
        let tools = tools();
        // Every case runs one random reasoning grammar with every tool grammar
        // and one random tool grammar with every reasoning grammar, so all
        // pairs are covered over the run without a quadratic cost per case.
        let all = pairs();
        let anchor = &all[pick.index(all.len())];
        let (ar, at) = anchor.factory.format().name().split_once('+').expect("r+t");
        for pair in all.iter().filter(|p| {
            let (r, t) = p.factory.format().name().split_once('+').expect("r+t");
            r == ar || t == at
        }) {
            let mut text = String::new();
            for (i, ch, kind) in &picks {
                match kind {
                    0 => text.push(*ch),
                    _ => text.push_str(&pair.frags[i.index(pair.frags.len())]),
                }
            }
            let mut sorted = cuts.clone();
            sorted.sort_unstable();
            let tool_choice = match choice {
                0 => ToolChoice::Unset,
                1 => ToolChoice::None,
                2 => ToolChoice::Required,
                3 => ToolChoice::Named("f".into()),
                _ => ToolChoice::Auto,
            };
            // A prompt tail of the pair's own spellings (`<think>`, a turn start, ...).
            let prompt = prompt.as_ref().map(|ix| {
                ix.iter().map(|i| pair.frags[i.index(pair.frags.len())].as_str()).collect::<String>()
            });
            let req = request(&tools, tool_choice, flags, prompt);
            let mut whole = pair.factory.parser(&req);
            let one = whole.parse(&text, None);
            let streamed = stream(&pair.factory, &req, &text, &sorted);
            prop_assert_eq!(&streamed, &one, "pair {} text {:?} cuts {:?}", pair.factory.format().name(), text, sorted);
            for (i, c) in one.tool_calls.iter().enumerate() {
                prop_assert!(!c.name.trim().is_empty(),
                    "pair {} made a call with the empty name {:?} from {:?}", pair.factory.format().name(), c.name, text);
                // Only the call the output's end cut keeps non-JSON arguments (as written, issue 23).
                prop_assert!(whole.cut_call() == Some(i) || serde_json::from_str::<serde_json::Value>(&c.arguments).is_ok(),
                    "pair {} arguments {:?} not JSON for {:?}", pair.factory.format().name(), c.arguments, text);
            }
        }
    }
}
