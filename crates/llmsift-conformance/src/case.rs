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
    /// A tokenizer name, a path to a `tokenizer.json`, or a spec (a base
    /// vocabulary plus special tokens, kept as its JSON text: see `tokspec.rs`).
    #[serde(default, deserialize_with = "crate::tokspec::tokenizer_field")]
    pub tokenizer: Option<String>,
    /// What parsing depends on.
    #[serde(default)]
    pub request: Value,
    /// The raw model output.
    pub model_output: String,
    /// How to stream it.
    #[serde(default)]
    pub stream: Option<StreamSpec>,
    /// With a tokenizer: the output as runs that concatenate to
    /// `model_output`, each a string (tokenized as the model's output is,
    /// added tokens read whole) or `{"ordinary": text}` (spelled in ordinary
    /// tokens only: a marker the model wrote inside a value without its
    /// token; see `tokspec::encode_runs`).
    #[serde(default)]
    pub tokenized_as: Option<Vec<Value>>,
    /// The reference answer (not used to produce ours).
    #[serde(default)]
    pub expected: Option<Value>,
}

/// Nesting depth of a JSON text (strings skipped), to bound recursion before parsing.
pub(crate) fn json_depth(s: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for b in s.bytes() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Deepest case nesting accepted (the corpus's `expected` may nest deeper
/// than serde_json's default limit of 128).
pub const MAX_CASE_DEPTH: usize = 2048;

impl Case {
    /// Parses one case line.
    pub fn from_json_line(line: &str) -> Result<Case, String> {
        let d = json_depth(line);
        if d > MAX_CASE_DEPTH {
            return Err(format!("case nests {d} levels deep (limit {MAX_CASE_DEPTH})"));
        }
        let mut de = serde_json::Deserializer::from_str(line);
        de.disable_recursion_limit();
        let case = <Case as serde::Deserialize>::deserialize(&mut de).map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(case)
    }
}
