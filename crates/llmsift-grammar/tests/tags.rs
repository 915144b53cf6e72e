//! The structural tag of each family for a request with two tools, and the
//! strict levels.

mod common;

use common::{time_params, two_tools, weather_params};
use llmsift_grammar::{
    pieces_text, structural_tag, Content, Family, Piece, StrictLevel, StructuralTag, XmlParam,
};
use serde_json::json;

/// The tag with both tools' schemas pinned.
fn tag(family: Family) -> StructuralTag {
    structural_tag(family, &two_tools(None, None), StrictLevel::Parameter).unwrap()
}

/// (begin, end) of the calls to `tool`, as text.
fn calls(tag: &StructuralTag, tool: &str) -> Vec<(String, String)> {
    tag.tags_for(tool).map(|t| (t.begin_text(), t.end_text())).collect()
}

fn assert_schemas(tag: &StructuralTag) {
    for t in tag.tags_for("get_weather") {
        assert_eq!(t.schema(), Some(&weather_params()));
    }
    for t in tag.tags_for("get_time") {
        assert_eq!(t.schema(), Some(&time_params()));
    }
}

#[test]
fn hermes() {
    let tag = tag(Family::Hermes);
    assert_eq!(tag.trigger_texts(), ["<tool_call>"]);
    assert!(tag.section.is_none());
    assert_eq!(
        calls(&tag, "get_weather"),
        [
            ("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ".into(), "}\n</tool_call>".into()),
            ("<tool_call>{\"name\": \"get_weather\", \"arguments\": ".into(), "}</tool_call>".into()),
        ]
    );
    assert_eq!(calls(&tag, "get_time").len(), 2);
    assert!(tag.tags.iter().all(|t| matches!(t.content, Content::Json { .. })));
    assert_schemas(&tag);
    assert!(tag.special_tokens().is_empty());
}

#[test]
fn qwen3_coder() {
    let tag = tag(Family::Qwen3Coder);
    assert_eq!(tag.trigger_texts(), ["<tool_call>"]);
    assert_eq!(
        calls(&tag, "get_weather"),
        [("<tool_call>\n<function=get_weather>\n".into(), "</function>\n</tool_call>".into())]
    );
    assert_eq!(
        calls(&tag, "get_time"),
        [("<tool_call>\n<function=get_time>\n".into(), "</function>\n</tool_call>".into())]
    );
    let markup = XmlParam { open: "<parameter=".into(), name_end: ">".into(), close: "</parameter>".into() };
    assert!(tag
        .tags
        .iter()
        .all(|t| matches!(&t.content, Content::XmlParameters { param, .. } if *param == markup)));
    assert_schemas(&tag);
}

#[test]
fn llama3_json() {
    let tag = tag(Family::Llama3Json);
    assert_eq!(tag.trigger_texts(), ["{\"name\": "]);
    assert_eq!(
        calls(&tag, "get_weather"),
        [("{\"name\": \"get_weather\", \"parameters\": ".into(), "}".into())]
    );
    assert_schemas(&tag);
}

#[test]
fn deepseek_v3() {
    let tag = tag(Family::DeepseekV3);
    let sec = tag.section.as_ref().unwrap();
    assert_eq!(pieces_text(&sec.begin), "<｜tool▁calls▁begin｜>");
    assert_eq!(pieces_text(&sec.separator), "\n");
    assert_eq!(pieces_text(&sec.end), "<｜tool▁calls▁end｜>");
    assert_eq!(tag.trigger_texts(), ["<｜tool▁calls▁begin｜>"]);
    assert_eq!(
        calls(&tag, "get_weather"),
        [(
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n".into(),
            "\n```<｜tool▁call▁end｜>".into()
        )]
    );
    assert_schemas(&tag);
    assert_eq!(
        tag.special_tokens(),
        [
            "<｜tool▁calls▁begin｜>",
            "<｜tool▁calls▁end｜>",
            "<｜tool▁call▁begin｜>",
            "<｜tool▁sep｜>",
            "<｜tool▁call▁end｜>"
        ]
    );
}

#[test]
fn deepseek_v31() {
    let tag = tag(Family::DeepseekV31);
    let sec = tag.section.as_ref().unwrap();
    assert_eq!(pieces_text(&sec.begin), "<｜tool▁calls▁begin｜>");
    assert!(sec.separator.is_empty());
    assert_eq!(
        calls(&tag, "get_time"),
        [("<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>".into(), "<｜tool▁call▁end｜>".into())]
    );
    assert_schemas(&tag);
}

#[test]
fn kimi_k2() {
    let tag = tag(Family::KimiK2);
    let sec = tag.section.as_ref().unwrap();
    assert_eq!(pieces_text(&sec.begin), "<|tool_calls_section_begin|>");
    assert_eq!(pieces_text(&sec.end), "<|tool_calls_section_end|>");
    let call = tag.tags_for("get_weather").next().unwrap();
    // The call index is digits: `functions.get_weather:0`, `:1`, ...
    assert_eq!(
        call.begin,
        [
            Piece::token("<|tool_call_begin|>"),
            Piece::text("functions.get_weather:"),
            Piece::Digits,
            Piece::token("<|tool_call_argument_begin|>")
        ]
    );
    assert_eq!(call.end_text(), "<|tool_call_end|>");
    assert_schemas(&tag);
}

