//! `sift serve`: flags (spelled as `vllm serve` spells them) into a
//! `llmsift_serve::Config`, then the gateway. Every flag's help names its
//! vLLM counterpart, or says it is Sift's own.

use anyhow::{Context, Result};
use llmsift_serve::config::ContentFormatOption;
use llmsift_serve::{BackendKind, Config, ModelConfig};
use std::io::Write;
use std::path::PathBuf;

/// `sift serve` flags.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Model directory: tokenizer.json + tokenizer_config.json (its chat template). [vLLM: the positional MODEL]
    pub model_dir: Option<PathBuf>,
    /// A TOML or JSON file with the same fields, several `[[models]]` and `[limits]`; flags win. [vLLM: --config]
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Serve the built-in recorded outputs (qwen3, qwen3-coder, deepseek-r1, gpt-oss), no backend needed. [Sift only]
    #[arg(long)]
    pub demo: bool,
    /// The backend's base URL, e.g. http://127.0.0.1:8001. [Sift only]
    #[arg(long)]
    pub backend_url: Option<String>,
    /// The backend's protocol: completions (vLLM/SGLang, token ids), llamacpp, chat (raw text), generate (vLLM's /inference/v1/generate workers). [Sift only]
    #[arg(long, value_name = "KIND")]
    pub backend: Option<BackendKind>,
    /// The model name sent to the backend (default: the served name). [Sift only]
    #[arg(long)]
    pub backend_model: Option<String>,
    /// The environment variable holding the backend's API key (never logged). [Sift only]
    #[arg(long, value_name = "VAR")]
    pub backend_api_key_env: Option<String>,
    /// The tokenizer.json (default: in the model directory). [vLLM: --tokenizer]
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// A chat template file (.jinja) or tokenizer_config.json. [vLLM: --chat-template]
    #[arg(long)]
    pub chat_template: Option<PathBuf>,
    /// Reasoning parser name, or `auto` (from the template, as `sift detect`). [vLLM: --reasoning-parser]
    #[arg(long)]
    pub reasoning_parser: Option<String>,
    /// Tool-call parser name, or `auto`. [vLLM: --tool-call-parser]
    #[arg(long)]
    pub tool_call_parser: Option<String>,
    /// Parse calls when tool_choice is auto. [vLLM: --enable-auto-tool-choice]
    #[arg(long)]
    pub enable_auto_tool_choice: bool,
    /// Answer as vLLM does where Sift's answer differs (docs/deviations.md: text vLLM drops, one-shot decisions on the whole output), for every served model; per model: `vllm_compat` in --config. [Sift only]
    #[arg(long)]
    pub vllm_compat: bool,
    /// What the chat template gets as each message's content: string, openai (a list of text parts) or auto (detected on the template, as vLLM does), for every served model; per model: `chat_template_content_format` in --config. Default: auto with --vllm-compat, else the content as the request sends it. [vLLM: --chat-template-content-format]
    #[arg(long, value_name = "FORMAT")]
    pub chat_template_content_format: Option<ContentFormatOption>,
    /// Emit each tool call only once it closes, a call cut by the end of the output as content (docs/serve.md), for every served model; per model: `atomic_calls` in --config; per request: `atomic_calls`. [Sift only]
    #[arg(long)]
    pub atomic_calls: bool,
    /// The name clients send as `model`. [vLLM: --served-model-name]
    #[arg(long)]
    pub served_model_name: Option<String>,
    /// Address to listen on (default 127.0.0.1). [vLLM: --host]
    #[arg(long)]
    pub host: Option<String>,
    /// Port (default 8000; 0 picks a free one). [vLLM: --port]
    #[arg(long)]
    pub port: Option<u16>,
    /// Clients must send `Authorization: Bearer KEY` on /v1/* (401 otherwise); also $SIFT_API_KEY. [vLLM: --api-key]
    #[arg(long)]
    pub api_key: Option<String>,
    /// The key replicas share to seal the scale-out derender's carried `stream_state` (at least 16 bytes); also $SIFT_STATE_KEY. Default: a random key per process. [Sift only]
    #[arg(long)]
    pub state_key: Option<String>,
    /// CORS origins, as a JSON list or comma-separated (default: CORS off). [vLLM: --allowed-origins]
    #[arg(long)]
    pub allowed_origins: Option<String>,
    /// Requests served at once; beyond it 503 with Retry-After. [vLLM: --max-num-seqs]
    #[arg(long)]
    pub max_num_seqs: Option<usize>,
    /// Largest request body in bytes (413 beyond). [Sift only]
    #[arg(long)]
    pub max_body_bytes: Option<usize>,
    /// Backend connect timeout, milliseconds. [Sift only]
    #[arg(long)]
    pub connect_timeout_ms: Option<u64>,
    /// Backend read timeout (between bytes), milliseconds. [Sift only]
    #[arg(long)]
    pub read_timeout_ms: Option<u64>,
    /// Demo: pause between tokens, milliseconds (default 0). [Sift only]
    #[arg(long)]
    pub demo_pace_ms: Option<u64>,
    /// Record each streamed chunk's arrival and hand-over times, read at GET /debug/stamps (load tests). [Sift only]
    #[arg(long)]
    pub stamps: bool,
}

