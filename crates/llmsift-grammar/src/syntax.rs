//! A family's call syntax, read from its format file, and the structural tag
//! built from it for a request's tools.
//!
//! The markers are the `[terminals]` of the family's tool format (or of the
//! grammar it borrows, `grammar_from`), read by name through
//! `llmsift_core::format::terminals`; how a call's text is read comes from
//! the compiled format's states (the JSON envelope's keys, whether a name is
//! Kimi K2's indexed `functions.NAME:IDX`, a harmony header's call route).
//! A marker is spelled once, in the format file. What the derived tags look
//! like (built-in formats, `tool_choice: auto`):
//!
//! | family | call |
//! |---|---|
//! | `hermes` | `open` `\n{"name": "NAME", "arguments": ` ARGS `}\n` `close` (also without the newlines) |
//! | `qwen3_coder` | `open` `\n` `fn_open` NAME `gt` `\n` [`p_open` K `gt` `\n` V `\n` `p_close` `\n`]… `fn_close` `\n` `close` |
//! | `llama3_json` | `{"name": "NAME", "parameters": ` ARGS `}` |
//! | `deepseek_v3` | `calls_begin` [`call_begin` `function` `sep` NAME `nl` ```` ```json\n```` ARGS ```` \n``` ```` `call_end`]+ (`\n` between) `calls_end` |
//! | `deepseek_v31` | `calls_begin` [`call_begin` NAME `sep` ARGS `call_end`]+ `calls_end` |
//! | `kimi_k2` | `section_begin` [`call_begin` `functions.NAME:IDX` `arg_begin` ARGS `call_end`]+ `section_end` |
//! | `openai` (harmony) | `channel` `commentary to=functions.NAME ` `constrain` `json` `message` ARGS `call` (or the recipient in the role part) |
//!
//! (backquoted names are the format's terminals; the envelope's keys are
//! the compiled envelope's, `to=functions.` is the header's call route.)
//!
//! What the format files do not hold is written here, per family, and only
//! that: text the parser drops or does not read as a marker, which the
//! chat template writes (the newlines around Hermes' and Qwen3-Coder's
//! markup, DeepSeek V3's `function` and its code fence and the newline
//! between its calls, harmony's `assistant` role, `commentary` channel and
//! `json` constraint); which of the envelope's argument keys a template
//! writes (Llama 3's `parameters`, Hermes' `arguments`); and which markers
//! the model's vocabulary holds as *special* tokens (`Specials`: a format's
//! `token = true` says a marker is one token, matched by id, which Qwen's
//! `<tool_call>` is without being special).
//!
//! Invariant: each family's triggers are piece-wise prefixes of its tags'
//! (or its section's) `begin`; a family whose format lacks a terminal or
//! state the syntax needs has no tag (see [`syntax_error`]), never a guessed one.

use crate::family::Family;
use crate::tag::{Content, Piece, Section, StrictLevel, StructuralTag, Tag, XmlParam};
use llmsift_core::format::terminals::{StateText, Terminals};
use llmsift_core::{FormatSpec, Registry};
use llmsift_protocol::wire::ToolParam;
use serde_json::Value;
use std::sync::OnceLock;

/// Which of a family's markers its vocabulary holds as special tokens
/// (written as [`Piece::Token`]; free text can never spell one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Specials {
    /// None: the markers read as text (Qwen's `<tool_call>` is an added,
    /// not special, token).
    None,
    /// The markers the format declares `token = true`.
    Declared,
    /// Every marker (Kimi K2: its format matches them in text, as vLLM's
    /// parser does, but the vocabulary holds them as special tokens).
    All,
}

/// One segment of a piece of text a tag writes.
#[derive(Debug, Clone)]
enum Seg {
    Lit(String),
    /// The function name as written.
    Name,
    /// The function name inside a JSON string.
    JsonName,
}

/// A piece of a call template.
#[derive(Debug, Clone)]
enum Part {
    Piece(Piece),
    Text(Vec<Seg>),
}

