//! `[terminals]`: the markers a format names, each a list of spellings or a
//! table that also says whether the marker is one special token.
//!
//! A terminal is read as a list or as a table by what the file holds (not
//! by trying one reading and then the other), so an error inside the table
//! names its key.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// A terminal: a list of spellings, or a table with `spell`, `token` and
/// `required_token`.
#[derive(Debug, Clone)]
pub enum TerminalSpec {
    /// Spellings matched in text.
    Spellings(Vec<String>),
    /// Spellings plus whether the marker is one special token.
    Full {
        /// Spellings (at least one).
        spell: Vec<String>,
        /// Matched by token id when the caller gives ids.
        token: bool,
        /// The reference parser refuses to start without this marker as one
        /// token of the vocabulary, so binding fails naming it. Any other
        /// `token` marker the vocabulary lacks falls back to text matching.
        required_token: bool,
    },
}

/// The table form of a terminal.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TerminalTable {
    spell: Vec<String>,
    #[serde(default)]
    token: bool,
    #[serde(default)]
    required_token: bool,
}

impl<'de> Deserialize<'de> for TerminalSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TerminalSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of spellings or a table with `spell`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<TerminalSpec, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(a)).map(TerminalSpec::Spellings)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<TerminalSpec, A::Error> {
                let t = TerminalTable::deserialize(de::value::MapAccessDeserializer::new(a))?;
                Ok(TerminalSpec::Full { spell: t.spell, token: t.token, required_token: t.required_token })
            }
        }
        d.deserialize_any(V)
    }
}

impl TerminalSpec {
    /// The spellings.
    pub fn spellings(&self) -> &[String] {
        match self {
            TerminalSpec::Spellings(s) | TerminalSpec::Full { spell: s, .. } => s,
        }
    }
    /// Whether the terminal is a special token.
    pub fn is_token(&self) -> bool {
        matches!(self, TerminalSpec::Full { token: true, .. })
    }
    /// Whether binding must find the terminal as one token (see `required_token`).
    pub fn is_required_token(&self) -> bool {
        matches!(self, TerminalSpec::Full { token: true, required_token: true, .. })
    }
}
