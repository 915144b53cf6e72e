//! Shared fixtures: the two-tool request the tests use.
#![allow(dead_code)]

use llmsift_protocol::wire::{FunctionDefinition, ToolParam};
use serde_json::{json, Value};

/// A function tool.
pub fn tool(name: &str, parameters: Option<Value>, strict: Option<bool>) -> ToolParam {
    ToolParam {
        kind: "function".into(),
        function: FunctionDefinition { name: name.into(), description: None, parameters, strict },
    }
}

/// `get_weather(city: string [required], days: integer)`.
pub fn weather_params() -> Value {
    json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]
    })
}

/// `get_time(tz: string)`.
pub fn time_params() -> Value {
    json!({"type": "object", "properties": {"tz": {"type": "string"}}})
}

/// The request's two tools, with the given `strict` flags.
pub fn two_tools(weather_strict: Option<bool>, time_strict: Option<bool>) -> Vec<ToolParam> {
    vec![
        tool("get_weather", Some(weather_params()), weather_strict),
        tool("get_time", Some(time_params()), time_strict),
    ]
}
