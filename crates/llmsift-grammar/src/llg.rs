//! The llguidance side (feature `llguidance`): a constraint as llguidance's
//! `TopLevelGrammar`, and a [`Checker`] that compiles grammars with
//! llguidance and tells whether an output is accepted.
//!
//! Acceptance is llguidance's own: a [`Matcher`] is fed the output's tokens
//! (`validate_tokens`, then `consume_tokens`) and asked `is_accepting` at
//! the end. [`Checker::bytes`] builds a byte-level vocabulary (one token per
//! byte, plus the given special tokens, plus an end-of-sequence token), so
//! any text can be checked exactly, byte for byte, with or without its
//! special-token markers being tokens. [`Checker::with_tok_env`] takes a
//! real tokenizer's environment instead.
//!
//! Invariant: llguidance's `anyhow` errors never leave this module; they
//! become [`GrammarError::Engine`].

use crate::constraint::Constraint;
use crate::error::GrammarError;
use crate::lark::LarkOptions;
pub use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie, TokenId};
use llguidance::{Matcher, ParserFactory};
use serde_json::Value;
use std::sync::Arc;

/// The constraint as an llguidance grammar (its Lark text).
pub fn grammar(constraint: &Constraint, opts: &LarkOptions) -> TopLevelGrammar {
    TopLevelGrammar::from_lark(constraint.to_lark(opts))
}

/// A JSON schema as an llguidance grammar, without going through Lark.
pub fn json_schema_grammar(schema: &Value) -> TopLevelGrammar {
    TopLevelGrammar::from_json_schema(schema.clone())
}

fn engine(e: impl std::fmt::Display) -> GrammarError {
    GrammarError::Engine { message: e.to_string() }
}

/// Compiles grammars for one vocabulary and checks outputs against them.
pub struct Checker {
    factory: ParserFactory,
    /// Special tokens of a byte-level vocabulary, longest first.
    specials: Vec<(String, TokenId)>,
}

impl Checker {
    /// A byte-level vocabulary: token `b` is byte `b` (0–255), then one token
    /// per entry of `special_tokens` (in order), then end-of-sequence.
    pub fn bytes(special_tokens: &[&str]) -> Result<Checker, GrammarError> {
        let mut words: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut specials = Vec::new();
        for s in special_tokens {
            if specials.iter().any(|(n, _)| n == s) {
                continue;
            }
            specials.push((s.to_string(), words.len() as TokenId));
            words.push([&[TokTrie::SPECIAL_TOKEN_MARKER], s.as_bytes()].concat());
        }
        words.push([&[TokTrie::SPECIAL_TOKEN_MARKER], &b"<|sift_eos|>"[..]].concat());
        let info = TokRxInfo {
            vocab_size: words.len() as u32,
            tok_eos: words.len() as TokenId - 1,
            tok_bos: None,
            tok_pad: None,
            tok_unk: None,
            tok_end_of_turn: None,
        };
        let env: TokEnv = Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)));
        specials.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
        Ok(Checker { factory: Self::factory(&env)?, specials })
    }

    /// The vocabulary of a HuggingFace `tokenizer.json` (byte-level BPE or
    /// byte fallback), `eos` naming its end-of-sequence token. Check token
    /// ids from the real tokenizer with [`Checker::accepts_tokens`].
    pub fn from_tokenizer_json(tokenizer_json: &Value, eos: &str) -> Result<Checker, GrammarError> {
        let words = llguidance::token_bytes_from_tokenizer_json(tokenizer_json).map_err(engine)?;
        let marked = [&[TokTrie::SPECIAL_TOKEN_MARKER], eos.as_bytes()].concat();
        let eos_id = words
            .iter()
            .position(|w| *w == marked || w.as_slice() == eos.as_bytes())
            .ok_or_else(|| engine(format!("no token {eos:?} in the vocabulary")))?;
        let info = TokRxInfo {
            vocab_size: words.len() as u32,
            tok_eos: eos_id as TokenId,
            tok_bos: None,
            tok_pad: None,
            tok_unk: None,
            tok_end_of_turn: None,
        };
        let env: TokEnv = Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)));
        Self::with_tok_env(&env)
    }

    /// A real tokenizer's environment (check token ids with
    /// [`Checker::accepts_tokens`]).
    pub fn with_tok_env(env: &TokEnv) -> Result<Checker, GrammarError> {
        Ok(Checker { factory: Self::factory(env)?, specials: Vec::new() })
    }

    fn factory(env: &TokEnv) -> Result<ParserFactory, GrammarError> {
        let mut f = ParserFactory::new_simple(env).map_err(engine)?;
        f.quiet();
        Ok(f)
    }

    /// The byte-level tokens of `text`: each registered special token's
    /// spelling becomes that token, every other byte its own token.
    pub fn tokenize(&self, text: &str) -> Vec<TokenId> {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        'outer: while i < bytes.len() {
            for (name, id) in &self.specials {
                if bytes[i..].starts_with(name.as_bytes()) {
                    out.push(*id);
                    i += name.len();
                    continue 'outer;
                }
            }
            out.push(bytes[i] as TokenId);
            i += 1;
        }
        out
    }

    /// Compiles a grammar; the matcher is ready for the first token.
    pub fn matcher(&self, grammar: TopLevelGrammar) -> Result<Matcher, GrammarError> {
        let parser = self.factory.create_parser(grammar).map_err(engine)?;
        let m = Matcher::new(Ok(parser));
        match m.get_error() {
            Some(e) => Err(engine(e)),
            None => Ok(m),
        }
    }

    /// Compiles Lark text (validates it).
    pub fn compile(&self, lark: &str) -> Result<(), GrammarError> {
        self.matcher(TopLevelGrammar::from_lark(lark.to_string())).map(|_| ())
    }

    /// How many of `tokens` the grammar lets through, from the start.
    pub fn valid_prefix(&self, grammar: TopLevelGrammar, tokens: &[TokenId]) -> Result<usize, GrammarError> {
        let mut m = self.matcher(grammar)?;
        m.validate_tokens(tokens).map_err(engine)
    }

    /// Whether the grammar accepts exactly these tokens as a whole output.
    pub fn accepts_tokens(&self, grammar: TopLevelGrammar, tokens: &[TokenId]) -> Result<bool, GrammarError> {
        let mut m = self.matcher(grammar)?;
        let n = m.validate_tokens(tokens).map_err(engine)?;
        if n < tokens.len() {
            return Ok(false);
        }
        m.consume_tokens(tokens).map_err(engine)?;
        m.is_accepting().map_err(engine)
    }

    /// Whether the Lark grammar accepts `text` as a whole output (tokenized
    /// by [`Checker::tokenize`]).
    pub fn accepts(&self, lark: &str, text: &str) -> Result<bool, GrammarError> {
        self.accepts_tokens(TopLevelGrammar::from_lark(lark.to_string()), &self.tokenize(text))
    }
}
