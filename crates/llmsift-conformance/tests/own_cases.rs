//! Sift's own cases (`tests/cases/*.jsonl`, the corpus case format with our
//! own `expected`): each must agree with its expected message as `check.py`
//! scores it, and stream identically to one-shot under every cut.

use llmsift_conformance::{check_splits, compare, exact, read_request, Case, Runner};
use serde_json::Value;

#[test]
fn own_cases_agree_and_stream_like_one_shot() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("tests/cases").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut runner = Runner::new();
    let (mut n, mut problems) = (0, vec![]);
    // `oracle-*.jsonl` hold vLLM's recorded answers, disagreements included: `tests/oracle.rs` scores them;
    // `response-template*.jsonl` are transformers' answers: `tests/response_templates.rs` scores them.
    let oracle = |p: &std::path::PathBuf| {
        p.file_name().is_some_and(|n| {
            let n = n.to_string_lossy();
            n.starts_with("oracle-") || n.starts_with("response-template")
        })
    };
    for f in files.iter().filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !oracle(p)) {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let case =
                Case::from_json_line(line).unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), i + 1));
            n += 1;
            let a = runner.answer(&case);
            let where_ = format!("{} ({}:{})", case.id, f.file_name().unwrap().to_string_lossy(), i + 1);
            if !a.error.is_null() {
                problems.push(format!("{where_}: error {}", a.error));
                continue;
            }
            let exp = case.expected.clone().unwrap_or(Value::Null);
            for d in compare(&exp, &a.message) {
                problems.push(format!("{where_}: one-shot {d}"));
            }
            if !exact(&a.message, &a.stream["message"]) {
                problems.push(format!("{where_}: streamed message differs"));
            }
            if let Some(want) = exp.get("finish_reason") {
                // Sift's own key (issue 23): a cut call's `length`, one-shot and streamed.
                for (run, got) in [("one-shot", &a.finish_reason), ("streamed", &a.stream["finish_reason"])] {
                    if got != want {
                        problems.push(format!("{where_}: {run} finish_reason {got}, expected {want}"));
                    }
                }
            }
            let fac = runner.factory(&case).expect("factory");
            let (req, _) = read_request(&case.request);
            if let Err(e) = check_splits(&fac, &req, &case.model_output, 400) {
                problems.push(format!("{where_}: {e}"));
            }
        }
    }
    assert!(n > 0, "no cases found in {}", dir.display());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
