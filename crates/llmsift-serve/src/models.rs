//! The served models: each a parser pair bound to its tokenizer, a chat
//! template and a backend, routed by the request's `model`.
//!
//! Owns start-up checks: parser names (`auto` detected from the template),
//! a special-token marker missing from the vocabulary (the gateway refuses
//! to start, naming it), and what each backend kind needs (token backends
//! need a tokenizer and a template, the gateway renders the prompt).
//!
//! Invariant: a [`Model`] is immutable once built and shared by every
//! request behind an `Arc`; a request owns only its parsers' small state.

use crate::backend::demo::DemoBackend;
use crate::backend::generate::GenerateBackend;
use crate::backend::http::HttpBackend;
use crate::backend::Backend;
use crate::config::{BackendKind, Config, GuidedFields, ModelConfig};
use crate::error::{ApiError, ServeError};
use crate::recording::Recording;
use llmsift_core::format::response_template;
use llmsift_core::{ParserFactory, Registry};
use llmsift_protocol::{CheckOptions, IdStyle, Options};
use llmsift_templates::TemplateSet;
use llmsift_tokenizers::TokenizerView;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// One served model.
#[derive(Debug)]
pub struct Model {
    /// The name clients send.
    pub name: String,
    /// The name sent to the backend.
    pub backend_model: String,
    /// Where the output comes from.
    pub backend: Backend,
    /// Which protocol the backend speaks.
    pub kind: BackendKind,
    /// The parser pair (bound to the vocabulary when there is a tokenizer).
    pub factory: ParserFactory,
    /// The tokenizer: detokenizes backend ids, counts prompt tokens.
    pub view: Option<TokenizerView>,
    /// The chat template(s).
    pub templates: Option<TemplateSet>,
    /// Server-side request checks (`--enable-auto-tool-choice`).
    pub check: CheckOptions,
    /// Output options (call id style).
    pub opts: Options,
    /// The parser names, for `/v1/models`.
    pub parsers: (Option<String>, Option<String>),
    /// The constraint's field names on a `completions` backend.
    pub guided: GuidedFields,
    /// `llamacpp`: the reasoning forced into the constraint, at most this
    /// many characters (`ModelConfig::grammar_reasoning_chars`).
    pub grammar_reasoning_chars: Option<u32>,
    /// Tokens per streamed delta at least (`ModelConfig::stream_interval`).
    pub stream_interval: u32,
}

/// All served models.
#[derive(Debug, Default)]
pub struct Models {
    list: Vec<Arc<Model>>,
}

impl Models {
    /// Builds every model of a configuration (see the module docs for what is refused).
    pub fn build(config: &Config) -> Result<Models, ServeError> {
        config.validate()?;
        let mut list = Vec::new();
        // Models sharing a tokenizer file share one loaded tokenizer.
        let mut views = HashMap::new();
        for m in &config.models {
            list.push(Arc::new(build(m, config, &mut views)?));
        }
        Ok(Models { list })
    }

    /// Models from already-built parts (for embedding).
    pub fn from_models(list: Vec<Model>) -> Models {
        Models { list: list.into_iter().map(Arc::new).collect() }
    }

    /// The model a request names; the first one when it names none.
    pub fn route(&self, name: Option<&str>) -> Result<Arc<Model>, ApiError> {
        match name {
            None | Some("") => self.list.first().cloned().ok_or_else(|| ApiError::unknown_model("")),
            Some(n) => {
                self.list.iter().find(|m| m.name == n).cloned().ok_or_else(|| ApiError::unknown_model(n))
            }
        }
    }

    /// Every model, in configuration order.
    pub fn all(&self) -> &[Arc<Model>] {
        &self.list
    }
}

