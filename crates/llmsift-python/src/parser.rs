//! `llmsift.Parser`: one request's streaming parser.
//!
//! The constructor reads the request's fields (Python values, or JSON text
//! for `tools`, `chat_template_kwargs` and `parser_init_kwargs`) into a
//! [`llmsift_core::Request`] and takes the pair's shared factory (`factory.rs`).
//! `push`/`finish`/`parse` are the core's, unchanged: streaming equals
//! one-shot because `parse` is push-everything-then-finish.
//!
//! The GIL: `parse` always releases it; `push` releases it only for deltas
//! of at least [`DETACH_BYTES`], because a typical delta (a token or a few)
//! parses in tens of nanoseconds, less than releasing and re-taking the GIL
//! costs, and a server calling `push` per token gains nothing from it.

use crate::factory::{self, Names, VocabKey};
use crate::types::{Delta, Message};
use crate::SiftError;
use llmsift_core::{ParserFactory, Request, ToolChoice, Tools};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyMapping, PyString};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// Deltas at least this long are parsed with the GIL released.
pub(crate) const DETACH_BYTES: usize = 4096;

fn err(msg: impl Into<String>) -> PyErr {
    SiftError::new_err(msg.into())
}

/// A Python value as JSON: a `str` is JSON text, anything else goes through `json.dumps`.
fn to_json(py: Python<'_>, what: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    let text: String = if let Ok(s) = v.cast::<PyString>() {
        s.extract::<String>()?
    } else {
        py.import("json")?
            .call_method1("dumps", (v,))
            .map_err(|e| err(format!("{what} is not JSON-serialisable: {e}")))?
            .extract()?
    };
    serde_json::from_str(&text).map_err(|e| err(format!("{what} is not valid JSON: {e}")))
}

/// One request's parser (see the module docs).
#[pyclass(module = "llmsift")]
pub struct Parser {
    pub(crate) inner: llmsift_core::Parser,
    factory: ParserFactory,
    tools_declared: bool,
    choice_none: bool,
    byte_spans: bool,
}

