//! The case (input line) shape.

use serde::Deserialize;
use serde_json::Value;

/// How to cut the output for the streaming run.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StreamSpec {
    /// Exact delta texts.
    #[serde(default)]
    pub chunks: Option<Vec<String>>,
    /// `tokens` or `bytes`.
    #[serde(default)]
    pub unit: Option<String>,
    /// Units per delta.
    #[serde(default)]
    pub size: Option<usize>,
}

/// One conformance case.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// Unique id, echoed in the answer.
    pub id: String,
    /// vLLM reasoning parser name.
    #[serde(default)]
    pub reasoning_parser: Option<String>,
    /// vLLM tool parser name.
    #[serde(default)]
    pub tool_parser: Option<String>,
    /// A tokenizer name or a path to a `tokenizer.json`.
    #[serde(default)]
    pub tokenizer: Option<String>,
    /// What parsing depends on.
    #[serde(default)]
    pub request: Value,
    /// The raw model output.
    pub model_output: String,
    /// How to stream it.
    #[serde(default)]
    pub stream: Option<StreamSpec>,
    /// The reference answer (not used to produce ours).
    #[serde(default)]
    pub expected: Option<Value>,
}
