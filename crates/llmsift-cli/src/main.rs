//! `sift`: a thin command over the library crates.
//!
//! - `sift parse` prints the parsed message of one model output (or, with
//!   `--stream`, one delta per line and then the folded message);
//! - `sift parse --jsonl FILE` answers conformance cases line by line;
//! - `sift parse --request FILE` answers a Chat Completions request with a
//!   given model output, as a server would (one-shot JSON, or with
//!   `--stream` the SSE stream), in `--api chat|responses|anthropic`;
//! - `sift parsers` lists the registered parser names;
//! - `sift detect PATH` names the parsers that fit a chat template or a
//!   `tokenizer_config.json` (`--reasoning-parser auto` uses it too);
//! - `sift serve` runs the OpenAI-compatible gateway (`llmsift-serve`);
//! - `sift completions SHELL` prints a shell completion script.
//!
//! An error ends the process with one line on stderr (`sift: error: …`, the
//! causes joined by `: `) and exit status 1; the backtrace only when
//! `RUST_BACKTRACE` asks for it.

use anyhow::{bail, Context, Result};
use clap::{Parser as Clap, Subcommand};
use llmsift_conformance::{delta_json, message_json, stream_chunks, Case, Runner};
use llmsift_core::{Folder, Registry, Request, ToolChoice, Tools};
use llmsift_tokenizers::TokenizerView;
use serde_json::Value;
use std::io::{BufRead, BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

mod detect;
mod request;
#[cfg(feature = "serve")]
mod serve;

#[derive(Clap)]
#[command(name = "sift", version, about = "Split LLM output into reasoning, content and tool calls")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse a model output (or a JSONL file of conformance cases).
    Parse(Box<ParseArgs>),
    /// List the registered parser names.
    Parsers,
    /// Render a request's prompt through a chat template (a .jinja file or a
    /// tokenizer_config.json), as transformers' apply_chat_template does.
    Render {
        /// The template or tokenizer_config.json.
        #[arg(long)]
        template: PathBuf,
        /// A Chat Completions request (messages, tools, chat_template_kwargs).
        request: PathBuf,
        /// Render the last message as is, without a generation prompt.
        #[arg(long)]
        no_generation_prompt: bool,
        /// Each message's content as vLLM gives it: string, openai (a list of text parts) or auto (detected on the template). Default: as the request has it.
        #[arg(long, value_name = "FORMAT")]
        chat_template_content_format: Option<llmsift_templates::ContentFormatOption>,
    },
    /// Render an assistant turn (reasoning + two tool calls) through the
    /// model's own template, parse it back, and report whether it survives.
    Check {
        /// The template or tokenizer_config.json.
        #[arg(long)]
        template: PathBuf,
        /// vLLM reasoning parser name (or `auto`).
        #[arg(long)]
        reasoning_parser: Option<String>,
        /// vLLM tool-call parser name (or `auto`).
        #[arg(long)]
        tool_call_parser: Option<String>,
    },
    /// Name the reasoning and tool parsers that fit a chat template
    /// (a template file, or a tokenizer_config.json).
    Detect {
        /// The template or tokenizer_config.json.
        path: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// An OpenAI-compatible gateway (Chat Completions, Responses, Anthropic
    /// Messages) in front of a raw-completion backend; flags as `vllm serve`
    /// spells them.
    #[cfg(feature = "serve")]
    Serve(Box<serve::ServeArgs>),
    /// Print a shell completion script: `sift completions bash > ~/.local/share/bash-completion/completions/sift`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct ParseArgs {
    /// vLLM reasoning parser name.
    #[arg(long)]
    reasoning_parser: Option<String>,
    /// vLLM tool-call parser name.
    #[arg(long)]
    tool_call_parser: Option<String>,
    /// A JSON file with the request's `tools` array.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// `tool_choice`: none, auto, required, or a function name.
    #[arg(long)]
    tool_choice: Option<String>,
    /// A `tokenizer.json`: markers are matched by token id, streaming goes token by token.
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// Print each delta, then the folded message.
    #[arg(long)]
    stream: bool,
    /// Read conformance cases (one JSON per line) and write one answer per line.
    #[arg(long)]
    jsonl: Option<PathBuf>,
    /// Where named tokenizers live (`DIR/<name>/tokenizer.json`); also `SIFT_TOKENIZERS`.
    #[arg(long)]
    tokenizers: Option<PathBuf>,
    /// Extra format files (TOML) to register before parsing.
    #[arg(long = "format-file")]
    format_files: Vec<PathBuf>,
    /// A Chat Completions request body, answered with the model output in
    /// the positional file; or a wrapper `{"request": {...}, "output": "...", ...}`
    /// (see `request.rs`).
    #[arg(long)]
    request: Option<PathBuf>,
    /// The output dialect with `--request`: chat, responses or anthropic.
    #[arg(long, default_value = "chat")]
    api: llmsift_protocol::Api,
    /// The chat template (or tokenizer_config.json) that `auto` parser names
    /// are detected from; default: the tokenizer_config.json beside --tokenizer.
    #[arg(long)]
    chat_template: Option<PathBuf>,
    /// Emit each tool call only once it closes; a call the output's end cut
    /// is its text as content. Default: a cut call stays a call whose
    /// arguments are exactly what was written (incomplete JSON, never
    /// completed) and the finish is `length`.
    #[arg(long)]
    atomic_calls: bool,
    /// The model output (a file, or `-` / nothing for standard input; with
    /// `--request`, a file or `-`).
    input: Option<PathBuf>,
    /// Account for every output byte: print the spans (`docs/byte-spans.md`)
    /// with the message and, with `--stream`, with each delta.
    #[arg(long)]
    byte_spans: bool,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // A reader that stops early (`| head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            report(&e);
            std::process::ExitCode::FAILURE
        }
    }
}