/// How a call's arguments are written.
#[derive(Debug, Clone)]
enum Args {
    Json,
    Xml(XmlParam),
}

/// One way of writing a call (a family may have several).
#[derive(Debug, Clone)]
struct Shape {
    begin: Vec<Part>,
    args: Args,
    end: Vec<Vec<Part>>,
}

/// A family's call syntax, independent of the request's tools.
#[derive(Debug, Clone)]
struct Syntax {
    triggers: Vec<Vec<Piece>>,
    section: Option<Section>,
    shapes: Vec<Shape>,
    /// Tags that are not calls (harmony's other messages).
    others: Vec<Tag>,
}

/// The markers of one family's format file(s).
struct Source<'a> {
    tools: &'a FormatSpec,
    grammar: Option<&'a FormatSpec>,
    format: std::sync::Arc<llmsift_core::Format>,
    specials: Specials,
}

impl<'a> Source<'a> {
    fn load(reg: &'a Registry, f: Family, specials: Specials) -> Result<Source<'a>, String> {
        let tools = &**reg.tool(f.parser_name()).map_err(|e| e.to_string())?;
        let grammar = match tools.grammar_from.as_deref() {
            Some(g) => Some(&**reg.reasoning(g).map_err(|e| e.to_string())?),
            None => None,
        };
        let factory = reg.factory(None, Some(f.parser_name())).map_err(|e| e.to_string())?;
        Ok(Source { tools, grammar, format: factory.format().clone(), specials })
    }

    /// The terminal `name` as a piece (a token when the vocabulary holds it
    /// as a special token).
    fn m(&self, name: &str) -> Result<Piece, String> {
        let mk = Terminals::of(self.tools)
            .get(name)
            .or_else(|| self.grammar.and_then(|g| Terminals::of(g).get(name)))
            .ok_or_else(|| format!("the format has no terminal `{name}`"))?;
        let special = match self.specials {
            Specials::None => false,
            Specials::Declared => mk.token,
            Specials::All => true,
        };
        let s = mk.spelling().to_string();
        Ok(if special { Piece::Token(s) } else { Piece::Text(s) })
    }

    /// The terminal `name` as a template part.
    fn p(&self, name: &str) -> Result<Part, String> {
        self.m(name).map(Part::Piece)
    }

    /// The terminal `name`'s spelling, written inside a text piece (for a
    /// family whose markers are never special).
    fn lit(&self, name: &str) -> Result<Seg, String> {
        Ok(Seg::Lit(self.m(name)?.as_text().to_string()))
    }

    /// How the state `name` reads its text.
    fn text(&self, state: &str) -> Result<StateText<'_>, String> {
        self.format.state_text(state).ok_or_else(|| format!("the format has no state `{state}`"))
    }

    /// The state `state` reads a plain (not indexed) function name.
    fn expect_name(&self, state: &str, indexed: bool) -> Result<(), String> {
        match self.text(state)? {
            StateText::Name { indexed: i } if i == indexed => Ok(()),
            other => Err(format!("state `{state}` reads {other:?}, not a name (indexed: {indexed})")),
        }
    }

    /// The JSON envelope of state `state`: its first name key and
    /// `args_key`, which must be one the envelope reads.
    fn envelope(&self, state: &str, args_key: &str) -> Result<(String, String), String> {
        match self.text(state)? {
            StateText::Envelope { name_keys, args_keys } => {
                let name = name_keys.first().ok_or("an envelope without a name key")?;
                if !args_keys.iter().any(|k| k == args_key) {
                    return Err(format!("state `{state}` does not read arguments under `{args_key}`"));
                }
                Ok((name.clone(), args_key.to_string()))
            }
            other => Err(format!("state `{state}` reads {other:?}, not a JSON envelope")),
        }
    }

