//! Export of a constraint as an llguidance grammar, in its Lark syntax with
//! `%json` schemas embedded (this module writes text only; compiling and
//! checking it is the `llg` module, behind the `llguidance` feature).
//!
//! A structural tag becomes, in the shape of llguidance's own `StructTag`
//! lowering:
//!
//! ```text
//! start: body                       (or `reasoning body`, see LarkOptions::after)
//! body: item* tail                  (item: one of the tags; or a section of calls)
//! trig_0[lazy]: ANY_TEXT "<tool_call>"
//! tag_0: trig_0 "\n{\"name\": \"get_weather\", \"arguments\": " %json {…} "}\n</tool_call>"
//! tail: TAIL                        (free text holding no trigger)
//! ```
//!
//! Free text runs lazily up to a trigger; after the trigger only the rest
//! of a tag's `begin` may follow, so an unknown function or malformed
//! arguments cannot be written, while text without a trigger stays free.
//!
//! Special-token markers ([`Piece::Token`]) are written as text by default
//! (right for a byte-level check, and for vocabularies that hold the marker
//! as ordinary text); with [`LarkOptions::special_tokens`] they are written
//! as llguidance token references (`<|channel|>`), which free text can then
//! never contain.
//!
//! Invariant: every string the model may write is emitted through
//! [`quote`] (JSON string syntax, which llguidance's Lark reader decodes),
//! never spliced raw into the grammar.

use crate::tag::{Content, Piece, StructuralTag, Tag, XmlParam};
use serde_json::{Map, Value};

/// How a constraint is written as Lark.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LarkOptions {
    /// Write [`Piece::Token`] markers as special-token references instead
    /// of text.
    pub special_tokens: bool,
    /// Free text up to and including this marker comes first (the
    /// reasoning; see [`crate::GrammarStart`]).
    pub after: Option<Piece>,
}

impl LarkOptions {
    /// Markers as text, constrained from the first byte.
    pub fn text() -> LarkOptions {
        LarkOptions::default()
    }

    /// Starting after `marker` (as text, or as a token when
    /// `special_tokens` is set and the marker is a [`Piece::Token`]).
    pub fn with_after(mut self, marker: Option<Piece>) -> LarkOptions {
        self.after = marker;
        self
    }
}

/// Lark for a JSON schema constraint (`required` / named tool choice).
pub fn json_schema_lark(schema: &Value, opts: &LarkOptions) -> String {
    let mut g = Grammar::new(opts);
    let body = format!("%json {}", schema_text(schema));
    g.finish(body)
}

/// How many calls a tag grammar admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// Any number, none included (`tool_choice: "auto"`).
    Any,
    /// One or more (`required`).
    AtLeastOne,
    /// Exactly one (named, or `parallel_tool_calls: false`).
    One,
}

/// Lark for a structural tag.
pub fn structural_tag_lark(tag: &StructuralTag, opts: &LarkOptions) -> String {
    tag_lark(tag, opts, Calls::Any)
}