/// One line for the user; anyhow's backtrace (captured only when
/// `RUST_BACKTRACE`/`RUST_LIB_BACKTRACE` ask) below it when there is one.
fn report(e: &anyhow::Error) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "sift: error: {e:#}");
    let bt = e.backtrace();
    if bt.status() == std::backtrace::BacktraceStatus::Captured {
        let _ = writeln!(err, "{bt}");
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Parsers => {
            let r = Registry::builtin();
            writeln!(std::io::stdout(), "reasoning parsers:")?;
            for n in r.reasoning_names() {
                writeln!(std::io::stdout(), "  {n}")?;
            }
            writeln!(std::io::stdout(), "tool parsers:")?;
            for n in r.tool_names() {
                writeln!(std::io::stdout(), "  {n}")?;
            }
            Ok(())
        }
        Cmd::Parse(a) => parse(*a),
        Cmd::Render { template, request, no_generation_prompt, chat_template_content_format } => {
            let set = load_templates(&template)?.with_content_format(chat_template_content_format);
            let text = std::fs::read_to_string(&request)
                .with_context(|| format!("reading {}", request.display()))?;
            let req: Value =
                serde_json::from_str(&text).with_context(|| format!("{} is not JSON", request.display()))?;
            let messages = req.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
            let mut r =
                llmsift_templates::RenderRequest::new(messages).with_generation_prompt(!no_generation_prompt);
            if let Some(t) = req.get("tools").and_then(Value::as_array) {
                r = r.with_tools(t.clone());
            }
            if let Some(Value::Object(k)) = req.get("chat_template_kwargs") {
                r = r.with_kwargs(k.clone());
            }
            write!(std::io::stdout(), "{}", set.render(&r)?)?;
            Ok(())
        }
        Cmd::Check { template, reasoning_parser, tool_call_parser } => {
            let reg = Registry::builtin();
            let (r, t) = detect::resolve(reg, reasoning_parser, tool_call_parser, Some(template.clone()))?;
            let set = load_templates(&template)?;
            let res = llmsift_conformance::roundtrip(&set, reg, r.as_deref(), t.as_deref());
            let mark = |ok: bool| if ok { "ok" } else { "FAILED" };
            writeln!(
                std::io::stdout(),
                "parsers: {} + {}",
                r.as_deref().unwrap_or("none"),
                t.as_deref().unwrap_or("none")
            )?;
            if let Some(e) = &res.error {
                writeln!(std::io::stdout(), "could not run: {e}")?;
                std::process::exit(1);
            }
            writeln!(std::io::stdout(), "rendered turn: {:?}", res.output)?;
            writeln!(
                std::io::stdout(),
                "reasoning: {}{}",
                mark(res.reasoning_ok),
                match (res.template_keeps_reasoning, res.reasoning_reattached) {
                    (true, _) => "",
                    (false, true) =>
                        " (the template drops it; re-attached before the turn, as the model writes it)",
                    (false, false) => " (the template drops it)",
                }
            )?;
            writeln!(std::io::stdout(), "tool calls: {}", mark(res.calls_ok))?;
            writeln!(std::io::stdout(), "no stray content: {}", mark(res.content_ok))?;
            if let Some(m) = &res.parsed {
                writeln!(std::io::stdout(), "parsed: {}", message_json(m))?;
            }
            if !res.passed() {
                std::process::exit(1);
            }
            Ok(())
        }
        #[cfg(feature = "serve")]
        Cmd::Serve(a) => serve::run(&a),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "sift", &mut std::io::stdout());
            Ok(())
        }
        Cmd::Detect { path, json } => {
            let d = detect::detect(Registry::builtin(), &path)?;
            detect::print(&d, &detect::own_template(&path)?, json)?;
            Ok(())
        }
    }
}

/// The parser pair, bound to `--tokenizer`'s vocabulary when one is given
/// (markers then match by id), and the tokenizer itself.
pub(crate) fn bound_factory(
    reg: &Registry,
    reasoning: Option<&str>,
    tools: Option<&str>,
    tokenizer: Option<&std::path::Path>,
) -> Result<(llmsift_core::ParserFactory, Option<TokenizerView>)> {
    let factory = reg.factory(reasoning, tools)?;
    match tokenizer {
        Some(p) => {
            let v = TokenizerView::from_file(p)?;
            Ok((factory.bind(&v)?, Some(v)))
        }
        None => Ok((factory, None)),
    }
}

