//! Chat-template rendering as HuggingFace transformers does it.
//!
//! A model's chat template is a Jinja2 program in its `tokenizer_config.json`
//! (or a bare `.jinja` file). transformers' `apply_chat_template` renders it
//! in an `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`
//! with loop controls, a no-op `{% generation %}` block, its own `tojson`
//! (`json.dumps`, no HTML escaping, `ensure_ascii=False`), `raise_exception`
//! and `strftime_now`, and passes `messages`, `tools`, `documents`,
//! `add_generation_prompt`, the special tokens and any extra keyword
//! arguments. This crate does the same with [minijinja] and its Python
//! compatibility layer, so the prompt a Sift user builds is byte-identical to
//! the one vLLM or transformers builds. The crate's tests check this against
//! renders made by transformers itself for some 70 real templates.
//!
//! ```
//! use serde_json::json;
//! use llmsift_templates::{ChatTemplate, RenderRequest};
//!
//! let template = ChatTemplate::new(
//!     "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
//!      {% if add_generation_prompt %}<|assistant|>{% endif %}",
//! )?;
//! let request = RenderRequest::new(vec![json!({"role": "user", "content": "Hi"})])
//!     .with_generation_prompt(true);
//! assert_eq!(template.render(&request)?, "<|user|>Hi\n<|assistant|>");
//! # Ok::<(), llmsift_templates::TemplateError>(())
//! ```
//!
//! Differences from Jinja2 that remain are listed in the crate's README.

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod content;
mod detect;
mod env;
mod error;
mod markup;
mod python;
mod request;
mod time;

use std::collections::BTreeMap;
use std::path::Path;

use minijinja::value::{Serde, Value};
use serde_json::Value as Json;

pub use content::{ContentFormat, ContentFormatOption};
pub use error::TemplateError;
pub use request::{normalize_messages, RenderRequest};
pub use time::DateTime;

/// The name of the template a single-template configuration has.
pub const DEFAULT_TEMPLATE: &str = "default";

/// The named template transformers picks when tools are given.
pub const TOOL_USE_TEMPLATE: &str = "tool_use";

/// The special-token variables transformers passes to a template (its
/// `special_tokens_map`), read from a `tokenizer_config.json`.
pub const SPECIAL_TOKENS: [&str; 7] =
    ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

/// What vLLM 0.34's `--chat-template-content-format auto` resolves to for a
/// template source (its `_detect_content_format`; `string` for a source
/// that does not parse). See [`ChatTemplate::detected_content_format`].
pub fn detect_content_format(source: &str) -> ContentFormat {
    detect::detect(source)
}

/// One compiled chat template with the special tokens it is rendered with.
#[derive(Debug)]
pub struct ChatTemplate {
    source: String,
    compiled: env::Compiled,
    special_tokens: BTreeMap<String, String>,
    /// `None`: messages as given (transformers); settled once, at load.
    content_format: Option<ContentFormat>,
}

impl ChatTemplate {
    /// Compiles a template source.
    pub fn new(source: impl Into<String>) -> Result<ChatTemplate, TemplateError> {
        let source = source.into();
        let compiled = env::Compiled::new(&source)?;
        Ok(ChatTemplate { source, compiled, special_tokens: BTreeMap::new(), content_format: None })
    }

