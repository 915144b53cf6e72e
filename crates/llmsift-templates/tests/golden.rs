//! Renders every real template (llama.cpp's set, fetched by
//! `scripts/fetch-assets.sh`) with every conversation of
//! `tests/golden/conversations.json` and compares, byte for byte, with what
//! transformers rendered (`tests/golden/make_golden.py`). A pair jinja2
//! could not render must fail here too. Pairs listed in
//! `tests/golden/known-differences.txt` are reported, not failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use llmsift_templates::{ChatTemplate, DateTime, RenderRequest, TemplateError, TemplateSet};
use serde_json::Value as Json;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn templates_dir() -> PathBuf {
    let assets = std::env::var_os("SIFT_ASSETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.assets"));
    let dir = assets.join("templates");
    assert!(
        dir.is_dir(),
        "{} is missing: run scripts/fetch-assets.sh (or point SIFT_ASSETS at the assets)",
        dir.display()
    );
    dir
}

fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse_now(s: &str) -> DateTime {
    let n = |r: std::ops::Range<usize>| s[r].parse::<u32>().expect("now is YYYY-MM-DDTHH:MM:SS");
    DateTime::new(
        n(0..4) as i32,
        n(5..7) as u8,
        n(8..10) as u8,
        n(11..13) as u8,
        n(14..16) as u8,
        n(17..19) as u8,
    )
    .expect("valid date")
}

