//! Property (issue #23, "every byte accounted for"): for every registered
//! reasoning × tool pair, on the marker soup `no_panic.rs` generates (the
//! pair's spellings, their halves, JSON and XML fragments, arbitrary
//! characters), with the request setting `byte_spans` in the default and in
//! the vLLM-compatible settings (`vllm_text_loss` + `vllm_one_shot`): the
//! message is the one the parser gives without the setting; its spans
//! rebuild the raw output exactly from its `reasoning` and `content`
//! (`spans::reconstruct`), one-shot and streamed at random cuts; the
//! folded streamed spans equal the one-shot spans; a `Call` span names a
//! call of the message; under vLLM's settings a dropped byte (not a marker,
//! not hidden reasoning) is `vllm_loss` exactly when the default settings
//! put it in a field or a call.
//!
//! `SIFT_FUZZ_CASES=N` runs N cases instead of the default 64.

use llmsift_core::spans::{reconstruct, Reason, Span, SpanKind};
use llmsift_core::{Folder, Message, ParserFactory, Registry, Request, ToolChoice, Tools};
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
        let mut rs: Vec<Option<&str>> = r.reasoning_names().map(Some).collect();
        rs.push(None);
        let mut ts: Vec<Option<&str>> = r.tool_names().map(Some).collect();
        ts.push(None);
        let mut out = vec![];
        for rn in &rs {
            for tn in &ts {
                let factory = r.factory(*rn, *tn).expect("built-in pair compiles");
                let mut frags: Vec<String> = factory.format().spellings().map(str::to_string).collect();
                for s in frags.clone() {
                    let cut = s.char_indices().nth(s.chars().count() / 2).map_or(0, |(i, _)| i);
                    frags.push(s[..cut].to_string());
                }
                let extra = [
                    "{\"name\": \"f\", \"arguments\": {",
                    "{\"name\": \"f\", \"arguments\": {\"x\": 1}}",
                    "{\"name\": \"\", \"arguments\": {}}",
                    "[f(x=1)]",
                    "<parameter=x>\n1\n</parameter>",
                    "\"x\": [1, 2.5, true, null]",
                    "}",
                    "\"",
                    "\\n",
                    "\n",
                    "functions.f:0",
                    "é日本🙂",
                    " plain words ",
                ];
                frags.extend(extra.iter().map(|s| s.to_string()));
                out.push(Pair { factory, frags });
            }
        }
        out
    })
}

fn tools() -> Arc<Tools> {
    let v: serde_json::Value = serde_json::from_str(
        r#"[{"type":"function","function":{"name":"f","parameters":{"properties":{"x":{"type":"integer"},"city":{"type":"string"}}}}}]"#,
    )
    .unwrap();
    Arc::new(Tools::from_json(&v))
}

/// Streams `text` cut at `cuts`: the folded message and spans.
fn stream(f: &ParserFactory, req: &Request, text: &str, cuts: &[usize]) -> (Message, Vec<Span>) {
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
        }
    }
    fold.push(&p.push(&text[start..], None));
    fold.push(&p.finish());
    let spans = fold.spans().to_vec();
    (fold.finish(), spans)
}

fn check(name: &str, text: &str, m: &Message, spans: &[Span]) -> Result<(), TestCaseError> {
    let rebuilt =
        reconstruct(m.reasoning.as_deref().unwrap_or(""), m.content.as_deref().unwrap_or(""), spans);
    prop_assert_eq!(rebuilt.as_deref(), Ok(text), "pair {} spans {:?} message {:?}", name, spans, m);
    for s in spans {
        if let SpanKind::Call { index } = s.kind {
            prop_assert!(index < m.tool_calls.len(), "pair {} span {:?} names no call of {:?}", name, s, m);
        }
    }
    Ok(())
}

