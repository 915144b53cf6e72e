//! The JSON schemas for `tool_choice: "required"` and a named function,
//! against the shapes vLLM builds (`vllm/tool_parsers/utils.py`).

mod common;

use common::{time_params, tool, two_tools, weather_params};
use llmsift_grammar::{
    named_schema, request_constraint, required_schema, Constraint, Family, GrammarError, StrictLevel,
};
use llmsift_protocol::ChatCompletionRequest;
use serde_json::json;

#[test]
fn required_with_two_tools_is_vllms_array_schema() {
    let schema = required_schema(&two_tools(None, None), true).unwrap();
    // vLLM: {"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": [...]}}
    let expected = json!({
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "anyOf": [
                {
                    "properties": {
                        "name": {"type": "string", "enum": ["get_weather"]},
                        "parameters": weather_params(),
                    },
                    "required": ["name", "parameters"],
                },
                {
                    "properties": {
                        "name": {"type": "string", "enum": ["get_time"]},
                        "parameters": time_params(),
                    },
                    "required": ["name", "parameters"],
                },
            ],
        },
    });
    assert_eq!(schema, expected);
    assert!(schema.get("maxItems").is_none());
    assert!(schema.get("$defs").is_none());
}

#[test]
fn required_without_parallel_calls_allows_one_item() {
    let schema = required_schema(&two_tools(None, None), false).unwrap();
    assert_eq!(schema["maxItems"], 1);
    assert_eq!(schema["minItems"], 1);
    assert_eq!(schema["items"]["anyOf"].as_array().unwrap().len(), 2);
}

#[test]
fn tools_without_parameters_get_an_empty_object_schema() {
    // vLLM: `params if params else {"type": "object", "properties": {}}` (None and {} alike).
    let tools = vec![tool("a", None, None), tool("b", Some(json!({})), None)];
    let schema = required_schema(&tools, true).unwrap();
    for branch in schema["items"]["anyOf"].as_array().unwrap() {
        assert_eq!(branch["properties"]["parameters"], json!({"type": "object", "properties": {}}));
    }
}

#[test]
fn defs_are_lifted_to_the_top_level_and_merged() {
    let unit = json!({"type": "string", "enum": ["c", "f"]});
    let weather = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"$ref": "#/$defs/Unit"}},
        "$defs": {"Unit": unit, "City": {"type": "string"}},
    });
    // The same `Unit` (keys in another order), plus its own `Zone`.
    let time = json!({
        "type": "object",
        "properties": {"unit": {"$ref": "#/$defs/Unit"}, "tz": {"$ref": "#/$defs/Zone"}},
        "$defs": {"Unit": {"enum": ["c", "f"], "type": "string"}, "Zone": {"type": "string"}},
    });
    let tools = vec![tool("get_weather", Some(weather.clone()), None), tool("get_time", Some(time), None)];
    let schema = required_schema(&tools, true).unwrap();
    assert_eq!(
        schema["$defs"],
        json!({"Unit": unit, "City": {"type": "string"}, "Zone": {"type": "string"}})
    );
    // The branches no longer carry `$defs`: their `#/$defs/…` resolve at the top.
    for branch in schema["items"]["anyOf"].as_array().unwrap() {
        assert!(branch["properties"]["parameters"].get("$defs").is_none());
    }
    assert_eq!(
        schema["items"]["anyOf"][0]["properties"]["parameters"]["properties"]["unit"]["$ref"],
        "#/$defs/Unit"
    );
    // The request's tools are left as they were.
    assert_eq!(tools[0].function.parameters.as_ref().unwrap(), &weather);
}

#[test]
fn conflicting_defs_are_a_400() {
    let a = json!({"type": "object", "properties": {}, "$defs": {"Unit": {"type": "string"}}});
    let b = json!({"type": "object", "properties": {}, "$defs": {"Unit": {"type": "integer"}}});
    let err = required_schema(&[tool("a", Some(a), None), tool("b", Some(b), None)], true).unwrap_err();
    assert_eq!(err, GrammarError::ConflictingDefs { name: "Unit".into() });
    assert_eq!(err.status(), 400);
    assert_eq!(err.message(), "Tool definition 'Unit' has multiple schemas, which is not supported.");
    let body = err.to_json();
    assert_eq!(body["error"]["code"], 400);
    assert_eq!(body["error"]["type"], "BadRequestError");
}

#[test]
fn equal_numbers_in_defs_do_not_conflict() {
    // Python compares the decoded dicts: 1 == 1.0.
    let a = json!({"$defs": {"N": {"type": "number", "minimum": 1}}});
    let b = json!({"$defs": {"N": {"type": "number", "minimum": 1.0}}});
    assert!(required_schema(&[tool("a", Some(a), None), tool("b", Some(b), None)], true).is_ok());
}

#[test]
fn named_is_the_functions_parameters() {
    let with_defs = json!({"type": "object", "properties": {"u": {"$ref": "#/$defs/U"}}, "$defs": {"U": {"type": "string"}}});
    let tools = vec![tool("get_weather", Some(with_defs.clone()), None), tool("get_time", None, None)];
    assert_eq!(named_schema(&tools, "get_weather").unwrap(), Some(with_defs));
    // No parameters: vLLM has no schema, the output stays free.
    assert_eq!(named_schema(&tools, "get_time").unwrap(), None);
    let err = named_schema(&tools, "nope").unwrap_err();
    assert_eq!(err, GrammarError::UnknownTool { name: "nope".into() });
    assert_eq!(err.message(), "Tool 'nope' has not been passed in `tools`.");
}

fn checked(body: serde_json::Value) -> llmsift_protocol::CheckedRequest {
    ChatCompletionRequest::from_value(body).unwrap().check().unwrap()
}

fn request(tool_choice: serde_json::Value, parallel: bool) -> llmsift_protocol::CheckedRequest {
    checked(json!({
        "messages": [],
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": weather_params(), "strict": true}},
            {"type": "function", "function": {"name": "get_time", "parameters": time_params()}},
        ],
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel,
    }))
}

#[test]
fn request_constraint_follows_tool_choice() {
    let req = request(json!("required"), false);
    let Some(Constraint::JsonSchema(s)) =
        request_constraint(&req, Some(Family::Hermes), StrictLevel::Auto).unwrap()
    else {
        panic!("required is a JSON schema")
    };
    assert_eq!(s, required_schema(&req.tools, false).unwrap());
    assert_eq!(s["maxItems"], 1);

    let req = request(json!({"type": "function", "function": {"name": "get_time"}}), true);
    let c = request_constraint(&req, Some(Family::Hermes), StrictLevel::Auto).unwrap();
    assert_eq!(c, Some(Constraint::JsonSchema(time_params())));

    let req = request(json!("none"), true);
    assert_eq!(request_constraint(&req, Some(Family::Hermes), StrictLevel::Parameter).unwrap(), None);

    // auto: the family's structural tag (get_weather is strict), or nothing
    // without a known family.
    let req = request(json!("auto"), true);
    let Some(Constraint::StructuralTag(tag)) =
        request_constraint(&req, Some(Family::KimiK2), StrictLevel::Auto).unwrap()
    else {
        panic!("auto with a strict tool is a structural tag")
    };
    assert_eq!(tag.family, Family::KimiK2);
    assert_eq!(request_constraint(&req, None, StrictLevel::Parameter).unwrap(), None);
}
