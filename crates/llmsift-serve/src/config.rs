//! The gateway's configuration: what `sift serve`'s flags and an optional
//! `--config` file (TOML or JSON) say.
//!
//! Owns the shape of the file and its defaults; the flags of one model are
//! the same fields as one `[[models]]` entry, so a command line and a file
//! describe the same thing. Secrets are never stored: a backend's key is
//! read from the environment variable the configuration names.
//!
//! Invariant: a [`Config`] that passed [`Config::validate`] has at least one
//! model, unique served names, a backend URL for every backend kind
//! that needs one, and llama.cpp's guided field names only on a `chat`
//! backend.

use crate::error::ServeError;
pub use llmsift_templates::ContentFormatOption;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which wire protocol the backend speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// OpenAI-compatible `/v1/completions` with token ids (vLLM's
    /// `return_token_ids`, SGLang's `output_ids`): the gateway renders the
    /// prompt with the model's chat template.
    Completions,
    /// llama.cpp's `/completion` (`return_tokens`, SSE).
    Llamacpp,
    /// OpenAI-compatible `/v1/chat/completions` whose `content` still carries
    /// the model's markers (text only: post-processing).
    Chat,
    /// The built-in replay of recorded outputs (`--demo`).
    Demo,
    /// vLLM 0.34's token-in/token-out worker, `POST /inference/v1/generate`:
    /// the gateway renders and tokenizes the prompt (the render endpoint's
    /// `GenerateRequest`) and derenders the ids it streams back.
    Generate,
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<BackendKind, String> {
        match s {
            "completions" | "vllm" | "sglang" => Ok(BackendKind::Completions),
            "llamacpp" | "llama.cpp" | "llama-cpp" => Ok(BackendKind::Llamacpp),
            "chat" => Ok(BackendKind::Chat),
            "demo" => Ok(BackendKind::Demo),
            "generate" => Ok(BackendKind::Generate),
            other => {
                Err(format!("unknown backend kind `{other}` (completions, llamacpp, chat, demo, generate)"))
            }
        }
    }
}

/// One served model: its name, its backend, its tokenizer, template and parsers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// The name clients send as `model` (vLLM's `--served-model-name`).
    pub served_model_name: Option<String>,
    /// The backend's protocol.
    pub backend: Option<BackendKind>,
    /// The backend's base URL (`http://127.0.0.1:8001`).
    pub backend_url: Option<String>,
    /// The model name sent to the backend (default: the served name).
    pub backend_model: Option<String>,
    /// The environment variable holding the backend's API key.
    pub backend_api_key_env: Option<String>,
    /// A directory with `tokenizer.json` and `tokenizer_config.json`.
    pub model_dir: Option<PathBuf>,
    /// A `tokenizer.json` (default: in `model_dir`).
    pub tokenizer: Option<PathBuf>,
    /// A chat template (`.jinja`) or `tokenizer_config.json` (default: in `model_dir`).
    pub chat_template: Option<PathBuf>,
    /// vLLM reasoning parser name, or `auto`.
    pub reasoning_parser: Option<String>,
    /// vLLM tool-call parser name, or `auto`.
    pub tool_call_parser: Option<String>,
    /// Parse calls for `tool_choice: auto` (vLLM's `--enable-auto-tool-choice`).
    pub enable_auto_tool_choice: bool,
    /// Demo only: the recording replayed (a file under `crates/llmsift-serve/demo/`, by name).
    pub recording: Option<String>,
    /// The field names the decoding constraint is sent under: on
    /// `completions`, `vllm` (`structured_outputs`) or `sglang` (SGLang's
    /// own); on `chat`, `llamacpp` sends Sift's own constraint as llama.cpp
    /// takes it (`grammar`, `json_schema`) where the backend's own
    /// `tool_choice` would let the model write anything before the call.
    pub guided_fields: GuidedFields,
    /// `llamacpp`, or `chat` with `guided_fields = "llamacpp"`: a decoding constraint that starts after the
    /// reasoning also forces the reasoning, from the first token (its
    /// opener unless the prompt opened it, at most this many characters,
    /// its end marker), for a model that never writes the markers itself
    /// and so never triggers the lazy grammar. Unset: the grammar waits for
    /// the model's own end marker.
    pub grammar_reasoning_chars: Option<u32>,
    /// Answer as vLLM does where Sift's default answer differs
    /// (`docs/deviations.md`): text vLLM drops into no field is dropped
    /// (`vllm_text_loss`), and one-shot decisions vLLM makes on the whole
    /// output are made on it (`vllm_one_shot`: such formats hold the output).
    pub vllm_compat: bool,
    /// What the chat template is given as each message's content (vLLM's
    /// `--chat-template-content-format`): `string` (text parts joined with
    /// a newline), `openai` (a list of `{"type": "text", "text": …}` parts)
    /// or `auto` (vLLM's detection on the template, done once at load).
    /// Unset: `auto` with `vllm_compat`, else the messages as the request
    /// has them (transformers' `apply_chat_template`).
    pub chat_template_content_format: Option<ContentFormatOption>,
    /// Tokens per streamed delta at least (vLLM's `--stream-interval`): the
    /// gateway holds a choice's output until this many tokens arrived since
    /// its last delta (the first and last are never held); a request's
    /// `stream_interval` may raise it. Unset: 1, every backend chunk.
    pub stream_interval: Option<u32>,
    /// Emit each tool call only once it closes; a call the output's end cut
    /// is its text as content, never a call (`llmsift_core::Request::atomic_calls`;
    /// a request's own `atomic_calls` wins). Default: a cut call stays a
    /// call with its arguments as written and `finish_reason: "length"`.
    pub atomic_calls: bool,
}