fn load_templates(path: &std::path::Path) -> Result<llmsift_templates::TemplateSet> {
    Ok(if path.extension().is_some_and(|e| e == "json") {
        llmsift_templates::TemplateSet::from_tokenizer_config_file(path)?
    } else {
        llmsift_templates::TemplateSet::from_template_file(path)?
    })
}

fn registry(files: &[PathBuf]) -> Result<Registry> {
    let mut r = Registry::builtin().clone();
    for f in files {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        r.add_file(&f.display().to_string(), &text)
            .with_context(|| format!("format file {}", f.display()))?;
    }
    Ok(r)
}

fn parse(mut a: ParseArgs) -> Result<()> {
    let reg = registry(&a.format_files)?;
    let source = detect::template_source(a.chat_template.as_deref(), a.tokenizer.as_deref());
    (a.reasoning_parser, a.tool_call_parser) =
        detect::resolve(&reg, a.reasoning_parser.take(), a.tool_call_parser.take(), source)?;
    if let Some(path) = &a.request {
        return request::run(&reg, path, &a);
    }
    if let Some(path) = &a.jsonl {
        return jsonl(reg, path, a.tokenizers.clone());
    }
    let mut text = String::new();
    match a.input.as_deref() {
        None => std::io::stdin().read_to_string(&mut text).map(|_| ())?,
        Some(p) if p.as_os_str() == "-" => std::io::stdin().read_to_string(&mut text).map(|_| ())?,
        Some(p) => text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
    }
    let (factory, view) = bound_factory(
        &reg,
        a.reasoning_parser.as_deref(),
        a.tool_call_parser.as_deref(),
        a.tokenizer.as_deref(),
    )?;
    let mut req = Request { byte_spans: a.byte_spans, atomic_calls: a.atomic_calls, ..Request::default() };
    if let Some(p) = &a.tools {
        let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let v: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", p.display()))?;
        req.tools = Arc::new(Tools::from_json(&v));
    }
    if let Some(tc) = &a.tool_choice {
        req.tool_choice = match tc.as_str() {
            "none" => ToolChoice::None,
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            name => ToolChoice::Named(name.to_string()),
        };
    }
    let ids = match &view {
        Some(v) => Some(v.encode(&text)?),
        None => None,
    };
    let out = std::io::stdout();
    let mut out = out.lock();
    if !a.stream && !a.byte_spans {
        let m = factory.parse(&req, &text, ids.as_deref());
        serde_json::to_writer_pretty(&mut out, &message_json(&m))?;
        writeln!(out)?;
        return Ok(());
    }
    if !a.stream {
        // One shot, with the spans beside the message.
        let mut p = factory.parser(&req);
        let mut fold = Folder::default();
        fold.push(&p.push(&text, ids.as_deref()));
        fold.push(&p.finish());
        let spans = serde_json::to_value(fold.spans())?;
        let mut m = message_json(&fold.finish());
        m["spans"] = spans;
        serde_json::to_writer_pretty(&mut out, &m)?;
        writeln!(out)?;
        return Ok(());
    }
    let mut p = factory.parser(&req);
    let mut fold = Folder::default();
    let mut emit = |d: llmsift_core::Delta, out: &mut dyn Write| -> Result<()> {
        if !d.is_empty() || !d.spans.is_empty() {
            let mut j = delta_json(&d);
            if !d.spans.is_empty() {
                j["spans"] = serde_json::to_value(&d.spans)?;
            }
            serde_json::to_writer(&mut *out, &j)?;
            writeln!(out)?;
            fold.push(&d);
        }
        Ok(())
    };
    match (&view, &ids) {
        (Some(v), Some(ids)) => {
            let mut det = v.detokenizer();
            for &id in ids {
                let t = det.push(id).unwrap_or_default();
                emit(p.push(&t, Some(&[id])), &mut out)?;
            }
            let rest = det.finish();
            emit(p.push(&rest, Some(&[])), &mut out)?;
        }
        _ => {
            for c in stream_chunks(&text, Some(4)) {
                emit(p.push(c, None), &mut out)?;
            }
        }
    }
    emit(p.finish(), &mut out)?;
    let spans = serde_json::to_value(fold.spans())?;
    let mut m = message_json(&fold.finish());
    if a.byte_spans {
        m["spans"] = spans;
    }
    serde_json::to_writer_pretty(&mut out, &m)?;
    writeln!(out)?;
    Ok(())
}

fn jsonl(reg: Registry, path: &PathBuf, tokenizers: Option<PathBuf>) -> Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut runner = Runner::with_registry(reg);
    runner.tokenizers_dir = tokenizers.or_else(|| std::env::var_os("SIFT_TOKENIZERS").map(PathBuf::from));
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match Case::from_json_line(&line) {
            Ok(case) => runner.answer(&case),
            Err(e) => {
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_else(|| format!("line {}", n + 1));
                llmsift_conformance::Answer::error(&id, "bad_case", e)
            }
        };
        serde_json::to_writer(&mut out, &answer)?;
        writeln!(out)?;
    }
    out.flush()?;
    if false {
        bail!("unreachable");
    }
    Ok(())
}
