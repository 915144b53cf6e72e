//! The generated oracle corpus (`tests/cases/oracle-*.jsonl`): model outputs
//! made from scenario templates per family, answered by vLLM 0.34.0's serving
//! path (`scripts/oracle/`, `docs/oracle.md`). Every case is answered; the
//! streamed message equals the one-shot message under the case's token
//! stream, every byte cut (short outputs) and random chunks; and the cases
//! that disagree with vLLM's one-shot answer are exactly those listed with a
//! reason in `known-disagreements-oracle.txt` (a pair Sift refuses to build
//! answers with an error, which must be listed there as `pair refused`).
//! Agreement is printed per parser name (`-- --nocapture`).

use llmsift_conformance::{check_splits, compare, exact, read_request, skips_special, Case, Runner};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn oracle_cases() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/cases")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("oracle-")))
        .collect();
    files.sort();
    let mut cases = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            cases.push(
                Case::from_json_line(line).unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), i + 1)),
            );
        }
    }
    cases
}

/// A case's parser names (each case counts for both halves of its pair).
fn names(case: &Case) -> Vec<String> {
    [&case.reasoning_parser, &case.tool_parser].into_iter().flatten().cloned().collect()
}

fn known() -> BTreeMap<String, String> {
    llmsift_conformance::known_disagreements(include_str!("known-disagreements-oracle.txt"))
}

#[test]
fn oracle_cases_stream_like_one_shot() {
    let known = known();
    let mut runner = Runner::new();
    let (mut n, mut problems) = (0, vec![]);
    for case in oracle_cases() {
        n += 1;
        let a = runner.answer(&case);
        if !a.error.is_null() {
            // A pair Sift refuses to build is a listed disagreement (its reason names the refusal).
            if !known.get(&case.id).is_some_and(|why| why.contains("pair refused")) {
                problems.push(format!("{}: error {}", case.id, a.error));
            }
            continue;
        }
        if !exact(&a.message, &a.stream["message"]) {
            problems.push(format!("{}: token stream differs from one-shot", case.id));
            continue;
        }
        let f = runner.factory(&case).expect("factory");
        let (req, _) = read_request(&case.request);
        if let Err(e) = check_splits(&f, &req, &case.model_output, 160) {
            problems.push(format!("{}: {e}", case.id));
        }
    }
    assert!(n >= 3000, "only {n} oracle cases");
    assert!(problems.is_empty(), "{} of {n} cases:\n{}", problems.len(), problems.join("\n"));
}

