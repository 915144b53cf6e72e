//! `[calls]`: how a tool format reads calls — when a call commits, how its
//! name and parameters are read and typed, and which calls are checked
//! against the request's tools. What vLLM's answer loses of a call lives
//! in the vLLM profile (`[vllm.text_loss]`, see [`super::vllm`]), not here.

use serde::Deserialize;
use std::collections::BTreeMap;

/// What the raw text of a call that never got a name becomes (`uncommitted`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Uncommitted {
    /// Dropped.
    #[default]
    Drop,
    /// Content.
    Content,
}

/// What a marker inside an open JSON string of a call is (`markers_in_strings`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkersInStrings {
    /// The marker acts as it would anywhere in its state.
    #[default]
    Markers,
    /// The marker is text of the string.
    Text,
}

/// What a closing marker spelled inside a value is, in the default mode
/// (`markers_in_values`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkersInValues {
    /// The marker acts as it would anywhere in its state (`markers_in_strings`
    /// decides inside a JSON string).
    #[default]
    Act,
    /// A closer inside a value (an XML parameter's value, an open JSON
    /// string of the arguments) ends it only when what follows it, after
    /// optional white space, is a marker the state it leads to takes, or
    /// the end of the output; else it is the value's text. With the
    /// request's `vllm_text_loss` the marker acts as vLLM reads it.
    Follow,
}

/// What a name or a parameter key written as an attribute value holds
/// (`entities`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Entities {
    /// The text as written.
    #[default]
    None,
    /// An XML attribute value: `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`
    /// and numeric references (`&#38;`, `&#x26;`) are unescaped (under
    /// vLLM's readings only `&quot;` and `&amp;`, as Kimi K3's `_attrs`).
    Xml,
}

/// Which readings type values by a schema with its `$ref`s and unions
/// resolved (`schema_refs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaRefs {
    /// Sift's only; vLLM's reads the schema as written.
    #[default]
    Sift,
    /// Both (dots: vLLM's parser follows `#/$defs/` references too).
    Both,
}

