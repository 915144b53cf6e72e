//! Read-only accessors over a format's markers and call syntax, for crates
//! that derive something else from a format (llmsift-grammar's structural
//! tags, JSON schemas and Lark / GBNF grammars) instead of spelling its
//! markers a second time.
//!
//! - [`Terminals`]: a format file's terminals by the names its
//!   `[terminals]` table gives them: spellings, and whether the marker is
//!   one special token;
//! - [`Format::state_text`]: how a compiled state reads its text, as far as
//!   the syntax of a call goes (a name, indexed or not; raw JSON arguments;
//!   a JSON envelope and its keys; a routed message header);
//! - [`Format::step`]: where a compiled state goes on a marker, and whether
//!   that opens or ends a call, so a derived grammar can check that what it
//!   makes the model write is read back as the call it means.
//!
//! Invariant: nothing here changes a format, or is read per token; states
//! are named as their format file names them (a tool grammar's states
//! included, whatever namespace the composed format keeps them in).

use crate::format::compiled::{Mode, NameStyle};
use crate::format::{Format, FormatSpec};

/// One terminal of a format file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker<'a> {
    /// Its name in the `[terminals]` table.
    pub name: &'a str,
    /// Its spellings (at least one; the first is how a model writes it).
    pub spellings: &'a [String],
    /// Whether the format declares it one special token (`token = true`).
    pub token: bool,
}

impl<'a> Marker<'a> {
    /// The first spelling: how a model writes the marker.
    pub fn spelling(&self) -> &'a str {
        self.spellings.first().map_or("", String::as_str)
    }
}

/// The terminals of one format file, by name.
#[derive(Debug, Clone, Copy)]
pub struct Terminals<'a> {
    spec: &'a FormatSpec,
}

impl<'a> Terminals<'a> {
    /// The terminals `spec` declares.
    pub fn of(spec: &'a FormatSpec) -> Terminals<'a> {
        Terminals { spec }
    }

    /// The terminal of this name, if the file declares it.
    pub fn get(&self, name: &str) -> Option<Marker<'a>> {
        let (name, t) = self.spec.terminals.get_key_value(name)?;
        Some(Marker { name, spellings: t.spellings(), token: t.is_token() })
    }

    /// Every terminal, in name order.
    pub fn iter(&self) -> impl Iterator<Item = Marker<'a>> + 'a {
        self.spec.terminals.iter().map(|(name, t)| Marker {
            name,
            spellings: t.spellings(),
            token: t.is_token(),
        })
    }
}

/// How a state reads its text, as far as the syntax of a call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateText<'a> {
    /// Content.
    Content,
    /// Reasoning.
    Reasoning,
    /// Dropped (markup between markers).
    Drop,
    /// A function name; `indexed`: written `functions.NAME:IDX` (Kimi K2),
    /// the name being NAME and the whole the call id.
    Name {
        /// The `functions.NAME:IDX` style.
        indexed: bool,
    },
    /// A parameter's name (XML-style calls).
    ParamName,
    /// A parameter's value (XML-style calls).
    ParamValue,
    /// Raw JSON arguments.
    Args,
    /// A JSON call object: the keys it reads a name from and arguments from
    /// (each list in the order the format gives them).
    Envelope {
        /// Keys holding the function name.
        name_keys: &'a [String],
        /// Keys holding the arguments.
        args_keys: &'a [String],
    },
    /// A message header routed by what it contains: each route's text, and
    /// whether it makes the message a call (to the recipient the header names).
    Header {
        /// `(contains, is a call)` per route, in the format's order.
        routes: Vec<(&'a str, bool)>,
    },
    /// Any other kernel (not used by a derived call syntax).
    Other,
}

/// Where a state goes on a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step<'a> {
    /// The state it goes to, as its format file names it.
    pub to: &'a str,
    /// The marker opens a call.
    pub call: bool,
    /// The marker ends the open call.
    pub end: bool,
}

impl Format {
    /// The compiled state a format file calls `name` (a tool grammar's own
    /// state first, then the reasoning grammar's or the shared `content`).
    fn state_by_file_name(&self, name: &str) -> Option<usize> {
        let file_name = |s: &str| s.strip_prefix('~').map(|n| n == name);
        self.states
            .iter()
            .position(|s| file_name(&s.name) == Some(true))
            .or_else(|| self.states.iter().position(|s| s.name == name))
    }

    /// How the state `name` (as its format file names it) reads its text;
    /// `None` when the format has no such state.
    pub fn state_text(&self, name: &str) -> Option<StateText<'_>> {
        let st = &self.states[self.state_by_file_name(name)?];
        Some(match &st.mode {
            Mode::Content => StateText::Content,
            Mode::Reasoning => StateText::Reasoning,
            Mode::Drop => StateText::Drop,
            Mode::Name(style) => StateText::Name { indexed: *style == NameStyle::Kimi },
            Mode::ParamName => StateText::ParamName,
            Mode::ParamValue => StateText::ParamValue,
            Mode::Args(_) => StateText::Args,
            Mode::Envelope(e) => StateText::Envelope { name_keys: &e.name_keys, args_keys: &e.args_keys },
            Mode::Header(h) => {
                StateText::Header { routes: h.routes.iter().map(|r| (r.contains.as_str(), r.call)).collect() }
            }
            _ => StateText::Other,
        })
    }

    /// Where the state `name` goes on the marker spelled `spelling`; `None`
    /// when the format has no such state or the state does not read it.
    pub fn step(&self, name: &str, spelling: &str) -> Option<Step<'_>> {
        let st = &self.states[self.state_by_file_name(name)?];
        let (_, _, t) = st.spellings.iter().find(|(sp, _, _)| **sp == *spelling.as_bytes())?;
        let to = self.states.get(usize::from(t.to))?.name.as_str();
        Some(Step { to: to.strip_prefix('~').unwrap_or(to), call: t.call, end: t.end })
    }
}
