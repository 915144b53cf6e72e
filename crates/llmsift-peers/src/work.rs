//! The workloads, built from `llmsift-bench`'s generators, and what each must
//! parse to (Sift's one-shot message for the same text and parser).
//!
//! | id | text | cut |
//! | --- | --- | --- |
//! | W1 | `llmsift_bench::w1` | one token per delta: each marker whole, other text 4 bytes |
//! | W1b | the same | blindly every 4 bytes: `</think>` straddles two deltas |
//! | W4 | the same | 4 tokens per delta |
//! | W3 | the same | one shot |
//! | W2 | `llmsift_bench::w2_hermes` / `w2_qwen3_coder` | ~4 characters per delta |
//! | W3b | the same | one shot |
//!
//! W1, W1b, W3 and W4 run with a reasoning parser (`qwen3`, `deepseek_r1`)
//! and no tool parser; W2 and W3b with a tool parser (`hermes`,
//! `qwen3_coder`), no reasoning parser, and the W2 `tools`.

use crate::answer::Answer;
use llmsift_bench::{
    group, request, split_deltas, split_tokens, w1, w2_hermes, w2_qwen3_coder, DELTA_BYTES, W1_MARKERS,
};
use llmsift_core::Registry;
use std::ops::Range;

/// One (workload, family, scale): the text, its cut, the right answer.
pub struct Work {
    /// `W1`, `W1b`, `W2`, `W3`, `W3b` or `W4`.
    pub id: String,
    /// The parser name (vLLM's): `qwen3`, `deepseek_r1`, `hermes`, `qwen3_coder`.
    pub family: String,
    /// Length multiplier.
    pub scale: usize,
    /// The whole model output.
    pub text: String,
    /// The deltas as byte ranges of `text`; empty for a one-shot workload.
    pub deltas: Vec<Range<usize>>,
    /// How many deltas to push before measuring the bytes a stream holds:
    /// all of them for W1/W1b/W4 (before `finish`), half for W2.
    pub held_after: usize,
    /// Sift's one-shot answer.
    pub want: Answer,
}

impl Work {
    /// Whether this workload is parsed in one shot.
    pub fn is_oneshot(&self) -> bool {
        self.deltas.is_empty()
    }

    /// The delta at byte range `r`.
    pub fn delta(&self, r: &Range<usize>) -> &str {
        &self.text[r.clone()]
    }
}

/// Whether `family` is one of the reasoning parsers benchmarked here.
pub fn is_reasoning(family: &str) -> bool {
    matches!(family, "qwen3" | "deepseek_r1")
}

/// Builds workload `id` for `family` at `scale`, or says why it does not exist.
pub fn build(id: &str, family: &str, scale: usize) -> Result<Work, String> {
    let reasoning = is_reasoning(family);
    let tools = matches!(family, "hermes" | "qwen3_coder");
    let (text, cut): (String, fn(&str) -> Vec<&str>) = match id {
        "W1" | "W1b" | "W3" | "W4" if reasoning => {
            let cut: fn(&str) -> Vec<&str> = match id {
                "W1" => |t| split_tokens(t, W1_MARKERS, DELTA_BYTES),
                "W1b" => |t| split_deltas(t, DELTA_BYTES),
                "W4" => |t| group(t, &split_tokens(t, W1_MARKERS, DELTA_BYTES), 4),
                _ => |_| Vec::new(),
            };
            (w1(scale).text, cut)
        }
        "W2" | "W3b" if tools => {
            let w = if family == "hermes" { w2_hermes(scale) } else { w2_qwen3_coder(scale) };
            let cut: fn(&str) -> Vec<&str> =
                if id == "W2" { |t| split_deltas(t, DELTA_BYTES) } else { |_| Vec::new() };
            (w.text, cut)
        }
        _ => return Err(format!("no workload {id} for parser {family}")),
    };
    let base = text.as_ptr() as usize;
    let deltas: Vec<Range<usize>> = cut(&text)
        .iter()
        .map(|d| {
            let at = d.as_ptr() as usize - base;
            at..at + d.len()
        })
        .collect();
    let held_after = if id == "W2" { deltas.len() / 2 } else { deltas.len() };
    let registry = Registry::builtin();
    let factory =
        if reasoning { registry.factory(Some(family), None) } else { registry.factory(None, Some(family)) }
            .map_err(|e| format!("sift has no parser {family}: {e}"))?;
    let want = Answer::of(&factory.parse(&request(tools), &text, None));
    Ok(Work { id: id.to_string(), family: family.to_string(), scale, text, deltas, held_after, want })
}
