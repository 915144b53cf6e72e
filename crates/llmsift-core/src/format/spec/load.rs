//! Reading a format file: TOML into [`FormatSpec`], every value checked by
//! its type, and a failure turned into an error that names the file, the
//! table and the key (the path serde was at when the value failed).

use super::FormatSpec;
use crate::FormatError;

/// Parses `text`; `file` names it in errors.
pub(super) fn read(file: Option<&str>, text: &str) -> Result<FormatSpec, FormatError> {
    let origin = || origin(file, text);
    let de = toml::Deserializer::parse(text)
        .map_err(|e| FormatError::Syntax { message: format!("{}: {}", origin(), located(text, &e)) })?;
    let mut spec: FormatSpec = serde_path_to_error::deserialize(de).map_err(|e| {
        let (table, key) = table_and_key(e.path());
        FormatError::BadKey { file: origin(), table, key, message: e.inner().message().trim().to_string() }
    })?;
    spec.source = file.map(str::to_string);
    Ok(spec)
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
        Some(s) => format!("line {}: {}", text[..s.start.min(text.len())].matches('\n').count() + 1, e.message().trim()),
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
