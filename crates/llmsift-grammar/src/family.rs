//! The families a structural tag is known for, under vLLM's tool parser
//! names, and what their calls look like in the model's output:
//!
//! | family | call |
//! |---|---|
//! | `hermes` | `<tool_call>\n{"name": "NAME", "arguments": ` ARGS `}\n</tool_call>` (also without the newlines) |
//! | `qwen3_coder` | `<tool_call>\n<function=NAME>\n` `<parameter=K>\nV\n</parameter>\n`… `</function>\n</tool_call>` |
//! | `llama3_json` | `{"name": "NAME", "parameters": ` ARGS `}` |
//! | `deepseek_v3` | `<｜tool▁calls▁begin｜>` [`<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n` ARGS `\n```<｜tool▁call▁end｜>`]+ `<｜tool▁calls▁end｜>` |
//! | `deepseek_v31` | `<｜tool▁calls▁begin｜>` [`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>` ARGS `<｜tool▁call▁end｜>`]+ `<｜tool▁calls▁end｜>` |
//! | `kimi_k2` | `<|tool_calls_section_begin|>` [`<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>` ARGS `<|tool_call_end|>`]+ `<|tool_calls_section_end|>` |
//! | `openai` (gpt-oss harmony) | `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>` ARGS `<|call|>` |
//!
//! The shapes follow the families' chat templates and xgrammar's / vLLM's
//! built-in structural tags. Markers that the models' vocabularies hold as
//! special tokens are [`Piece::Token`]s.
//!
//! Invariant: each family's triggers are piece-wise prefixes of its tags'
//! (or its section's) `begin`.

use crate::tag::{Content, Piece, Section, StrictLevel, StructuralTag, Tag};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool-call family, named as vLLM's `--tool-call-parser`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// `hermes` (Hermes 2 Pro, Qwen 2.5 / 3).
    Hermes,
    /// `qwen3_coder` (also `qwen3_xml`).
    Qwen3Coder,
    /// `llama3_json` (also `llama4_json`).
    Llama3Json,
    /// `deepseek_v3` (DeepSeek V3 / R1).
    DeepseekV3,
    /// `deepseek_v31` (DeepSeek V3.1).
    DeepseekV31,
    /// `kimi_k2`.
    KimiK2,
    /// `openai` (gpt-oss, the harmony format).
    Openai,
}

const ALL: [Family; 7] = [
    Family::Hermes,
    Family::Qwen3Coder,
    Family::Llama3Json,
    Family::DeepseekV3,
    Family::DeepseekV31,
    Family::KimiK2,
    Family::Openai,
];

// Harmony's markers.
const H_START: &str = "<|start|>";
const H_CHANNEL: &str = "<|channel|>";
const H_CONSTRAIN: &str = "<|constrain|>";
const H_MESSAGE: &str = "<|message|>";
const H_END: &str = "<|end|>";
const H_RETURN: &str = "<|return|>";
const H_CALL: &str = "<|call|>";

// DeepSeek's markers.
const DS_CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const DS_CALLS_END: &str = "<｜tool▁calls▁end｜>";
const DS_CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const DS_CALL_END: &str = "<｜tool▁call▁end｜>";
const DS_SEP: &str = "<｜tool▁sep｜>";

// Kimi K2's markers.
const K_SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const K_SECTION_END: &str = "<|tool_calls_section_end|>";
const K_CALL_BEGIN: &str = "<|tool_call_begin|>";
const K_ARG_BEGIN: &str = "<|tool_call_argument_begin|>";
const K_CALL_END: &str = "<|tool_call_end|>";

