//! A constraint as llama.cpp's GBNF `grammar` for its `/completion`
//! endpoint, with the lazy triggers (`grammar_lazy`, `grammar_triggers`)
//! that let the model write freely until a trigger.
//!
//! - forced calls (`required`, named) without reasoning: the whole output is
//!   the calls (one, or one or more);
//! - after the reasoning: lazy, triggered by the reasoning end marker; the
//!   grammar is the marker, then the JSON or the calls;
//! - `auto` calls: lazy, triggered by the family's triggers (with or
//!   without reasoning); the grammar is one or more calls from the trigger on.
//!
//! GBNF has no JSON-schema import, so a schema inside a grammar is written
//! out by [`crate::gbnf_schema`] (types, `enum`, `const`, `properties` in
//! their declared order with `required`, `items`, `anyOf`/`oneOf`; any
//! other keyword reads as any JSON value, loosened, never tightened). A
//! plain JSON schema without reasoning goes to llama.cpp's own
//! `json_schema` field instead (the caller's choice, see
//! [`Gbnf::json_schema`]).
//!
//! A model that does not write the reasoning markers itself (a small model
//! under a reasoning format) never triggers a lazy grammar;
//! [`llamacpp_grammar_with_reasoning`] forces the reasoning too, from the
//! first token: the opener (unless the prompt opened it), at most a given
//! number of characters, the end marker, then the constraint.
//!
//! Invariant: every literal is written through [`lit`] (GBNF string
//! escapes), never spliced raw.

use crate::constraint::Constraint;
pub use crate::gbnf_schema::lit;
use crate::tag::{Content, Piece, StructuralTag, Tag, XmlParam};
use serde_json::Value;

/// llama.cpp's grammar fields for one constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gbnf {
    /// The GBNF text (`root` is the start rule).
    pub grammar: String,
    /// Lazy triggers (words): empty when the grammar applies from the first token.
    pub triggers: Vec<String>,
}

impl Gbnf {
    /// The schema to send as llama.cpp's `json_schema` instead of a grammar:
    /// a JSON constraint that applies from the first token.
    pub fn json_schema(c: &Constraint, after: Option<&str>) -> Option<Value> {
        match (c, after) {
            (Constraint::JsonSchema(s), None) => Some(s.clone()),
            (Constraint::JsonObject, None) => Some(serde_json::json!({"type": "object"})),
            _ => None,
        }
    }
}

/// The GBNF grammar of `c`, starting after `after` when given.
pub fn llamacpp_grammar(c: &Constraint, after: Option<&str>) -> Gbnf {
    let mut rules = Vec::new();
    let (body, triggers) = body(c, &mut rules);
    // `auto` calls are lazy on their own triggers, reasoning or not (a
    // trigger written while thinking starts the grammar too: llama.cpp's
    // lazy grammars have one trigger set).
    let (root, triggers) = match after {
        Some(m) if !matches!(c, Constraint::StructuralTag(_)) => {
            (format!("{} ws {body}", lit(m)), vec![m.to_string()])
        }
        _ => (body, triggers),
    };
    Gbnf { grammar: assemble(c, &root, rules), triggers }
}

/// The GBNF grammar of `c` with the reasoning before it forced from the
/// first token: `open` (when the prompt has not opened reasoning), at most
/// `max_chars` characters without the end marker's first character, `end`,
/// then `c`. Not lazy. `None` for `auto` calls (a structural tag), which
/// stay lazy on their own triggers ([`llamacpp_grammar`]).
///
/// ```
/// use llmsift_grammar::{llamacpp_grammar_with_reasoning, Constraint};
/// let g = llamacpp_grammar_with_reasoning(&Constraint::JsonObject, Some("<think>"), "</think>", 80).unwrap();
/// assert!(g.triggers.is_empty());
/// assert!(g.grammar.starts_with("root ::= \"<think>\" [^<]{0,80} \"</think>\" ws ws object ws\n"));
/// ```
pub fn llamacpp_grammar_with_reasoning(
    c: &Constraint,
    open: Option<&str>,
    end: &str,
    max_chars: u32,
) -> Option<Gbnf> {
    if matches!(c, Constraint::StructuralTag(_)) || end.is_empty() {
        return None;
    }
    let mut rules = Vec::new();
    let (body, _) = body(c, &mut rules);
    let first = end.chars().next().expect("not empty");
    let open = open.filter(|o| !o.is_empty()).map(|o| format!("{} ", lit(o))).unwrap_or_default();
    let root = format!("{open}[^{}]{{0,{max_chars}}} {} ws {body}", class_char(first), lit(end));
    Some(Gbnf { grammar: assemble(c, &root, rules), triggers: Vec::new() })
}

fn assemble(c: &Constraint, root: &str, rules: Vec<String>) -> String {
    let mut g = format!("root ::= {root}\n");
    for r in rules {
        g.push_str(&r);
        g.push('\n');
    }
    g.push_str(JSON);
    if let Some(p) = xml_param(c) {
        g.push_str(&xml_rules(p));
    }
    g.push_str(TEXT);
    g
}

/// The constraint's rule (before any reasoning) and its lazy triggers.
fn body(c: &Constraint, rules: &mut Vec<String>) -> (String, Vec<String>) {
    match c {
        Constraint::JsonSchema(s) => (format!("ws {} ws", crate::gbnf_schema::rule(s, rules)), Vec::new()),
        Constraint::JsonObject => ("ws object ws".to_string(), Vec::new()),
        Constraint::Calls { tag, one } => (calls(tag, *one, rules), Vec::new()),
        Constraint::StructuralTag(tag) => {
            let trig = match &tag.section {
                Some(s) => vec![crate::tag::pieces_text(&s.begin)],
                None => tag.trigger_texts(),
            };
            (calls(tag, false, rules), trig)
        }
    }
}

