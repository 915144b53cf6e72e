//! [`Detokenizer`]: incremental detokenization with a prefix/read window.
//!
//! The algorithm is vLLM's `detokenize_incrementally` (also HuggingFace's
//! `DecodeStream`), plus a [`Detokenizer::finish`] that flushes what is held:
//! the window `ids[..read]` is the last released chunk (the *prefix*) and
//! `ids[read..]` is not yet released. Each step decodes the whole window; when
//! that decode ends in U+FFFD (an incomplete UTF-8 sequence, e.g. an emoji
//! split over byte tokens) or adds nothing, the output is held. Otherwise the
//! text after the prefix's decode is released and the window slides. Decoding
//! with the previous tokens as context is what keeps byte-level BPE pieces and
//! SentencePiece leading spaces exact.
//!
//! With `skip_special` ([`Detokenizer::with_skip`], vLLM's request field
//! `skip_special_tokens`) every window is decoded with special tokens
//! skipped, so their text never appears.
//!
//! A byte-level BPE decoder (Qwen, Llama 3, DeepSeek, gpt-oss) decodes ids
//! by concatenating each token's bytes and reading them as UTF-8, so
//! `decode(a ++ b) == decode(a) ++ decode(b)` whenever `decode(a)` does not
//! end in U+FFFD, which is always true of a released prefix. With such a
//! decoder ([`TokenizerView::decodes_by_concatenation`]) the prefix adds
//! nothing: only the held ids are decoded, once per id, instead of the whole
//! window twice; the released chunks are the same.
//!
//! Invariant: for any ids, the concatenation of everything released by
//! [`Detokenizer::push`] and [`Detokenizer::finish`] equals
//! [`TokenizerView::decode_with`] of all ids (with the same `skip_special`), whenever the tokenizer's decode of a
//! window is a prefix of its decode of any extension of that window (true for
//! byte-level BPE, Metaspace and byte-fallback decoders).

use crate::TokenizerView;

/// Turns a stream of token ids into a stream of complete text chunks.
#[derive(Debug, Clone)]
pub struct Detokenizer {
    view: TokenizerView,
    /// The window: `ids[..read]` is the prefix, `ids[read..]` is held.
    ids: Vec<u32>,
    read: usize,
    /// `decode(ids[..read])`, cached.
    prefix: String,
    /// Special tokens are skipped (vLLM's `skip_special_tokens`).
    skip_special: bool,
    /// The decoder concatenates: the prefix stays empty (see the module docs).
    concat: bool,
}

impl Detokenizer {
    /// A detokenizer at the start of a sequence.
    pub fn new(view: &TokenizerView) -> Self {
        Self::with_skip(view, false)
    }

    /// A detokenizer that skips special tokens when `skip_special` is set.
    pub fn with_skip(view: &TokenizerView, skip_special: bool) -> Self {
        Detokenizer {
            view: view.clone(),
            ids: Vec::new(),
            read: 0,
            prefix: String::new(),
            skip_special,
            concat: view.decodes_by_concatenation(),
        }
    }

    fn decode(&self, ids: &[u32]) -> String {
        self.view.decode_with(ids, self.skip_special)
    }

    /// Feeds one id; returns the text it completes, if any.
    pub fn push(&mut self, id: u32) -> Option<String> {
        self.ids.push(id);
        if self.concat {
            // The prefix is empty (`read` is 0): `ids` are exactly the held ids.
            let text = self.decode(&self.ids);
            if text.is_empty() || text.ends_with(char::REPLACEMENT_CHARACTER) {
                return None;
            }
            self.ids.clear();
            return Some(text);
        }
        let text = self.decode(&self.ids);
        if text.len() <= self.prefix.len() || text.ends_with(char::REPLACEMENT_CHARACTER) {
            return None;
        }
        let released = after_prefix(&self.prefix, &text).to_string();
        self.ids.drain(..self.read);
        self.read = self.ids.len();
        self.prefix = self.decode(&self.ids);
        Some(released)
    }

    /// Feeds several ids; returns all the text they complete (maybe empty).
    pub fn push_ids(&mut self, ids: &[u32]) -> String {
        ids.iter().filter_map(|&id| self.push(id)).collect()
    }

    /// The window to carry to another process (`llmsift-protocol`'s
    /// `carry`): its ids and how many of them are the released prefix. At
    /// most a few ids: the last released chunk's and the held ones.
    pub fn window(&self) -> (&[u32], usize) {
        (&self.ids, self.read)
    }

    /// A detokenizer that continues from a carried [`Detokenizer::window`]
    /// or from vLLM's window (`prev_token_ids[prefix_offset..]`,
    /// `read_offset - prefix_offset`): `None` when `read` is past the ids.
    /// With a concatenating decoder the prefix adds nothing (module docs)
    /// and is dropped, so a window whose prefix is not empty (vLLM keeps
    /// one for every decoder) is read as the held ids alone.
    pub fn resume(view: &TokenizerView, skip_special: bool, mut ids: Vec<u32>, read: usize) -> Option<Self> {
        if read > ids.len() {
            return None;
        }
        let mut d = Self::with_skip(view, skip_special);
        if d.concat {
            ids.drain(..read);
            d.ids = ids;
            return Some(d);
        }
        d.prefix = d.decode(&ids[..read]);
        d.ids = ids;
        d.read = read;
        Some(d)
    }

    /// Whether ids are held back (their text is not released yet).
    pub fn has_pending(&self) -> bool {
        self.ids.len() > self.read
    }

    /// Ends the sequence: releases whatever is held, incomplete UTF-8
    /// included (as U+FFFD, exactly as [`TokenizerView::decode`] renders it).
    pub fn finish(self) -> String {
        if !self.has_pending() {
            return String::new();
        }
        let text = self.decode(&self.ids);
        after_prefix(&self.prefix, &text).to_string()
    }
}

/// `text` without its leading `prefix`. Should a decoder ever rewrite the
/// prefix, the text after the longest common prefix (on a char boundary) is
/// released rather than panicking on a bad slice.
fn after_prefix<'t>(prefix: &str, text: &'t str) -> &'t str {
    if let Some(rest) = text.strip_prefix(prefix) {
        return rest;
    }
    let common = text
        .char_indices()
        .zip(prefix.chars())
        .find(|((_, a), b)| a != b)
        .map_or(prefix.len().min(text.len()), |((i, _), _)| i);
    &text[common..]
}

#[cfg(test)]
mod tests {
    use super::after_prefix;

    #[test]
    fn after_prefix_is_safe() {
        assert_eq!(after_prefix("ab", "abc"), "c");
        assert_eq!(after_prefix("", "é"), "é");
        assert_eq!(after_prefix("aé", "aèx"), "èx");
    }
}
