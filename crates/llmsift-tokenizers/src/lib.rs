//! Sift's token view over HuggingFace `tokenizers`.
//!
//! This crate owns everything that touches a real tokenizer, so that
//! `llmsift-core` can stay tokenizer-free:
//! - [`TokenizerView`]: loads a `tokenizer.json`, encodes text the way a
//!   model's output is tokenized (special-token spellings become their single
//!   ids, nothing is added), decodes without skipping special tokens, and
//!   implements [`llmsift_core::Vocab`] (a marker resolves only when it is exactly
//!   one token);
//! - [`Detokenizer`]: incremental detokenization that releases only complete
//!   text, so that the concatenation of everything released for a sequence of
//!   ids equals [`TokenizerView::decode`] of those ids;
//! - [`MarkerStrip`]: `skip_special_tokens` for text without a tokenizer,
//!   removing the spellings a caller lists (never guessed);
//! - [`assets_dir`] / [`named_tokenizer_path`]: where the real tokenizer files
//!   fetched by `scripts/fetch-assets.sh` live.
//!
//! Invariants: no `unsafe`; library errors are [`TokenizerError`].

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod assets;
mod detok;
mod error;
mod strip;
mod view;

pub use assets::{assets_dir, named_tokenizer_path, TOKENIZER_NAMES};
pub use detok::Detokenizer;
pub use error::TokenizerError;
pub use strip::MarkerStrip;
pub use view::TokenizerView;
