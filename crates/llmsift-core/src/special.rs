//! vLLM's `skip_special_tokens` decision for a request, as format data.
//!
//! vLLM detokenizes a request's output with the request's
//! `skip_special_tokens` (default true): special tokens of the vocabulary
//! (`[TOOL_CALLS]`, `<|tool_call|>`, harmony's `<|channel|>` …) vanish from the
//! text, markers that are plain text or non-special added tokens stay. Before
//! generation its serving layer calls the parsers' `adjust_request`, and many
//! of them turn skipping off, each under its own condition; a format file
//! states that condition as `keep_special_tokens` (absent: the parser never
//! touches it). The serving layer calls `adjust_request` only when a
//! reasoning parser is configured or `tool_choice` is not `none` (it is
//! `none` when the request has no tools).
//!
//! This module only decides; the layer that owns detokenization (a
//! tokenizer's detokenizer, or a caller's marker list without one) applies
//! the decision. Invariant: the decision depends only on the parser pair and
//! the request, never on the output.

/// When a parser's `adjust_request` sets `skip_special_tokens = False`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepSpecial {
    /// Whenever `adjust_request` runs (vLLM's parser-engine adapters).
    Always,
    /// When the request declares tools and `tool_choice` is not `none`.
    WithTools,
    /// Always, whether `adjust_request` runs or not: vLLM parses this format
    /// from token ids (harmony), so skipped text never reaches its parser,
    /// and Sift, which parses text, keeps the markers.
    FromIds,
}

impl KeepSpecial {
    /// A format file's `keep_special_tokens` value (`never`: none).
    pub fn from_spec(v: crate::format::spec::KeepSpecialTokens) -> Option<KeepSpecial> {
        use crate::format::spec::KeepSpecialTokens as K;
        match v {
            K::Always => Some(KeepSpecial::Always),
            K::WithTools => Some(KeepSpecial::WithTools),
            K::FromIds => Some(KeepSpecial::FromIds),
            K::Never => None,
        }
    }

    fn keeps(self, tools_declared: bool, tool_choice_none: bool) -> bool {
        match self {
            KeepSpecial::Always | KeepSpecial::FromIds => true,
            KeepSpecial::WithTools => tools_declared && !tool_choice_none,
        }
    }
}

/// The two halves' rules of a composed format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SpecialRule {
    /// A reasoning parser is configured, and its rule.
    pub reasoning: Option<Option<KeepSpecial>>,
    /// A tool parser is configured, and its rule.
    pub tools: Option<Option<KeepSpecial>>,
}

impl SpecialRule {
    /// Whether vLLM would detokenize with special tokens skipped.
    /// `requested` is the request's own `skip_special_tokens` (None: vLLM's
    /// default, true); `tool_choice_none` is true for `tool_choice: "none"`
    /// and for a request without tools.
    pub fn skip(&self, requested: Option<bool>, tools_declared: bool, tool_choice_none: bool) -> bool {
        let skip = requested.unwrap_or(true);
        let from_ids = |r: Option<Option<KeepSpecial>>| r.flatten() == Some(KeepSpecial::FromIds);
        if !skip || from_ids(self.reasoning) || from_ids(self.tools) {
            return false;
        }
        let adjusts = self.reasoning.is_some() || (self.tools.is_some() && !tool_choice_none);
        if !adjusts {
            return true;
        }
        let keeps = |r: Option<Option<KeepSpecial>>| {
            r.flatten().is_some_and(|k| k.keeps(tools_declared, tool_choice_none))
        };
        !(keeps(self.reasoning) || keeps(self.tools))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjust_runs_only_with_a_reasoning_parser_or_a_tool_choice() {
        let hermes = SpecialRule { reasoning: None, tools: Some(Some(KeepSpecial::WithTools)) };
        assert!(hermes.skip(None, true, true));
        assert!(!hermes.skip(None, true, false));
        assert!(hermes.skip(None, false, true));
        let qwen3 = SpecialRule { reasoning: Some(Some(KeepSpecial::Always)), tools: Some(None) };
        assert!(!qwen3.skip(None, false, true));
        assert!(!qwen3.skip(Some(false), false, true));
        let none = SpecialRule { reasoning: Some(None), tools: Some(Some(KeepSpecial::Always)) };
        // The tool parser's adjust_request runs with the reasoning parser's.
        assert!(!none.skip(None, false, true));
        // Harmony is parsed from ids in vLLM: its markers always stay.
        let harmony = SpecialRule { reasoning: None, tools: Some(Some(KeepSpecial::FromIds)) };
        assert!(!harmony.skip(None, false, true));
        let plain = SpecialRule { reasoning: None, tools: Some(None) };
        assert!(plain.skip(None, true, false));
        assert!(!plain.skip(Some(false), true, false));
    }
}
