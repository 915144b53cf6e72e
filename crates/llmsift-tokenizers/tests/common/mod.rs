//! Shared test loader: each real tokenizer is loaded at most once per test
//! binary, and missing assets fail the test with a pointer to the script.

use std::sync::OnceLock;

use llmsift_tokenizers::{TokenizerError, TokenizerView, TOKENIZER_NAMES};

static LOADED: [OnceLock<TokenizerView>; TOKENIZER_NAMES.len()] =
    [const { OnceLock::new() }; TOKENIZER_NAMES.len()];

/// The named real tokenizer; panics (with the fix) when its assets are missing.
pub fn tok(name: &str) -> &'static TokenizerView {
    let slot = TOKENIZER_NAMES.iter().position(|&n| n == name).expect("known tokenizer name");
    LOADED[slot].get_or_init(|| {
        TokenizerView::named(name).unwrap_or_else(|e| match e {
            TokenizerError::MissingAsset { .. } => panic!("{e}"),
            _ => panic!("{e} (re-fetch the assets with scripts/fetch-assets.sh)"),
        })
    })
}