/// The model entries `--demo` serves: one per shipped recording.
pub fn demo_models() -> Vec<ModelConfig> {
    Recording::builtin()
        .into_iter()
        .map(|r| ModelConfig {
            served_model_name: Some(r.name.clone()),
            backend: Some(BackendKind::Demo),
            tokenizer: Some(r.tokenizer_path()),
            chat_template: Some(r.template_path()),
            reasoning_parser: Some(r.reasoning_parser.clone()),
            tool_call_parser: Some(r.tool_call_parser.clone()),
            enable_auto_tool_choice: true,
            recording: Some(r.name.clone()),
            ..ModelConfig::default()
        })
        .collect()
}

fn model_err(m: &ModelConfig, message: impl Into<String>) -> ServeError {
    ServeError::Model { model: m.name().to_string(), message: message.into() }
}

fn build(
    m: &ModelConfig,
    config: &Config,
    views: &mut HashMap<PathBuf, TokenizerView>,
) -> Result<Model, ServeError> {
    let kind = m.backend.unwrap_or(BackendKind::Completions);
    let template_path = m.template_path();
    let reg = Registry::builtin();
    let (reasoning, tools, factory) = match own_template(m, template_path.as_deref())? {
        Some(tpl) => {
            // The model's own response template, under vLLM's name for it.
            let hf = response_template::PARSER;
            let f = reg.factory(Some(hf), Some(hf)).map_err(|e| model_err(m, e.to_string()))?;
            let f = f.with_template(&tpl).map_err(|e| model_err(m, format!("its own {e}")))?;
            (Some(hf.to_string()), Some(hf.to_string()), f)
        }
        None => {
            let (reasoning, tools) = resolve_auto(m, template_path.as_deref())?;
            let f = reg
                .factory(reasoning.as_deref(), tools.as_deref())
                .map_err(|e| model_err(m, e.to_string()))?;
            (reasoning, tools, f)
        }
    };
    let view = match m.tokenizer_path() {
        Some(p) => match views.get(&p) {
            Some(v) => Some(v.clone()),
            None => {
                let v = TokenizerView::from_file(&p)
                    .map_err(|e| model_err(m, format!("{}: {e}", p.display())))?;
                views.insert(p, v.clone());
                Some(v)
            }
        },
        None => None,
    };
    let factory = match &view {
        Some(v) => factory.bind(v).map_err(|e| model_err(m, e.to_string()))?,
        None => factory,
    };
    // The content format is settled here, once per template (`auto`: detected now).
    let templates = match &template_path {
        Some(p) => {
            Some(load_templates(p).map_err(|e| model_err(m, e))?.with_content_format(m.content_format()))
        }
        None => None,
    };
    let needs_tokens = !matches!(kind, BackendKind::Chat);
    if needs_tokens && (view.is_none() || templates.is_none()) {
        return Err(model_err(
            m,
            "this backend returns tokens: give --model-dir (tokenizer.json + tokenizer_config.json) or --tokenizer and --chat-template",
        ));
    }
    let limits = &config.limits;
    let backend = match kind {
        BackendKind::Demo => {
            let name = m.recording.clone().unwrap_or_else(|| m.name().to_string());
            let rec = Recording::find(&name).ok_or_else(|| model_err(m, format!("no recording `{name}`")))?;
            let view = view.clone().expect("checked above");
            Backend::Demo(DemoBackend::new(rec, view, Duration::from_millis(limits.demo_pace_ms)))
        }
        BackendKind::Generate => Backend::Generate(
            GenerateBackend::new(
                m.backend_url.as_deref().unwrap_or_default(),
                backend_key(m)?,
                view.clone().expect("checked above"),
                Duration::from_millis(limits.connect_timeout_ms),
                Duration::from_millis(limits.read_timeout_ms),
            )
            .map_err(|e| model_err(m, e))?,
        ),
        _ => {
            let key = match &m.backend_api_key_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    model_err(m, format!("the environment variable {var} (backend key) is not set"))
                })?),
                None => None,
            };
            let url = m.backend_url.as_deref().unwrap_or_default();
            Backend::Http(
                HttpBackend::new(
                    kind,
                    url,
                    key,
                    Duration::from_millis(limits.connect_timeout_ms),
                    Duration::from_millis(limits.read_timeout_ms),
                )
                .map_err(|e| model_err(m, e))?,
            )
        }
    };
    let opts = Options {
        id_style: IdStyle::for_tool_parser(tools.as_deref()),
        match_markers_by_id: view.is_some(),
        // A chat backend guides `required`/named itself, to vLLM's JSON;
        // llama.cpp's, given Sift's grammar, writes the family's own syntax.
        choice_as_json: kind == BackendKind::Chat && m.guided_fields != GuidedFields::Llamacpp,
        vllm_text_loss: m.vllm_compat,
        vllm_one_shot: m.vllm_compat,
        atomic_calls: m.atomic_calls,
        ..Options::default()
    };
    Ok(Model {
        name: m.name().to_string(),
        backend_model: m.backend_model.clone().unwrap_or_else(|| m.name().to_string()),
        backend,
        kind,
        factory,
        view,
        templates,
        check: CheckOptions {
            auto_tools: m.enable_auto_tool_choice && tools.is_some(),
            ..CheckOptions::default()
        },
        opts,
        parsers: (reasoning, tools),
        guided: m.guided_fields,
        grammar_reasoning_chars: m.grammar_reasoning_chars,
        stream_interval: m.stream_interval.unwrap_or(1),
    })
}