/// Known differences: `<template>__<conversation>  reason` per line.
fn known_differences() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(golden_dir().join("known-differences.txt")).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(char::is_whitespace) {
            Some((k, why)) => (k.to_string(), why.trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect()
}

/// The first line where two renders differ, for the failure message.
fn first_difference(expected: &str, got: &str) -> String {
    let at = expected.bytes().zip(got.bytes()).take_while(|(a, b)| a == b).count();
    let line = expected[..at].matches('\n').count() + 1;
    let ctx = |s: &str| {
        let start = s[..at.min(s.len())].rfind('\n').map_or(0, |i| i + 1);
        let end = s[at.min(s.len())..].find('\n').map_or(s.len(), |i| at + i);
        s[start..end].to_string()
    };
    format!("line {line}:\n      expected: {:?}\n      got:      {:?}", ctx(expected), ctx(got))
}

/// The request a conversation of conversations.json describes.
fn request_for(conv: &Json, tools: &[Json], now: DateTime) -> RenderRequest {
    let mut request = RenderRequest::new(conv["messages"].as_array().expect("messages").clone())
        .with_generation_prompt(conv["add_generation_prompt"].as_bool().unwrap_or(false))
        .with_now(now);
    if conv["with_tools"].as_bool().unwrap_or(false) {
        request = request.with_tools(tools.to_vec());
    }
    if let Some(kwargs) = conv["kwargs"].as_object() {
        request = request.with_kwargs(kwargs.clone());
    }
    request
}

/// Compares one render with its golden result; `None` when they agree.
fn check(golden: &Path, key: &str, expected: &Json, got: &Result<String, TemplateError>) -> Option<String> {
    match (expected["status"].as_str(), got) {
        (Some("ok"), Ok(got)) => {
            let want = std::fs::read_to_string(golden.join(format!("{key}.txt"))).expect("golden file");
            (*got != want).then(|| format!("differs at {}", first_difference(&want, got)))
        }
        (Some("ok"), Err(e)) => Some(format!("jinja2 renders, sift fails: {e}")),
        (_, Err(e)) => {
            // raise_exception must carry the template's own message.
            let jinja_error = expected["error"].as_str().unwrap_or_default();
            match (jinja_error.strip_prefix("TemplateError: "), e) {
                (Some(want), TemplateError::Raised(got)) if want != got => {
                    Some(format!("raise_exception message {got:?}, jinja2 {want:?}"))
                }
                (Some(want), other) if !matches!(other, TemplateError::Raised(_)) => {
                    Some(format!("jinja2 raised {want:?}, sift failed otherwise: {other}"))
                }
                _ => None,
            }
        }
        (_, Ok(_)) => Some(format!("jinja2 raised ({}), sift renders", expected["error"])),
    }
}

#[test]
fn tokenizer_configs_match_transformers() {
    let golden = golden_dir();
    let data = read_json(&golden.join("conversations.json"));
    let manifest = read_json(&golden.join("manifest.json"));
    let results = manifest["results"].as_object().expect("manifest results");
    let now = parse_now(data["now"].as_str().expect("now"));
    let tools: Vec<Json> = data["tools"].as_array().expect("tools").clone();
    let tokenizers = templates_dir().parent().expect("assets dir").join("tokenizers");
    let mut failures = Vec::new();
    let mut checked = 0;
    for (key, expected) in results.iter().filter(|(k, _)| k.starts_with("tokenizer-")) {
        let (name, conv_name) = key["tokenizer-".len()..].split_once("__").expect("tokenizer-<name>__<conv>");
        let set =
            TemplateSet::from_tokenizer_config_file(tokenizers.join(name).join("tokenizer_config.json"))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let conv = data["conversations"]
            .as_array()
            .expect("conversations")
            .iter()
            .find(|c| c["name"] == conv_name)
            .expect("conversation");
        let got = set.render(&request_for(conv, &tools, now));
        if let Some(problem) = check(&golden, key, expected, &got) {
            failures.push(format!("{key}: {problem}"));
        }
        checked += 1;
    }
    assert!(checked > 0, "manifest.json has no tokenizer-* renders: rerun make_golden.py");
    eprintln!("tokenizer configs: {} of {checked} renders agree", checked - failures.len());
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn renders_match_transformers_byte_for_byte() {
    let golden = golden_dir();
    let data = read_json(&golden.join("conversations.json"));
    let manifest = read_json(&golden.join("manifest.json"));
    let results = manifest["results"].as_object().expect("manifest results");
    let now = parse_now(data["now"].as_str().expect("now"));
    let special = &data["special_tokens"];
    let token = |k: &str| special[k].as_str().map(str::to_string);
    let tools: Vec<Json> = data["tools"].as_array().expect("tools").clone();
    let known = known_differences();

    let pin = std::fs::read_to_string(templates_dir().join(".pin")).unwrap_or_default();
    assert_eq!(
        manifest["generator"]["templates_pin"].as_str(),
        Some(pin.trim()),
        "the fetched templates are not the ones the goldens were made from: rerun make_golden.py"
    );
    let mut paths: Vec<PathBuf> = std::fs::read_dir(templates_dir())
        .expect("templates dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no templates: run scripts/fetch-assets.sh");

    let (mut matched, mut both_raise, mut known_seen) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in &paths {
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 name");
        let source = std::fs::read_to_string(path).expect("template");
        let template =
            ChatTemplate::new(source).map(|t| t.with_special_tokens(token("bos_token"), token("eos_token")));
        for conv in data["conversations"].as_array().expect("conversations") {
            let name = conv["name"].as_str().expect("name");
            let key = format!("{stem}__{name}");
            let request = request_for(conv, &tools, now);
            let got = template.as_ref().map_err(Clone::clone).and_then(|t| t.render(&request));
            let expected = results
                .get(&key)
                .unwrap_or_else(|| panic!("{key} not in manifest.json: rerun make_golden.py"));
            let problem = check(&golden, &key, expected, &got);
            match (expected["status"].as_str(), &problem) {
                (Some("ok"), None) => matched += 1,
                (_, None) => both_raise += 1,
                _ => {}
            }
            match problem {
                Some(problem) if known.contains_key(&key) => {
                    known_seen += 1;
                    eprintln!("known difference {key}: {problem}");
                }
                Some(problem) => failures.push(format!("{key}: {problem}")),
                None if known.contains_key(&key) => {
                    failures.push(format!("{key}: listed in known-differences.txt but agrees now"))
                }
                None => {}
            }
        }
    }
    let renderable =
        results.iter().filter(|(k, r)| !k.starts_with("tokenizer-") && r["status"] == "ok").count();
    eprintln!(
        "golden: {matched}/{renderable} renders byte-identical, {both_raise} raise in both, {known_seen} known differences"
    );
    assert!(failures.is_empty(), "{} unexpected differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn feature_snippets_match_transformers() {
    let golden = golden_dir();
    let data = read_json(&golden.join("snippets.json"));
    let expected = read_json(&golden.join("snippets.expected.json"));
    let conversations = read_json(&golden.join("conversations.json"));
    let now = parse_now(conversations["now"].as_str().expect("now"));
    let special = &conversations["special_tokens"];
    let token = |k: &str| special[k].as_str().map(str::to_string);
    let known = known_differences();
    let messages = vec![
        serde_json::json!({"role": "user", "content": "hi"}),
        serde_json::json!({"role": "assistant", "content": "hello"}),
    ];
    let context = data["context"].as_object().expect("context").clone();

    let (mut matched, mut known_seen) = (0, 0);
    let mut failures = Vec::new();
    let snippets = data["snippets"].as_object().expect("snippets");
    for (name, source) in snippets {
        let key = format!("snippet:{name}");
        let request = RenderRequest::new(messages.clone()).with_kwargs(context.clone()).with_now(now);
        let got = ChatTemplate::new(source.as_str().expect("snippet source"))
            .map(|t| t.with_special_tokens(token("bos_token"), token("eos_token")))
            .and_then(|t| t.render(&request));
        let want = &expected[name];
        let problem = match (want["status"].as_str(), &got) {
            (Some("ok"), Ok(got)) if want["output"].as_str() == Some(got.as_str()) => None,
            (Some("ok"), Ok(got)) => Some(format!("expected {:?}, got {got:?}", want["output"])),
            (Some("ok"), Err(e)) => Some(format!("expected {:?}, sift fails: {e}", want["output"])),
            (_, Err(_)) => None,
            (_, Ok(got)) => Some(format!("jinja2 raised ({}), sift renders {got:?}", want["error"])),
        };
        match problem {
            None if known.contains_key(&key) => {
                failures.push(format!("{key}: listed in known-differences.txt but agrees now"))
            }
            None => matched += 1,
            Some(p) if known.contains_key(&key) => {
                known_seen += 1;
                eprintln!("known difference {key}: {p}");
            }
            Some(p) => failures.push(format!("{key}: {p}")),
        }
    }
    eprintln!("snippets: {matched}/{} agree, {known_seen} known differences", snippets.len());
    assert!(failures.is_empty(), "{} unexpected differences:\n{}", failures.len(), failures.join("\n"));
}
