//! The per-delta path of the `llmsift.vllm` plugin, in one native call:
//! [`VllmStream`] takes vLLM's `parse_delta` arguments, filters the token
//! ids, pushes into the request's [`Parser`] and returns vLLM's
//! `DeltaMessage` (or `None` when the delta carries nothing), built by
//! [`DeltaModels`].
//!
//! Owns only that glue: which ids reach the parser (a special id only when
//! its spelling is in the delta's text, as vLLM's detokenizer dropped it
//! otherwise) and the shape of the models. Parsing is the core's.
//!
//! Invariants: a stream's deltas are the core's deltas, unchanged (a
//! `finished` call's push and finish land in one core delta, so fragments
//! of one call merge as the core merges them); empty reasoning or content
//! is left unset; a call fragment sets only the fields it has (`id` and
//! `type` on the first fragment, `name` when known, `arguments` always), as
//! vLLM's own parsers build them, so the chunk serialised with
//! `exclude_unset` (vLLM's serving layer) carries no nulls. The models are
//! built the way pydantic's `model_construct` builds them (no validation:
//! Sift's values are valid by construction) unless [`DeltaModels`] is made
//! `validated`; the plugin checks the two agree at import.

use crate::parser::{Parser, DETACH_BYTES};
use crate::types::Delta;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyType};
use pyo3::{intern, IntoPyObjectExt};
use pyo3::{PyTraverseError, PyVisit};
use std::collections::HashMap;

/// One pydantic model class and what an unvalidated instance needs.
struct Model {
    cls: Py<PyType>,
    /// Every field's default (`None` for a field with a default factory).
    defaults: Py<PyDict>,
    /// Fields whose default comes from a factory, called per instance.
    factories: Vec<(Py<PyString>, Py<PyAny>)>,
    /// Whether the model keeps extra fields (`extra="allow"`): then its
    /// `__pydantic_extra__` is a dict, else `None`.
    extra: bool,
}

impl Model {
    fn read(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<Model> {
        let defaults = PyDict::new(py);
        let mut factories = vec![];
        let fields = cls.getattr(intern!(py, "model_fields"))?;
        for item in fields.call_method0(intern!(py, "items"))?.try_iter()? {
            let (name, field): (Bound<'_, PyString>, Bound<'_, PyAny>) = item?.extract()?;
            let factory = field.getattr(intern!(py, "default_factory"))?;
            if factory.is_none() {
                defaults.set_item(&name, field.getattr(intern!(py, "default"))?)?;
            } else {
                defaults.set_item(&name, py.None())?;
                factories.push((name.unbind(), factory.unbind()));
            }
        }
        let config = cls.getattr(intern!(py, "model_config"))?;
        let extra = config.call_method1(intern!(py, "get"), (intern!(py, "extra"),))?;
        let extra = extra.extract::<Option<String>>().ok().flatten().as_deref() == Some("allow");
        Ok(Model { cls: cls.clone().unbind(), defaults: defaults.unbind(), factories, extra })
    }
}

/// vLLM's `DeltaMessage`, `DeltaToolCall` and `DeltaFunctionCall` classes,
/// and how to build them (see the module docs).
#[pyclass(frozen, module = "llmsift")]
pub struct DeltaModels {
    message: Model,
    call: Model,
    function: Model,
    validated: bool,
    /// `object.__new__` and `object.__setattr__`: pydantic's own
    /// `model_construct` fills an instance through them.
    new: Py<PyAny>,
    setattr: Py<PyAny>,
}

#[pymethods]
impl DeltaModels {
    /// Reads the three classes' fields; `validated` builds every instance
    /// through the class's own (validating) constructor instead.
    #[new]
    #[pyo3(signature = (message, call, function, *, validated = false))]
    fn py_new(
        message: &Bound<'_, PyType>,
        call: &Bound<'_, PyType>,
        function: &Bound<'_, PyType>,
        validated: bool,
    ) -> PyResult<DeltaModels> {
        let py = message.py();
        let object = py.import("builtins")?.getattr("object")?;
        Ok(DeltaModels {
            message: Model::read(py, message)?,
            call: Model::read(py, call)?,
            function: Model::read(py, function)?,
            validated,
            new: object.getattr("__new__")?.unbind(),
            setattr: object.getattr("__setattr__")?.unbind(),
        })
    }

