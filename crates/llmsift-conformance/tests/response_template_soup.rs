//! Random marker soup through every response template of
//! `scripts/rtemplate/templates.json`: the template's own literals, pieces of
//! its labelled outputs (whole `<…>` markers, white space, text) and stray
//! bytes, in random order. Whatever the soup, nothing panics and the stream
//! equals one-shot under one char per delta, every byte cut and random
//! chunks, with each streamed prefix a prefix of the answer.

use llmsift_conformance::{check_splits, read_request, Case, Runner};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn literals(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match (k.as_str(), x) {
                    ("open" | "close" | "start_anchor", Value::String(s)) => out.push(s.clone()),
                    ("open" | "close" | "start_anchor", Value::Array(a)) => {
                        out.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
                    }
                    _ => literals(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| literals(x, out)),
        _ => {}
    }
}

/// Pieces of a text: `<…>` runs (up to 40 bytes inside), white-space runs, the rest.
fn pieces(t: &str, out: &mut Vec<String>) {
    let mut rest = t;
    while !rest.is_empty() {
        let n = if let Some(inner) = rest.strip_prefix('<') {
            inner.find(['<', '>']).filter(|&i| i <= 40 && rest.as_bytes()[i + 1] == b'>').map_or(1, |i| i + 2)
        } else if rest.starts_with(char::is_whitespace) {
            rest.len() - rest.trim_start().len()
        } else {
            rest.find(|c: char| c == '<' || c.is_whitespace()).unwrap_or(rest.len())
        };
        let n = (1..=n.max(1)).rev().find(|&k| rest.is_char_boundary(k)).unwrap_or(rest.len());
        out.push(rest[..n].to_string());
        rest = &rest[n..];
    }
}

struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn soups_stream_like_one_shot_in_every_template() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let templates: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("../../scripts/rtemplate/templates.json"))
            .expect("templates.json"),
    )
    .unwrap();
    // Each template's prompt and outputs, from its labelled cases.
    let mut seen: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let cases = std::fs::read_to_string(root.join("tests/cases/response-template.jsonl")).unwrap();
    for line in cases.lines().filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let src = v["source"].as_str().unwrap().to_string();
        let e = seen
            .entry(src)
            .or_insert_with(|| (v["request"]["prompt_text"].as_str().unwrap_or("").into(), vec![]));
        e.1.push(v["model_output"].as_str().unwrap().to_string());
    }
    let mut runner = Runner::new();
    let mut rng = Lcg(22);
    let mut problems = vec![];
    let mut n = 0;
    for (name, tpl) in templates["templates"].as_object().unwrap() {
        let (prompt, outputs) = seen.get(name).cloned().unwrap_or_default();
        let mut vocab = vec![];
        literals(tpl, &mut vocab);
        for o in &outputs {
            pieces(o, &mut vocab);
        }
        vocab.extend(["<", ">", "\n", " ", "{", "}", "\"", "|", "$", "é", "\\"].map(String::from));
        vocab.sort();
        vocab.dedup();
        for i in 0..60 {
            let soup: String =
                (0..1 + rng.below(14)).map(|_| vocab[rng.below(vocab.len())].as_str()).collect();
            let tools = i % 2 == 1;
            let mut request =
                json!({"parser_init_kwargs": {"response_template": tpl}, "prompt_text": prompt});
            if tools {
                request["tools"] = json!([{"type": "function", "function": {"name": "get_weather",
                    "parameters": {"properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]);
            }
            let case = Case::from_json_line(
                &json!({"id": name, "reasoning_parser": "hf", "tool_parser": "hf", "request": request,
                        "model_output": soup})
                .to_string(),
            )
            .unwrap();
            let fac = runner.factory(&case).expect("hf");
            let (req, _) = read_request(&case.request);
            n += 1;
            if let Err(e) = check_splits(&fac, &req, &soup, 120) {
                problems.push(format!("{name} {soup:?}: {e}"));
            }
        }
    }
    assert!(n >= 1000, "{n} soups");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