/// Per raw byte: whether a span of a kind `f` accepts covers it.
fn bytes_where(text: &str, spans: &[Span], f: impl Fn(SpanKind) -> bool) -> Vec<bool> {
    let mut v = vec![false; text.len()];
    for s in spans.iter().filter(|s| f(s.kind)) {
        v[s.start..s.end].iter_mut().for_each(|b| *b = true);
    }
    v
}

fn cases() -> u32 {
    std::env::var("SIFT_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn spans_rebuild_the_output_streamed_and_one_shot(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..4), 0..32),
        cuts in prop::collection::vec(0usize..300, 0..16),
        choice in 0u8..4,
        pick in any::<prop::sample::Index>(),
        flags in any::<u8>(),
    ) {
        let tools = tools();
        // One random reasoning grammar with every tool grammar and one
        // random tool grammar with every reasoning grammar: every pair over
        // the run, without a quadratic cost per case.
        let all = pairs();
        let anchor = &all[pick.index(all.len())];
        let (ar, at) = anchor.factory.format().name().split_once('+').expect("r+t");
        for pair in all.iter().filter(|p| {
            let (r, t) = p.factory.format().name().split_once('+').expect("r+t");
            r == ar || t == at
        }) {
            let name = pair.factory.format().name();
            let mut text = String::new();
            for (i, ch, kind) in &picks {
                match kind {
                    0 => text.push(*ch),
                    _ => text.push_str(&pair.frags[i.index(pair.frags.len())]),
                }
            }
            let mut sorted = cuts.clone();
            sorted.sort_unstable();
            let vllm = flags & 1 != 0;
            let req = Request {
                tools: Arc::clone(&tools),
                tool_choice: match choice {
                    0 => ToolChoice::Unset,
                    1 => ToolChoice::None,
                    2 => ToolChoice::Required,
                    _ => ToolChoice::Auto,
                },
                include_reasoning: flags & 2 == 0,
                vllm_text_loss: vllm,
                vllm_one_shot: vllm,
                id_seed: Some(7),
                ..Request::default()
            };
            let accounted = Request { byte_spans: true, ..req.clone() };
            // The setting changes no answer.
            let plain = pair.factory.parse(&req, &text, None);
            let mut p = pair.factory.parser(&accounted);
            let mut d = p.push(&text, None);
            d.append(&p.finish());
            let mut fold = Folder::default();
            fold.push(&d);
            let one_spans = fold.spans().to_vec();
            let one = fold.finish();
            prop_assert_eq!(&one, &plain, "pair {}: byte_spans changed the answer for {:?}", name, text);
            check(name, &text, &one, &one_spans)?;
            let (streamed, spans) = stream(&pair.factory, &accounted, &text, &sorted);
            prop_assert_eq!(&streamed, &one, "pair {} text {:?} cuts {:?}", name, text, sorted);
            check(name, &text, &streamed, &spans)?;
            prop_assert_eq!(&spans, &one_spans, "pair {} text {:?} cuts {:?}: streamed spans differ", name, text, sorted);
            if vllm {
                // vLLM's loss is exactly what the default keeps and vLLM's
                // answer drops (markers and hidden reasoning aside).
                let plain = Request { vllm_text_loss: false, vllm_one_shot: false, ..accounted.clone() };
                let (_, default_spans) = stream(&pair.factory, &plain, &text, &[]);
                let kept = bytes_where(&text, &default_spans, |k| {
                    matches!(k, SpanKind::Reasoning | SpanKind::Content | SpanKind::Call { .. })
                });
                for s in &one_spans {
                    let SpanKind::Dropped { reason } = s.kind else { continue };
                    if matches!(reason, Reason::Marker | Reason::Hidden) {
                        continue;
                    }
                    for (b, &k) in kept.iter().enumerate().take(s.end).skip(s.start) {
                        prop_assert_eq!(k, reason == Reason::VllmLoss,
                            "pair {} byte {} of {:?} in {:?}", name, b, text, s);
                    }
                }
            }
        }
    }
}
