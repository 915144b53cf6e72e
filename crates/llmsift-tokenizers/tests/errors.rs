//! Error values and messages, and the env-var resolution of asset paths.
//! One test only: it sets environment variables, which must not race.

use std::path::PathBuf;

use llmsift_tokenizers::{assets_dir, named_tokenizer_path, TokenizerError, TokenizerView};

#[test]
fn errors_name_the_offending_value_and_env_vars_resolve_paths() {
    let err = TokenizerView::from_file("/nonexistent/tokenizer.json").unwrap_err();
    assert!(matches!(err, TokenizerError::Io { .. }), "{err:?}");
    assert!(err.to_string().starts_with("cannot read tokenizer file /nonexistent/tokenizer.json"));
    assert!(std::error::Error::source(&err).is_some());

    let err = TokenizerView::from_bytes(b"{\"not\": \"a tokenizer\"}").unwrap_err();
    assert!(err.to_string().starts_with("invalid tokenizer json in <bytes>: "), "{err}");

    let err = TokenizerView::named("gpt2").unwrap_err();
    assert_eq!(err.to_string(), "unknown tokenizer name \"gpt2\"");

    std::env::set_var("SIFT_ASSETS", "/tmp/sift-assets-test");
    assert_eq!(assets_dir(), PathBuf::from("/tmp/sift-assets-test"));
    assert_eq!(
        named_tokenizer_path("qwen3"),
        Some(PathBuf::from("/tmp/sift-assets-test/tokenizers/qwen3/tokenizer.json"))
    );
    std::env::set_var("SIFT_TOKENIZERS", "/nonexistent/tokenizers");
    assert_eq!(
        named_tokenizer_path("gptoss"),
        Some(PathBuf::from("/nonexistent/tokenizers/gptoss/tokenizer.json"))
    );
    let err = TokenizerView::named("gptoss").unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokenizer \"gptoss\" not found at /nonexistent/tokenizers/gptoss/tokenizer.json: \
         run scripts/fetch-assets.sh"
    );
}
