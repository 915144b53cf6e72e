//! Structured-output glue: what vLLM constrains tool-calling output with,
//! and its export as an llguidance grammar.
//!
//! ```text
//! CheckedRequest ─ request_constraint ─► Constraint
//!   required  → required_schema   JSON array of {"name", "parameters"} (vLLM's shape)
//!   named     → named_schema      the function's parameters
//!   auto      → structural_tag    free text + triggered tags in the family's format
//! Family ─ syntax ─► StructuralTag  markers and call syntax read from the family's format file
//! GrammarStart (grammar_start)    constrain now, or after the reasoning end marker
//! Constraint::to_lark             llguidance Lark text, `%json` embedded
//! structural_tag_json             xgrammar's structural tag (vLLM `structured_outputs`, SGLang)
//! llamacpp_grammar                llama.cpp GBNF `grammar` (+ lazy triggers; schemas by gbnf_schema)
//! llg::Checker (feature)          compile with llguidance, check acceptance of bytes
//! ```
//!
//! ```
//! use llmsift_grammar::{request_constraint, Constraint, Family, LarkOptions, StrictLevel};
//! let req = llmsift_protocol::ChatCompletionRequest::from_json(r#"{"messages": [], "tool_choice": "required",
//!     "tools": [{"type": "function", "function": {"name": "f"}}]}"#).unwrap().check().unwrap();
//! let c = request_constraint(&req, Some(Family::Hermes), StrictLevel::Auto).unwrap().unwrap();
//! let Constraint::JsonSchema(s) = &c else { unreachable!() };
//! assert_eq!(s["minItems"], 1);
//! assert!(c.to_lark(&LarkOptions::text()).contains("%json"));
//! ```
//!
//! Module order (no cycle): `family` (names) and `tag` (data) ← `syntax`
//! (tags from format files) ← `constraint` ← the exports (`lark`, `gbnf`,
//! `xgrammar`, `llg`), which read tags only.
//!
//! The crate is pure (no I/O). The `llguidance` feature adds the `llg` module, which
//! compiles grammars with the `llguidance` crate; it is off by default
//! because that crate is heavy to build.

// The crate README (its crates.io page) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod constraint;
pub mod error;
pub mod family;
pub mod gbnf;
pub mod gbnf_schema;
pub mod lark;
#[cfg(feature = "llguidance")]
pub mod llg;
pub mod schema;
pub mod start;
pub mod syntax;
pub mod tag;
pub mod xgrammar;

pub use constraint::{forced_constraint, request_constraint, response_format_constraint, Constraint};
pub use error::GrammarError;
pub use family::Family;
pub use gbnf::{llamacpp_grammar, llamacpp_grammar_with_reasoning, Gbnf};
pub use lark::{json_schema_lark, structural_tag_lark, tag_lark, Calls, LarkOptions};
pub use schema::{named_schema, required_schema};
pub use start::{grammar_start, grammar_start_scan, GrammarStart};
pub use syntax::{structural_tag, syntax_error};
pub use tag::{pieces_text, Content, Piece, Section, StrictLevel, StructuralTag, Tag, XmlParam};
pub use xgrammar::structural_tag_json;
