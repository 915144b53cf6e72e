//! [`TokenizerView`]: a loaded HuggingFace tokenizer, seen the way Sift needs it.
//!
//! Invariants:
//! - [`TokenizerView::encode`] adds no special tokens (no BOS, no template) but
//!   recognises added/special-token spellings in the text as their single ids,
//!   which is how a model's own output is tokenized;
//! - [`TokenizerView::decode`] never skips special tokens;
//!   [`TokenizerView::decode_with`] skips them on request, as vLLM's
//!   detokenizer does with `skip_special_tokens` (tokens the tokenizer marks
//!   `special`; non-special added tokens such as Qwen3's `<tool_call>` stay);
//! - [`llmsift_core::Vocab::token_id`] returns `Some(id)` only when the marker is
//!   exactly one token whose decode is the marker itself;
//! - the view is cheap to clone (the tokenizer sits behind an `Arc`).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use tokenizers::{DecoderWrapper, Tokenizer};

use crate::{named_tokenizer_path, Detokenizer, TokenizerError};

/// A loaded tokenizer: encode, decode, and single-token lookups.
#[derive(Clone)]
pub struct TokenizerView {
    inner: Arc<Tokenizer>,
    /// The ids of the added tokens marked special, sorted. Read once:
    /// `Tokenizer::get_added_tokens_decoder` clones its whole map per call,
    /// and [`TokenizerView::is_special`] runs per streamed token.
    special: Arc<[u32]>,
}

impl fmt::Debug for TokenizerView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenizerView").field("vocab_size", &self.vocab_size()).finish()
    }
}

impl From<Tokenizer> for TokenizerView {
    fn from(tokenizer: Tokenizer) -> Self {
        let mut special: Vec<u32> = tokenizer
            .get_added_tokens_decoder()
            .iter()
            .filter(|(_, t)| t.special)
            .map(|(id, _)| *id)
            .collect();
        special.sort_unstable();
        TokenizerView { inner: Arc::new(tokenizer), special: special.into() }
    }
}

impl TokenizerView {
    /// Loads a `tokenizer.json` file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, TokenizerError> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|source| TokenizerError::Io { path: path.to_path_buf(), source })?;
        Self::parse(&bytes, || path.display().to_string())
    }

    /// Parses the contents of a `tokenizer.json`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TokenizerError> {
        Self::parse(bytes, || "<bytes>".to_string())
    }

    /// Loads one of the named tokenizers fetched by `scripts/fetch-assets.sh`
    /// (see [`crate::named_tokenizer_path`]).
    pub fn named(name: &str) -> Result<Self, TokenizerError> {
        let path = named_tokenizer_path(name).ok_or_else(|| TokenizerError::UnknownName(name.to_string()))?;
        if !path.is_file() {
            return Err(TokenizerError::MissingAsset { name: name.to_string(), path });
        }
        Self::from_file(path)
    }

    fn parse(bytes: &[u8], origin: impl FnOnce() -> String) -> Result<Self, TokenizerError> {
        Tokenizer::from_bytes(bytes)
            .map(Self::from)
            .map_err(|e| TokenizerError::Parse { origin: origin(), message: e.to_string() })
    }

    /// The wrapped HuggingFace tokenizer.
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }

    /// Number of ids, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// Token ids of `text` as a model would emit them: no special tokens are
    /// added, special-token spellings in the text map to their single ids.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        match self.inner.encode_fast(text, false) {
            Ok(encoding) => Ok(encoding.get_ids().to_vec()),
            Err(e) => {
                Err(TokenizerError::Encode { text: text.chars().take(80).collect(), message: e.to_string() })
            }
        }
    }

    /// The text of `ids`, special tokens kept. Unknown ids decode to nothing;
    /// a decoder error (none of HuggingFace's built-in decoders raises one)
    /// decodes to the empty string.
    pub fn decode(&self, ids: &[u32]) -> String {
        self.decode_with(ids, false)
    }

    /// The text of `ids`, special tokens skipped when `skip_special` is set
    /// (HuggingFace's `decode(ids, skip_special_tokens)`).
    pub fn decode_with(&self, ids: &[u32], skip_special: bool) -> String {
        self.inner.decode(ids, skip_special).unwrap_or_default()
    }

    /// Whether decoding concatenates the tokens' bytes (a lone byte-level
    /// decoder): then `decode(a ++ b) == decode(a) ++ decode(b)` whenever
    /// `decode(a)` does not end in U+FFFD. Metaspace, byte-fallback and
    /// WordPiece decoders rewrite the start or the joins, so they do not.
    pub fn decodes_by_concatenation(&self) -> bool {
        matches!(self.inner.get_decoder(), Some(DecoderWrapper::ByteLevel(_)))
    }

    /// Whether `id` is an added token the tokenizer marks special (what
    /// `skip_special_tokens` removes).
    pub fn is_special(&self, id: u32) -> bool {
        self.special.binary_search(&id).is_ok()
    }

    /// The vocabulary entry of an id (byte-level encoded for byte-level BPE).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The id of a vocabulary entry or added token, spelled as stored
    /// (byte-level encoded for byte-level BPE: `"Ċ"` for a newline).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// A fresh incremental detokenizer over this tokenizer.
    pub fn detokenizer(&self) -> Detokenizer {
        Detokenizer::new(self)
    }

    /// A fresh incremental detokenizer that skips special tokens when
    /// `skip_special` is set (vLLM's `skip_special_tokens`).
    pub fn detokenizer_with(&self, skip_special: bool) -> Detokenizer {
        Detokenizer::with_skip(self, skip_special)
    }
}

impl llmsift_core::Vocab for TokenizerView {
    /// The single id of `marker`: first a direct lookup (added tokens, plain
    /// vocab entries), then encoding the marker; either way the id must decode
    /// back to exactly the marker.
    fn token_id(&self, marker: &str) -> Option<u32> {
        if marker.is_empty() {
            return None;
        }
        let exact = |id: &u32| self.decode(&[*id]) == marker;
        if let Some(id) = self.token_to_id(marker).filter(exact) {
            return Some(id);
        }
        match self.encode(marker).ok()?.as_slice() {
            [id] if exact(id) => Some(*id),
            _ => None,
        }
    }

    /// The id of `marker` when it is one of the tokenizer's added tokens
    /// (special or not), spelled exactly so: read once per marker when a
    /// format is bound, never per token.
    fn added_token_id(&self, marker: &str) -> Option<u32> {
        self.inner.get_added_tokens_decoder().iter().find(|(_, t)| t.content == marker).map(|(id, _)| *id)
    }
}
