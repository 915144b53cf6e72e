//! The result types Python sees: [`Delta`] (one `push`/`finish`) and
//! [`Message`] (a one-shot parse), with their tool calls.
//!
//! They are frozen copies of the core's values, built once per call: an
//! empty `reasoning` or `content` is `None`, as in the core's `Message` and
//! on the wire, so `delta.content is None` means "no content in this delta".

use pyo3::prelude::*;
use pyo3::types::PyDict;

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

/// An optional string as Python's `repr` writes it (`None`, or a quoted string).
fn opt(s: &Option<String>) -> String {
    match s {
        Some(s) => format!("{s:?}"),
        None => "None".to_string(),
    }
}

/// A fragment of one tool call in a [`Delta`].
#[pyclass(frozen, get_all, module = "llmsift")]
#[derive(Clone)]
pub struct ToolCallDelta {
    /// Position of the call in the message (0-based).
    pub index: usize,
    /// The call id, in the call's first fragment only.
    pub id: Option<String>,
    /// The function name, in the call's first fragment only.
    pub name: Option<String>,
    /// The next piece of the arguments JSON text (may be empty).
    pub arguments: String,
}

#[pymethods]
impl ToolCallDelta {
    fn __repr__(&self) -> String {
        format!(
            "ToolCallDelta(index={}, id={}, name={}, arguments={:?})",
            self.index,
            opt(&self.id),
            opt(&self.name),
            self.arguments
        )
    }

    /// The OpenAI streaming shape: `{"index", "id"?, "type"?, "function": {"name"?, "arguments"}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("index", self.index)?;
        if let Some(id) = &self.id {
            d.set_item("id", id)?;
            d.set_item("type", "function")?;
        }
        let f = PyDict::new(py);
        if let Some(n) = &self.name {
            f.set_item("name", n)?;
        }
        f.set_item("arguments", &self.arguments)?;
        d.set_item("function", f)?;
        Ok(d)
    }
}

/// One byte span of the raw output (`byte_spans=True`; see the core's
/// `spans` module): raw bytes `[start, end)` and what they became.
#[pyclass(frozen, get_all, module = "llmsift")]
#[derive(Clone)]
pub struct Span {
    /// First raw byte (absolute offset in the output).
    pub start: usize,
    /// One past the last raw byte.
    pub end: usize,
    /// `reasoning`, `content`, `call`, `dropped` or `added`.
    pub kind: String,
    /// The call's index (`call`).
    pub index: Option<usize>,
    /// Why the bytes went to no field (`dropped`): `marker`, `framing`,
    /// `not_a_call`, `hidden`, `vllm_loss`.
    pub reason: Option<String>,
    /// The field (`added`).
    pub field: Option<String>,
    /// The raw text (`call`, `dropped`), the field text (`added`); empty otherwise.
    pub text: String,
}

impl Span {
    /// Copies of the core's spans, through their JSON shape (one naming).
    pub fn from_core(spans: &[llmsift_core::Span]) -> Vec<Span> {
        spans
            .iter()
            .map(|s| {
                let v = serde_json::to_value(s).unwrap_or_default();
                let get = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
                Span {
                    start: s.start,
                    end: s.end,
                    kind: get("kind").unwrap_or_default(),
                    index: v.get("index").and_then(|x| x.as_u64()).map(|i| i as usize),
                    reason: get("reason"),
                    field: get("field"),
                    text: s.text.clone(),
                }
            })
            .collect()
    }
}

#[pymethods]
impl Span {
    fn __repr__(&self) -> String {
        format!(
            "Span({}, {}, {:?}, index={:?}, reason={:?}, text={:?})",
            self.start, self.end, self.kind, self.index, self.reason, self.text
        )
    }
}

/// What one `push` or `finish` produced.
#[pyclass(frozen, get_all, module = "llmsift")]
#[derive(Clone)]
pub struct Delta {
    /// Reasoning text of this delta, `None` when there is none.
    pub reasoning: Option<String>,
    /// Content text of this delta, `None` when there is none.
    pub content: Option<String>,
    /// Tool call fragments, at most one per call index.
    pub tool_calls: Vec<ToolCallDelta>,
    /// With `byte_spans=True`: the raw output this delta settled, in order.
    pub spans: Vec<Span>,
}

