//! Recorded model outputs: the data behind `sift serve --demo` and the
//! replay backend (`sift-replay`).
//!
//! A recording (`crates/llmsift-serve/demo/*.json`, compiled into the binary) is one
//! model family's raw output, markers and all, in two variants: the answer
//! to a request with tools and to one without. It names the tokenizer it is
//! replayed through (one of the pinned `.assets` tokenizers) and the vLLM
//! parser names that read it.
//!
//! Invariant: a replay is deterministic: the same recording, variant and
//! `max_tokens` give the same token ids, so tests can assert exact bytes.

use llmsift_tokenizers::TokenizerView;
use serde::Deserialize;
use std::path::PathBuf;

/// One recording.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// The model name it is served as.
    pub name: String,
    /// What family it shows.
    pub description: String,
    /// The pinned tokenizer (`qwen3`, `deepseek_r1`, `gptoss`, …).
    pub tokenizer: String,
    /// A template in the assets' `templates/` (default: the tokenizer's `tokenizer_config.json`).
    #[serde(default)]
    pub template: Option<String>,
    /// vLLM reasoning parser name.
    pub reasoning_parser: String,
    /// vLLM tool-call parser name.
    pub tool_call_parser: String,
    /// Function names the tool variant calls: a prompt mentioning one gets it.
    pub tool_names: Vec<String>,
    /// The output when the request has tools.
    pub with_tools: String,
    /// The output otherwise.
    pub without_tools: String,
}

const BUILTIN: [(&str, &str); 4] = [
    ("qwen3", include_str!("../demo/qwen3.json")),
    ("qwen3-coder", include_str!("../demo/qwen3-coder.json")),
    ("deepseek-r1", include_str!("../demo/deepseek-r1.json")),
    ("gpt-oss", include_str!("../demo/gpt-oss.json")),
];

impl Recording {
    /// The recordings shipped in the crate's `demo/`.
    pub fn builtin() -> Vec<Recording> {
        BUILTIN
            .iter()
            .map(|(file, json)| {
                serde_json::from_str(json).unwrap_or_else(|e| panic!("demo/{file}.json: {e}"))
            })
            .collect()
    }

    /// A shipped recording by file stem (`qwen3`) or served name (`qwen3-demo`).
    pub fn find(name: &str) -> Option<Recording> {
        let i = BUILTIN.iter().position(|(f, _)| *f == name);
        let all = Recording::builtin();
        match i {
            Some(i) => all.into_iter().nth(i),
            None => all.into_iter().find(|r| r.name == name),
        }
    }

    /// The output for a request, by whether it has tools.
    pub fn output(&self, with_tools: bool) -> &str {
        if with_tools {
            &self.with_tools
        } else {
            &self.without_tools
        }
    }

    /// Whether a rendered prompt asks for the tool variant (it mentions a tool).
    pub fn prompt_has_tools(&self, prompt: &str) -> bool {
        self.tool_names.iter().any(|t| prompt.contains(t.as_str()))
    }

    /// The `tokenizer.json` it is replayed through.
    pub fn tokenizer_path(&self) -> PathBuf {
        llmsift_tokenizers::named_tokenizer_path(&self.tokenizer).unwrap_or_else(|| {
            llmsift_tokenizers::assets_dir().join("tokenizers").join(&self.tokenizer).join("tokenizer.json")
        })
    }

    /// The template source: a `.jinja` in the assets, or the tokenizer's config.
    pub fn template_path(&self) -> PathBuf {
        match &self.template {
            Some(t) => llmsift_tokenizers::assets_dir().join("templates").join(t),
            None => self.tokenizer_path().with_file_name("tokenizer_config.json"),
        }
    }
}

/// The token ids a replay sends, and whether the token limit cut them.
pub fn replay_ids(view: &TokenizerView, output: &str, max_tokens: Option<u64>) -> (Vec<u32>, bool) {
    let mut ids = view.encode(output).unwrap_or_default();
    match max_tokens {
        Some(m) if (m as usize) < ids.len() => {
            ids.truncate(m as usize);
            (ids, true)
        }
        _ => (ids, false),
    }
}
