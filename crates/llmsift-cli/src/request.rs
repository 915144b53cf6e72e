//! `sift parse --request FILE [OUTPUT]`: answer a Chat Completions request
//! with a given model output, the way the server would — request checks,
//! the protocol rules, and one of three output dialects.
//!
//! FILE is either a plain Chat Completions request body (`{"model",
//! "messages", "tools", "tool_choice", "stream", …}`), with the model output
//! in the positional OUTPUT file (`-` for standard input) and the parsers
//! from `--reasoning-parser` / `--tool-call-parser`; or a wrapper object
//! (told apart by its `request` key) that also carries the output and the
//! serving details:
//!
//! ```json
//! {
//!   "reasoning_parser": "qwen3",          // vLLM names; --reasoning-parser / --tool-call-parser win
//!   "tool_call_parser": "qwen3_coder",
//!   "request": { "messages": [...], "tools": [...], "stream": true, ... },
//!   "output": "model output text",        // or "output_file" (relative to FILE), or "deltas": ["…", …]
//!   "finish_reason": "stop",              // the engine's: stop (default), length, abort
//!   "prompt": "…", "prompt_tokens": 0,    // optional: rendered prompt (end) and its size
//!   "id": "chatcmpl-…", "created": 0,     // optional: fixed response id and time
//!   "id_seed": 1,                          // optional: reproducible call ids
//!   "reasoning_field": "reasoning",        // or "reasoning_content"
//!   "special_markers": ["[TOOL_CALLS]"],   // optional: spellings skip_special_tokens removes without a tokenizer
//!   "vllm_text_loss": false,               // optional: vLLM's answer where it drops text into no field
//!   "vllm_one_shot": false,                // optional: vLLM's one-shot answer where it needs the whole output
//!   "atomic_calls": false                  // optional (or --atomic-calls): calls only once they close
//! }
//! ```
//!
//! The positional OUTPUT may stand in for the wrapper's output too, but not
//! beside it: two outputs, or none, is a [`OutputError`].
//!
//! `skip_special_tokens` follows vLLM: the request's field (default true),
//! turned off by the parsers' rules. With `--tokenizer` the output is
//! detokenized with special tokens skipped when it applies; without one only
//! the file's `special_markers` are removed (text alone does not say which
//! markers were special tokens, so Sift does not guess).
//!
//! Without `--stream` (and without `"stream": true` in the request) the
//! one-shot response is printed as JSON; otherwise the SSE stream, cut in
//! 4-byte deltas (or the file's `deltas`, or token by token with
//! `--tokenizer`). A request the checks refuse prints the OpenAI error body
//! and exits with status 1.

use crate::{stream_chunks, ParseArgs};
use anyhow::{bail, Context, Result};
use llmsift_core::Registry;
use llmsift_protocol::{
    complete, ChatCompletionRequest, FinishReason, IdStyle, Options, ReasoningField, ResponseMeta, Session,
};
use llmsift_tokenizers::MarkerStrip;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why `--request` found no single model output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    /// Neither the positional file nor the wrapper gave an output.
    Missing {
        /// The request file.
        request: PathBuf,
    },
    /// The positional file and the wrapper's output field both gave one.
    Twice {
        /// The wrapper's field (`output`, `output_file` or `deltas`).
        field: &'static str,
    },
    /// The wrapper gave more than one of `output`, `output_file`, `deltas`.
    Ambiguous,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::Missing { request } => write!(
                f,
                "no model output for {}: give it as the positional file (`-` for standard input), \
                 or as `output`, `output_file` or `deltas` in a wrapper file",
                request.display()
            ),
            OutputError::Twice { field } => {
                write!(f, "two model outputs: the positional file and the request file's `{field}`")
            }
            OutputError::Ambiguous => {
                write!(f, "the request file needs at most one of `output`, `output_file`, `deltas`")
            }
        }
    }
}

impl std::error::Error for OutputError {}

/// The wrapper form of the request file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    request: Value,
    #[serde(default)]
    output: Option<String>,
    #[serde(default)]
    output_file: Option<PathBuf>,
    #[serde(default)]
    deltas: Option<Vec<String>>,
    #[serde(default)]
    reasoning_parser: Option<String>,
    #[serde(default)]
    tool_call_parser: Option<String>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    created: Option<u64>,
    #[serde(default)]
    id_seed: Option<u64>,
    #[serde(default)]
    reasoning_field: Option<String>,
    #[serde(default)]
    special_markers: Vec<String>,
    #[serde(default)]
    vllm_text_loss: bool,
    #[serde(default)]
    vllm_one_shot: bool,
    #[serde(default)]
    atomic_calls: bool,
}

/// Reads FILE: a wrapper (an object with a `request` key) as is, anything
/// else as a plain request body wrapped with no output.
fn read_file(path: &Path) -> Result<File> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    if v.get("request").is_some() {
        return serde_json::from_value(v)
            .with_context(|| format!("{} is not a request file", path.display()));
    }
    // A plain body goes to the request checks as it is, so that a body that
    // is not an object gets the OpenAI error a server would send.
    Ok(File { request: v, ..File::default() })
}