/// Lark for a structural tag whose calls are counted by `calls`.
pub fn tag_lark(tag: &StructuralTag, opts: &LarkOptions, calls: Calls) -> String {
    let mut g = Grammar::new(opts);
    // Triggers: a lazy free-text lexeme up to the trigger's leading text,
    // or free text followed by the trigger's special token.
    let mut trig_rules = Vec::new();
    let mut tail_excludes = Vec::new();
    for (i, trig) in tag.triggers.iter().enumerate() {
        let name = format!("trig_{i}");
        let lead = g.leading_text(trig);
        if lead.is_empty() {
            let rest = g.seq(trig);
            g.rule(&name, &format!("ANY_TEXT {rest}"));
        } else {
            let lead_len = trig.iter().take_while(|p| g.is_text(p)).count();
            let rest = g.seq(&trig[lead_len..]);
            if rest.is_empty() {
                g.rule(&format!("{name}[lazy]"), &format!("ANY_TEXT {}", quote(&lead)));
            } else {
                g.rule(&format!("{name}_in[lazy]"), &format!("ANY_TEXT {}", quote(&lead)));
                g.rule(&name, &format!("{name}_in {rest}"));
            }
            tail_excludes.push(quote(&lead));
        }
        trig_rules.push((trig.clone(), name));
    }
    let opener = |begin: &[Piece]| -> Option<(usize, String)> {
        trig_rules
            .iter()
            .filter(|(t, _)| begin.starts_with(t))
            .max_by_key(|(t, _)| t.len())
            .map(|(t, n)| (t.len(), n.clone()))
    };
    let mut items = Vec::new();
    if let Some(sec) = &tag.section {
        let mut calls = Vec::new();
        for (i, t) in tag.tags.iter().enumerate() {
            let name = format!("tag_{i}");
            let body = g.tag_body(t, &t.begin, i);
            g.rule(&name, &body);
            calls.push(name);
        }
        g.rule("call", &calls.join(" | "));
        let (skip, trig) = opener(&sec.begin).unwrap_or((0, String::new()));
        let head = if trig.is_empty() { "ANY_TEXT".to_string() } else { trig };
        let rest = g.seq(&sec.begin[skip..]);
        let sep = g.seq(&sec.separator);
        let end = g.seq(&sec.end);
        g.rule("section", &format!("{head} {rest} call ({sep} call)* {end}"));
        items.push("section".to_string());
    } else {
        for (i, t) in tag.tags.iter().enumerate() {
            let name = format!("tag_{i}");
            let (skip, trig) = opener(&t.begin).unwrap_or((0, String::new()));
            let head = if trig.is_empty() { "ANY_TEXT".to_string() } else { trig };
            let body = g.tag_body(t, &t.begin[skip..], i);
            g.rule(&name, &format!("{head} {body}"));
            items.push(name);
        }
    }
    if tail_excludes.is_empty() {
        g.terminal("TAIL", "ANY_TEXT");
    } else {
        g.terminal("TAIL", &format!("ANY_TEXT & ~(ANY_TEXT ({}) ANY_TEXT)", tail_excludes.join(" | ")));
    }
    let item = match (items.is_empty(), calls) {
        (true, _) => String::new(),
        (false, Calls::Any) => format!("({})* ", items.join(" | ")),
        (false, Calls::AtLeastOne) => format!("({})+ ", items.join(" | ")),
        (false, Calls::One) => format!("({}) ", items.join(" | ")),
    };
    g.finish(format!("{item}TAIL"))
}

/// Rules under construction.
struct Grammar {
    special: bool,
    after: Option<Piece>,
    rules: Vec<String>,
    /// The XML parameter markup in use (its rules are written once).
    xml: Option<XmlParam>,
    xml_any: bool,
}

impl Grammar {
    fn new(opts: &LarkOptions) -> Grammar {
        Grammar {
            special: opts.special_tokens,
            after: opts.after.clone(),
            rules: Vec::new(),
            xml: None,
            xml_any: false,
        }
    }

    fn rule(&mut self, name: &str, body: &str) {
        self.rules.push(format!("{name}: {}", body.trim()));
    }

    fn terminal(&mut self, name: &str, body: &str) {
        self.rules.push(format!("{name}: {body}"));
    }

    /// The whole grammar, `body` being what follows the optional reasoning.
    fn finish(&mut self, body: String) -> String {
        let mut out = String::from("%llguidance {}\n");
        match self.after.clone() {
            Some(marker) => {
                if self.is_text(&marker) {
                    out.push_str(&format!(
                        "start: reasoning body\nreasoning[lazy]: ANY_TEXT {}\n",
                        quote(marker.as_text())
                    ));
                } else {
                    out.push_str(&format!(
                        "start: reasoning body\nreasoning: ANY_TEXT {}\n",
                        self.piece(&marker)
                    ));
                }
            }
            None => out.push_str("start: body\n"),
        }
        out.push_str(&format!("body: {body}\n"));
        for r in &self.rules {
            out.push_str(r);
            out.push('\n');
        }
        if let Some(p) = &self.xml {
            out.push_str(&format!("xml_str[lazy]: ANY_TEXT {}\n", quote(&format!("\n{}\n", p.close))));
            if self.xml_any {
                out.push_str(&format!(
                    "xml_any: {} XML_KEY {} xml_str\nXML_KEY: /[^{}\\n]+/\n",
                    quote(&p.open),
                    quote(&format!("{}\n", p.name_end)),
                    regex_class_char(&p.name_end)
                ));
            }
        }
        out.push_str("ANY_TEXT: /(?s:.*)/\n");
        out
    }

    /// Whether the piece is written as text.
    fn is_text(&self, p: &Piece) -> bool {
        match p {
            Piece::Text(_) => true,
            Piece::Token(_) => !self.special,
            Piece::Digits => false,
        }
    }

