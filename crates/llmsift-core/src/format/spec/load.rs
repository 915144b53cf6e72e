//! Reading a format file: TOML into [`FormatSpec`], every value checked by
//! its type, and a failure turned into an error that names the file, the
//! table and the key (the path serde was at when the value failed).

use super::FormatSpec;
use crate::FormatError;

impl FormatSpec {
    /// Parses a format file (TOML) whose origin is unknown (errors name the
    /// format instead of a file).
    pub fn from_toml(text: &str) -> Result<FormatSpec, crate::FormatError> {
        read(None, text)
    }

    /// Parses the format file `file` (a path, for messages): every value is
    /// checked here, and a bad one is an error naming `file`, the table and
    /// the key.
    pub fn from_file(file: &str, text: &str) -> Result<FormatSpec, crate::FormatError> {
        read(Some(file), text)
    }
}

/// Parses `text`; `file` names it in errors.
fn read(file: Option<&str>, text: &str) -> Result<FormatSpec, FormatError> {
    let origin = || origin(file, text);
    let de = toml::Deserializer::parse(text)
        .map_err(|e| FormatError::Syntax { message: format!("{}: {}", origin(), located(text, &e)) })?;
    let mut spec: FormatSpec = serde_path_to_error::deserialize(de).map_err(|e| {
        let (table, key) = table_and_key(e.path());
        let message = match moved(&table, &key) {
            Some(now) if e.inner().message().starts_with("unknown field") => {
                format!("no longer a key of the language: {now}")
            }
            _ => e.inner().message().trim().to_string(),
        };
        FormatError::BadKey { file: origin(), table, key, message }
    })?;
    spec.source = file.map(str::to_string);
    check_kind(&spec)?;
    Ok(spec)
}

/// A `[vllm]` key only the other kind of format is read for is an error,
/// not silently ignored: the reasoning format's profile says how the
/// output is split and what its parser class is, the tool format's what
/// becomes of calls.
fn check_kind(spec: &FormatSpec) -> Result<(), FormatError> {
    use super::{Kind, ParserClass};
    let (t, o) = (&spec.vllm.text_loss, &spec.vllm.one_shot);
    let reasoning_only = [
        ("vllm", "parser", spec.vllm.parser != ParserClass::Engine),
        ("vllm.text_loss", "prompt_open_message", t.prompt_open_message),
        ("vllm.one_shot", "split", o.split.is_some()),
        ("vllm.one_shot", "unterminated", o.unterminated.is_some()),
        ("vllm.one_shot", "lone_end", o.lone_end.is_some()),
        ("vllm.one_shot", "unfinished", o.unfinished.is_some()),
        ("vllm.one_shot", "prompt_open_empty", o.prompt_open_empty),
        ("vllm.one_shot", "outside_lost", o.outside_lost.is_some()),
        ("vllm.one_shot", "partition", o.partition.is_some()),
        ("vllm.one_shot", "no_call_as_written", o.no_call_as_written),
    ];
    let tools_only = [
        ("vllm.text_loss", "text_around_calls", t.text_around_calls),
        ("vllm.text_loss", "cut_call", t.cut_call.is_some()),
        ("vllm.text_loss", "cut_param", t.cut_param),
        ("vllm.text_loss", "unknown_names", t.unknown_names),
        ("vllm.text_loss", "calls_when_none", t.calls_when_none != super::NoneCalls::Keep),
        ("vllm.one_shot", "as_content", !o.as_content.is_empty()),
        ("vllm.one_shot", "empty_if_in_args", o.empty_if_in_args.is_some()),
        ("vllm.one_shot", "strip_join", o.strip_join.is_some()),
        ("vllm.one_shot", "between_calls_lost", o.between_calls_lost),
        ("vllm.one_shot", "later_blocks_lost", o.later_blocks_lost.is_some()),
        ("vllm.one_shot", "strict_block", o.strict_block.is_some()),
        ("vllm.one_shot", "first_block", o.first_block.is_some()),
    ];
    if o.no_call_as_written && spec.vllm.parser != ParserClass::Legacy {
        // Only a pair that is not engine-based answers the reasoning parser's content.
        return Err(spec.bad_key(
            "vllm.one_shot",
            "no_call_as_written",
            "needs `[vllm] parser = \"legacy\"`",
        ));
    }
    let (wrong, why): (&[(&str, &str, bool)], _) = match spec.kind {
        Kind::Reasoning => (&tools_only, "a tool format's key: a reasoning format's is never read"),
        Kind::Tools => (&reasoning_only, "a reasoning format's key: a tool format's is never read"),
    };
    match wrong.iter().find(|(_, _, set)| *set) {
        Some((table, key, _)) => Err(spec.bad_key(table, key, why)),
        None => Ok(()),
    }
}

/// Where a key of the language before the `[vllm]` profile and the
/// `[alias.NAME]` overlay went, so an old file's error says what to write.
fn moved(table: &str, key: &str) -> Option<&'static str> {
    Some(match (table, key) {
        ("", "aliases") => "write `[alias.NAME]` tables",
        ("", k) if k.starts_with("alias_") => "write the key in the alias's `[alias.NAME]` table",
        ("", "one_shot") => "write `[vllm.one_shot]`",
        ("", "drop_content_after_calls") => "write `[vllm.text_loss] content_after_calls`",
        ("", "calls_kept_when_none") => "write `[vllm] parser = \"legacy\"`",
        ("calls", "strip_when_none" | "strip_without_tools") => "write `[vllm.text_loss] calls_when_none`",
        ("calls", "cut_lost") => "write `[vllm.text_loss] cut_call`",
        ("calls", "cut_param_lost") => "write `[vllm.text_loss] cut_param`",
        ("calls", "unknown_names_lost") => "write `[vllm.text_loss] unknown_names`",
        ("calls", "text_with_calls") => "write `[vllm.text_loss] text_around_calls`",
        ("prompt", "lost") => "write `[vllm.text_loss] prompt_open_message`",
        _ => return None,
    })
}

/// The file, or the format's name when the file is not known.
fn origin(file: Option<&str>, text: &str) -> String {
    if let Some(f) = file {
        return f.to_string();
    }
    let name = text.parse::<toml::Table>().ok().and_then(|t| t.get("name")?.as_str().map(str::to_string));
    match name {
        Some(n) => format!("format {n:?}"),
        None => "format file".to_string(),
    }
}

/// A TOML syntax error's message with its line.
fn located(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(s) => format!(
            "line {}: {}",
            text[..s.start.min(text.len())].matches('\n').count() + 1,
            e.message().trim()
        ),
        None => e.message().trim().to_string(),
    }
}

/// Splits a serde path (`states.call.on.open.param`, `switch[0].state`)
/// into its table (`states.call.on.open`) and key (`param`).
fn table_and_key(path: &serde_path_to_error::Path) -> (String, String) {
    use serde_path_to_error::Segment;
    let mut parts: Vec<String> = vec![];
    for seg in path.iter() {
        match seg {
            Segment::Map { key } => parts.push(key.clone()),
            Segment::Seq { index } => match parts.last_mut() {
                Some(last) => last.push_str(&format!("[{index}]")),
                None => parts.push(format!("[{index}]")),
            },
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    let key = parts.pop().unwrap_or_default();
    (parts.join("."), key)
}