    /// The text a harmony header's call route looks for (`to=functions.`),
    /// and the texts of its other routes (the channels that are not calls).
    fn routes(&self, state: &str) -> Result<(String, Vec<String>), String> {
        let StateText::Header { routes } = self.text(state)? else {
            return Err(format!("state `{state}` is not a header"));
        };
        let call = routes.iter().find(|(_, call)| *call).map(|(c, _)| c.to_string());
        let others = routes.iter().filter(|(_, call)| !*call).map(|(c, _)| c.to_string()).collect();
        Ok((call.ok_or_else(|| format!("header `{state}` has no call route"))?, others))
    }
}

fn lit(s: &str) -> Seg {
    Seg::Lit(s.to_string())
}

fn text(segs: Vec<Seg>) -> Part {
    Part::Text(segs)
}

/// `{"NAME_KEY": ` and `"NAME", "ARGS_KEY": ` as `json.dumps` writes them.
fn json_head(name_key: &str, args_key: &str) -> (Seg, Vec<Seg>) {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    (
        Seg::Lit(format!("{{{}: ", q(name_key))),
        vec![lit("\""), Seg::JsonName, Seg::Lit(format!("\", {}: ", q(args_key)))],
    )
}

/// `f`'s syntax, read from the formats of `reg`.
fn derive(reg: &Registry, f: Family) -> Result<Syntax, String> {
    let specials = match f {
        Family::Hermes | Family::Qwen3Coder | Family::Llama3Json => Specials::None,
        Family::DeepseekV3 | Family::DeepseekV31 | Family::Openai => Specials::Declared,
        Family::KimiK2 => Specials::All,
    };
    let s = Source::load(reg, f, specials)?;
    let mut others = Vec::new();
    let (triggers, section, shapes) = match f {
        Family::Hermes => {
            let (key, rest) = json_head(&s.envelope("call", "arguments")?.0, "arguments");
            let open = s.p("open")?;
            let shape = |nl: &str| -> Result<Shape, String> {
                let mut head = vec![lit(nl), key.clone()];
                head.extend(rest.iter().cloned());
                Ok(Shape {
                    begin: vec![open.clone(), text(head)],
                    args: Args::Json,
                    end: vec![vec![text(vec![lit("}"), lit(nl)]), s.p("close")?]],
                })
            };
            (vec![vec![s.m("open")?]], None, vec![shape("\n")?, shape("")?])
        }
        Family::Qwen3Coder => {
            s.expect_name("fn_name", false)?;
            match s.text("p_name")? {
                StateText::ParamName => {}
                other => return Err(format!("state `p_name` reads {other:?}, not a parameter name")),
            }
            let spelled = |n: &str| -> Result<String, String> { Ok(s.m(n)?.as_text().to_string()) };
            let param =
                XmlParam { open: spelled("p_open")?, name_end: spelled("gt")?, close: spelled("p_close")? };
            let shape = Shape {
                begin: vec![
                    s.p("open")?,
                    text(vec![lit("\n"), s.lit("fn_open")?, Seg::Name, s.lit("gt")?, lit("\n")]),
                ],
                args: Args::Xml(param),
                end: vec![vec![text(vec![s.lit("fn_close")?, lit("\n"), s.lit("close")?])]],
            };
            (vec![vec![s.m("open")?]], None, vec![shape])
        }
        Family::Llama3Json => {
            let (name_key, args_key) = s.envelope("start", "parameters")?;
            let (key, rest) = json_head(&name_key, &args_key);
            let shape = Shape {
                begin: vec![text(vec![key.clone()]), text(rest)],
                args: Args::Json,
                end: vec![vec![text(vec![lit("}")])]],
            };
            let Seg::Lit(trigger) = key else { unreachable!("json_head's key is a literal") };
            (vec![vec![Piece::Text(trigger)]], None, vec![shape])
        }
        Family::DeepseekV3 | Family::DeepseekV31 => {
            s.expect_name("call_name", false)?;
            let v3 = f == Family::DeepseekV3;
            let shape = if v3 {
                Shape {
                    begin: vec![
                        s.p("call_begin")?,
                        text(vec![lit("function")]),
                        s.p("sep")?,
                        text(vec![Seg::Name, s.lit("nl")?, lit("```json\n")]),
                    ],
                    args: Args::Json,
                    end: vec![vec![text(vec![lit("\n```")]), s.p("call_end")?]],
                }
            } else {
                Shape {
                    begin: vec![s.p("call_begin")?, text(vec![Seg::Name]), s.p("sep")?],
                    args: Args::Json,
                    end: vec![vec![s.p("call_end")?]],
                }
            };
            let separator = if v3 { vec![Piece::text("\n")] } else { vec![] };
            let sec = Section { begin: vec![s.m("calls_begin")?], separator, end: vec![s.m("calls_end")?] };
            (vec![sec.begin.clone()], Some(sec), vec![shape])
        }
        Family::KimiK2 => {
            s.expect_name("call_name", true)?;
            // The indexed name style: `functions.NAME:IDX` (the core's `NameStyle::Kimi`).
            let shape = Shape {
                begin: vec![
                    s.p("call_begin")?,
                    text(vec![lit("functions."), Seg::Name, lit(":")]),
                    Part::Piece(Piece::Digits),
                    s.p("arg_begin")?,
                ],
                args: Args::Json,
                end: vec![vec![s.p("call_end")?]],
            };
            let sec = Section {
                begin: vec![s.m("section_begin")?],
                separator: vec![],
                end: vec![s.m("section_end")?],
            };
            (vec![sec.begin.clone()], Some(sec), vec![shape])
        }
        Family::Openai => {
            let (to, channels) = s.routes("header")?;
            // The channels written here must be ones the header routes.
            for ch in ["analysis", "commentary", "final"] {
                if !channels.iter().any(|c| c == ch) {
                    return Err(format!("header `header` routes no `{ch}` channel"));
                }
            }
            let (channel, constrain, message, start) =
                (s.p("channel")?, s.p("constrain")?, s.p("message")?, s.p("start")?);
            let call_end = vec![vec![s.p("call")?]];
            // Recipient in the channel part (what gpt-oss writes) …
            let in_channel = Shape {
                begin: vec![
                    channel.clone(),
                    text(vec![lit("commentary "), lit(&to), Seg::Name, lit(" ")]),
                    constrain.clone(),
                    text(vec![lit("json")]),
                    message.clone(),
                ],
                args: Args::Json,
                end: call_end.clone(),
            };
            // … or in the role part.
            let in_role = Shape {
                begin: vec![
                    start.clone(),
                    text(vec![lit("assistant "), lit(&to), Seg::Name]),
                    channel.clone(),
                    text(vec![lit("commentary ")]),
                    constrain,
                    text(vec![lit("json")]),
                    message.clone(),
                ],
                args: Args::Json,
                end: call_end,
            };
            // The messages that are not calls.
            let (end, ret) = (s.m("end")?, s.m("return")?);
            let (ch, msg) = (s.m("channel")?, s.m("message")?);
            let message_tag = |name: &str, ends: Vec<Vec<Piece>>| Tag {
                tool: None,
                begin: vec![ch.clone(), Piece::text(name), msg.clone()],
                content: Content::Text,
                end: ends,
            };
            others.push(message_tag("analysis", vec![vec![end.clone()]]));
            others.push(message_tag("commentary", vec![vec![end.clone()]]));
            others.push(message_tag("final", vec![vec![end], vec![ret]]));
            others.push(Tag {
                tool: None,
                begin: vec![s.m("start")?, Piece::text("assistant")],
                content: Content::Empty,
                end: vec![],
            });
            (vec![vec![s.m("channel")?], vec![s.m("start")?]], None, vec![in_channel, in_role])
        }
    };
    Ok(Syntax { triggers, section, shapes, others })
}

