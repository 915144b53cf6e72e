//! The exported grammars, compiled by llguidance, accept the model-format
//! text of valid calls and reject calls to unknown tools and arguments that
//! violate the schema. Acceptance is llguidance's own matcher over a
//! byte-level vocabulary (one token per byte, plus the family's special
//! tokens when the grammar asks for them as tokens).
#![cfg(feature = "llguidance")]

mod common;

use common::two_tools;
use llmsift_grammar::llg::{grammar, json_schema_grammar, Checker};
use llmsift_grammar::{
    json_schema_lark, required_schema, structural_tag, structural_tag_lark, Constraint, Family, GrammarError,
    LarkOptions, Piece, StrictLevel, StructuralTag,
};
use serde_json::json;

/// A checker over bytes, with the tag's special tokens when `special`.
fn checker(tag: &StructuralTag, special: bool) -> Checker {
    let names = if special { tag.special_tokens() } else { Vec::new() };
    Checker::bytes(&names.iter().map(String::as_str).collect::<Vec<_>>()).unwrap()
}

/// Every case accepted (or not) under both ways of writing the markers.
fn check(tag: &StructuralTag, accepted: &[&str], rejected: &[&str]) {
    for special in [false, true] {
        let lark = structural_tag_lark(tag, &LarkOptions { special_tokens: special, after: None });
        let c = checker(tag, special);
        c.compile(&lark).unwrap();
        for text in accepted {
            assert!(
                c.accepts(&lark, text).unwrap(),
                "{:?} special={special} should accept {text:?}\n{lark}",
                tag.family
            );
        }
        for text in rejected {
            assert!(
                !c.accepts(&lark, text).unwrap(),
                "{:?} special={special} should reject {text:?}\n{lark}",
                tag.family
            );
        }
    }
}

fn pinned(family: Family) -> StructuralTag {
    structural_tag(family, &two_tools(None, None), StrictLevel::Parameter).unwrap()
}

const HERMES_CALL: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

#[test]
fn hermes_accepts_valid_calls_and_rejects_the_rest() {
    check(
        &pinned(Family::Hermes),
        &[
            HERMES_CALL,
            "",
            "No call needed.",
            "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>\n<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>",
        ],
        &[
            // unknown tool
            "<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
            // wrong type, missing required key, not an object
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 42}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 3}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>",
            // an opened call must be finished
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
        ],
    );
}

