//! `[alias.NAME]`: another name a format file answers to, with what that
//! name's vLLM parser class decides otherwise. An empty table is a plain
//! alias.
//!
//! The overlay is typed: only the keys below may differ between a file and
//! its aliases. A scalar key replaces the file's; a `vllm` sub-table
//! (`text_loss`, `one_shot`) replaces the file's sub-table of that name
//! whole, so an alias's profile reads in one place.

use super::vllm::{OneShotSpec, ParserClass, TextLossSpec};
use super::{FormatSpec, KeepSpecialTokens};
use serde::Deserialize;

/// One `[alias.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasOverlay {
    /// The start state (`{ initial = "think" }`: Command 4's filter reads
    /// bare text as reasoning).
    #[serde(default)]
    pub initial: Option<String>,
    /// The reasoning format whose grammar the tool format borrows.
    #[serde(default)]
    pub grammar_from: Option<String>,
    /// vLLM's `skip_special_tokens` rule for this name.
    #[serde(default)]
    pub keep_special_tokens: Option<KeepSpecialTokens>,
    /// `[calls]` keys that differ.
    #[serde(default)]
    pub calls: Option<CallsOverlay>,
    /// `[vllm]` keys and sub-tables that differ.
    #[serde(default)]
    pub vllm: Option<VllmOverlay>,
}

/// The `[calls]` keys an alias may set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallsOverlay {
    /// `calls.native_required` (vLLM's `supports_required_and_named = false`).
    #[serde(default)]
    pub native_required: Option<bool>,
}

/// The `[vllm]` parts an alias may set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VllmOverlay {
    /// `vllm.parser`.
    #[serde(default)]
    pub parser: Option<ParserClass>,
    /// Replaces `[vllm.text_loss]`.
    #[serde(default)]
    pub text_loss: Option<TextLossSpec>,
    /// Replaces `[vllm.one_shot]`.
    #[serde(default)]
    pub one_shot: Option<OneShotSpec>,
}

impl AliasOverlay {
    /// The file's spec with this overlay applied.
    pub fn apply(&self, file: &FormatSpec) -> FormatSpec {
        let mut s = file.clone();
        if let Some(v) = &self.initial {
            s.initial = Some(v.clone());
        }
        if let Some(v) = &self.grammar_from {
            s.grammar_from = Some(v.clone());
        }
        if let Some(v) = self.keep_special_tokens {
            s.keep_special_tokens = v;
        }
        if let Some(v) = self.calls.as_ref().and_then(|c| c.native_required) {
            s.calls.native_required = v;
        }
        if let Some(o) = &self.vllm {
            if let Some(v) = o.parser {
                s.vllm.parser = v;
            }
            if let Some(v) = &o.text_loss {
                s.vllm.text_loss = v.clone();
            }
            if let Some(v) = &o.one_shot {
                s.vllm.one_shot = v.clone();
            }
        }
        s
    }

    /// Whether the overlay changes nothing (a plain alias shares the file's spec).
    pub fn is_empty(&self) -> bool {
        *self == AliasOverlay::default()
    }
}
