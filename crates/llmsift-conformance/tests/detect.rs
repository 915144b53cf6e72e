//! `sift detect` on llama.cpp's real chat templates (fetched by
//! `scripts/fetch-assets.sh`): each template of a registered family names
//! the parser pair in `detect.tsv`.

use llmsift_core::Registry;
use std::path::PathBuf;

#[test]
fn detects_the_parsers_of_real_templates() {
    let dir = std::env::var_os("SIFT_ASSETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.assets"))
        .join("templates");
    assert!(dir.is_dir(), "{} missing: run scripts/fetch-assets.sh", dir.display());
    let mut wrong = vec![];
    let mut n = 0;
    for line in include_str!("detect.tsv").lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (name, r, t) = (cols[0], cols[1], cols[2]);
        let text = std::fs::read_to_string(dir.join(format!("{name}.jinja")))
            .unwrap_or_else(|e| panic!("{name}: {e} (run scripts/fetch-assets.sh)"));
        let d = Registry::builtin().detect(&text);
        let show = |x: Option<String>| x.unwrap_or_else(|| "-".into());
        let got = (show(d.reasoning), show(d.tools));
        if got != (r.to_string(), t.to_string()) {
            wrong.push(format!("{name}: expected {r} + {t}, got {} + {}", got.0, got.1));
        }
        n += 1;
    }
    assert!(n >= 40, "only {n} templates asserted");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