/// A character as it is written inside a GBNF character class.
fn class_char(c: char) -> String {
    match c {
        ']' | '[' | '\\' | '^' | '-' => format!("\\{c}"),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        c if (c as u32) < 0x20 => format!("\\x{:02x}", c as u32),
        c => c.to_string(),
    }
}

/// Any JSON value (and `ws`, `object`): the grammar's shared tail (then
/// the XML parameters' rules when a tag uses them, then `text`).
const JSON: &str = r#"value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( "," ws member )* )? "}"
member ::= string ws ":" ws value ws
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/bfnrt] | "\\u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] ( "-" | "+" )? [0-9]+ )?
ws ::= | " " | "\n" [ \t]{0,20}
"#;

/// A message's text (harmony's non-call messages).
const TEXT: &str = "text ::= [^<]*\n";

/// The XML parameter markup of the constraint's tags, if they use one.
fn xml_param(c: &Constraint) -> Option<&XmlParam> {
    let tag = match c {
        Constraint::StructuralTag(t) | Constraint::Calls { tag: t, .. } => t,
        _ => return None,
    };
    tag.tags.iter().find_map(|t| match &t.content {
        Content::XmlParameters { param, .. } => Some(param),
        _ => None,
    })
}

/// `xmlparams` (any parameters, each `OPEN NAME NAME_END \n VALUE \n CLOSE \n`)
/// and `xmlvalue` (text that does not start the closing marker).
fn xml_rules(p: &XmlParam) -> String {
    let class = |c: Option<char>| match c {
        Some(c @ ('\\' | ']' | '^' | '-')) => format!("\\{c}"),
        Some('\n') => "\\n".to_string(),
        Some(c) => c.to_string(),
        None => String::new(),
    };
    let mut close = p.close.chars();
    let (c0, c1) = (close.next(), close.next());
    let value = match c1 {
        Some(_) => format!(
            "( [^{}] | {} [^{}] )*",
            class(c0),
            lit(&c0.map(String::from).unwrap_or_default()),
            class(c1)
        ),
        None => format!("[^{}]*", class(c0)),
    };
    format!(
        "xmlparams ::= ( {} [^{}\\n]+ {} xmlvalue {} )*\nxmlvalue ::= {value}\n",
        lit(&p.open),
        class(p.name_end.chars().next()),
        lit(&format!("{}\n", p.name_end)),
        lit(&format!("\n{}\n", p.close)),
    )
}

/// The calls rule of a tag: one, or one or more separated by white space.
fn calls(tag: &StructuralTag, one: bool, rules: &mut Vec<String>) -> String {
    let items: Vec<String> = tag.tags.iter().map(|t| item(t, rules)).collect();
    rules.push(format!("call ::= {}", alts(&items)));
    let call = match &tag.section {
        Some(s) => {
            let sep = seq(&s.separator);
            let more = if one { String::new() } else { format!(" ( {sep} call )*") };
            rules.push(format!("section ::= {} call{more} {}", seq(&s.begin), seq(&s.end)));
            "section"
        }
        None => "call",
    };
    if one || tag.section.is_some() {
        call.to_string()
    } else {
        format!("{call} ( ws {call} )*")
    }
}

fn alts(items: &[String]) -> String {
    match items.len() {
        0 => "\"\"".to_string(),
        _ => items.iter().map(|i| format!("( {i} )")).collect::<Vec<_>>().join(" | "),
    }
}

fn item(t: &Tag, rules: &mut Vec<String>) -> String {
    let content = match &t.content {
        Content::Json { schema } => crate::gbnf_schema::rule(schema, rules),
        Content::XmlParameters { .. } => "xmlparams".to_string(),
        Content::Text => "text".to_string(),
        Content::Empty => String::new(),
    };
    let ends: Vec<String> = t.end.iter().map(|e| seq(e)).collect();
    let end = if ends.len() > 1 { format!("( {} )", alts(&ends)) } else { ends.concat() };
    format!("{} {content} {end}", seq(&t.begin))
}

fn seq(pieces: &[Piece]) -> String {
    let parts: Vec<String> = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(s) | Piece::Token(s) => lit(s),
            Piece::Digits => "[0-9]+".to_string(),
        })
        .collect();
    if parts.is_empty() {
        "\"\"".to_string()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{structural_tag, Family, StrictLevel};
    use llmsift_protocol::wire::{FunctionDefinition, ToolParam};

    #[test]
    fn forced_call_and_reasoning() {
        let tool = ToolParam {
            kind: "function".into(),
            function: FunctionDefinition { name: "f".into(), ..Default::default() },
        };
        let tag = structural_tag(Family::Hermes, &[tool], StrictLevel::Parameter).unwrap();
        let g = llamacpp_grammar(&Constraint::Calls { tag, one: true }, None);
        assert!(g.triggers.is_empty());
        assert!(g
            .grammar
            .starts_with("root ::= call\ncall ::= ( \"<tool_call>\" \"\\n{\\\"name\\\": \\\"f\\\""));
        let g = llamacpp_grammar(&Constraint::JsonObject, Some("</think>"));
        assert_eq!(g.triggers, ["</think>"]);
        assert!(g.grammar.starts_with("root ::= \"</think>\" ws ws object ws\n"));
        assert_eq!(lit("a\"\\\n"), "\"a\\\"\\\\\\n\"");
    }
}
