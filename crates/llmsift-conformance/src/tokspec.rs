//! Tokenizer specs: a case's tokenizer named as "a base vocabulary plus these
//! special tokens", for families whose real tokenizer the tests do not fetch.
//!
//! A case's `tokenizer` field is either a name or a path (see `run.rs`), or an
//! object `{"base": "qwen3", "special_tokens": ["<|tool_calls_section_begin|>", …]}`,
//! optionally with `"added_tokens": […]`: markers that are single tokens of
//! the model's vocabulary but not special (K2 Horizon's `<ifm|think>`), so
//! `skip_special_tokens` keeps them. The object is kept as its canonical JSON
//! text (keys sorted), so it caches like a name. Loading it adds the tokens
//! to the base vocabulary with the `tokenizers` crate's added-tokens API, in
//! the listed order, plain ones first, all non-normalized: exactly what the
//! oracle (`scripts/oracle/record.py`) did with Python's `tokenizers` when it
//! recorded the case, so both sides give every marker the same id and no
//! multi-megabyte file is committed.
//!
//! Invariant: the same spec always yields the same ids (a token already in
//! the base vocabulary keeps its id; new ones are numbered after it in order).
//!
//! Also here: a case's `tokenized_as` runs ([`encode_runs`]), which spell
//! part of the output in ordinary tokens (a marker written inside a value
//! without its token id), checked to decode back to the output exactly.

use llmsift_tokenizers::{named_tokenizer_path, TokenizerView};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::path::Path;
use tokenizers::{AddedToken, Tokenizer};

/// Deserializes a case's `tokenizer`: a string as it is, an object as its
/// canonical JSON text.
pub(crate) fn tokenizer_field<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(v) => Some(v.to_string()),
    })
}

/// Whether a tokenizer field holds a spec rather than a name or path.
pub(crate) fn is_spec(field: &str) -> bool {
    field.starts_with('{')
}

/// Builds the tokenizer a spec names; `dir` overrides where named bases live.
pub(crate) fn load(spec: &str, dir: Option<&Path>) -> Result<TokenizerView, String> {
    let v: Value = serde_json::from_str(spec).map_err(|e| format!("tokenizer spec {spec:?}: {e}"))?;
    let base = v
        .get("base")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("tokenizer spec without a base: {spec}"))?;
    let path = match dir {
        Some(d) => Some(d.join(base).join("tokenizer.json")),
        None => named_tokenizer_path(base),
    };
    let path = path.ok_or_else(|| format!("unknown base tokenizer {base:?}"))?;
    let mut tk = Tokenizer::from_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // Plain added tokens first, then special ones: the order the oracle
    // added them in, so the ids agree.
    tk.add_tokens(&tokens(&v, "added_tokens", false));
    tk.add_special_tokens(&tokens(&v, "special_tokens", true));
    Ok(TokenizerView::from(tk))
}

/// A spec's token list as non-normalized added tokens (`special`: skipped by
/// `skip_special_tokens`, or a plain single token that always stays).
fn tokens(v: &Value, key: &str, special: bool) -> Vec<AddedToken> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| AddedToken::from(s.to_string(), special).normalized(false))
                .collect()
        })
        .unwrap_or_default()
}

/// The ids of a case's output: `text` as the tokenizer reads it, or, with
/// `runs` (`tokenized_as`), each run tokenized so, a `{"ordinary": text}`
/// run with no added token read whole. The runs must concatenate to
/// `text`, and the ids must decode to it.
pub(crate) fn encode_runs(v: &TokenizerView, text: &str, runs: Option<&[Value]>) -> Result<Vec<u32>, String> {
    let Some(runs) = runs else { return v.encode(text).map_err(|e| e.to_string()) };
    let (mut ids, mut joined) = (vec![], String::new());
    for r in runs {
        match r {
            Value::String(s) => {
                ids.extend(v.encode(s).map_err(|e| e.to_string())?);
                joined.push_str(s);
            }
            Value::Object(o) => {
                let s = o.get("ordinary").and_then(Value::as_str).ok_or("a run object needs \"ordinary\"")?;
                ids.extend(encode_ordinary(v, s)?);
                joined.push_str(s);
            }
            _ => return Err(format!("tokenized_as: a run is a string or {{\"ordinary\": …}}, not {r}")),
        }
    }
    if joined != text {
        return Err("tokenized_as: the runs do not concatenate to model_output".into());
    }
    if v.decode(&ids) != text {
        return Err("tokenized_as: the ids do not decode to model_output".into());
    }
    Ok(ids)
}

/// `s` in ordinary tokens: cut after the first character of every added
/// token's spelling in it, so no piece holds one whole, and each piece
/// tokenized alone (how a model spells a marker without its token).
fn encode_ordinary(v: &TokenizerView, s: &str) -> Result<Vec<u32>, String> {
    let mut cuts: Vec<usize> = vec![0, s.len()];
    for t in v.inner().get_added_tokens_decoder().values() {
        let c = t.content.as_str();
        let Some(first) = c.chars().next() else { continue };
        if c.len() > first.len_utf8() {
            cuts.extend(s.match_indices(c).map(|(i, _)| i + first.len_utf8()));
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut ids = vec![];
    for w in cuts.windows(2) {
        ids.extend(v.encode(&s[w[0]..w[1]]).map_err(|e| e.to_string())?);
    }
    Ok(ids)
}
