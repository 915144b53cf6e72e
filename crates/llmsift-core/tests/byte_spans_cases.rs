//! Hand-labelled byte spans (`tests/data/byte-spans.jsonl`): per case, a
//! pair, the request settings, a model output and the spans it must give,
//! written compactly as `"kind:text"` (`reasoning`, `content`, `marker`,
//! `framing`, `not_a_call`, `hidden`, `vllm_loss`, `added_content`,
//! `added_reasoning`, `callN`), with the reason in `notes`. Each case runs
//! one-shot and streamed at every byte cut (char boundaries); both must
//! give the labelled spans, and the spans must rebuild the output.
//!
//! `SIFT_SPANS_SHOW=1` prints each case's spans in that form (to label a
//! new case, after checking them by hand).

use llmsift_core::spans::{reconstruct, Span, SpanKind};
use llmsift_core::{Folder, Message, Registry, Request, ToolChoice, Tools};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
struct Case {
    id: String,
    reasoning_parser: Option<String>,
    tool_parser: Option<String>,
    #[serde(default)]
    vllm: bool,
    #[serde(default = "yes")]
    include_reasoning: bool,
    #[serde(default)]
    tools: Option<serde_json::Value>,
    #[serde(default)]
    tool_choice: Option<String>,
    output: String,
    spans: Vec<String>,
    #[allow(dead_code)]
    notes: String,
}

fn yes() -> bool {
    true
}

/// A span as the data file writes it (a field span quotes the output).
fn compact(s: &Span, raw: &str) -> String {
    let kind = match s.kind {
        SpanKind::Reasoning => return format!("reasoning:{}", &raw[s.start..s.end]),
        SpanKind::Content => return format!("content:{}", &raw[s.start..s.end]),
        SpanKind::Call { index } => format!("call{index}"),
        SpanKind::Added { field } => {
            format!("added_{}", serde_json::to_value(field).unwrap().as_str().unwrap())
        }
        SpanKind::Dropped { reason } => serde_json::to_value(reason).unwrap().as_str().unwrap().to_string(),
    };
    format!("{kind}:{}", s.text)
}

fn run(case: &Case, cuts: &[usize]) -> (Message, Vec<Span>) {
    let r = Registry::builtin();
    let f = r.factory(case.reasoning_parser.as_deref(), case.tool_parser.as_deref()).expect("pair");
    let req = Request {
        tools: Arc::new(case.tools.as_ref().map(Tools::from_json).unwrap_or_default()),
        tool_choice: match case.tool_choice.as_deref() {
            None => ToolChoice::Unset,
            Some("none") => ToolChoice::None,
            Some("auto") => ToolChoice::Auto,
            Some("required") => ToolChoice::Required,
            Some(n) => ToolChoice::Named(n.into()),
        },
        include_reasoning: case.include_reasoning,
        vllm_text_loss: case.vllm,
        vllm_one_shot: case.vllm,
        byte_spans: true,
        id_seed: Some(1),
        ..Request::default()
    };
    let mut p = f.parser(&req);
    let mut fold = Folder::default();
    let mut at = 0;
    for &c in cuts.iter().chain([case.output.len()].iter()) {
        if c > at && case.output.is_char_boundary(c) {
            fold.push(&p.push(&case.output[at..c], None));
            at = c;
        }
    }
    fold.push(&p.finish());
    let spans = fold.spans().to_vec();
    (fold.finish(), spans)
}

#[test]
fn hand_labelled_spans() {
    let data = include_str!("data/byte-spans.jsonl");
    let show = std::env::var_os("SIFT_SPANS_SHOW").is_some();
    let mut failed = vec![];
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let case: Case = serde_json::from_str(line).expect("case line");
        let (m, spans) = run(&case, &[]);
        let got: Vec<String> = spans.iter().map(|s| compact(s, &case.output)).collect();
        let raw =
            reconstruct(m.reasoning.as_deref().unwrap_or(""), m.content.as_deref().unwrap_or(""), &spans);
        assert_eq!(raw.as_deref(), Ok(case.output.as_str()), "{}: spans do not rebuild the output", case.id);
        if show {
            println!("{} {}", case.id, serde_json::to_string(&got).unwrap());
        }
        if got != case.spans {
            failed.push(format!("{}: got {}", case.id, serde_json::to_string(&got).unwrap()));
            continue;
        }
        // Streamed at every cut: the same spans.
        for cut in 1..case.output.len() {
            if !case.output.is_char_boundary(cut) {
                continue;
            }
            let (sm, ss) = run(&case, &[cut]);
            assert_eq!((&sm, &ss), (&m, &spans), "{}: cut at {cut}", case.id);
        }
        let every: Vec<usize> = (1..case.output.len()).collect();
        assert_eq!(run(&case, &every), (m, spans), "{}: one byte per delta", case.id);
    }
    assert!(failed.is_empty(), "cases whose spans differ:\n{}", failed.join("\n"));
}