#[test]
fn gpt_oss_harmony() {
    let tag = tag(Family::Openai);
    assert_eq!(tag.trigger_texts(), ["<|channel|>", "<|start|>"]);
    assert_eq!(
        calls(&tag, "get_weather"),
        [
            (
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>".into(),
                "<|call|>".into()
            ),
            (
                "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>".into(),
                "<|call|>".into()
            ),
        ]
    );
    assert_schemas(&tag);
    // The messages that are not calls stay free.
    let others: Vec<String> = tag.tags.iter().filter(|t| t.tool.is_none()).map(|t| t.begin_text()).collect();
    assert_eq!(
        others,
        [
            "<|channel|>analysis<|message|>",
            "<|channel|>commentary<|message|>",
            "<|channel|>final<|message|>",
            "<|start|>assistant"
        ]
    );
    let fin = tag.tags.iter().find(|t| t.begin_text() == "<|channel|>final<|message|>").unwrap();
    assert_eq!(fin.end.iter().map(|e| pieces_text(e)).collect::<Vec<_>>(), ["<|end|>", "<|return|>"]);
}

#[test]
fn every_trigger_opens_its_tags() {
    for &family in Family::all() {
        let tag = tag(family);
        let opened: Vec<&[Piece]> = match &tag.section {
            Some(sec) => vec![&sec.begin],
            None => tag.tags.iter().map(|t| t.begin.as_slice()).collect(),
        };
        for begin in opened {
            assert!(tag.triggers.iter().any(|t| begin.starts_with(t)), "{family:?}: {begin:?}");
        }
        assert_eq!(Family::from_parser_name(family.parser_name()), Some(family));
    }
}

#[test]
fn strict_level_auto_follows_each_tools_strict() {
    // No strict tool: auto leaves the output free.
    assert!(structural_tag(Family::Hermes, &two_tools(None, Some(false)), StrictLevel::Auto).is_none());
    // One strict tool: a tag; only that tool's arguments are pinned.
    let tag = structural_tag(Family::Hermes, &two_tools(Some(true), None), StrictLevel::Auto).unwrap();
    assert!(tag.tags_for("get_weather").all(|t| t.schema() == Some(&weather_params())));
    assert!(tag.tags_for("get_time").all(|t| t.schema() == Some(&json!(true))));
    assert!(structural_tag(Family::Hermes, &[], StrictLevel::Parameter).is_none());
}

#[test]
fn strict_level_function_constrains_the_envelope_only() {
    let tag = structural_tag(Family::KimiK2, &two_tools(None, None), StrictLevel::Function).unwrap();
    assert_eq!(tag.level, StrictLevel::Function);
    assert_eq!(tag.tags.len(), 2);
    assert!(tag.tags.iter().all(|t| t.schema() == Some(&json!(true))));
}

#[test]
fn a_server_floor_never_loosens_a_strict_tool() {
    for level in [StrictLevel::Auto, StrictLevel::Function, StrictLevel::Parameter] {
        let tag = structural_tag(Family::DeepseekV31, &two_tools(Some(true), None), level).unwrap();
        assert!(tag.tags_for("get_weather").all(|t| t.schema() == Some(&weather_params())), "{level:?}");
    }
}

#[test]
fn strict_level_parameter_pins_every_schema() {
    let tag =
        structural_tag(Family::Qwen3Coder, &two_tools(Some(false), None), StrictLevel::Parameter).unwrap();
    assert_schemas(&tag);
    // A tool without parameters: any arguments.
    let tools = vec![common::tool("ping", None, None)];
    let tag = structural_tag(Family::Hermes, &tools, StrictLevel::Parameter).unwrap();
    assert_eq!(tag.tags[0].schema(), Some(&json!(true)));
}

#[test]
fn strict_level_names() {
    assert_eq!(StrictLevel::from_name(" Parameter "), Some(StrictLevel::Parameter));
    assert_eq!(StrictLevel::from_name("function"), Some(StrictLevel::Function));
    assert_eq!(StrictLevel::from_name("off"), None);
    assert_eq!(StrictLevel::default().name(), "auto");
}

#[test]
fn the_tag_describes_itself_as_json() {
    let tag = tag(Family::Llama3Json);
    let v = serde_json::to_value(&tag).unwrap();
    assert_eq!(v["family"], "llama3_json");
    assert_eq!(v["level"], "parameter");
    assert_eq!(v["triggers"], json!([[{"text": "{\"name\": "}]]));
    assert_eq!(v["tags"][0]["tool"], "get_weather");
    assert_eq!(v["tags"][0]["content"], json!({"kind": "json", "schema": weather_params()}));
    let back: StructuralTag = serde_json::from_value(v).unwrap();
    assert_eq!(back, tag);
}