/// Every family's syntax, read once.
fn syntaxes() -> &'static [Result<Syntax, String>] {
    static ALL: OnceLock<Vec<Result<Syntax, String>>> = OnceLock::new();
    ALL.get_or_init(|| Family::all().iter().map(|&f| derive(Registry::builtin(), f)).collect())
}

fn syntax(f: Family) -> Result<&'static Syntax, &'static str> {
    let i = Family::all().iter().position(|&g| g == f).unwrap_or(0);
    match &syntaxes()[i] {
        Ok(s) => Ok(s),
        Err(e) => Err(e),
    }
}

/// Why `family`'s call syntax could not be read from its format file
/// (`None`: it was; every built-in family's is, which the tests check).
pub fn syntax_error(family: Family) -> Option<&'static str> {
    syntax(family).err()
}

/// The template's pieces for function `name`; adjacent text pieces from
/// `merge_from` on are written as one.
fn render(parts: &[Part], name: &str, merge_from: usize) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let piece = match part {
            Part::Piece(p) => p.clone(),
            Part::Text(segs) => Piece::Text(
                segs.iter()
                    .map(|s| match s {
                        Seg::Lit(l) => l.clone(),
                        Seg::Name => name.to_string(),
                        Seg::JsonName => json_str(name),
                    })
                    .collect(),
            ),
        };
        match (out.last_mut(), &piece) {
            (Some(Piece::Text(prev)), Piece::Text(t)) if i > merge_from => prev.push_str(t),
            _ => out.push(piece),
        }
    }
    out
}

