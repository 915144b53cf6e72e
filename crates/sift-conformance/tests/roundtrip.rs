//! `sift check` as a test: for every template in `roundtrip.txt` (all of the
//! core issue's families that have a template, and more), an assistant turn
//! rendered by the model's own template parses back to the same message with
//! the auto-detected parsers. `docs/check.md` has the whole table.

use sift_conformance::roundtrip;
use sift_core::Registry;
use sift_templates::TemplateSet;
use std::path::PathBuf;

#[test]
fn rendered_turns_parse_back() {
    let dir = std::env::var_os("SIFT_ASSETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.assets"))
        .join("templates");
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