/// Whose names a `completions` backend takes for decoding constraints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuidedFields {
    /// vLLM 0.34's `structured_outputs` object (`json`, `json_object`, `structural_tag`).
    #[default]
    Vllm,
    /// SGLang's `json_schema` and `structural_tag` (JSON text).
    Sglang,
    /// A `chat` backend that is llama.cpp's server: Sift's constraint as
    /// its `/v1/chat/completions` takes one from the client (a GBNF
    /// `grammar` applied from the first token, or `json_schema`), with
    /// `tool_choice: "none"`, instead of the backend's own `tool_choice`
    /// and `response_format` (whose required-call grammar admits any text
    /// before the call, without bound).
    Llamacpp,
}

/// Limits and timeouts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest request body, in bytes (413 beyond).
    pub max_body_bytes: usize,
    /// Requests served at once (503 with `Retry-After` beyond).
    pub max_concurrent: usize,
    /// Connecting to the backend, in milliseconds.
    pub connect_timeout_ms: u64,
    /// Waiting for the backend's next bytes, in milliseconds.
    pub read_timeout_ms: u64,
    /// Demo backend: pause between tokens, in milliseconds.
    pub demo_pace_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 4 << 20,
            max_concurrent: 1024,
            connect_timeout_ms: 5_000,
            read_timeout_ms: 60_000,
            demo_pace_ms: 0,
        }
    }
}

/// The whole gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to listen on.
    pub host: String,
    /// Port to listen on (0: any free port).
    pub port: u16,
    /// Clients must send `Authorization: Bearer KEY` on `/v1/*`.
    pub api_key: Option<String>,
    /// Origins allowed by CORS (none: CORS off).
    pub allowed_origins: Vec<String>,
    /// Limits and timeouts.
    pub limits: Limits,
    /// The served models.
    pub models: Vec<ModelConfig>,
    /// Record each streamed chunk's relay times (`GET /debug/stamps`; load tests only).
    pub stamps: bool,
    /// The key replicas share to seal carried stream states (scale-out
    /// derender; at least 16 bytes). None: a random key for this process.
    pub state_key: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: "127.0.0.1".into(),
            port: 8000,
            api_key: None,
            allowed_origins: Vec::new(),
            limits: Limits::default(),
            models: Vec::new(),
            stamps: false,
            state_key: None,
        }
    }
}