impl Syntax {
    fn build(&self, family: Family, calls: &[(String, Value)], level: StrictLevel) -> StructuralTag {
        let mut tags = Vec::new();
        for (name, schema) in calls {
            for shape in &self.shapes {
                let begin_pieces = render(&shape.begin, name, usize::MAX);
                // Keep the trigger's pieces apart from the rest of `begin`.
                let keep = self
                    .triggers
                    .iter()
                    .filter(|t| self.section.is_none() && begin_pieces.starts_with(t))
                    .map(Vec::len)
                    .max()
                    .unwrap_or(0);
                let begin = render(&shape.begin, name, keep);
                let content = match &shape.args {
                    Args::Json => Content::Json { schema: schema.clone() },
                    Args::Xml(param) => {
                        Content::XmlParameters { schema: schema.clone(), param: param.clone() }
                    }
                };
                let end = shape.end.iter().map(|e| render(e, name, 0)).collect();
                tags.push(Tag { tool: Some(name.clone()), begin, content, end });
            }
        }
        tags.extend(self.others.iter().cloned());
        StructuralTag { family, level, triggers: self.triggers.clone(), section: self.section.clone(), tags }
    }
}

/// The structural tag of `family` for `tools` under `tool_choice: "auto"`,
/// or `None` when the level leaves the output unconstrained (no tools, or
/// level `auto` and no tool with `strict: true`), or the family's syntax
/// could not be read from its format ([`syntax_error`]).
///
/// ```
/// use llmsift_grammar::{structural_tag, Family, StrictLevel};
/// use llmsift_protocol::wire::{FunctionDefinition, ToolParam};
/// let tool = ToolParam { kind: "function".into(), function: FunctionDefinition {
///     name: "f".into(), ..Default::default() } };
/// assert!(structural_tag(Family::Hermes, &[tool.clone()], StrictLevel::Auto).is_none());
/// let tag = structural_tag(Family::Hermes, &[tool], StrictLevel::Function).unwrap();
/// assert_eq!(tag.tags[0].begin_text(), "<tool_call>\n{\"name\": \"f\", \"arguments\": ");
/// assert_eq!(tag.tags[0].schema(), Some(&serde_json::json!(true)));
/// ```
pub fn structural_tag(family: Family, tools: &[ToolParam], level: StrictLevel) -> Option<StructuralTag> {
    if !level.constrains(tools) {
        return None;
    }
    let syntax = syntax(family).ok()?;
    let calls: Vec<(String, Value)> = tools
        .iter()
        .map(|t| {
            let schema = if level.pins_schema(t) {
                t.function.parameters.clone().filter(|p| !p.is_null()).unwrap_or(Value::Bool(true))
            } else {
                Value::Bool(true)
            };
            (t.function.name.clone(), schema)
        })
        .collect();
    Some(syntax.build(family, &calls, level))
}

