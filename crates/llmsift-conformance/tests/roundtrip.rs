//! `sift check` as a test: for every template in `roundtrip.txt` (all of the
//! core issue's families that have a template, and more), an assistant turn
//! rendered by the model's own template parses back to the same message with
//! the auto-detected parsers. `docs/check.md` has the whole table.

use llmsift_conformance::roundtrip;
use llmsift_core::Registry;
use llmsift_templates::TemplateSet;
use std::path::PathBuf;

fn template_dir() -> PathBuf {
    std::env::var_os("SIFT_ASSETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.assets"))
        .join("templates")
}

/// The core issue's families, each with a template of the set and the
/// parsers named explicitly (as a vLLM user would pass them).
const CORE_FAMILIES: &[(&str, Option<&str>, Option<&str>)] = &[
    ("Qwen-Qwen3-0.6B", Some("qwen3"), Some("hermes")),
    ("Qwen3.5-4B", Some("qwen3"), Some("qwen3_coder")),
    ("Qwen3.5-4B", Some("qwen3"), Some("qwen3_xml")),
    ("Qwen3-Coder", None, Some("qwen3_coder")),
    ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", Some("deepseek_r1"), Some("deepseek_v3")),
    ("deepseek-ai-DeepSeek-V3.1", Some("deepseek_v3"), Some("deepseek_v31")),
    ("moonshotai-Kimi-K2", Some("kimi_k2"), Some("kimi_k2")),
    ("meta-llama-Llama-3.1-8B-Instruct", None, Some("llama3_json")),
    ("meta-llama-Llama-3.3-70B-Instruct", None, Some("llama3_json")),
];

#[test]
fn core_families_read_their_own_templates() {
    let mut failed = vec![];
    for (name, reasoning, tools) in CORE_FAMILIES {
        let path = template_dir().join(format!("{name}.jinja"));
        let set = TemplateSet::from_template_file(&path)
            .unwrap_or_else(|e| panic!("{name}: {e} (run scripts/fetch-assets.sh)"));
        let r = roundtrip(&set, Registry::builtin(), *reasoning, *tools);
        if !r.passed() {
            failed.push(format!("{name} {reasoning:?}+{tools:?}: {r:?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn rendered_turns_parse_back() {
    let dir = template_dir();
    let mut failed = vec![];
    let names: Vec<&str> = include_str!("roundtrip.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    for name in &names {
        let path = dir.join(format!("{name}.jinja"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{name}: {e} (run scripts/fetch-assets.sh)"));
        let d = Registry::builtin().detect(&text);
        let set = TemplateSet::from_template_file(&path).expect("template loads");
        let r = roundtrip(&set, Registry::builtin(), d.reasoning.as_deref(), d.tools.as_deref());
        if !r.passed() {
            failed.push(format!("{name}: {r:?}"));
        }
    }
    assert!(names.len() >= 30, "only {} templates listed", names.len());
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
