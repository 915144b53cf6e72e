//! The tool-call families a structural tag is known for, under vLLM's
//! `--tool-call-parser` names (aliases included).
//!
//! Owns the names only. What a family's calls look like is read from its
//! format file by [`crate::syntax`]; nothing here spells a marker.
//!
//! Invariant: every family names a built-in tool format
//! ([`Family::parser_name`] is a name `llmsift_core::Registry::builtin()`
//! knows), so its call syntax can be derived.

use serde::{Deserialize, Serialize};

/// A tool-call family, named as vLLM's `--tool-call-parser`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// `hermes` (Hermes 2 Pro, Qwen 2.5 / 3).
    Hermes,
    /// `qwen3_coder` (also `qwen3_xml`).
    Qwen3Coder,
    /// `llama3_json` (also `llama4_json`).
    Llama3Json,
    /// `deepseek_v3` (DeepSeek V3 / R1).
    DeepseekV3,
    /// `deepseek_v31` (DeepSeek V3.1).
    DeepseekV31,
    /// `kimi_k2`.
    KimiK2,
    /// `openai` (gpt-oss, the harmony format).
    Openai,
}

const ALL: [Family; 7] = [
    Family::Hermes,
    Family::Qwen3Coder,
    Family::Llama3Json,
    Family::DeepseekV3,
    Family::DeepseekV31,
    Family::KimiK2,
    Family::Openai,
];

impl Family {
    /// Every family with a structural tag.
    pub fn all() -> &'static [Family] {
        &ALL
    }

    /// The family of a vLLM tool parser name, its format's `aliases`
    /// included (`qwen3_xml`, `llama4_json`): the built-in registry resolves
    /// the name to its format file, whose name is the family's.
    pub fn from_parser_name(name: &str) -> Option<Family> {
        let file = llmsift_core::Registry::builtin().tool(name).ok()?;
        ALL.iter().copied().find(|f| f.parser_name() == file.name)
    }

    /// vLLM's parser name.
    pub fn parser_name(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Qwen3Coder => "qwen3_coder",
            Family::Llama3Json => "llama3_json",
            Family::DeepseekV3 => "deepseek_v3",
            Family::DeepseekV31 => "deepseek_v31",
            Family::KimiK2 => "kimi_k2",
            Family::Openai => "openai",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases() {
        for &f in Family::all() {
            assert_eq!(Family::from_parser_name(f.parser_name()), Some(f));
        }
        assert_eq!(Family::from_parser_name("qwen3_xml"), Some(Family::Qwen3Coder));
        assert_eq!(Family::from_parser_name("llama4_json"), Some(Family::Llama3Json));
        assert_eq!(Family::from_parser_name("pythonic"), None);
        assert_eq!(Family::from_parser_name("qwen3"), None);
    }
}