impl Delta {
    /// A copy of the core's delta.
    pub fn from_core(d: &llmsift_core::Delta) -> Delta {
        Delta {
            reasoning: non_empty(&d.reasoning),
            content: non_empty(&d.content),
            tool_calls: d
                .tool_calls
                .iter()
                .map(|c| ToolCallDelta {
                    index: c.index,
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
            spans: Span::from_core(&d.spans),
        }
    }
}

#[pymethods]
impl Delta {
    /// True when the delta carries nothing.
    fn is_empty(&self) -> bool {
        self.reasoning.is_none() && self.content.is_none() && self.tool_calls.is_empty()
    }

    fn __bool__(&self) -> bool {
        !self.is_empty()
    }

    fn __repr__(&self) -> String {
        let calls: Vec<String> = self.tool_calls.iter().map(ToolCallDelta::__repr__).collect();
        format!(
            "Delta(reasoning={}, content={}, tool_calls=[{}])",
            opt(&self.reasoning),
            opt(&self.content),
            calls.join(", ")
        )
    }

    /// A streaming chunk's `delta` shape; absent fields are left out.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if let Some(r) = &self.reasoning {
            d.set_item("reasoning", r)?;
        }
        if let Some(c) = &self.content {
            d.set_item("content", c)?;
        }
        if !self.tool_calls.is_empty() {
            let calls = self.tool_calls.iter().map(|c| c.to_dict(py)).collect::<PyResult<Vec<_>>>()?;
            d.set_item("tool_calls", calls)?;
        }
        Ok(d)
    }
}

/// A complete tool call of a [`Message`].
#[pyclass(frozen, get_all, module = "llmsift")]
#[derive(Clone)]
pub struct ToolCall {
    /// The call id (`chatcmpl-tool-…`, or the model's own).
    pub id: String,
    /// The function name (never empty).
    pub name: String,
    /// The arguments as a JSON text (an object).
    pub arguments: String,
}

#[pymethods]
impl ToolCall {
    fn __repr__(&self) -> String {
        format!("ToolCall(id={:?}, name={:?}, arguments={:?})", self.id, self.name, self.arguments)
    }

    /// The OpenAI shape: `{"id", "type": "function", "function": {"name", "arguments"}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("id", &self.id)?;
        d.set_item("type", "function")?;
        let f = PyDict::new(py);
        f.set_item("name", &self.name)?;
        f.set_item("arguments", &self.arguments)?;
        d.set_item("function", f)?;
        Ok(d)
    }
}

/// One parsed assistant message.
#[pyclass(frozen, get_all, module = "llmsift")]
#[derive(Clone)]
pub struct Message {
    /// The model's reasoning, `None` when there was none.
    pub reasoning: Option<String>,
    /// The visible answer, `None` when there was none.
    pub content: Option<String>,
    /// Tool calls in the order the model wrote them.
    pub tool_calls: Vec<ToolCall>,
    /// With `byte_spans=True`: the folded spans of the whole output.
    pub spans: Vec<Span>,
}

impl Message {
    /// A copy of the core's message.
    pub fn from_core(m: llmsift_core::Message) -> Message {
        Message {
            reasoning: m.reasoning,
            content: m.content,
            tool_calls: m
                .tool_calls
                .into_iter()
                .map(|c| ToolCall { id: c.id, name: c.name, arguments: c.arguments })
                .collect(),
            spans: Vec::new(),
        }
    }
}

#[pymethods]
impl Message {
    fn __repr__(&self) -> String {
        let calls: Vec<String> = self.tool_calls.iter().map(ToolCall::__repr__).collect();
        format!(
            "Message(reasoning={}, content={}, tool_calls=[{}])",
            opt(&self.reasoning),
            opt(&self.content),
            calls.join(", ")
        )
    }

    fn __eq__(&self, other: &Message) -> bool {
        self.reasoning == other.reasoning
            && self.content == other.content
            && self.tool_calls.len() == other.tool_calls.len()
            && self
                .tool_calls
                .iter()
                .zip(&other.tool_calls)
                .all(|(a, b)| a.id == b.id && a.name == b.name && a.arguments == b.arguments)
    }

    /// A non-streaming response's message: `{"role": "assistant", "reasoning", "content", "tool_calls"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("role", "assistant")?;
        d.set_item("reasoning", &self.reasoning)?;
        d.set_item("content", &self.content)?;
        let calls = self.tool_calls.iter().map(|c| c.to_dict(py)).collect::<PyResult<Vec<_>>>()?;
        d.set_item("tool_calls", calls)?;
        Ok(d)
    }
}
