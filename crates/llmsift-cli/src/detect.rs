//! `sift detect` and the `auto` parser names: which reasoning and tool
//! parsers fit a model, from the markers in its chat template (and the
//! tokenizer's added tokens), as `llmsift_core::Registry::detect` decides.

use anyhow::{Context, Result};
use llmsift_core::format::response_template::{self, Template, TemplateError};
use llmsift_core::{Detection, Registry};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The text detection reads: a template file as is, or from a
/// `tokenizer_config.json` every `chat_template` (a string or a list of named
/// templates) plus the added tokens' spellings.
pub fn template_text(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    if path.extension().is_none_or(|e| e != "json") {
        return Ok(text);
    }
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    Ok(llmsift_core::detection_text(&v))
}

/// Where `auto` finds the template: `--chat-template`, else the
/// `tokenizer_config.json` beside `--tokenizer`.
pub fn template_source(chat_template: Option<&Path>, tokenizer: Option<&Path>) -> Option<PathBuf> {
    chat_template.map(Path::to_path_buf).or_else(|| {
        let cfg = tokenizer?.parent()?.join("tokenizer_config.json");
        cfg.exists().then_some(cfg)
    })
}

/// A `tokenizer_config.json`'s own `response_template`: `None` when the
/// file has none; the template, or why Sift refuses it.
pub fn own_template(path: &Path) -> Result<Option<Result<Template, TemplateError>>> {
    if path.extension().is_none_or(|e| e != "json") {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    Ok(response_template::of_config(&v).map(response_template::load))
}

/// Detects from a file: a model's own response template when it has one
/// Sift can read (served by `hf`), else the chat template's markers.
pub fn detect(reg: &Registry, path: &Path) -> Result<Detection> {
    if let Some(Ok(t)) = own_template(path)? {
        let hf = Some(response_template::PARSER.to_string());
        return Ok(Detection {
            reasoning: if t.has_reasoning() { hf.clone() } else { None },
            tools: if t.has_calls() { hf } else { None },
            also: vec![],
        });
    }
    Ok(reg.detect(&template_text(path)?))
}

/// Resolves `auto` names; other names pass through.
pub fn resolve(
    reg: &Registry,
    reasoning: Option<String>,
    tools: Option<String>,
    source: Option<PathBuf>,
) -> Result<(Option<String>, Option<String>)> {
    let wants = reasoning.as_deref() == Some("auto") || tools.as_deref() == Some("auto");
    if !wants {
        return Ok((reasoning, tools));
    }
    let path = source
        .context("`auto` needs --chat-template FILE or a --tokenizer with tokenizer_config.json beside it")?;
    let d = detect(reg, &path)?;
    let pick = |given: Option<String>, found: Option<String>| match given.as_deref() {
        Some("auto") => found,
        _ => given,
    };
    Ok((pick(reasoning, d.reasoning), pick(tools, d.tools)))
}

/// What a model's own response template means for detection, in words.
pub fn own_note(own: &Option<Result<Template, TemplateError>>) -> Option<String> {
    match own {
        None => None,
        Some(Ok(_)) => {
            Some("the model's own response_template (parsed as transformers' parse_response)".into())
        }
        Some(Err(e)) => Some(format!("refused ({e}); parsers detected from the chat template instead")),
    }
}

/// Prints a detection (`own`: the model's response template, if any).
pub fn print(
    d: &Detection,
    own: &Option<Result<Template, TemplateError>>,
    json: bool,
) -> std::io::Result<()> {
    if json {
        writeln!(
            std::io::stdout(),
            "{}",
            serde_json::json!({"reasoning_parser": d.reasoning, "tool_call_parser": d.tools, "also_fit": d.also,
                               "response_template": own_note(own)})
        )?;
        return Ok(());
    }
    if let Some(n) = own_note(own) {
        writeln!(std::io::stdout(), "response template: {n}")?;
    }
    let show = |n: &Option<String>| n.clone().unwrap_or_else(|| "cannot tell".into());
    writeln!(std::io::stdout(), "reasoning parser: {}", show(&d.reasoning))?;
    writeln!(std::io::stdout(), "tool-call parser: {}", show(&d.tools))?;
    if !d.also.is_empty() {
        writeln!(std::io::stdout(), "also fit (less specific): {}", d.also.join(", "))?;
    }
    Ok(())
}
