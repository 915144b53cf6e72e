//! A parser carried between replicas: on every case of the shared corpus and
//! of `tests/cases` (every registered pair appears in them), in the default
//! mode and with vLLM's compatibility settings, a stream whose parser is
//! sealed into a state token and resumed from it between every two deltas
//! gives exactly the deltas of the stream uninterrupted.

use llmsift_conformance::{check_carried, random_chunks, read_request, Case, Runner};
use llmsift_core::{Parser, ParserFactory, ParserState, Request};
use llmsift_protocol::carry::{open, seal, StateKey};
use std::path::PathBuf;

fn cases() -> Vec<Case> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = std::env::var_os("SIFT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../../../shared/corpus/vllm-tests.jsonl"));
    let mut files = vec![corpus];
    let mut own: Vec<PathBuf> = std::fs::read_dir(root.join("tests/cases"))
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    own.sort();
    files.extend(own);
    let mut out = vec![];
    for f in files {
        let text =
            std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{} not readable: {e}", f.display()));
        out.extend(
            text.lines().filter(|l| !l.trim().is_empty()).map(|l| Case::from_json_line(l).expect("case")),
        );
    }
    out
}

/// Seals and opens `p`'s state; `largest` keeps the longest token seen.
fn carry(
    key: &StateKey,
    f: &ParserFactory,
    req: &Request,
    bind: &[u8],
    p: &Parser,
    largest: &mut usize,
) -> Result<Parser, String> {
    let token = seal(key, bind, &p.snapshot());
    *largest = (*largest).max(token.len());
    let state: ParserState = open(key, bind, &token).map_err(|e| e.to_string())?;
    f.resume(req, state).map_err(|e| e.to_string())
}

#[test]
fn resuming_between_every_delta_changes_nothing() {
    let key = StateKey::new("a key the replicas share").unwrap();
    let mut runner = Runner::new();
    let (mut runs, mut largest, mut diffs) = (0, (0, String::new()), vec![]);
    for case in cases() {
        let Ok(f) = runner.factory(&case) else { continue };
        let (base, _) = read_request(&case.request);
        let compat = Request { vllm_text_loss: true, vllm_one_shot: true, ..base.clone() };
        // Random chunks of 1 to 8 bytes (several deltas per marker), longer
        // for long outputs so that no case takes more than about 100 deltas.
        let chunks = random_chunks(&case.model_output, 1, (case.model_output.len() / 48).max(8));
        let bind = case.id.as_bytes();
        for (mode, req) in [("default", base), ("vllm", compat)] {
            let mut n = 0;
            match check_carried(&f, &req, &chunks, &mut |p| carry(&key, &f, &req, bind, p, &mut n)) {
                // The vLLM mode may hold a whole output (`vllm_one_shot`): O(n) by nature.
                Ok(()) if n > largest.0 && mode == "default" => largest = (n, case.id.clone()),
                Ok(()) => {}
                Err(e) => diffs.push(format!("{} ({mode}): {e}", case.id)),
            }
            runs += 1;
        }
    }
    assert!(runs > 10_000, "only {runs} runs");
    assert!(diffs.is_empty(), "{} runs differ when carried:\n{}", diffs.len(), diffs.join("\n"));
    eprintln!("{runs} runs; largest token {} bytes ({})", largest.0, largest.1);
}
