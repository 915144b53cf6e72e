//! Response templates against transformers' `parse_response`
//! (`scripts/rtemplate/`): every case of `response-template.jsonl` agrees
//! with transformers' answer; every case of
//! `response-template-deviations.jsonl` names why it cannot, and there Sift's
//! answer is its `expected` and differs from transformers' (so the list is
//! exact). Each case streams like one-shot under its chunks, every byte cut
//! and random chunks. Both parser names of vLLM's response-template parsing
//! (`hf`, `beam`) carry at least 30 cases.

use llmsift_conformance::{check_splits, compare, exact, read_request, Case, Runner};
use serde_json::Value;

fn cases(name: &str) -> Vec<(Case, Value)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (Case::from_json_line(l).expect("case"), serde_json::from_str(l).expect("json")))
        .collect()
}

fn run(name: &str, problems: &mut Vec<String>) -> Vec<(Case, Value)> {
    let mut runner = Runner::new();
    let all = cases(name);
    for (case, _) in &all {
        let a = runner.answer(case);
        if !a.error.is_null() {
            problems.push(format!("{}: error {}", case.id, a.error));
            continue;
        }
        for d in compare(case.expected.as_ref().unwrap_or(&Value::Null), &a.message) {
            problems.push(format!("{}: {d}", case.id));
        }
        if !exact(&a.message, &a.stream["message"]) {
            problems.push(format!("{}: streamed message differs", case.id));
        }
        let fac = runner.factory(case).expect("factory");
        let (req, _) = read_request(&case.request);
        if let Err(e) = check_splits(&fac, &req, &case.model_output, 200) {
            problems.push(format!("{}: {e}", case.id));
        }
    }
    all
}

#[test]
fn response_templates_agree_with_transformers() {
    let mut problems = vec![];
    let agree = run("response-template.jsonl", &mut problems);
    let dev = run("response-template-deviations.jsonl", &mut problems);
    for (case, raw) in &dev {
        if raw.get("deviation").and_then(Value::as_str).is_none_or(str::is_empty) {
            problems.push(format!("{}: a deviation without its reason", case.id));
        }
        let theirs = &raw["transformers"];
        if theirs.get("error").is_none()
            && compare(theirs, case.expected.as_ref().unwrap_or(&Value::Null)).is_empty()
        {
            problems.push(format!("{}: listed as a deviation, but Sift agrees with transformers", case.id));
        }
    }
    for p in ["hf", "beam"] {
        let n = agree.iter().filter(|(c, _)| c.reasoning_parser.as_deref() == Some(p)).count();
        assert!(n >= 30, "{p}: {n} agreeing cases");
    }
    assert!(agree.len() + dev.len() >= 300, "{} cases", agree.len() + dev.len());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn a_template_sift_cannot_express_is_refused_with_the_reason() {
    let line = serde_json::json!({"id": "refused", "reasoning_parser": "hf", "tool_parser": "hf",
        "request": {"parser_init_kwargs": {"response_template": {"start_anchor": "<a>", "fields": {
            "content": {"close_pattern": "(?<=x)<end>"}}}}},
        "model_output": "hi<end>"});
    let case = Case::from_json_line(&line.to_string()).unwrap();
    let a = Runner::new().answer(&case);
    assert_eq!(a.error["type"], "unsupported_response_template");
    let msg = a.error["message"].as_str().unwrap();
    assert!(msg.contains("lookbehind is not supported"), "{msg}");
}
