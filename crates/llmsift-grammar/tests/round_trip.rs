//! Every constraint the gateway emits compiles, and a sample it accepts
//! parses back through Sift into the expected call or JSON: per registered
//! tool-call family × `tool_choice` (`auto` with strict tools, `required`,
//! `required` with `parallel_tool_calls: false`, named), and for the JSON
//! constraints (`response_format`, vLLM's `required`/named schemas), with
//! and without reasoning first.
//!
//! Each constraint is checked in every form it is sent in: llguidance Lark
//! (compiled and matched by llguidance), llama.cpp GBNF (written as Lark by
//! [`gbnf_lark`], a mechanical rewrite of its two syntactic differences,
//! then compiled and matched by llguidance), and xgrammar's structural-tag
//! JSON (every JSON schema inside it compiled by llguidance and matched
//! against the sample's arguments). xgrammar itself (vLLM 0.34's default
//! backend) is not in the default build: each `structured_outputs` object
//! and its sample are the cases of `tests/data/xgrammar-*.jsonl`, labelled
//! by `scripts/oracle/xgrammar-check.py` with xgrammar 0.2.8 through
//! vLLM 0.34's own validation; these tests hold the files to what the code
//! emits now and every label to `accepts`.
#![cfg(feature = "llguidance")]

mod common;

use common::two_tools;
use llmsift_core::{Registry, Request, ToolChoice, Tools};
use llmsift_grammar::llg::{json_schema_grammar, Checker};
use llmsift_grammar::{
    forced_constraint, llamacpp_grammar, pieces_text, request_constraint, response_format_constraint,
    structural_tag_json, Constraint, Content, Family, LarkOptions, Piece, StrictLevel, StructuralTag,
};
use llmsift_protocol::{ChatCompletionRequest, CheckedRequest};
use serde_json::{json, Value};
use std::sync::Arc;

const ARGS: &str = r#"{"city": "Paris", "days": 3}"#;

fn checked(tool_choice: Value, parallel: bool, strict: bool) -> CheckedRequest {
    let tools = two_tools(Some(strict), Some(strict));
    let mut body = json!({"messages": [], "tools": tools, "parallel_tool_calls": parallel});
    if !tool_choice.is_null() {
        body["tool_choice"] = tool_choice;
    }
    ChatCompletionRequest::from_value(body).unwrap().check().unwrap()
}

/// The model-format text of one `get_weather` call with [`ARGS`].
fn call_text(tag: &StructuralTag) -> String {
    let t = tag.tags_for("get_weather").next().expect("a get_weather tag");
    let args = match &t.content {
        // The parameter markup as the family's format spells it.
        Content::XmlParameters { param: p, .. } => [("city", "Paris"), ("days", "3")]
            .iter()
            .map(|(k, v)| format!("{}{k}{}\n{v}\n{}\n", p.open, p.name_end, p.close))
            .collect(),
        _ => ARGS.to_string(),
    };
    let call = format!("{}{args}{}", t.begin_text(), t.end_text());
    match &tag.section {
        Some(s) => format!("{}{call}{}", pieces_text(&s.begin), pieces_text(&s.end)),
        None => call,
    }
}