    /// Whether instances go through validation.
    #[getter]
    fn validated(&self) -> bool {
        self.validated
    }

    /// A `llmsift.Delta` as a `DeltaMessage` (`None` when it carries nothing):
    /// what a stream returns for it, without parsing (the benchmark's floor
    /// of a plugin that builds its models natively).
    fn build<'py>(&self, py: Python<'py>, delta: PyRef<'py, Delta>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut d = llmsift_core::Delta::default();
        d.reasoning = delta.reasoning.clone().unwrap_or_default();
        d.content = delta.content.clone().unwrap_or_default();
        d.tool_calls = delta
            .tool_calls
            .iter()
            .map(|c| llmsift_core::ToolCallDelta {
                index: c.index,
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        self.message(py, &d)
    }
}

impl DeltaModels {
    /// An instance of `model` with `values` set (and only those in its
    /// fields set), every other field at its default.
    fn make<'py>(
        &self,
        py: Python<'py>,
        model: &Model,
        values: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let cls = model.cls.bind(py);
        if self.validated {
            let kw = PyDict::new(py);
            for (k, v) in values {
                kw.set_item(k, v)?;
            }
            return cls.call((), Some(&kw));
        }
        let m = self.new.bind(py).call1((cls,))?;
        // The instance's own (new, empty) `__dict__`, filled in place: a
        // plain attribute read, where setting `__dict__` would be one more
        // call through `object.__setattr__` (with abi3 on Python 3.9 every
        // such call builds an argument tuple).
        let d = m.getattr(intern!(py, "__dict__"))?.cast_into::<PyDict>()?;
        d.update(model.defaults.bind(py).as_mapping())?;
        for (name, factory) in &model.factories {
            d.set_item(name.bind(py), factory.bind(py).call0()?)?;
        }
        for (k, v) in values {
            d.set_item(k, v)?;
        }
        let set = PySet::new(py, values.iter().map(|(k, _)| k))?;
        let setattr = self.setattr.bind(py);
        setattr.call1((&m, intern!(py, "__pydantic_fields_set__"), set))?;
        let extra = if model.extra { PyDict::new(py).into_any() } else { py.None().into_bound(py) };
        setattr.call1((&m, intern!(py, "__pydantic_extra__"), extra))?;
        setattr.call1((&m, intern!(py, "__pydantic_private__"), py.None()))?;
        Ok(m)
    }

    /// The core's delta as a `DeltaMessage`; `None` when it carries nothing.
    fn message<'py>(&self, py: Python<'py>, d: &llmsift_core::Delta) -> PyResult<Option<Bound<'py, PyAny>>> {
        if d.is_empty() {
            return Ok(None);
        }
        let mut values = Vec::with_capacity(3);
        if !d.reasoning.is_empty() {
            values.push((intern!(py, "reasoning"), PyString::new(py, &d.reasoning).into_any()));
        }
        if !d.content.is_empty() {
            values.push((intern!(py, "content"), PyString::new(py, &d.content).into_any()));
        }
        if !d.tool_calls.is_empty() {
            let calls = PyList::empty(py);
            for c in &d.tool_calls {
                let mut f = Vec::with_capacity(2);
                if let Some(n) = &c.name {
                    f.push((intern!(py, "name"), PyString::new(py, n).into_any()));
                }
                f.push((intern!(py, "arguments"), PyString::new(py, &c.arguments).into_any()));
                let function = self.make(py, &self.function, &f)?;
                let mut v = Vec::with_capacity(4);
                v.push((intern!(py, "index"), c.index.into_bound_py_any(py)?));
                if let Some(id) = &c.id {
                    v.push((intern!(py, "id"), PyString::new(py, id).into_any()));
                    v.push((intern!(py, "type"), intern!(py, "function").clone().into_any()));
                }
                v.push((intern!(py, "function"), function));
                calls.append(self.make(py, &self.call, &v)?)?;
            }
            values.push((intern!(py, "tool_calls"), calls.into_any()));
        }
        self.make(py, &self.message, &values).map(Some)
    }
}

