//! The token view: what the core knows about token ids.
//!
//! The core never loads a tokenizer. It asks a [`Vocab`] (implemented by the
//! `llmsift-tokenizers` crate over HuggingFace's `tokenizers`) for the id of each
//! marker a format declares as a special token, once, when a format is bound
//! to a vocabulary. Per-token work is then integer comparison only.
//!
//! Invariants:
//! - a marker that a format declares `token = true, required_token = true`
//!   must resolve to exactly one id, or binding fails with
//!   [`crate::FormatError::MissingToken`]; a `token = true` marker that does
//!   not resolve is matched in text;
//! - [`ReasoningCounter`] never goes negative and counts nested start markers once.

/// A vocabulary that can name the single token id of a marker.
pub trait Vocab {
    /// The id of `marker` when the vocabulary holds it as one token.
    fn token_id(&self, marker: &str) -> Option<u32>;

    /// The id of `marker` when it is an added token of the vocabulary (one
    /// the tokenizer always reads whole, special or not): a format marker
    /// not declared `token` is then matched by id in the default mode, so
    /// its spelling in ordinary tokens is text. `None` by default (a plain
    /// map of marker ids declares no added tokens).
    fn added_token_id(&self, marker: &str) -> Option<u32> {
        let _ = marker;
        None
    }
}

impl<F: Fn(&str) -> Option<u32>> Vocab for F {
    fn token_id(&self, marker: &str) -> Option<u32> {
        self(marker)
    }
}

/// Counts reasoning tokens on ids, the way usage reports them.
///
/// Every token strictly between a start marker and its end marker counts; the
/// markers themselves do not. A start marker inside reasoning is counted as
/// nested (depth only, never double-counted tokens); an end marker outside
/// reasoning is ignored, so the count can never go negative. When the stream
/// starts inside reasoning (a prompt that opened `<think>`, or a model with
/// implicit reasoning), construct with `inside = true`; a start marker as
/// the very first id then opens that same reasoning (Qwen3 writes `<think>`
/// although its parser starts inside reasoning), it does not nest.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReasoningCounter {
    start: Option<u32>,
    end: u32,
    depth: u32,
    count: u64,
    ended: bool,
    /// No id seen yet: a start marker first, in a stream that starts inside
    /// reasoning, is the opener the prompt implied, not a nested one.
    fresh: bool,
}

impl ReasoningCounter {
    /// A counter for the given start (optional) and end marker ids.
    pub fn new(start: Option<u32>, end: u32, inside: bool) -> Self {
        ReasoningCounter { start, end, depth: u32::from(inside), count: 0, ended: false, fresh: true }
    }

    /// Feeds a delta's token ids.
    pub fn push(&mut self, ids: &[u32]) {
        for &id in ids {
            let fresh = std::mem::take(&mut self.fresh);
            if Some(id) == self.start {
                // A model that reasons implicitly may still write its opener.
                if !(fresh && self.depth == 1) {
                    self.depth = self.depth.saturating_add(1);
                }
            } else if id == self.end {
                if self.depth > 0 {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.ended = true;
                    }
                }
            } else if self.depth > 0 {
                self.count += 1;
            }
        }
    }

    /// Feeds one id; returns whether it belongs to the reasoning: inside it,
    /// or the start marker that opens it (an end marker inside counts as
    /// inside; a stray one outside does not).
    pub fn push_one(&mut self, id: u32) -> bool {
        let reasoning = self.depth > 0 || Some(id) == self.start;
        self.push(&[id]);
        reasoning
    }

    /// Reasoning tokens seen so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether reasoning has ended at least once (vLLM's `is_reasoning_end`).
    pub fn is_reasoning_end(&self) -> bool {
        self.ended && self.depth == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_between_markers_and_ignores_stray_end() {
        let mut c = ReasoningCounter::new(Some(1), 2, false);
        c.push(&[2, 5, 1, 7, 8]);
        c.push(&[1, 9, 2, 2, 2, 10]);
        // 7, 8, 9 are inside; the nested start does not count twice.
        assert_eq!(c.count(), 3);
        assert!(c.is_reasoning_end());
    }

    #[test]
    fn an_opener_written_inside_implicit_reasoning_does_not_nest() {
        let mut c = ReasoningCounter::new(Some(1), 2, true);
        c.push(&[1, 4, 4, 2, 5, 5]);
        assert_eq!(c.count(), 2);
        assert!(c.is_reasoning_end());
    }

    #[test]
    fn implicit_start() {
        let mut c = ReasoningCounter::new(None, 2, true);
        c.push(&[4, 4, 2, 4]);
        assert_eq!(c.count(), 2);
        assert!(c.is_reasoning_end());
    }
}