/// llama.cpp GBNF as llguidance Lark: `::=` becomes `:`, a bare character
/// class becomes a regex (its `/` escaped, its spaces `\x20`); strings are
/// copied as they are (both read JSON-like escapes), and `root` is the start.
fn gbnf_lark(g: &str) -> String {
    let mut out = String::from("%llguidance {}\nstart: root\n");
    for line in g.lines() {
        let Some((name, body)) = line.split_once(" ::= ") else { continue };
        out.push_str(name);
        out.push_str(": ");
        let (mut in_str, mut in_class, mut esc) = (false, false, false);
        for c in body.chars() {
            if esc {
                out.push(c);
                esc = false;
                continue;
            }
            match c {
                '\\' if in_str || in_class => {
                    out.push(c);
                    esc = true;
                }
                '"' if !in_class => {
                    in_str = !in_str;
                    out.push(c);
                }
                '[' if !in_str && !in_class => {
                    in_class = true;
                    out.push_str("/[");
                }
                ']' if in_class => {
                    in_class = false;
                    out.push_str("]/");
                }
                // Inside a regex literal, a slash is escaped and a space spelled out.
                '/' if in_class => out.push_str("\\/"),
                ' ' if in_class => out.push_str("\\x20"),
                c => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// Every JSON schema inside an xgrammar structural tag document.
fn schemas(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(o) => {
            if o.get("type") == Some(&json!("json_schema")) {
                out.push(o["json_schema"].clone());
            }
            o.values().for_each(|x| schemas(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| schemas(x, out)),
        _ => {}
    }
}

/// Checks one constraint in its three forms against `sample` (the text
/// after reasoning), with and without reasoning first.
fn accepts_everywhere(c: &Constraint, sample: &str, args: &str, what: &str, xgr: &mut Vec<Value>) {
    let bytes = Checker::bytes(&[]).unwrap();
    for after in [None, Some("</think>")] {
        let text = match after {
            Some(m) => format!("I think so.{m}{sample}"),
            None => sample.to_string(),
        };
        let lark = c.to_lark(&LarkOptions::text().with_after(after.map(Piece::text)));
        bytes.compile(&lark).unwrap_or_else(|e| panic!("{what}: Lark does not compile: {e}\n{lark}"));
        assert!(
            bytes.accepts(&lark, &text).unwrap(),
            "{what} after={after:?}: Lark rejects {text:?}\n{lark}"
        );
        // llama.cpp: a JSON schema from the first token goes as `json_schema`.
        if llmsift_grammar::Gbnf::json_schema(c, after).is_none() {
            let g = llamacpp_grammar(c, after);
            let lark = gbnf_lark(&g.grammar);
            bytes
                .compile(&lark)
                .unwrap_or_else(|e| panic!("{what}: GBNF does not compile: {e}\n{}", g.grammar));
            // A lazy grammar matches from its trigger on.
            let from = g.triggers.iter().filter_map(|t| text.find(t.as_str())).min().unwrap_or(0);
            let from = if g.triggers.is_empty() { 0 } else { from };
            assert!(
                bytes.accepts(&lark, &text[from..]).unwrap(),
                "{what} after={after:?}: GBNF rejects {:?}\n{}",
                &text[from..],
                g.grammar
            );
        }
        let doc = structural_tag_json(c, after);
        // What the gateway sends a vLLM backend (`outbound::structured_outputs`).
        let so = match (c, after) {
            (Constraint::JsonSchema(s), None) => json!({"json": s}),
            (Constraint::JsonObject, None) => json!({"json_object": true}),
            _ => json!({"structural_tag": doc.to_string()}),
        };
        xgr.push(json!({"what": what, "after": after, "structured_outputs": so, "text": text}));
        let mut found = Vec::new();
        schemas(&doc, &mut found);
        for s in found {
            let m = bytes.accepts_tokens(json_schema_grammar(&s), &bytes.tokenize(args)).unwrap();
            assert!(m || s == json!({}), "{what}: a schema of the structural tag rejects {args}: {s}");
        }
    }
}

/// The sample parsed back by Sift's `parser` pair for `choice`.
fn parsed(parser: &str, req: &CheckedRequest, choice: ToolChoice, text: &str) -> (String, Value) {
    let f = Registry::builtin().factory(None, Some(parser)).unwrap();
    let tools = serde_json::to_value(&req.tools).unwrap();
    let core =
        Request { tools: Arc::new(Tools::from_json(&tools)), tool_choice: choice, ..Request::default() };
    let m = f.parse(&core, text, None);
    let call = m.tool_calls.first().unwrap_or_else(|| panic!("{parser}: no call in {text:?}: {m:?}"));
    (call.name.clone(), serde_json::from_str(&call.arguments).unwrap())
}

#[test]
fn each_family_and_tool_choice_compiles_accepts_and_parses_back() {
    let named = json!({"type": "function", "function": {"name": "get_weather"}});
    let cases = [
        ("auto", json!("auto"), true, true, ToolChoice::Auto),
        ("required", json!("required"), true, false, ToolChoice::Required),
        ("required-one", json!("required"), false, false, ToolChoice::Required),
        ("named", named, true, false, ToolChoice::Named("get_weather".into())),
    ];
    let mut n = 0;
    let mut xgr = Vec::new();
    for &family in Family::all() {
        for (label, choice, parallel, strict, core_choice) in cases.clone() {
            let req = checked(choice, parallel, strict);
            let c = forced_constraint(&req, Some(family), StrictLevel::Auto).unwrap().expect("a constraint");
            let tag = match &c {
                Constraint::StructuralTag(t) | Constraint::Calls { tag: t, .. } => t,
                other => panic!("{family:?} {label}: {other:?}"),
            };
            let sample = call_text(tag);
            let what = format!("{family:?} {label}");
            accepts_everywhere(&c, &sample, r#"{"city": "Paris", "days": 3}"#, &what, &mut xgr);
            let (name, args) = parsed(family.parser_name(), &req, core_choice, &sample);
            assert_eq!(
                (name.as_str(), args),
                ("get_weather", json!({"city": "Paris", "days": 3})),
                "{what}: {sample:?}"
            );
            n += 1;
        }
    }
    assert_eq!(n, 4 * Family::all().len());
    xgrammar_labels("families", xgr);
}

#[test]
fn json_constraints_compile_accept_and_parse_back() {
    let mut xgr = Vec::new();
    // response_format: the JSON itself is the answer.
    let rf = json!({"type": "json_schema", "json_schema": {"name": "w", "schema": common::weather_params()}});
    for (rf, sample) in [(rf, ARGS), (json!({"type": "json_object"}), r#"{"any": [1, true]}"#)] {
        let c = response_format_constraint(Some(&rf)).unwrap().unwrap();
        accepts_everywhere(&c, sample, sample, &format!("response_format {}", rf["type"]), &mut xgr);
    }
    // vLLM's schemas for parsers that read forced calls as JSON (xLAM here).
    let req = checked(json!("required"), true, false);
    let c = request_constraint(&req, None, StrictLevel::Auto).unwrap().unwrap();
    let list = format!(r#"[{{"name": "get_weather", "parameters": {ARGS}}}]"#);
    accepts_everywhere(&c, &list, &list, "required schema", &mut xgr);
    let (name, args) = parsed("xlam", &req, ToolChoice::Required, &list);
    assert_eq!((name.as_str(), args), ("get_weather", json!({"city": "Paris", "days": 3})));
    let req = checked(json!({"type": "function", "function": {"name": "get_weather"}}), true, false);
    let c = request_constraint(&req, None, StrictLevel::Auto).unwrap().unwrap();
    accepts_everywhere(&c, ARGS, ARGS, "named schema", &mut xgr);
    let (name, args) = parsed("xlam", &req, ToolChoice::Named("get_weather".into()), ARGS);
    assert_eq!((name.as_str(), args), ("get_weather", json!({"city": "Paris", "days": 3})));
    xgrammar_labels("json", xgr);
}

/// Holds `tests/data/xgrammar-{name}.jsonl` to `cases` (what the code emits
/// now) and every case's label to `accepts`. `SIFT_BLESS_XGRAMMAR=1`
/// writes the cases unlabelled instead; `scripts/oracle/xgrammar-check.py`
/// then labels them.
fn xgrammar_labels(name: &str, cases: Vec<Value>) {
    let path = format!("{}/tests/data/xgrammar-{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("SIFT_BLESS_XGRAMMAR").is_some() {
        let text: String = cases.iter().map(|c| c.to_string() + "\n").collect();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let labelled: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(labelled.len(), cases.len(), "{path}: rerun with SIFT_BLESS_XGRAMMAR=1 and the oracle script");
    for (have, want) in labelled.iter().zip(&cases) {
        let mut unlabelled = have.clone();
        let label = unlabelled.as_object_mut().unwrap().remove("xgrammar");
        assert_eq!(&unlabelled, want, "{path}: the constraint changed; relabel it");
        assert_eq!(label, Some(json!("accepts")), "{path}: xgrammar does not accept {have}");
    }
}