/// The model output: the positional file, or the wrapper's, never both.
fn output_of(file: &File, path: &Path, input: Option<&Path>) -> Result<String> {
    let fields = [
        ("output", file.output.is_some()),
        ("output_file", file.output_file.is_some()),
        ("deltas", file.deltas.is_some()),
    ];
    let mut given = fields.iter().filter(|(_, set)| *set).map(|(name, _)| *name);
    match (given.next(), given.next(), input) {
        (Some(_), Some(_), _) => Err(OutputError::Ambiguous.into()),
        (Some(field), None, Some(_)) => Err(OutputError::Twice { field }.into()),
        (None, _, None) => Err(OutputError::Missing { request: path.to_path_buf() }.into()),
        (None, _, Some(p)) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
            Ok(s)
        }
        (None, _, Some(p)) => std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display())),
        (Some(_), None, None) => {
            if let Some(o) = &file.output {
                Ok(o.clone())
            } else if let Some(p) = &file.output_file {
                let p = path.parent().unwrap_or(Path::new(".")).join(p);
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
            } else {
                Ok(file.deltas.as_deref().unwrap_or_default().concat())
            }
        }
    }
}

/// Runs `sift parse --request`.
pub fn run(reg: &Registry, path: &Path, a: &ParseArgs) -> Result<()> {
    let file = read_file(path)?;
    let output = output_of(&file, path, a.input.as_deref())?;
    let reasoning = a.reasoning_parser.clone().or(file.reasoning_parser.clone());
    let tools = a.tool_call_parser.clone().or(file.tool_call_parser.clone());
    let engine = match file.finish_reason.as_deref() {
        None => FinishReason::Stop,
        Some(s) => FinishReason::parse(s).with_context(|| format!("unknown finish_reason `{s}`"))?,
    };
    let field = match file.reasoning_field.as_deref() {
        None | Some("reasoning") => ReasoningField::Reasoning,
        Some("reasoning_content") => ReasoningField::ReasoningContent,
        Some(other) => bail!("unknown reasoning_field `{other}`"),
    };

    let mut body = file.request.clone();
    if a.stream {
        body["stream"] = Value::Bool(true);
    }
    let out = std::io::stdout();
    let mut out = out.lock();
    let checked = ChatCompletionRequest::from_value(body).and_then(|r| r.check());
    let mut req = match checked {
        Ok(r) => r,
        Err(e) => {
            serde_json::to_writer_pretty(&mut out, &e.to_json())?;
            writeln!(out)?;
            out.flush()?;
            std::process::exit(1);
        }
    };
    req.prompt = file.prompt.clone();
    req.id_seed = file.id_seed;

    let (factory, view) =
        crate::bound_factory(reg, reasoning.as_deref(), tools.as_deref(), a.tokenizer.as_deref())?;
    let ids = match &view {
        Some(v) => Some(v.encode(&output)?),
        None => None,
    };
    // vLLM's skip_special_tokens: the skipped ids never reach the parser.
    let skip = req.skips_special_tokens(&factory);
    let keep_ids = |ids: &[u32]| -> Vec<u32> {
        match &view {
            Some(v) if skip => ids.iter().copied().filter(|&i| !v.is_special(i)).collect(),
            _ => ids.to_vec(),
        }
    };
    let mut strip =
        MarkerStrip::new(if skip && view.is_none() { file.special_markers.clone() } else { vec![] });
    let raw = output.clone();
    let output = match (&view, &ids) {
        (Some(v), Some(ids)) if skip => v.decode_with(ids, true),
        _ if !strip.is_empty() => {
            let mut m = strip.clone();
            m.push(&output) + &m.finish()
        }
        _ => output,
    };
    let ids = ids.as_deref().map(keep_ids);
    let opts = Options {
        id_style: IdStyle::for_tool_parser(tools.as_deref()),
        reasoning_field: field,
        vllm_text_loss: file.vllm_text_loss,
        vllm_one_shot: file.vllm_one_shot,
        atomic_calls: file.atomic_calls || a.atomic_calls,
        ..Options::default()
    };
    let prefix = match a.api {
        llmsift_protocol::Api::Chat => "chatcmpl",
        llmsift_protocol::Api::Responses => "resp",
        llmsift_protocol::Api::Anthropic => "msg",
    };
    let meta = ResponseMeta {
        id: file.id.clone().unwrap_or_else(|| format!("{prefix}-sift")),
        model: req.model.clone().unwrap_or_else(|| "sift".into()),
        created: file.created.unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
        }),
        prompt_tokens: file.prompt_tokens.unwrap_or(0),
    };

    if !req.stream {
        let v = complete(a.api, &factory, &req, &meta, &opts, &output, ids.as_deref(), engine);
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
        return Ok(());
    }
    let mut s = Session::new(a.api, &factory, &req, &meta, &opts);
    let mut emit = |frames: Vec<String>| -> Result<()> {
        for f in frames {
            out.write_all(f.as_bytes())?;
        }
        Ok(())
    };
    match (&view, &ids) {
        (Some(v), Some(_)) => {
            // Token by token from the raw output's ids, skipping as vLLM would.
            let mut det = v.detokenizer_with(skip);
            for id in v.encode(&raw)? {
                let t = det.push(id).unwrap_or_default();
                emit(s.push(&t, Some(&keep_ids(&[id])), None))?;
            }
            let rest = det.finish();
            emit(s.finish_with(&rest, Some(&[]), None, engine))?;
        }
        _ => {
            let deltas: Vec<&str> = match &file.deltas {
                Some(d) => d.iter().map(String::as_str).collect(),
                None => stream_chunks(&raw, Some(4)),
            };
            for d in deltas {
                emit(s.push(&strip.push(d), None, None))?;
            }
            emit(s.finish_with(&strip.finish(), None, None, engine))?;
        }
    }
    Ok(())
}