/// One request's stream through vLLM's interface (see the module docs).
/// The request's [`Parser`] is made on the first call, by `start(request,
/// prompt_token_ids)`, because vLLM hands the request and the prompt to
/// the first `parse_delta`, not to the constructor.
#[pyclass(module = "llmsift")]
pub struct VllmStream {
    models: Py<DeltaModels>,
    start: Py<PyAny>,
    parser: Option<Py<Parser>>,
    /// Special token id → its spelling (vLLM's detokenizer drops these
    /// when the request skips special tokens).
    special: HashMap<u32, String>,
    /// The delta the parser writes into, reused across calls.
    delta: llmsift_core::Delta,
}

#[pymethods]
impl VllmStream {
    #[new]
    #[pyo3(signature = (models, start, special = None))]
    fn py_new(
        models: Py<DeltaModels>,
        start: Py<PyAny>,
        special: Option<HashMap<u32, String>>,
    ) -> VllmStream {
        VllmStream {
            models,
            start,
            parser: None,
            special: special.unwrap_or_default(),
            delta: Default::default(),
        }
    }

    /// vLLM's `Parser.parse_delta`: one engine step's text and ids,
    /// `finished` on the last. Positional only: pyo3 matches keyword
    /// arguments by name, which costs more per delta than a Python method's
    /// frame, so `SiftParser.parse_delta` passes its arguments on in order.
    #[pyo3(signature = (delta_text, delta_token_ids, request, prompt_token_ids, finished, /))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        delta_text: PyBackedStr,
        delta_token_ids: Option<Vec<u32>>,
        request: &Bound<'py, PyAny>,
        prompt_token_ids: Option<&Bound<'py, PyAny>>,
        finished: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.advance(py, &delta_text, delta_token_ids, request, prompt_token_ids, finished)
    }

    /// One delta of the split interfaces (`extract_*_streaming`).
    #[pyo3(signature = (text, token_ids = None, request = None))]
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        text: PyBackedStr,
        token_ids: Option<Vec<u32>>,
        request: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let none = py.None().into_bound(py);
        self.advance(py, &text, token_ids, request.unwrap_or(&none), None, false)
    }

    /// Ends the stream (`finish_streaming`): what the parser still held.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let none = py.None().into_bound(py);
        self.advance(py, "", None, &none, None, true)
    }

    /// The stream holds its owner's `start` method and the owner holds the
    /// stream: a cycle the garbage collector must see through, or every
    /// request's parser would stay alive.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.models)?;
        visit.call(&self.start)?;
        if let Some(p) = &self.parser {
            visit.call(p)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.parser = None;
    }

    /// The parser's state, `None` before the first delta.
    #[getter]
    fn state(&self, py: Python<'_>) -> Option<String> {
        self.parser.as_ref().map(|p| p.borrow(py).inner.state().to_string())
    }
}

impl VllmStream {
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        ids: Option<Vec<u32>>,
        request: &Bound<'py, PyAny>,
        prompt_token_ids: Option<&Bound<'py, PyAny>>,
        finished: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let parser = match &self.parser {
            Some(p) => p.bind(py).clone(),
            None => {
                let none = py.None().into_bound(py);
                let p = self
                    .start
                    .bind(py)
                    .call1((request, prompt_token_ids.unwrap_or(&none)))?
                    .cast_into::<Parser>()?;
                self.parser = Some(p.clone().unbind());
                p
            }
        };
        let ids = ids.map(|mut ids| {
            if !self.special.is_empty() {
                ids.retain(|i| self.special.get(i).is_none_or(|s| text.contains(s.as_str())));
            }
            ids
        });
        let mut p = parser.borrow_mut();
        let (inner, d) = (&mut p.inner, &mut self.delta);
        d.clear();
        if text.len() >= DETACH_BYTES {
            py.detach(|| inner.push_into(text, ids.as_deref(), d));
        } else {
            inner.push_into(text, ids.as_deref(), d);
        }
        if finished {
            inner.finish_into(d);
        }
        drop(p);
        self.models.get().message(py, &self.delta)
    }
}