#[pymethods]
impl Parser {
    #[new]
    #[pyo3(signature = (
        reasoning_parser = None, tool_call_parser = None, *, tools = None, tool_choice = None,
        chat_template_kwargs = None, prompt = None, tokenizer = None, include_reasoning = true,
        reasoning_effort = None, parser_init_kwargs = None, vllm_text_loss = false, vllm_one_shot = false,
        id_seed = None, byte_spans = false, atomic_calls = false,
    ))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, one per request field.
    fn new(
        py: Python<'_>,
        reasoning_parser: Option<String>,
        tool_call_parser: Option<String>,
        tools: Option<&Bound<'_, PyAny>>,
        tool_choice: Option<&Bound<'_, PyAny>>,
        chat_template_kwargs: Option<&Bound<'_, PyAny>>,
        prompt: Option<String>,
        tokenizer: Option<&Bound<'_, PyAny>>,
        include_reasoning: bool,
        reasoning_effort: Option<String>,
        parser_init_kwargs: Option<&Bound<'_, PyAny>>,
        vllm_text_loss: bool,
        vllm_one_shot: bool,
        id_seed: Option<u64>,
        byte_spans: bool,
        atomic_calls: bool,
    ) -> PyResult<Parser> {
        let names: Names = (reasoning_parser, tool_call_parser);
        let factory = match tokenizer {
            None => py.detach(|| factory::compiled(&names)),
            Some(t) if t.cast::<PyMapping>().is_ok() && !t.is_instance_of::<PyString>() => {
                // A token → id mapping (a tokenizer's `get_vocab()`): only the
                // pair's marker spellings are looked up.
                let map = t.cast::<PyMapping>()?;
                let mut ids = vec![];
                for s in factory::spellings(&names).map_err(err)? {
                    if let Ok(v) = map.get_item(&s) {
                        if let Ok(id) = v.extract::<u32>() {
                            ids.push((s, id));
                        }
                    }
                }
                py.detach(|| factory::bound(&names, VocabKey::Ids(ids)))
            }
            Some(t) => {
                let path: PathBuf = t.extract()?;
                py.detach(|| factory::bound(&names, VocabKey::Path(path)))
            }
        }
        .map_err(err)?;

        let mut req = Request::default();
        let mut tools_declared = false;
        if let Some(t) = tools.filter(|t| !t.is_none()) {
            let v = to_json(py, "tools", t)?;
            tools_declared = v.as_array().is_some_and(|a| !a.is_empty());
            req.tools = Arc::new(Tools::from_json(&v));
        }
        let mut choice_none = !tools_declared;
        if let Some(c) = tool_choice.filter(|c| !c.is_none()) {
            let v = match c.cast::<PyString>() {
                Ok(s) => Value::String(s.extract::<String>()?),
                Err(_) => to_json(py, "tool_choice", c)?,
            };
            choice_none = v.as_str() == Some("none");
            req.tool_choice = ToolChoice::from_json(&v);
        }
        if let Some(k) = chat_template_kwargs.filter(|k| !k.is_none()) {
            req.chat_template_kwargs = Some(to_json(py, "chat_template_kwargs", k)?).filter(|v| !v.is_null());
        }
        if let Some(k) = parser_init_kwargs.filter(|k| !k.is_none()) {
            req.init_kwargs = Some(to_json(py, "parser_init_kwargs", k)?).filter(|v| !v.is_null());
        }
        req.prompt = prompt;
        req.include_reasoning = include_reasoning;
        req.reasoning_effort = reasoning_effort;
        req.vllm_text_loss = vllm_text_loss;
        req.vllm_one_shot = vllm_one_shot;
        req.id_seed = id_seed;
        req.byte_spans = byte_spans;
        req.atomic_calls = atomic_calls;
        let inner = factory.parser(&req);
        Ok(Parser { inner, factory, tools_declared, choice_none, byte_spans })
    }

    /// Feeds one delta (its text, and its token ids when known); returns what it produced.
    #[pyo3(signature = (text, token_ids = None))]
    fn push(&mut self, py: Python<'_>, text: PyBackedStr, token_ids: Option<Vec<u32>>) -> Delta {
        let p = &mut self.inner;
        let d = if text.len() >= DETACH_BYTES {
            py.detach(|| p.push(&text, token_ids.as_deref()))
        } else {
            p.push(&text, token_ids.as_deref())
        };
        Delta::from_core(&d)
    }

    /// Ends the stream: flushes held text, closes an open call. Later calls produce nothing.
    fn finish(&mut self) -> Delta {
        Delta::from_core(&self.inner.finish())
    }

    /// One-shot parse of a whole output (push everything, finish, fold).
    #[pyo3(signature = (text, token_ids = None))]
    fn parse(&mut self, py: Python<'_>, text: PyBackedStr, token_ids: Option<Vec<u32>>) -> Message {
        let p = &mut self.inner;
        if self.byte_spans {
            // The message and its folded spans.
            let (m, spans) = py.detach(|| {
                let mut f = llmsift_core::Folder::default();
                f.push(&p.push(&text, token_ids.as_deref()));
                f.push(&p.finish());
                let spans = f.spans().to_vec();
                (f.finish(), spans)
            });
            let mut m = Message::from_core(m);
            m.spans = crate::types::Span::from_core(&spans);
            return m;
        }
        Message::from_core(py.detach(|| p.parse(&text, token_ids.as_deref())))
    }

    /// After `finish`: the index of the call the output's end cut, left as
    /// written (its arguments incomplete: do not run it; a server answers
    /// `finish_reason: "length"`), or `None`.
    #[getter]
    fn cut_call(&self) -> Option<usize> {
        self.inner.cut_call()
    }

    /// The state the parser is in (`reasoning`, `content`, …; the format's names).
    #[getter]
    fn state(&self) -> String {
        self.inner.state().to_string()
    }

    /// Whether vLLM would detokenize this request's output with special
    /// tokens skipped, given the request's own `skip_special_tokens`
    /// (`None`: vLLM's default, true) and this pair's rules.
    #[pyo3(signature = (requested = None))]
    fn skips_special_tokens(&self, requested: Option<bool>) -> bool {
        self.factory.format().skips_special_tokens(requested, self.tools_declared, self.choice_none)
    }

    /// The reasoning markers' token ids, `(start or None, end)`, when the
    /// pair has reasoning markers bound to a vocabulary.
    #[getter]
    fn reasoning_token_ids(&self) -> Option<(Option<u32>, u32)> {
        self.factory.format().reasoning_token_ids()
    }
}