    /// Reads and compiles a bare template file (`chat_template.jinja`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<ChatTemplate, TemplateError> {
        ChatTemplate::new(read(path.as_ref())?)
    }

    /// Sets the `bos_token` / `eos_token` template variables (`None`
    /// leaves a variable undefined).
    pub fn with_special_tokens(self, bos_token: Option<String>, eos_token: Option<String>) -> ChatTemplate {
        self.with_special_token("bos_token", bos_token).with_special_token("eos_token", eos_token)
    }

    /// Sets one special-token variable (`pad_token`, …); `None` removes it.
    pub fn with_special_token(mut self, name: impl Into<String>, value: Option<String>) -> ChatTemplate {
        let name = name.into();
        match value {
            Some(value) => self.special_tokens.insert(name, value),
            None => self.special_tokens.remove(&name),
        };
        self
    }

    /// The special-token variables the template is rendered with.
    pub fn special_tokens(&self) -> impl Iterator<Item = (&str, &str)> {
        self.special_tokens.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// What vLLM's `--chat-template-content-format auto` resolves to for
    /// this template (its `_detect_content_format`, on minijinja's AST: see
    /// the crate README). Parses the source each call: settle it once, with
    /// [`ChatTemplate::with_content_format`].
    pub fn detected_content_format(&self) -> ContentFormat {
        detect::detect(&self.source)
    }

    /// Sets the form each message's content is rendered in: `None` gives
    /// the messages as the request has them (transformers, the default);
    /// `auto` is resolved now, by [`ChatTemplate::detected_content_format`].
    pub fn with_content_format(mut self, option: Option<ContentFormatOption>) -> ChatTemplate {
        self.content_format = option.map(|o| match o {
            ContentFormatOption::Auto => self.detected_content_format(),
            ContentFormatOption::String => ContentFormat::String,
            ContentFormatOption::Openai => ContentFormat::Openai,
        });
        self
    }

    /// The content form messages are rendered in (`None`: as given).
    pub fn content_format(&self) -> Option<ContentFormat> {
        self.content_format
    }

    /// The template source as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The `bos_token` the template is rendered with, if any.
    pub fn bos_token(&self) -> Option<&str> {
        self.special_tokens.get("bos_token").map(String::as_str)
    }

    /// The `eos_token` the template is rendered with, if any.
    pub fn eos_token(&self) -> Option<&str> {
        self.special_tokens.get("eos_token").map(String::as_str)
    }

    /// Renders a request, as `apply_chat_template(..., tokenize=False)` does.
    /// The request's `template_name` is not looked at (see [`TemplateSet`]).
    pub fn render(&self, request: &RenderRequest) -> Result<String, TemplateError> {
        request.check_kwargs()?;
        let messages = match self.content_format {
            Some(format) => normalize_messages(&content::apply(&request.messages, format)?)?,
            None => normalize_messages(&request.messages)?,
        };
        let mut vars: BTreeMap<String, Value> =
            self.special_tokens.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        for (name, value) in &request.kwargs {
            vars.insert(name.clone(), Value::from(Serde(value)));
        }
        vars.insert("messages".into(), Value::from(Serde(&messages)));
        vars.insert("tools".into(), py_optional(&request.tools));
        vars.insert("documents".into(), py_optional(&request.documents));
        vars.insert("add_generation_prompt".into(), Value::from(request.add_generation_prompt));
        self.compiled.render(vars, request.now.unwrap_or_else(DateTime::now_utc))
    }
}

/// The chat templates of a model: one, or several by name (a
/// `tokenizer_config.json` whose `chat_template` is a list of
/// `{"name", "template"}`), with its special tokens.
#[derive(Debug)]
pub struct TemplateSet {
    templates: Vec<(String, Result<ChatTemplate, TemplateError>)>,
    single: bool,
}

impl TemplateSet {
    /// A set of one template, named [`DEFAULT_TEMPLATE`].
    pub fn single(template: ChatTemplate) -> TemplateSet {
        TemplateSet { templates: vec![(DEFAULT_TEMPLATE.into(), Ok(template))], single: true }
    }

    /// Reads a bare template file (`chat_template.jinja`) as a set of one.
    pub fn from_template_file(path: impl AsRef<Path>) -> Result<TemplateSet, TemplateError> {
        Ok(TemplateSet::single(ChatTemplate::from_file(path)?))
    }

    /// Reads a `tokenizer_config.json`.
    pub fn from_tokenizer_config_file(path: impl AsRef<Path>) -> Result<TemplateSet, TemplateError> {
        TemplateSet::from_tokenizer_config(&read(path.as_ref())?)
    }