/// Sift's `skip_special_tokens` decision (the pair's `keep_special_tokens`
/// rules over the request) is the one vLLM's serving path made for every
/// case (`oracle.skip_special_tokens`, recorded by `scripts/oracle`), but
/// gpt-oss's on purpose: vLLM parses harmony from token ids, so Sift keeps
/// its markers in the text it parses (`from_ids`, docs/deviations.md).
#[test]
fn skip_special_tokens_decided_as_vllm_did() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut runner = Runner::new();
    let (mut n, mut wrong) = (0, vec![]);
    for e in std::fs::read_dir(&dir).expect("tests/cases").flatten() {
        if !e.file_name().to_string_lossy().starts_with("oracle-") {
            continue;
        }
        for line in std::fs::read_to_string(e.path()).unwrap().lines().filter(|l| !l.trim().is_empty()) {
            let raw: Value = serde_json::from_str(line).unwrap();
            let case = Case::from_json_line(line).unwrap();
            if case.tokenizer.as_deref() == Some("gptoss") {
                continue;
            }
            let Ok(f) = runner.factory(&case) else { continue };
            let vllm = raw["oracle"]["skip_special_tokens"].as_bool().expect("oracle.skip_special_tokens");
            n += 1;
            if skips_special(&f, &case.request) != vllm {
                wrong.push(format!("{}: vLLM skip_special_tokens={vllm}", case.id));
            }
        }
    }
    assert!(n >= 3000, "only {n} oracle cases");
    assert!(wrong.is_empty(), "{} of {n} cases:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn oracle_agreement_is_as_documented() {
    let known = known();
    let mut runner = Runner::new();
    let mut failures = BTreeMap::new();
    let mut per_name: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let cases = oracle_cases();
    for case in &cases {
        let a = runner.answer(case);
        let exp = case.expected.clone().unwrap_or(Value::Null);
        let mut why = compare(&exp, &a.message);
        if !a.error.is_null() {
            why.push(format!("error {}", a.error));
        }
        for n in names(case) {
            let e = per_name.entry(n).or_default();
            e.0 += 1;
            e.1 += usize::from(why.is_empty());
        }
        if !why.is_empty() {
            failures.insert(case.id.clone(), why.join("; "));
        }
    }
    let total = cases.len();
    for (name, (n, ok)) in &per_name {
        eprintln!("oracle agreement {name}: {ok}/{n} ({:.1}%)", 100.0 * *ok as f64 / *n as f64);
    }
    let share = 100.0 * (total - failures.len()) as f64 / total as f64;
    eprintln!("oracle agreement: {share:.1}% of {total} cases ({} disagree)", failures.len());
    let thin: Vec<_> = per_name.iter().filter(|(_, (n, _))| *n < 30).collect();
    assert!(thin.is_empty(), "names with fewer than 30 cases: {thin:?}");
    let unexpected: Vec<_> = failures.iter().filter(|(id, _)| !known.contains_key(*id)).collect();
    let fixed: Vec<_> = known.keys().filter(|id| !failures.contains_key(*id)).collect();
    assert!(unexpected.is_empty(), "new disagreements with vLLM: {unexpected:#?}");
    assert!(fixed.is_empty(), "now agreeing, remove from known-disagreements-oracle.txt: {fixed:?}");
}

/// With the vLLM-compatible request settings (`vllm_text_loss`: vLLM's
/// answers where they drop text into no field; `vllm_one_shot`: its one-shot
/// answers that depend on the whole output), the cases that still disagree
/// are exactly those listed with a reason in
/// `known-disagreements-oracle-compat.txt`, and every cut of every case
/// still streams like one-shot.
#[test]
fn oracle_agreement_with_vllm_settings() {
    let listed =
        llmsift_conformance::known_disagreements(include_str!("known-disagreements-oracle-compat.txt"));
    let mut runner = Runner::new();
    let (mut failures, mut problems) = (BTreeMap::new(), vec![]);
    let cases = oracle_cases();
    for case in &cases {
        let mut case = case.clone();
        if let Some(o) = case.request.as_object_mut() {
            o.insert("vllm_text_loss".into(), Value::Bool(true));
            o.insert("vllm_one_shot".into(), Value::Bool(true));
        }
        let a = runner.answer(&case);
        let exp = case.expected.clone().unwrap_or(Value::Null);
        let mut why = compare(&exp, &a.message);
        if !a.error.is_null() {
            why.push(format!("error {}", a.error));
        } else if !exact(&a.message, &a.stream["message"]) {
            problems.push(format!("{}: token stream differs from one-shot", case.id));
        }
        if !why.is_empty() {
            failures.insert(case.id.clone(), why.join("; "));
        }
    }
    let total = cases.len();
    let share = 100.0 * (total - failures.len()) as f64 / total as f64;
    eprintln!(
        "oracle agreement with the vLLM-compatible settings: {share:.1}% of {total} ({} disagree)",
        failures.len()
    );
    let unexpected: Vec<_> = failures.iter().filter(|(id, _)| !listed.contains_key(*id)).collect();
    let fixed: Vec<_> = listed.keys().filter(|id| !failures.contains_key(*id)).collect();
    let unreasoned: Vec<_> = listed.iter().filter(|(_, why)| why.starts_with("not yet matched")).collect();
    assert!(problems.is_empty(), "{} cases:\n{}", problems.len(), problems.join("\n"));
    assert!(unexpected.is_empty(), "new disagreements with the settings: {unexpected:#?}");
    assert!(fixed.is_empty(), "now agreeing, remove from known-disagreements-oracle-compat.txt: {fixed:?}");
    assert!(unreasoned.is_empty(), "listed without a reason: {unreasoned:?}");
}