/// The backend's key, from the environment variable the configuration names.
fn backend_key(m: &ModelConfig) -> Result<Option<String>, ServeError> {
    match &m.backend_api_key_env {
        Some(var) => std::env::var(var)
            .map(Some)
            .map_err(|_| model_err(m, format!("the environment variable {var} (backend key) is not set"))),
        None => Ok(None),
    }
}

fn load_templates(p: &Path) -> Result<TemplateSet, String> {
    let r = if p.extension().is_some_and(|e| e == "json") {
        TemplateSet::from_tokenizer_config_file(p)
    } else {
        TemplateSet::from_template_file(p)
    };
    r.map_err(|e| format!("{}: {e}", p.display()))
}

/// The model's own `response_template` (its `tokenizer_config.json`), used
/// when no parser is named (or `auto`): a template Sift refuses stops the
/// start with the reason, so nothing is parsed by an approximation.
fn own_template(m: &ModelConfig, template: Option<&Path>) -> Result<Option<Value>, ServeError> {
    let unnamed = |n: &Option<String>| n.is_none() || n.as_deref() == Some("auto");
    if !unnamed(&m.reasoning_parser) || !unnamed(&m.tool_call_parser) {
        return Ok(None);
    }
    let Some(path) = template.filter(|p| p.extension().is_some_and(|e| e == "json")) else { return Ok(None) };
    let text = std::fs::read_to_string(path)
        .map_err(|source| ServeError::Io { path: path.display().to_string(), source })?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| model_err(m, format!("{}: {e}", path.display())))?;
    Ok(response_template::of_config(&v).cloned())
}

/// `auto` parser names, detected from the template's markers as `sift detect` does.
fn resolve_auto(
    m: &ModelConfig,
    template: Option<&Path>,
) -> Result<(Option<String>, Option<String>), ServeError> {
    let (r, t) = (m.reasoning_parser.clone(), m.tool_call_parser.clone());
    if r.as_deref() != Some("auto") && t.as_deref() != Some("auto") {
        return Ok((r, t));
    }
    let path = template.ok_or_else(|| {
        model_err(m, "`auto` parsers need a chat template (--chat-template or --model-dir)")
    })?;
    let text = std::fs::read_to_string(path)
        .map_err(|source| ServeError::Io { path: path.display().to_string(), source })?;
    let text = match serde_json::from_str::<Value>(&text) {
        Ok(v) if path.extension().is_some_and(|e| e == "json") => llmsift_core::detection_text(&v),
        _ => text,
    };
    let d = Registry::builtin().detect(&text);
    let pick = |given: Option<String>, found: Option<String>| {
        if given.as_deref() == Some("auto") {
            found
        } else {
            given
        }
    };
    Ok((pick(r, d.reasoning), pick(t, d.tools)))
}