    /// Parses the text of a `tokenizer_config.json`: its `chat_template` (a
    /// string, or a list of `{"name", "template"}`) and its special tokens
    /// ([`SPECIAL_TOKENS`]: `bos_token`, `eos_token`, `pad_token`, …; strings
    /// or `{"content": …}` objects).
    ///
    /// Every template is compiled now; one that does not compile is an error
    /// only when it is selected (transformers compiles on use).
    pub fn from_tokenizer_config(json: &str) -> Result<TemplateSet, TemplateError> {
        let config: Json = serde_json::from_str(json).map_err(|e| TemplateError::Config(e.to_string()))?;
        let Json::Object(config) = config else {
            return Err(TemplateError::Config("not a JSON object".into()));
        };
        let mut tokens = Vec::new();
        for name in SPECIAL_TOKENS {
            if let Some(token) = special_token(&config, name)? {
                tokens.push((name, token));
            }
        }
        let compile = |source: &str| {
            ChatTemplate::new(source).map(|t| {
                tokens.iter().fold(t, |t, (name, token)| t.with_special_token(*name, Some(token.clone())))
            })
        };
        match config.get("chat_template") {
            None | Some(Json::Null) => {
                Err(TemplateError::NotFound { requested: None, available: Vec::new() })
            }
            Some(Json::String(source)) => {
                Ok(TemplateSet { templates: vec![(DEFAULT_TEMPLATE.into(), compile(source))], single: true })
            }
            Some(Json::Array(entries)) => {
                let mut templates = Vec::with_capacity(entries.len());
                for entry in entries {
                    let name = entry.get("name").and_then(Json::as_str);
                    let source = entry.get("template").and_then(Json::as_str);
                    let (Some(name), Some(source)) = (name, source) else {
                        return Err(TemplateError::Config(
                            "chat_template list entries need string \"name\" and \"template\"".into(),
                        ));
                    };
                    templates.push((name.to_string(), compile(source)));
                }
                Ok(TemplateSet { templates, single: false })
            }
            Some(_) => Err(TemplateError::Config("chat_template is neither a string nor a list".into())),
        }
    }

    /// Sets every template's content form ([`ChatTemplate::with_content_format`]:
    /// `auto` is detected per template, now).
    pub fn with_content_format(self, option: Option<ContentFormatOption>) -> TemplateSet {
        let templates = self
            .templates
            .into_iter()
            .map(|(name, t)| (name, t.map(|t| t.with_content_format(option))))
            .collect();
        TemplateSet { templates, ..self }
    }

    /// The template names, in configuration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.templates.iter().map(|(name, _)| name.as_str())
    }

    /// Picks a template as transformers' `get_chat_template` does: the named
    /// one if a name is given; otherwise, with several, `tool_use` when tools
    /// are given and it exists, else `default`.
    pub fn select(&self, name: Option<&str>, has_tools: bool) -> Result<&ChatTemplate, TemplateError> {
        let find = |wanted: &str| self.templates.iter().find(|(n, _)| n == wanted).map(|(_, t)| t);
        let found = match name {
            Some(name) => find(name),
            None if self.single => self.templates.first().map(|(_, t)| t),
            None => has_tools.then(|| find(TOOL_USE_TEMPLATE)).flatten().or_else(|| find(DEFAULT_TEMPLATE)),
        };
        match found {
            Some(Ok(template)) => Ok(template),
            Some(Err(e)) => Err(e.clone()),
            None => Err(TemplateError::NotFound {
                requested: name.map(str::to_string),
                available: self.names().map(str::to_string).collect(),
            }),
        }
    }

    /// Renders a request with the template it selects
    /// (`request.template_name`, and whether it has tools).
    pub fn render(&self, request: &RenderRequest) -> Result<String, TemplateError> {
        self.select(request.template_name.as_deref(), request.tools.is_some())?.render(request)
    }
}

/// A list argument, or Python's `None` (see [`python::PyNone`]).
fn py_optional(list: &Option<Vec<Json>>) -> Value {
    match list {
        Some(list) => Value::from(Serde(list)),
        None => Value::from_object(python::PyNone),
    }
}

/// A special token: a string, or an added-token object's `content`.
fn special_token(config: &serde_json::Map<String, Json>, key: &str) -> Result<Option<String>, TemplateError> {
    match config.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(Json::Object(o)) => match o.get("content") {
            Some(Json::String(s)) => Ok(Some(s.clone())),
            _ => Err(TemplateError::Config(format!("{key} object has no string \"content\""))),
        },
        Some(_) => Err(TemplateError::Config(format!("{key} is neither a string nor an object"))),
    }
}

fn read(path: &Path) -> Result<String, TemplateError> {
    std::fs::read_to_string(path)
        .map_err(|e| TemplateError::Io { path: path.to_path_buf(), message: e.to_string() })
}