    fn piece(&self, p: &Piece) -> String {
        match p {
            Piece::Text(s) => quote(s),
            Piece::Token(s) if self.special => s.clone(),
            Piece::Token(s) => quote(s),
            Piece::Digits => "/[0-9]+/".to_string(),
        }
    }

    fn seq(&self, pieces: &[Piece]) -> String {
        pieces.iter().map(|p| self.piece(p)).collect::<Vec<_>>().join(" ")
    }

    /// The text the pieces start with (up to the first non-text piece).
    fn leading_text(&self, pieces: &[Piece]) -> String {
        pieces.iter().take_while(|p| self.is_text(p)).map(Piece::as_text).collect()
    }

    /// `begin` (already without its trigger), content, end.
    fn tag_body(&mut self, t: &Tag, begin: &[Piece], i: usize) -> String {
        let begin = self.seq(begin);
        let ends: Vec<String> = t.end.iter().map(|e| self.seq(e)).collect();
        let end = match ends.len() {
            0 => String::new(),
            1 => ends[0].clone(),
            _ => format!("({})", ends.join(" | ")),
        };
        let content = match &t.content {
            Content::Json { schema } => format!("%json {} {end}", schema_text(schema)),
            Content::Empty => end,
            Content::Text => {
                let all_text = t.end.iter().all(|e| !e.is_empty() && e.iter().all(|p| self.is_text(p)));
                if t.end.is_empty() {
                    "ANY_TEXT".to_string()
                } else if all_text {
                    let name = format!("text_{i}");
                    let alts: Vec<String> =
                        t.end.iter().map(|e| quote(&crate::tag::pieces_text(e))).collect();
                    self.rule(&format!("{name}[lazy]"), &format!("ANY_TEXT ({})", alts.join(" | ")));
                    name
                } else {
                    format!("ANY_TEXT {end}")
                }
            }
            Content::XmlParameters { schema, param } => {
                format!("{} {end}", self.xml_parameters(schema, param))
            }
        };
        format!("{begin} {content}")
    }

    /// XML parameters (Qwen3-Coder) for `schema`, marked up as `param`.
    fn xml_parameters(&mut self, schema: &Value, param: &XmlParam) -> String {
        let param = self.xml.get_or_insert_with(|| param.clone()).clone();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            self.xml_any = true;
            return "xml_any*".to_string();
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let defs = root_defs(schema);
        let mut parts = Vec::new();
        for (key, prop) in props {
            let head = quote(&format!("{}{key}{}\n", param.open, param.name_end));
            let value = if is_raw_string(prop) {
                "xml_str".to_string()
            } else {
                let mut prop = prop.clone();
                if let (Value::Object(p), Some((k, d))) = (&mut prop, &defs) {
                    p.entry(k.clone()).or_insert_with(|| d.clone());
                }
                format!("%json {} {}", schema_text(&prop), quote(&format!("\n{}\n", param.close)))
            };
            let param = format!("({head} {value})");
            parts.push(if required.contains(&key.as_str()) { param } else { format!("{param}?") });
        }
        parts.join(" ")
    }
}

/// The first character of `s`, escaped for a regex character class (the
/// name of an XML parameter runs up to it).
fn regex_class_char(s: &str) -> String {
    match s.chars().next() {
        Some(c @ ('\\' | ']' | '^' | '-' | '/' | '[')) => format!("\\{c}"),
        Some(c) => c.to_string(),
        None => String::new(),
    }
}

/// A Lark string literal (JSON string syntax).
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// A schema as `%json` takes it (`true`: any JSON; `false`: nothing).
fn schema_text(schema: &Value) -> String {
    match schema {
        Value::Object(_) => serde_json::to_string(schema).unwrap_or_else(|_| "{}".to_string()),
        Value::Bool(false) => "{\"not\": {}}".to_string(),
        _ => "{}".to_string(),
    }
}

/// The root `$defs` (or `definitions`) of a schema, to re-attach to a
/// property schema embedded on its own.
fn root_defs(schema: &Value) -> Option<(String, Value)> {
    let obj: &Map<String, Value> = schema.as_object()?;
    ["$defs", "definitions"].iter().find_map(|k| obj.get(*k).map(|d| (k.to_string(), d.clone())))
}

/// Whether a parameter value is written raw (a string, or a type that is
/// not one JSON type) rather than as JSON.
fn is_raw_string(prop: &Value) -> bool {
    match prop.get("type") {
        Some(Value::String(t)) => t == "string",
        _ => true,
    }
}