#[test]
fn qwen3_coder_xml_parameters() {
    let call = |name: &str, params: &str| {
        format!("<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
    };
    let p = |k: &str, v: &str| format!("<parameter={k}>\n{v}\n</parameter>\n");
    check(
        &pinned(Family::Qwen3Coder),
        &[
            &call("get_weather", &p("city", "Paris")),
            &format!("Sure.\n{}", call("get_weather", &(p("city", "New York, NY") + &p("days", "3")))),
            &call("get_time", ""),
        ],
        &[
            &call("get_stock", &p("city", "Paris")),
            &call("get_weather", &p("days", "3")),
            &call("get_weather", &(p("city", "Paris") + &p("days", "three"))),
            &call("get_weather", &(p("city", "Paris") + &p("zone", "x"))),
        ],
    );
}

#[test]
fn llama3_json() {
    check(
        &pinned(Family::Llama3Json),
        &["{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", "plain text"],
        &[
            "{\"name\": \"get_stock\", \"parameters\": {}}",
            "{\"name\": \"get_weather\", \"parameters\": {\"city\": 1}}",
        ],
    );
}

#[test]
fn deepseek_v3() {
    let call = |name: &str, args: &str| {
        format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜>")
    };
    let calls = |c: &[String]| format!("<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>", c.join("\n"));
    check(
        &pinned(Family::DeepseekV3),
        &[
            &calls(&[call("get_weather", "{\"city\": \"Paris\"}")]),
            &format!(
                "Checking.{}",
                calls(&[call("get_weather", "{\"city\": \"Paris\"}"), call("get_time", "{}")])
            ),
        ],
        &[&calls(&[call("get_stock", "{}")]), &calls(&[call("get_weather", "{\"city\": 3}")]), &calls(&[])],
    );
}

#[test]
fn deepseek_v31() {
    let call = |name: &str, args: &str| {
        format!("<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜>")
    };
    let calls = |c: &[String]| format!("<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>", c.concat());
    check(
        &pinned(Family::DeepseekV31),
        &[&calls(&[call("get_weather", "{\"city\": \"Paris\"}"), call("get_time", "{\"tz\": \"UTC\"}")])],
        &[&calls(&[call("get_stock", "{}")]), &calls(&[call("get_weather", "{}")])],
    );
}

#[test]
fn kimi_k2() {
    let call = |name: &str, idx: &str, args: &str| {
        format!(
            "<|tool_call_begin|>functions.{name}:{idx}<|tool_call_argument_begin|>{args}<|tool_call_end|>"
        )
    };
    let section =
        |c: &[String]| format!("<|tool_calls_section_begin|>{}<|tool_calls_section_end|>", c.concat());
    check(
        &pinned(Family::KimiK2),
        &[&section(&[call("get_weather", "0", "{\"city\": \"Paris\"}"), call("get_time", "1", "{}")])],
        &[
            &section(&[call("get_stock", "0", "{}")]),
            &section(&[call("get_weather", "0", "{\"town\": \"Paris\"}")]),
            &section(&[call("get_weather", "x", "{\"city\": \"Paris\"}")]),
        ],
    );
}

#[test]
fn gpt_oss_harmony() {
    let call = |name: &str, args: &str| {
        format!("<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>")
    };
    check(
        &pinned(Family::Openai),
        &[
            &format!("<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant{}", call("get_weather", "{\"city\": \"Paris\"}")),
            "<|channel|>final<|message|>Hello!<|return|>",
            "<|start|>assistant to=functions.get_time<|channel|>commentary <|constrain|>json<|message|>{}<|call|>",
        ],
        &[&call("get_stock", "{}"), &call("get_weather", "{\"city\": false}"), "<|channel|>secret<|message|>x<|end|>"],
    );
}

#[test]
fn strict_level_function_leaves_arguments_free_but_not_names() {
    let tag = structural_tag(Family::Hermes, &two_tools(None, None), StrictLevel::Function).unwrap();
    check(
        &tag,
        &["<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 42}}\n</tool_call>"],
        &["<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {}}\n</tool_call>"],
    );
}

#[test]
fn the_grammar_can_start_after_reasoning() {
    let tag = pinned(Family::Hermes);
    let c = Checker::bytes(&[]).unwrap();
    let lark = structural_tag_lark(&tag, &LarkOptions::text().with_after(Some(Piece::text("</think>"))));
    // Reasoning is free, even a call-looking text in it.
    let thought = "I could call <tool_call>\n{\"name\": \"get_stock\"} but no.</think>\n\n";
    assert!(c.accepts(&lark, &format!("{thought}{HERMES_CALL}")).unwrap());
    assert!(!c
        .accepts(
            &lark,
            &format!("{thought}<tool_call>\n{{\"name\": \"get_stock\", \"arguments\": {{}}}}\n</tool_call>")
        )
        .unwrap());
    // The marker is awaited: a call without it is still reasoning, and the output never left it.
    assert!(!c.accepts(&lark, HERMES_CALL).unwrap());

    // As a special token.
    let c = Checker::bytes(&["</think>"]).unwrap();
    let opts = LarkOptions { special_tokens: true, after: Some(Piece::token("</think>")) };
    let lark = structural_tag_lark(&tag, &opts);
    assert!(c.accepts(&lark, &format!("{thought}{HERMES_CALL}")).unwrap());
}

const REQUIRED_OK: &str =
    r#"[{"name": "get_weather", "parameters": {"city": "Paris"}}, {"name": "get_time", "parameters": {}}]"#;

#[test]
fn the_required_schema_compiles_and_checks() {
    let c = Checker::bytes(&[]).unwrap();
    let schema = required_schema(&two_tools(None, None), true).unwrap();
    let lark = json_schema_lark(&schema, &LarkOptions::text());
    assert!(c.accepts(&lark, REQUIRED_OK).unwrap(), "{lark}");
    assert!(!c.accepts(&lark, "[]").unwrap());
    assert!(!c.accepts(&lark, r#"[{"name": "get_stock", "parameters": {}}]"#).unwrap());
    assert!(!c.accepts(&lark, r#"[{"name": "get_weather", "parameters": {"city": 1}}]"#).unwrap());
    assert!(!c.accepts(&lark, "Sure!").unwrap());
    // The same through llguidance's JSON-schema entry point.
    let toks = c.tokenize(REQUIRED_OK);
    assert!(c.accepts_tokens(json_schema_grammar(&schema), &toks).unwrap());

    // Constrained only once reasoning has ended.
    let after = LarkOptions::text().with_after(Some(Piece::text("</think>")));
    let lark = json_schema_lark(&schema, &after);
    assert!(c.accepts(&lark, &format!("Which tool? Sure!</think>{REQUIRED_OK}")).unwrap());
    assert!(!c.accepts(&lark, "Which tool?</think>Sure!").unwrap());

    // parallel_tool_calls=false: one call only.
    let one = required_schema(&two_tools(None, None), false).unwrap();
    let lark = json_schema_lark(&one, &LarkOptions::text());
    assert!(!c.accepts(&lark, REQUIRED_OK).unwrap());
    assert!(c.accepts(&lark, r#"[{"name": "get_time", "parameters": {"tz": "UTC"}}]"#).unwrap());
}

#[test]
fn merged_defs_resolve_in_the_required_schema() {
    let unit = json!({"type": "string", "enum": ["c", "f"]});
    let weather = json!({"type": "object", "properties": {"unit": {"$ref": "#/$defs/Unit"}}, "required": ["unit"], "$defs": {"Unit": unit}});
    let tools = vec![common::tool("get_weather", Some(weather), None)];
    let schema = required_schema(&tools, true).unwrap();
    let c = Checker::bytes(&[]).unwrap();
    let lark = json_schema_lark(&schema, &LarkOptions::text());
    assert!(c.accepts(&lark, r#"[{"name": "get_weather", "parameters": {"unit": "c"}}]"#).unwrap());
    assert!(!c.accepts(&lark, r#"[{"name": "get_weather", "parameters": {"unit": "k"}}]"#).unwrap());
}

#[test]
fn a_named_constraint_is_the_arguments() {
    let c = Checker::bytes(&[]).unwrap();
    let g = grammar(&Constraint::JsonSchema(common::weather_params()), &LarkOptions::text());
    assert!(c.accepts_tokens(g, &c.tokenize(r#"{"city": "Paris", "days": 2}"#)).unwrap());
    let g = grammar(&Constraint::JsonSchema(common::weather_params()), &LarkOptions::text());
    assert!(!c.accepts_tokens(g, &c.tokenize(r#"{"days": 2}"#)).unwrap());
    let g = grammar(&Constraint::JsonSchema(common::weather_params()), &LarkOptions::text());
    assert_eq!(c.valid_prefix(g, &c.tokenize(r#"{"city": 7}"#)).unwrap(), r#"{"city": "#.len());
}

#[test]
fn an_unusable_grammar_is_a_typed_error() {
    let c = Checker::bytes(&[]).unwrap();
    let err = c.compile("start: undefined_rule").unwrap_err();
    assert!(matches!(err, GrammarError::Engine { .. }), "{err:?}");
    assert_eq!(err.status(), 400);
}