impl Config {
    /// Reads a TOML file, or JSON when the name ends in `.json`.
    pub fn from_file(path: &Path) -> Result<Config, ServeError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ServeError::Io { path: path.display().to_string(), source })?;
        let parsed = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text).map_err(|e| e.to_string())
        } else {
            toml::from_str(&text).map_err(|e| e.to_string())
        };
        parsed.map_err(|e| ServeError::Config(format!("{}: {e}", path.display())))
    }

    /// Checks the invariant (see the module docs).
    pub fn validate(&self) -> Result<(), ServeError> {
        if self.models.is_empty() {
            return Err(ServeError::Config(
                "no model: give --backend-url (with --model-dir) or --demo, or models in --config".into(),
            ));
        }
        let mut names = std::collections::HashSet::new();
        for m in &self.models {
            let name = m.name();
            if !names.insert(name.to_string()) {
                return Err(ServeError::Config(format!("two models are served as `{name}`")));
            }
            let kind = m.backend.unwrap_or(BackendKind::Completions);
            if kind != BackendKind::Demo && m.backend_url.is_none() {
                return Err(ServeError::Config(format!("model `{name}` has no backend_url")));
            }
            if m.guided_fields == GuidedFields::Llamacpp && kind != BackendKind::Chat {
                return Err(ServeError::Config(format!(
                    "model `{name}`: guided_fields = \"llamacpp\" is for a `chat` backend (a `llamacpp` backend always gets llama.cpp's fields)"
                )));
            }
            if m.stream_interval == Some(0) {
                return Err(ServeError::Config(format!(
                    "model `{name}`: stream_interval must be at least 1"
                )));
            }
        }
        if self.limits.max_concurrent == 0 {
            return Err(ServeError::Config("max_concurrent must be at least 1".into()));
        }
        Ok(())
    }
}

impl ModelConfig {
    /// The served name (default `default`).
    pub fn name(&self) -> &str {
        self.served_model_name.as_deref().unwrap_or("default")
    }

    /// The `tokenizer.json` to use, when there is one.
    pub fn tokenizer_path(&self) -> Option<PathBuf> {
        self.tokenizer.clone().or_else(|| self.model_dir.as_ref().map(|d| d.join("tokenizer.json")))
    }

    /// The content format the chat template is rendered with (see
    /// [`ModelConfig::chat_template_content_format`]; `None`: as given).
    pub fn content_format(&self) -> Option<ContentFormatOption> {
        self.chat_template_content_format.or(self.vllm_compat.then_some(ContentFormatOption::Auto))
    }

    /// The template source (a `.jinja` or a `tokenizer_config.json`), when there is one.
    pub fn template_path(&self) -> Option<PathBuf> {
        self.chat_template.clone().or_else(|| {
            let cfg = self.model_dir.as_ref()?.join("tokenizer_config.json");
            cfg.exists().then_some(cfg)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llamacpp_guided_fields_only_on_a_chat_backend() {
        let model = |backend, guided_fields| ModelConfig {
            backend: Some(backend),
            backend_url: Some("http://127.0.0.1:9".into()),
            guided_fields,
            ..ModelConfig::default()
        };
        let config = |m| Config { models: vec![m], ..Config::default() };
        assert!(config(model(BackendKind::Chat, GuidedFields::Llamacpp)).validate().is_ok());
        for kind in [BackendKind::Completions, BackendKind::Llamacpp, BackendKind::Generate] {
            let e = config(model(kind, GuidedFields::Llamacpp)).validate().unwrap_err();
            assert!(e.to_string().contains("guided_fields"), "{kind:?}: {e}");
        }
    }
}
