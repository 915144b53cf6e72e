//! `sift` for Python: the native module `llmsift._sift` behind the `sift` wheel.
//!
//! Owns the Python face of the core and nothing else: a [`parser::Parser`]
//! per request over a [`llmsift_core::ParserFactory`] that is compiled once per
//! parser pair (and bound once per vocabulary) and shared by every Python
//! parser of that pair (`factory.rs`); the result types (`types.rs`); the
//! registry's names and template detection; the `llmsift.vllm` plugin's
//! per-delta path, vLLM's models built natively (`vllm.rs`). Parsing rules
//! live in the core.
//!
//! Invariants: model output never raises (it becomes content, as in the
//! core); only misuse does (an unknown parser name, an unreadable tokenizer,
//! a `tools` value that is not JSON), as [`SiftError`] carrying the Rust
//! error's message. The GIL is released while the core parses anything
//! longer than a short delta (see `parser.rs`).

use pyo3::prelude::*;

mod factory;
mod parser;
mod types;
mod vllm;

pyo3::create_exception!(
    _sift,
    SiftError,
    pyo3::exceptions::PyValueError,
    "Misuse of the parser API (unknown parser name, unreadable tokenizer, invalid JSON argument); the message is Sift's own."
);

/// The registered parser names: `{"reasoning": [...], "tool": [...]}`, vLLM's names.
#[pyfunction]
fn parsers(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let reg = llmsift_core::Registry::builtin();
    let d = pyo3::types::PyDict::new(py);
    d.set_item("reasoning", reg.reasoning_names().collect::<Vec<_>>())?;
    d.set_item("tool", reg.tool_names().collect::<Vec<_>>())?;
    Ok(d)
}

/// The parsers that fit a chat template (or a `tokenizer_config.json`'s
/// text): `{"reasoning": name|None, "tool": name|None, "also": [...]}`.
#[pyfunction]
fn detect(py: Python<'_>, template: String) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    // A tokenizer_config.json's text carries the template and its added tokens.
    let text = match serde_json::from_str::<serde_json::Value>(&template) {
        Ok(v) if v.is_object() => llmsift_core::detection_text(&v),
        _ => template,
    };
    let found = py.detach(|| llmsift_core::Registry::builtin().detect(&text));
    let d = pyo3::types::PyDict::new(py);
    d.set_item("reasoning", found.reasoning)?;
    d.set_item("tool", found.tools)?;
    d.set_item("also", found.also)?;
    Ok(d)
}

/// The native module.
#[pymodule]
fn _sift(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SiftError", m.py().get_type::<SiftError>())?;
    m.add_function(wrap_pyfunction!(parsers, m)?)?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;
    m.add_class::<parser::Parser>()?;
    m.add_class::<types::Delta>()?;
    m.add_class::<types::ToolCallDelta>()?;
    m.add_class::<types::Message>()?;
    m.add_class::<types::ToolCall>()?;
    m.add_class::<types::Span>()?;
    m.add_class::<vllm::DeltaModels>()?;
    m.add_class::<vllm::VllmStream>()?;
    Ok(())
}