/// The inside of a JSON string literal for `s` (as `json.dumps` writes it,
/// without the quotes).
fn json_str(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_reads_its_syntax_from_its_format() {
        for &f in Family::all() {
            assert_eq!(syntax_error(f), None, "{f:?}");
        }
    }

    /// Every special-token piece of a derived tag is a marker its format
    /// spells (and so is read back as one).
    #[test]
    fn special_tokens_are_format_markers() {
        let tool = ToolParam {
            kind: "function".into(),
            function: llmsift_protocol::wire::FunctionDefinition { name: "f".into(), ..Default::default() },
        };
        for &f in Family::all() {
            let tag = structural_tag(f, std::slice::from_ref(&tool), StrictLevel::Function).unwrap();
            let factory = Registry::builtin().factory(None, Some(f.parser_name())).unwrap();
            let spellings: Vec<&str> = factory.format().spellings().collect();
            for t in tag.special_tokens() {
                assert!(spellings.contains(&t.as_str()), "{f:?}: {t:?} is not a marker of its format");
            }
        }
    }

    /// The opening and closing markers a derived call is written with open
    /// and end a call in the family's parser.
    #[test]
    fn calls_open_and_end_where_the_format_says() {
        let s = Source::load(Registry::builtin(), Family::Hermes, Specials::None).unwrap();
        let (open, close) = (s.m("open").unwrap(), s.m("close").unwrap());
        let step = s.format.step("content", open.as_text()).unwrap();
        assert!(step.call && step.to == "call");
        let step = s.format.step("call", close.as_text()).unwrap();
        assert!(step.end && step.to == "content");
        let s = Source::load(Registry::builtin(), Family::KimiK2, Specials::All).unwrap();
        let step = s.format.step("section", s.m("call_begin").unwrap().as_text()).unwrap();
        assert!(step.call && step.to == "call_name");
        let step = s.format.step("call_args", s.m("call_end").unwrap().as_text()).unwrap();
        assert!(step.end && step.to == "section");
    }

    /// A marker spelled otherwise in the format file is spelled otherwise
    /// in the tag: the grammar holds no copy of it.
    #[test]
    fn a_marker_changed_in_the_format_changes_the_tag() {
        let hermes = include_str!("../../llmsift-core/formats/tools/hermes.toml");
        assert!(hermes.contains("[\"<tool_call>\"]") && hermes.contains("[\"</tool_call>\"]"));
        let mut reg = Registry::builtin().clone();
        reg.add_toml(&hermes.replace("<tool_call>", "<call>").replace("</tool_call>", "</call>")).unwrap();
        let calls = [("f".to_string(), Value::Bool(true))];
        let tag = derive(&reg, Family::Hermes).unwrap().build(Family::Hermes, &calls, StrictLevel::Function);
        assert_eq!(tag.trigger_texts(), ["<call>"]);
        assert_eq!(tag.tags[0].begin_text(), "<call>\n{\"name\": \"f\", \"arguments\": ");
        assert_eq!(tag.tags[0].end_text(), "}\n</call>");
        let kimi = include_str!("../../llmsift-core/formats/tools/kimi_k2.toml");
        reg.add_toml(&kimi.replace("<|tool_call_argument_begin|>", "<|args|>")).unwrap();
        let tag = derive(&reg, Family::KimiK2).unwrap().build(Family::KimiK2, &calls, StrictLevel::Function);
        assert_eq!(tag.tags[0].begin.last(), Some(&Piece::token("<|args|>")));
    }
}
