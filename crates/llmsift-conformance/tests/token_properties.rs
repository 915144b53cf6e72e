//! Property: on the real vocabularies (Qwen3, DeepSeek V3, gpt-oss), for
//! every registered pair whose markers bind to that vocabulary, any output
//! — random soup of the pair's spellings, JSON and text — streamed through
//! the incremental detokenizer in random runs of token ids (text held back
//! by the detokenizer, markers seen by id before their text) gives exactly
//! the one-shot message of the same text and ids, and every call's
//! arguments are JSON.
//!
//! A second property feeds ids that disagree with the text (marker ids
//! whose text never comes, text markers with no id, ids in odd places):
//! nothing panics, and every call's arguments are JSON.
//!
//! `SIFT_FUZZ_CASES=N` runs N cases instead of the default 64.

use llmsift_core::{Folder, ParserFactory, Registry, Request, ToolChoice, Tools};
use llmsift_tokenizers::TokenizerView;
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

struct Vocab {
    view: TokenizerView,
    size: u32,
    pairs: Vec<(ParserFactory, Vec<String>)>,
}

fn vocabs() -> &'static Vec<Vocab> {
    static V: OnceLock<Vec<Vocab>> = OnceLock::new();
    V.get_or_init(|| {
        let r = Registry::builtin();
        let mut rs: Vec<Option<&str>> = r.reasoning_names().map(Some).collect();
        rs.push(None);
        let mut ts: Vec<Option<&str>> = r.tool_names().map(Some).collect();
        ts.push(None);
        ["qwen3", "deepseek_v3", "gptoss"]
            .iter()
            .map(|name| {
                let view = TokenizerView::named(name)
                    .unwrap_or_else(|e| panic!("{e} (run scripts/fetch-assets.sh)"));
                let mut pairs = vec![];
                for rn in &rs {
                    for tn in &ts {
                        let f = r.factory(*rn, *tn).expect("built-in pair compiles");
                        // Only pairs whose token markers are all in this vocabulary.
                        let Ok(bound) = f.bind(&view) else { continue };
                        if !bound.format().is_bound() {
                            continue;
                        }
                        let mut frags: Vec<String> = f.format().spellings().map(str::to_string).collect();
                        for x in [
                            "{\"name\": \"f\", \"arguments\": {\"x\": 1}}",
                            "{\"x\": 1}",
                            "f",
                            "\n",
                            " ok ",
                            "é",
                        ] {
                            frags.push(x.to_string());
                        }
                        pairs.push((bound, frags));
                    }
                }
                assert!(!pairs.is_empty(), "no pair binds to {name}");
                let size = view.vocab_size() as u32;
                Vocab { view, size, pairs }
            })
            .collect()
    })
}

fn cases() -> u32 {
    std::env::var("SIFT_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn token_streams_match_one_shot(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..4), 0..30),
        runs in prop::collection::vec(1usize..5, 1..40),
        which in any::<prop::sample::Index>(),
        pick in any::<prop::sample::Index>(),
        choice in 0u8..3,
    ) {
        let v = &vocabs()[which.index(vocabs().len())];
        let (f, frags) = &v.pairs[pick.index(v.pairs.len())];
        let mut text = String::new();
        for (i, ch, kind) in &picks {
            match kind {
                0 => text.push(*ch),
                _ => text.push_str(&frags[i.index(frags.len())]),
            }
        }
        let tools: serde_json::Value = serde_json::json!([{"type": "function", "function": {"name": "f",
            "parameters": {"properties": {"x": {"type": "integer"}}}}}]);
        let tool_choice = match choice {
            0 => ToolChoice::Unset,
            1 => ToolChoice::Required,
            _ => ToolChoice::Named("f".into()),
        };
        let req = Request { tools: Arc::new(Tools::from_json(&tools)), tool_choice, id_seed: Some(5), ..Request::default() };
        let ids = v.view.encode(&text).unwrap();

        // Streamed: runs of ids through the detokenizer, the ids alongside their text.
        let mut det = v.view.detokenizer();
        let mut p = f.parser(&req);
        let mut fold = Folder::default();
        let mut seen = String::new();
        let (mut at, mut k) = (0, 0);
        while at < ids.len() {
            let n = runs[k % runs.len()].min(ids.len() - at);
            let run = &ids[at..at + n];
            let t = det.push_ids(run);
            seen.push_str(&t);
            fold.push(&p.push(&t, Some(run)));
            at += n;
            k += 1;
        }
        let rest = det.finish();
        seen.push_str(&rest);
        fold.push(&p.push(&rest, Some(&[])));
        fold.push(&p.finish());
        let streamed = fold.finish();

        let mut whole = f.parser(&req);
        let one = whole.parse(&seen, Some(&ids));
        prop_assert_eq!(&streamed, &one, "{} ids {:?} text {:?}", f.format().name(), ids, seen);
        for (i, c) in one.tool_calls.iter().enumerate() {
            // Only the call the output's end cut keeps non-JSON arguments (as written, issue 23).
            prop_assert!(whole.cut_call() == Some(i) || serde_json::from_str::<serde_json::Value>(&c.arguments).is_ok(),
                "{} arguments {:?} for {:?}", f.format().name(), c.arguments, seen);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn disagreeing_ids_never_break_the_parser(
        deltas in prop::collection::vec(
            (prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 0..4),
             prop::collection::vec((any::<prop::sample::Index>(), any::<u32>(), any::<bool>()), 0..3)),
            0..25),
        which in any::<prop::sample::Index>(),
        pick in any::<prop::sample::Index>(),
    ) {
        let v = &vocabs()[which.index(vocabs().len())];
        let (f, frags) = &v.pairs[pick.index(v.pairs.len())];
        let marker_ids: Vec<u32> = f.format().token_markers().filter_map(|m| v.view.token_to_id(m)).collect();
        let size = v.size;
        let req = Request { id_seed: Some(5), ..Request::default() };
        let mut p = f.parser(&req);
        let mut fold = Folder::default();
        for (texts, ids) in &deltas {
            let mut t = String::new();
            for (i, ch, kind) in texts {
                match kind {
                    0 => t.push(*ch),
                    _ => t.push_str(&frags[i.index(frags.len())]),
                }
            }
            let ids: Vec<u32> = ids
                .iter()
                .map(|(i, raw, marker)| match (marker, marker_ids.is_empty()) {
                    (true, false) => marker_ids[i.index(marker_ids.len())],
                    _ => raw % size,
                })
                .collect();
            fold.push(&p.push(&t, Some(&ids)));
        }
        fold.push(&p.finish());
        let m = fold.finish();
        for (i, c) in m.tool_calls.iter().enumerate() {
            // Only the call the output's end cut keeps non-JSON arguments (as written, issue 23).
            prop_assert!(p.cut_call() == Some(i) || serde_json::from_str::<serde_json::Value>(&c.arguments).is_ok(),
                "{} arguments {:?}", f.format().name(), c.arguments);
        }
    }
}