impl Family {
    /// Every family with a structural tag.
    pub fn all() -> &'static [Family] {
        &ALL
    }

    /// The family of a vLLM tool parser name (aliases included).
    pub fn from_parser_name(name: &str) -> Option<Family> {
        Some(match name {
            "hermes" => Family::Hermes,
            "qwen3_coder" | "qwen3_xml" => Family::Qwen3Coder,
            "llama3_json" | "llama4_json" => Family::Llama3Json,
            "deepseek_v3" => Family::DeepseekV3,
            "deepseek_v31" => Family::DeepseekV31,
            "kimi_k2" => Family::KimiK2,
            "openai" => Family::Openai,
            _ => return None,
        })
    }

    /// vLLM's parser name.
    pub fn parser_name(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Qwen3Coder => "qwen3_coder",
            Family::Llama3Json => "llama3_json",
            Family::DeepseekV3 => "deepseek_v3",
            Family::DeepseekV31 => "deepseek_v31",
            Family::KimiK2 => "kimi_k2",
            Family::Openai => "openai",
        }
    }

    /// The family's tag for these calls (name, argument schema), which the
    /// caller has already resolved against the strict level.
    pub(crate) fn build_tag(self, calls: &[(String, Value)], level: StrictLevel) -> StructuralTag {
        let json = |schema: &Value| Content::Json { schema: schema.clone() };
        let mut tags = Vec::new();
        let (triggers, section) = match self {
            Family::Hermes => {
                for (name, schema) in calls {
                    let head = format!("{{\"name\": \"{}\", \"arguments\": ", json_str(name));
                    tags.push(call(
                        name,
                        vec![t("<tool_call>"), t(format!("\n{head}"))],
                        json(schema),
                        vec![t("}\n</tool_call>")],
                    ));
                    tags.push(call(
                        name,
                        vec![t("<tool_call>"), t(head)],
                        json(schema),
                        vec![t("}</tool_call>")],
                    ));
                }
                (vec![vec![t("<tool_call>")]], None)
            }
            Family::Qwen3Coder => {
                for (name, schema) in calls {
                    tags.push(call(
                        name,
                        vec![t("<tool_call>"), t(format!("\n<function={name}>\n"))],
                        Content::XmlParameters { schema: schema.clone() },
                        vec![t("</function>\n</tool_call>")],
                    ));
                }
                (vec![vec![t("<tool_call>")]], None)
            }
            Family::Llama3Json => {
                for (name, schema) in calls {
                    tags.push(call(
                        name,
                        vec![t("{\"name\": "), t(format!("\"{}\", \"parameters\": ", json_str(name)))],
                        json(schema),
                        vec![t("}")],
                    ));
                }
                (vec![vec![t("{\"name\": ")]], None)
            }
            Family::DeepseekV3 | Family::DeepseekV31 => {
                for (name, schema) in calls {
                    let (begin, end) = if self == Family::DeepseekV3 {
                        (
                            vec![k(DS_CALL_BEGIN), t("function"), k(DS_SEP), t(format!("{name}\n```json\n"))],
                            vec![t("\n```"), k(DS_CALL_END)],
                        )
                    } else {
                        (vec![k(DS_CALL_BEGIN), t(name.as_str()), k(DS_SEP)], vec![k(DS_CALL_END)])
                    };
                    tags.push(call(name, begin, json(schema), vec![end]));
                }
                let separator = if self == Family::DeepseekV3 { vec![t("\n")] } else { vec![] };
                let section =
                    Section { begin: vec![k(DS_CALLS_BEGIN)], separator, end: vec![k(DS_CALLS_END)] };
                (vec![section.begin.clone()], Some(section))
            }
            Family::KimiK2 => {
                for (name, schema) in calls {
                    tags.push(call(
                        name,
                        vec![k(K_CALL_BEGIN), t(format!("functions.{name}:")), Piece::Digits, k(K_ARG_BEGIN)],
                        json(schema),
                        vec![vec![k(K_CALL_END)]],
                    ));
                }
                let section = Section {
                    begin: vec![k(K_SECTION_BEGIN)],
                    separator: vec![],
                    end: vec![k(K_SECTION_END)],
                };
                (vec![section.begin.clone()], Some(section))
            }
            Family::Openai => {
                for (name, schema) in calls {
                    // Recipient in the channel part (what gpt-oss writes) …
                    tags.push(call(
                        name,
                        vec![
                            k(H_CHANNEL),
                            t(format!("commentary to=functions.{name} ")),
                            k(H_CONSTRAIN),
                            t("json"),
                            k(H_MESSAGE),
                        ],
                        json(schema),
                        vec![vec![k(H_CALL)]],
                    ));
                    // … or in the role part.
                    tags.push(call(
                        name,
                        vec![
                            k(H_START),
                            t(format!("assistant to=functions.{name}")),
                            k(H_CHANNEL),
                            t("commentary "),
                            k(H_CONSTRAIN),
                            t("json"),
                            k(H_MESSAGE),
                        ],
                        json(schema),
                        vec![vec![k(H_CALL)]],
                    ));
                }
                // The messages that are not calls.
                let message = |channel: &str, end: Vec<Vec<Piece>>| Tag {
                    tool: None,
                    begin: vec![k(H_CHANNEL), t(channel), k(H_MESSAGE)],
                    content: Content::Text,
                    end,
                };
                tags.push(message("analysis", vec![vec![k(H_END)]]));
                tags.push(message("commentary", vec![vec![k(H_END)]]));
                tags.push(message("final", vec![vec![k(H_END)], vec![k(H_RETURN)]]));
                tags.push(Tag {
                    tool: None,
                    begin: vec![k(H_START), t("assistant")],
                    content: Content::Empty,
                    end: vec![],
                });
                (vec![vec![k(H_CHANNEL)], vec![k(H_START)]], None)
            }
        };
        StructuralTag { family: self, level, triggers, section, tags }
    }
}

/// A text piece.
fn t(s: impl Into<String>) -> Piece {
    Piece::Text(s.into())
}

/// A special-token piece.
fn k(s: &str) -> Piece {
    Piece::Token(s.to_string())
}

fn call(name: &str, begin: Vec<Piece>, content: Content, end: impl IntoEnd) -> Tag {
    Tag { tool: Some(name.to_string()), begin, content, end: end.into_end() }
}

/// A single end (`Vec<Piece>`) or alternatives (`Vec<Vec<Piece>>`).
trait IntoEnd {
    fn into_end(self) -> Vec<Vec<Piece>>;
}

impl IntoEnd for Vec<Piece> {
    fn into_end(self) -> Vec<Vec<Piece>> {
        vec![self]
    }
}

impl IntoEnd for Vec<Vec<Piece>> {
    fn into_end(self) -> Vec<Vec<Piece>> {
        self
    }
}

/// The inside of a JSON string literal for `s` (as `json.dumps` writes it,
/// without the quotes).
fn json_str(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}
