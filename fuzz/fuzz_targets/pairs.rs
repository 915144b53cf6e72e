//! (a) Every registered parser pair on arbitrary output. The input's first
//! line picks the pair (`REASONING TOOL`, `-` for none; unknown names pick
//! one by hash) and the request knobs; the rest is the model output, cut
//! into deltas by a hash of the input. Checks: no panic, streamed = one-shot,
//! streamed arguments always a prefix of the final ones, every call named
//! with JSON-object arguments, held bytes below a marker's length; with no
//! parser at all, the output is the content byte for byte.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use llmsift_core::{Registry, Request, ToolChoice, Tools};
use std::sync::{Arc, OnceLock};

fn tools() -> Arc<Tools> {
    static T: OnceLock<Arc<Tools>> = OnceLock::new();
    T.get_or_init(|| {
        let t = serde_json::json!([
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
             "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "x": {"type": "object"}}}}},
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
        ]);
        Arc::new(Tools::from_json(&t))
    })
    .clone()
}

fn pick<'a>(names: &[&'a str], want: &str) -> Option<&'a str> {
    if want == "-" || names.is_empty() {
        return None;
    }
    if let Some(n) = names.iter().find(|n| **n == want) {
        return Some(n);
    }
    let h = common::hash(want.as_bytes()) as usize;
    // One in eight unknown names means "none".
    (h % 8 != 0).then(|| names[h / 8 % names.len()])
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (head, output) = text.split_once('\n').unwrap_or(("", &text));
    let mut words = head.split(' ');
    let r = Registry::builtin();
    let rs: Vec<&str> = r.reasoning_names().collect();
    let ts: Vec<&str> = r.tool_names().collect();
    let rn = pick(&rs, words.next().unwrap_or("-"));
    let tn = pick(&ts, words.next().unwrap_or("-"));
    let knobs = common::hash(head.as_bytes());
    let f = r.factory(rn, tn).expect("built-in pair");
    let req = Request {
        tools: if knobs & 1 == 0 { tools() } else { Arc::new(Tools::default()) },
        tool_choice: match (knobs >> 1) % 6 {
            0 => ToolChoice::Auto,
            1 => ToolChoice::None,
            2 => ToolChoice::Required,
            3 => ToolChoice::Named("get_weather".into()),
            _ => ToolChoice::Unset,
        },
        include_reasoning: (knobs >> 4) % 4 != 0,
        chat_template_kwargs: ((knobs >> 6) % 3 != 0)
            .then(|| serde_json::json!({"enable_thinking": (knobs >> 8) & 1 == 0, "thinking": (knobs >> 9) & 1 == 0})),
        id_seed: Some(1),
        // The vLLM-compatible settings: `vllm_one_shot` holds the whole
        // output for some formats (`whole.rs`), still equal under every cut.
        vllm_text_loss: (knobs >> 10) & 1 == 1,
        vllm_one_shot: (knobs >> 11) & 1 == 1,
        ..Request::default()
    };
    let one = f.parse(&req, output, None);
    common::check_calls(&one);
    let cut = common::pieces(output, common::hash(data));
    let streamed = common::stream(f.parser(&req), &cut, &one);
    assert_eq!(streamed, one, "streamed differs from one-shot");
    let forced = matches!(req.tool_choice, ToolChoice::Required | ToolChoice::Named(_));
    if rn.is_none() && tn.is_none() && !forced {
        assert_eq!(one.content.as_deref().unwrap_or(""), output);
    }
});