fn origins(s: &str) -> Vec<String> {
    match serde_json::from_str::<Vec<String>>(s) {
        Ok(list) => list,
        Err(_) => s.split(',').map(|o| o.trim().to_string()).filter(|o| !o.is_empty()).collect(),
    }
}

/// The configuration the flags (and `--config`) describe.
pub fn config(a: &ServeArgs) -> Result<Config> {
    let mut c = match &a.config {
        Some(p) => Config::from_file(p)?,
        None => Config::default(),
    };
    if let Some(h) = &a.host {
        c.host = h.clone();
    }
    if let Some(p) = a.port {
        c.port = p;
    }
    c.api_key = a.api_key.clone().or_else(|| std::env::var("SIFT_API_KEY").ok()).or(c.api_key);
    c.state_key = a.state_key.clone().or_else(|| std::env::var("SIFT_STATE_KEY").ok()).or(c.state_key);
    if let Some(o) = &a.allowed_origins {
        c.allowed_origins = origins(o);
    }
    let l = &mut c.limits;
    l.max_concurrent = a.max_num_seqs.unwrap_or(l.max_concurrent);
    l.max_body_bytes = a.max_body_bytes.unwrap_or(l.max_body_bytes);
    l.connect_timeout_ms = a.connect_timeout_ms.unwrap_or(l.connect_timeout_ms);
    l.read_timeout_ms = a.read_timeout_ms.unwrap_or(l.read_timeout_ms);
    l.demo_pace_ms = a.demo_pace_ms.unwrap_or(l.demo_pace_ms);
    c.stamps |= a.stamps;
    if a.demo {
        c.models.extend(llmsift_serve::models::demo_models());
    }
    if a.backend_url.is_some() || a.model_dir.is_some() {
        c.models.push(ModelConfig {
            served_model_name: a.served_model_name.clone().or_else(|| {
                a.model_dir.as_ref().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned())
            }),
            backend: a.backend.or(Some(BackendKind::Completions)),
            backend_url: a.backend_url.clone(),
            backend_model: a.backend_model.clone(),
            backend_api_key_env: a.backend_api_key_env.clone(),
            model_dir: a.model_dir.clone(),
            tokenizer: a.tokenizer.clone(),
            chat_template: a.chat_template.clone(),
            reasoning_parser: a.reasoning_parser.clone(),
            tool_call_parser: a.tool_call_parser.clone(),
            enable_auto_tool_choice: a.enable_auto_tool_choice,
            recording: None,
            guided_fields: Default::default(),
            grammar_reasoning_chars: None,
            stream_interval: None,
            vllm_compat: false,
            chat_template_content_format: None,
            atomic_calls: false,
        });
    }
    if a.vllm_compat {
        c.models.iter_mut().for_each(|m| m.vllm_compat = true);
    }
    if a.atomic_calls {
        c.models.iter_mut().for_each(|m| m.atomic_calls = true);
    }
    if let Some(f) = a.chat_template_content_format {
        c.models.iter_mut().for_each(|m| m.chat_template_content_format = Some(f));
    }
    Ok(c)
}

/// Log lines go to stderr through `tracing`, filtered by `RUST_LOG` (default
/// `info`: start-up, failed requests; `RUST_LOG=tower_http=debug` adds one
/// line per request and response).
fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Runs `sift serve` until SIGINT/SIGTERM.
pub fn run(a: &ServeArgs) -> Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    one_malloc_arena();
    init_logging();
    let c = config(a)?;
    let names: Vec<String> = c.models.iter().map(|m| m.name().to_string()).collect();
    for m in &c.models {
        tracing::info!(
            model = m.name(),
            backend = ?m.backend.unwrap_or(BackendKind::Completions),
            url = m.backend_url.as_deref().unwrap_or("-"),
            reasoning_parser = m.reasoning_parser.as_deref().unwrap_or("-"),
            tool_call_parser = m.tool_call_parser.as_deref().unwrap_or("-"),
            "serving"
        );
    }
    llmsift_serve::run_blocking(c, |addr| {
        // Printed whatever RUST_LOG says: tests and scripts read this line
        // to learn the port, and a user reads it to learn the URL.
        let _ = writeln!(
            std::io::stderr(),
            "sift serve: listening on http://{addr} (models: {})",
            names.join(", ")
        );
    })
    .context("sift serve")?;
    tracing::info!("shut down");
    Ok(())
}

/// Restarts this process (the same pid, arguments and descriptors: `exec`)
/// with `MALLOC_ARENA_MAX=1` unless the environment already sets it.
///
/// glibc gives each thread that allocates an arena of its own and keeps
/// the freed pages of each resident, so a stream's buffers, allocated on
/// one runtime worker and freed on another, leave pages behind in several
/// arenas: the load test measured 36 KiB of resident memory per open
/// stream with glibc's default, 17–19 KiB with two arenas and 8.6 KiB with
/// one, at the same CPU per token (`docs/benchmarks.md`, issue #21 point
/// 7). glibc reads the variable when it first allocates, before `main`, so
/// it cannot be set from inside; a failed `exec` (say the binary was
/// replaced on disk) leaves the process running as it is.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_malloc_arena() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    // Only returns on failure.
    let _ = cmd.args(args).env("MALLOC_ARENA_MAX", "1").exec();
}