/// `[calls]`: how calls are read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallPolicy {
    /// The raw text of a call that never committed.
    #[serde(default)]
    pub uncommitted: Uncommitted,
    /// Emit a call only once it ends with its arguments whole (a truncated
    /// or malformed call is dropped, or kept as content per `uncommitted`),
    /// at the cost of not streaming them.
    #[serde(default)]
    pub defer: bool,
    /// A call whose name is still open when the output ends is a call.
    #[serde(default)]
    pub commit_open_name: bool,
    /// A marker left unfinished at the end of the output is dropped, not text.
    #[serde(default)]
    pub drop_unfinished_marker: bool,
    /// `tool_choice: required` or a named function are written in the
    /// family's own format (vLLM's `supports_required_and_named = false`).
    #[serde(default)]
    pub native_required: bool,
    /// A request without tools gets no calls (the markup is removed).
    #[serde(default)]
    pub need_tools: bool,
    /// Parameter keys are kept exactly as written (no trimming).
    #[serde(default)]
    pub verbatim_keys: bool,
    /// String parameter values are kept exactly as written (no wrapping
    /// newline removed, `null` stays a string).
    #[serde(default)]
    pub verbatim_values: bool,
    /// Parameter values are typed as vLLM's parser engine types them
    /// (`_fix_arg_types`: `coerce_to_schema_type` over the parameter's
    /// `extract_types_from_schema`): a parameter whose schema allows only a
    /// string, or that has no schema, keeps its text (`null` included);
    /// any other is read as the first of its types the text reads as.
    #[serde(default)]
    pub coerce_values: bool,
    /// A finished call's JSON arguments are typed as vLLM's parser engine
    /// types them (`_fix_arg_types`, nested objects and arrays included);
    /// arguments that need no change stay as written. A call to a function
    /// with a schema has its arguments held until it ends (with `defer`, the
    /// whole call is).
    #[serde(default)]
    pub fix_arg_types: bool,
    /// String parameter values lose surrounding white space (Python's
    /// `str.strip`) and are otherwise kept as written (`null` stays a string).
    #[serde(default)]
    pub trim_values: bool,
    /// A call to a function the request declares no tool for is not a call
    /// (when the request declares tools at all).
    #[serde(default)]
    pub known_names_only: bool,
    /// A call whose raw arguments begin before any name was written is a
    /// call without a name: its text is content even where uncommitted calls
    /// are dropped (vLLM's Mistral parser answers a call named "" on
    /// `[TOOL_CALLS]{…}`; a call always has a name in Sift).
    #[serde(default)]
    pub nameless_args: bool,
    /// JSON arguments of held calls are typed by the tool's schema, value by
    /// value (vLLM's `coerce_to_schema_type`): `"2"` for an integer becomes 2.
    #[serde(default)]
    pub schema_args: bool,
    /// A name with white space inside is not a name (the call never commits).
    #[serde(default)]
    pub word_names: bool,
    /// A held call that names one parameter twice fails its group.
    #[serde(default)]
    pub unique_params: bool,
    /// What a marker spelled inside an open JSON string of a call (its name,
    /// a key, a string value) is: `markers` (it acts, cutting the string) or
    /// `text` (it is the string's text, as regexes that match the call as a
    /// whole read it: DeepSeek V3's, ERNIE's, Hermes').
    #[serde(default)]
    pub markers_in_strings: MarkersInStrings,
    /// What a closing marker spelled inside a value is in the default mode:
    /// `act` (as anywhere) or `follow` (only where the grammar allows what
    /// follows it; see [`MarkersInValues`]).
    #[serde(default)]
    pub markers_in_values: MarkersInValues,
    /// What the entities in a call's name and its parameter keys are, when
    /// the header writes them as attribute values (Kimi K3's XTML
    /// `tool="…"` and `key="…"`): `none` (text) or `xml` (unescaped).
    #[serde(default)]
    pub entities: Entities,
    /// Whether vLLM's reading, too, types values by the schemas with their
    /// `$ref`s and unions resolved: `sift` (only Sift's) or `both`.
    #[serde(default)]
    pub schema_refs: SchemaRefs,
    /// Wrapper parameter names (`["arguments", "input"]`): a call whose only
    /// parameter is one of them, not declared by a function that declares
    /// parameters, gets the wrapped object as its arguments when all its keys
    /// are declared (vLLM's DSML `_repair_param_dict`). The call's arguments
    /// are held from the wrapper's opening until a second parameter or the
    /// call's end decides.
    #[serde(default)]
    pub unwrap_params: Vec<String>,
    /// A deferred call is a call only when its end marker closes it (a call
    /// cut off by the end of the output or by the next call follows `uncommitted`).
    #[serde(default)]
    pub need_end: bool,
    /// A deferred call is checked against the request's tool schema when it
    /// ends (see `engine/checked.rs`): a declared function (after `alias`),
    /// every parameter named, no parameter twice, undeclared parameters
    /// ignored, every required parameter present. A call that fails is not a
    /// call (`uncommitted`).
    #[serde(default)]
    pub validate: bool,
    /// With `validate`: parameter names that, when the function does not
    /// declare them, wrap the real arguments as a JSON or Python dict.
    #[serde(default)]
    pub wrapper_keys: Vec<String>,
    /// With `validate`: names the model uses for a declared function.
    #[serde(default)]
    pub alias: Vec<AliasSpec>,
    /// A parameter whose schema is a union (`anyOf`, `oneOf`, a type list)
    /// admitting `string` is read as a string.
    #[serde(default)]
    pub union_string: bool,
}

/// A function name the model writes for a declared one, with its arguments
/// renamed (`[[calls.alias]]`): used only when `to` is declared and `from`
/// is not, and only when at least one argument maps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasSpec {
    /// The names the model writes.
    pub from: Vec<String>,
    /// The declared function they stand for.
    pub to: String,
    /// Target key → the model's keys, first non-empty value wins.
    #[serde(default)]
    pub args: BTreeMap<String, Vec<String>>,
    /// Target key → constant value added when the alias applies.
    #[serde(default)]
    pub set: BTreeMap<String, toml::Value>,
}
