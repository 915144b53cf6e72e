//! What a request adds to the backend's body, per backend kind: the
//! fields of vLLM's Chat Completions request the backend takes (forwarded,
//! renamed where its API spells them otherwise), the decoding constraint,
//! and the logprobs ask. Everything else vLLM's request defines is either
//! done by the gateway or refused with a 400 naming the field and the
//! backend kind, so that no field is silently dropped.
//!
//! [`FIELDS`] is the table (`docs/serve.md` shows it; each row is checked
//! end to end by `crates/llmsift-cli/tests/gateway_fidelity.rs`). Fields
//! that are not vLLM's are ignored, as vLLM ignores them.
//!
//! The constraint ([`constraint`]) follows vLLM 0.34's serving layer:
//! `response_format` first, else the tools' (`required`/named as a JSON
//! schema, or as the family's own call syntax for parsers that write forced
//! calls natively; `auto` with strict tools as the family's structural
//! tag). With a reasoning parser it starts after the reasoning end marker
//! unless the prompt already closed reasoning or reasoning is hidden
//! (`llmsift_grammar::grammar_start_scan`), so the model still thinks. A
//! `llamacpp` model configured with `grammar_reasoning_chars` gets the
//! reasoning forced into a grammar that applies from the first token. A
//! `chat` backend is given the backend's own `tool_choice` and
//! `response_format`, unless it is llama.cpp's server (`guided_fields =
//! "llamacpp"`): then it gets Sift's constraint wherever that applies from
//! the first token (llama.cpp's chat endpoint takes no lazy grammar from a
//! client: its own chat handler sets `grammar_lazy` and the triggers).
//!
//! Invariant: a field the backend's body already has from the gateway
//! (`model`, `prompt`, `stream`, …) is never overwritten by a forwarded one,
//! except the ones listed as forwarded.

use crate::config::{BackendKind, GuidedFields};
use crate::error::ApiError;
use crate::models::Model;
use llmsift_grammar::{
    forced_constraint, grammar_start_scan, llamacpp_grammar, llamacpp_grammar_with_reasoning,
    request_constraint, response_format_constraint, structural_tag_json, Constraint, Family, Gbnf,
    StrictLevel,
};
use llmsift_protocol::{CheckedRequest, ToolChoiceMode};
use serde_json::{json, Map, Value};

/// What becomes of a request field on one backend kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Read and carried out by the gateway (or ignored as vLLM ignores it).
    Gateway,
    /// Sent to the backend under this name.
    Forward(&'static str),
    /// A 400 naming the field and the backend kind, unless it has its
    /// default value (it then asks for nothing).
    Refuse,
}

use Fate::{Forward as F, Gateway as G, Refuse as R};

/// One field of vLLM's `ChatCompletionRequest` and its fate on the
/// `completions`, `llamacpp` and `chat` backends (the demo backend is
/// `completions` without a wire).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The request field.
    pub name: &'static str,
    /// On `completions` (vLLM / SGLang `/v1/completions`).
    pub completions: Fate,
    /// On `llamacpp` (`/completion`).
    pub llamacpp: Fate,
    /// On `chat` (a raw `/v1/chat/completions`).
    pub chat: Fate,
}

const fn f(name: &'static str, completions: Fate, llamacpp: Fate, chat: Fate) -> Field {
    Field { name, completions, llamacpp, chat }
}

/// Every field of vLLM 0.34's Chat Completions request (the model of
/// `vllm/entrypoints/openai/chat_completion/protocol.py`; the names are
/// checked against `scripts/oracle/vllm-chat-request-fields.json`, written
/// from vLLM 0.34.0 itself by `scripts/oracle/request-fields.py`).
pub const FIELDS: &[Field] = &[
    // Read by the gateway: the conversation, the template, the dialect's output.
    f("messages", G, G, G),
    f("model", G, G, G),
    f("stream", G, G, G),
    f("stream_options", G, G, G),
    f("n", G, G, G),
    f("max_tokens", G, G, G),
    f("max_completion_tokens", G, G, G),
    f("tools", G, G, G),
    f("tool_choice", G, G, G),
    f("parallel_tool_calls", G, G, F("parallel_tool_calls")),
    f("response_format", G, G, G),
    f("include_reasoning", G, G, G),
    f("reasoning_effort", G, G, F("reasoning_effort")),
    f("chat_template_kwargs", G, G, G),
    f("add_generation_prompt", G, G, F("add_generation_prompt")),
    f("documents", G, G, F("documents")),
    f("skip_special_tokens", G, G, G),
    f("return_token_ids", G, G, G),
    f("logprobs", G, G, G),
    f("top_logprobs", G, G, G),
    f("user", G, G, G),
    // Sampling: the backend's.
    f("temperature", F("temperature"), F("temperature"), F("temperature")),
    f("top_p", F("top_p"), F("top_p"), F("top_p")),
    f("top_k", F("top_k"), F("top_k"), F("top_k")),
    f("min_p", F("min_p"), F("min_p"), F("min_p")),
    f("seed", F("seed"), F("seed"), F("seed")),
    f("stop", F("stop"), F("stop"), F("stop")),
    f("presence_penalty", F("presence_penalty"), F("presence_penalty"), F("presence_penalty")),
    f("frequency_penalty", F("frequency_penalty"), F("frequency_penalty"), F("frequency_penalty")),
    f("repetition_penalty", F("repetition_penalty"), F("repeat_penalty"), F("repetition_penalty")),
    f("ignore_eos", F("ignore_eos"), F("ignore_eos"), F("ignore_eos")),
    f("logit_bias", F("logit_bias"), F("logit_bias"), F("logit_bias")),
    f("min_tokens", F("min_tokens"), R, F("min_tokens")),
    f("stop_token_ids", F("stop_token_ids"), R, F("stop_token_ids")),
    f("bad_words", F("bad_words"), R, F("bad_words")),
    f("allowed_token_ids", F("allowed_token_ids"), R, F("allowed_token_ids")),
    f("include_stop_str_in_output", F("include_stop_str_in_output"), R, F("include_stop_str_in_output")),
    f("truncate_prompt_tokens", F("truncate_prompt_tokens"), R, F("truncate_prompt_tokens")),
    f("truncation_side", F("truncation_side"), R, F("truncation_side")),
    f("add_special_tokens", F("add_special_tokens"), R, F("add_special_tokens")),
    f("structured_outputs", F("structured_outputs"), R, F("structured_outputs")),
    f("thinking_token_budget", F("thinking_token_budget"), R, F("thinking_token_budget")),
    f("repetition_detection", F("repetition_detection"), R, F("repetition_detection")),
    f("return_tokens_as_token_ids", F("return_tokens_as_token_ids"), R, F("return_tokens_as_token_ids")),
    f("watermarking", F("watermarking"), R, F("watermarking")),
    // Scheduling and caching: the backend's.
    f("priority", F("priority"), R, F("priority")),
    f("request_id", F("request_id"), R, F("request_id")),
    f("session_id", F("session_id"), R, F("session_id")),
    f("cache_salt", F("cache_salt"), R, F("cache_salt")),
    f("kv_transfer_params", F("kv_transfer_params"), R, F("kv_transfer_params")),
    f("ec_transfer_params", F("ec_transfer_params"), R, F("ec_transfer_params")),
    f("vllm_xargs", F("vllm_xargs"), R, F("vllm_xargs")),
    // Forwarded where the backend batches; the gateway also holds deltas to it (`drive.rs`).
    f("stream_interval", F("stream_interval"), G, F("stream_interval")),
    // The gateway renders and detokenizes for token backends; a chat backend does both itself.
    f("spaces_between_special_tokens", R, R, F("spaces_between_special_tokens")),
    f("continue_final_message", R, R, F("continue_final_message")),
    f("chat_template", R, R, F("chat_template")),
    f("mm_processor_kwargs", R, R, F("mm_processor_kwargs")),
    f("media_io_kwargs", R, R, F("media_io_kwargs")),
    f("use_beam_search", R, R, F("use_beam_search")),
    f("length_penalty", R, R, F("length_penalty")),
    f("logprob_token_ids", R, R, F("logprob_token_ids")),
    // Answer fields the gateway does not relay.
    f("echo", R, R, R),
    f("prompt_logprobs", R, R, R),
    f("return_prompt_text", R, R, R),
    f("routed_experts_prompt_start", R, R, R),
    f("return_weight_versions", R, R, R),
    // Render endpoints only; vLLM ignores them when generating.
    f("return_token_offsets", G, G, G),
    f("return_mm_kwargs", G, G, G),
    f("mm_payload", G, G, G),
];

impl Field {
    /// The fate on a backend kind.
    pub fn on(&self, kind: BackendKind) -> Fate {
        match kind {
            BackendKind::Llamacpp => self.llamacpp,
            BackendKind::Chat => self.chat,
            BackendKind::Completions | BackendKind::Demo => self.completions,
            BackendKind::Generate => crate::backend::generate::fate(self.name, self.completions),
        }
    }
}

/// The backend kind as the refusals name it.
pub fn kind_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Completions => "completions",
        BackendKind::Llamacpp => "llamacpp",
        BackendKind::Chat => "chat",
        BackendKind::Demo => "demo",
        BackendKind::Generate => "generate",
    }
}

/// A value that asks for nothing (vLLM's defaults of the refused fields).
fn is_default(name: &str, v: &Value) -> bool {
    match name {
        "spaces_between_special_tokens" => return v.is_null() || v == &Value::Bool(true),
        "length_penalty" => return v.is_null() || v.as_f64() == Some(1.0),
        _ => {}
    }
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Bool(true) => false,
    }
}

/// The backend body's extra fields for a checked request whose Chat
/// Completions body is `body` and whose rendered prompt is `prompt`.
pub fn fields(
    model: &Model,
    req: &CheckedRequest,
    body: &Map<String, Value>,
    prompt: Option<&str>,
) -> Result<Map<String, Value>, ApiError> {
    let kind = model.kind;
    let mut out = Map::new();
    for field in FIELDS {
        let Some(v) = body.get(field.name) else { continue };
        match field.on(kind) {
            Fate::Gateway => {}
            Fate::Forward(name) => {
                if !v.is_null() {
                    out.insert(name.to_string(), v.clone());
                }
            }
            Fate::Refuse if is_default(field.name, v) => {}
            Fate::Refuse => {
                return Err(ApiError::bad_request(
                    format!("`{}` is not supported with the `{}` backend", field.name, kind_name(kind)),
                    Some(field.name.to_string()),
                ))
            }
        }
    }
    logprobs(kind, req, &mut out);
    constrain(model, req, body, prompt, &mut out)?;
    Ok(out)
}

/// A chat backend given `tool_choice` `required`/named or a
/// `response_format` (the extra fields `sent`) guides its answer from the
/// first token, with no reasoning before it: the request's prompt is then
/// read as one that closed reasoning (its end marker appended), so the
/// answer is parsed as what follows reasoning.
pub fn settle(model: &Model, req: &mut CheckedRequest, sent: &Map<String, Value>) {
    let guided = sent.get("tool_choice").is_some_and(|t| t != "none" && t != "auto")
        || sent.get("response_format").is_some_and(|r| r.get("type").is_some_and(|t| t != "text"));
    if model.kind != BackendKind::Chat || !guided {
        return;
    }
    if let (Some(p), Some(end)) = (&mut req.prompt, model.factory.format().reasoning_end_marker()) {
        p.push_str(end);
    }
}

fn logprobs(kind: BackendKind, req: &CheckedRequest, out: &mut Map<String, Value>) {
    if !req.logprobs {
        return;
    }
    let top = req.top_logprobs.unwrap_or(0);
    match kind {
        BackendKind::Completions => {
            out.insert("logprobs".into(), json!(top));
        }
        // llama.cpp returns nothing for `n_probs: 0`; the extra alternative is cut off again.
        BackendKind::Llamacpp => {
            out.insert("n_probs".into(), json!(if top < 0 { 20 } else { top.max(1) }));
        }
        BackendKind::Chat => {
            out.insert("logprobs".into(), json!(true));
            out.insert("top_logprobs".into(), json!(top));
        }
        // `sampling_params.logprobs`, as the render endpoint writes it.
        BackendKind::Demo | BackendKind::Generate => {}
    }
}

/// The request's constraint and where it starts (the reasoning end marker).
pub fn constraint(
    model: &Model,
    req: &CheckedRequest,
    body: &Map<String, Value>,
    prompt: Option<&str>,
) -> Result<Option<(Constraint, Option<String>)>, ApiError> {
    let grammar_err =
        |e: llmsift_grammar::GrammarError| ApiError::bad_request(e.message(), e.param().map(str::to_string));
    let rf = response_format_constraint(body.get("response_format")).map_err(grammar_err)?;
    let family = model.parsers.1.as_deref().and_then(Family::from_parser_name);
    let c = match rf {
        Some(c) => Some(c),
        None if model.factory.format().choice_in_own_format() => {
            forced_constraint(req, family, StrictLevel::Auto).map_err(grammar_err)?
        }
        None => request_constraint(req, family, StrictLevel::Auto).map_err(grammar_err)?,
    };
    let Some(c) = c else { return Ok(None) };
    let fmt = model.factory.format();
    let start = grammar_start_scan(
        fmt.reasoning_start_marker(),
        fmt.reasoning_end_marker(),
        prompt.unwrap_or_default(),
        req.include_reasoning,
    );
    Ok(Some((c, start.marker().map(str::to_string))))
}

/// vLLM's `structured_outputs` object for a constraint that starts after
/// `after` (the reasoning end marker) when given.
pub fn structured_outputs(c: &Constraint, after: Option<&str>) -> Value {
    match (c, after) {
        (Constraint::JsonSchema(s), None) => json!({"json": s}),
        (Constraint::JsonObject, None) => json!({"json_object": true}),
        _ => json!({"structural_tag": structural_tag_json(c, after).to_string()}),
    }
}

/// `structured_outputs` for a vLLM worker that is told `reasoning_ended`
/// and runs the reasoning parser itself (the render endpoints'
/// `sampling_params`): the constraint without the reasoning marker, the
/// worker's engine holding it until reasoning ends; a client's own wins.
pub fn render_structured_outputs(
    model: &Model,
    req: &CheckedRequest,
    body: &Map<String, Value>,
) -> Result<Option<Value>, ApiError> {
    if let Some(so) = body.get("structured_outputs").filter(|v| !v.is_null()) {
        return Ok(Some(so.clone()));
    }
    Ok(constraint(model, req, body, None)?.map(|(c, _)| structured_outputs(&c, None)))
}

fn constrain(
    model: &Model,
    req: &CheckedRequest,
    body: &Map<String, Value>,
    prompt: Option<&str>,
    out: &mut Map<String, Value>,
) -> Result<(), ApiError> {
    if model.kind == BackendKind::Chat && model.guided == GuidedFields::Llamacpp {
        if let Some((k, v)) = chat_llamacpp(model, req, body, prompt)? {
            out.insert(k.into(), v);
            return Ok(());
        }
    }
    if model.kind == BackendKind::Chat {
        // The backend's own OpenAI API constrains; its JSON answer is read
        // back as vLLM's (`Options::choice_as_json`).
        // llama.cpp's own guided calls are not asked for: its forced-call
        // grammar lets any text come first, and the answer is read in the
        // family's syntax (see `chat_llamacpp`).
        let choice = match &req.tool_choice {
            _ if model.guided == GuidedFields::Llamacpp => None,
            ToolChoiceMode::Required | ToolChoiceMode::Named(_) => body.get("tool_choice").cloned(),
            _ => None,
        };
        if let Some(tc) = choice {
            out.insert("tool_choice".into(), tc);
        }
        if let Some(rf) = body.get("response_format").filter(|v| !v.is_null()) {
            out.insert("response_format".into(), rf.clone());
        }
        return Ok(());
    }
    if model.kind == BackendKind::Generate {
        // In `sampling_params`, as the render endpoint writes it (`render_structured_outputs`).
        return Ok(());
    }
    let Some((c, after)) = constraint(model, req, body, prompt)? else { return Ok(()) };
    let after = after.as_deref();
    let forced = match (model.kind, after, model.grammar_reasoning_chars) {
        (BackendKind::Llamacpp, Some(end), Some(max)) => {
            let open = model.factory.format().reasoning_start_marker();
            let open = open.filter(|o| !opened(prompt.unwrap_or_default(), o, end));
            llamacpp_grammar_with_reasoning(&c, open, end, max)
        }
        _ => None,
    };
    if let Some(g) = forced {
        out.insert("grammar".into(), json!(g.grammar));
        return Ok(());
    }
    match (model.kind, model.guided) {
        (BackendKind::Llamacpp, _) => match Gbnf::json_schema(&c, after) {
            Some(schema) => {
                out.insert("json_schema".into(), schema);
            }
            None => {
                let g = llamacpp_grammar(&c, after);
                out.insert("grammar".into(), json!(g.grammar));
                if !g.triggers.is_empty() {
                    out.insert("grammar_lazy".into(), json!(true));
                    // 1: llama.cpp's `COMMON_GRAMMAR_TRIGGER_TYPE_WORD`.
                    let t: Vec<Value> = g.triggers.iter().map(|w| json!({"type": 1, "value": w})).collect();
                    out.insert("grammar_triggers".into(), Value::Array(t));
                    // llama.cpp refuses a trigger word that is one token of
                    // the vocabulary unless it is a preserved token
                    // (`tools/server/server-schema.cpp`: "Grammar trigger
                    // word should be marked as preserved token"), as its own
                    // chat handlers mark `</think>` and `<tool_call>`.
                    let mut keep = g.triggers.clone();
                    if let Constraint::Calls { tag, .. } | Constraint::StructuralTag(tag) = &c {
                        keep.extend(tag.special_tokens());
                    }
                    let mut seen = std::collections::HashSet::new();
                    keep.retain(|w| seen.insert(w.clone()));
                    out.insert("preserved_tokens".into(), json!(keep));
                }
            }
        },
        // A client's own `structured_outputs` wins, as in vLLM.
        (_, GuidedFields::Vllm) if out.contains_key("structured_outputs") => {}
        // `llamacpp` names are a `chat` backend's only (`Config::validate`).
        (_, GuidedFields::Vllm | GuidedFields::Llamacpp) => {
            out.insert("structured_outputs".into(), structured_outputs(&c, after));
        }
        (_, GuidedFields::Sglang) => {
            let (k, v) = match (&c, after) {
                (Constraint::JsonSchema(s), None) => ("json_schema", s.to_string()),
                (Constraint::JsonObject, None) => ("json_schema", json!({"type": "object"}).to_string()),
                _ => ("structural_tag", structural_tag_json(&c, after).to_string()),
            };
            out.insert(k.into(), json!(v));
        }
    }
    Ok(())
}

/// The field a `chat` backend that is llama.cpp's server gets Sift's
/// constraint in: `grammar` (reasoning forced with
/// `grammar_reasoning_chars`, or none to wait for) or `json_schema`; `None`
/// when the constraint must wait for the model's own reasoning end marker
/// (a lazy grammar, which llama.cpp's chat endpoint does not take from a
/// client). Nothing else is sent then: the body keeps `tool_choice:
/// "none"` (the template still shows the tools, llama.cpp parses no
/// calls) and no `response_format` (llama.cpp refuses it beside a
/// `grammar`), so the answer is the model's raw text, parsed by Sift.
fn chat_llamacpp(
    model: &Model,
    req: &CheckedRequest,
    body: &Map<String, Value>,
    prompt: Option<&str>,
) -> Result<Option<(&'static str, Value)>, ApiError> {
    let Some((c, after)) = constraint(model, req, body, prompt)? else { return Ok(None) };
    let sent = match (after.as_deref(), model.grammar_reasoning_chars) {
        (Some(end), Some(max)) => {
            let open = model.factory.format().reasoning_start_marker();
            let open = open.filter(|o| !opened(prompt.unwrap_or_default(), o, end));
            llamacpp_grammar_with_reasoning(&c, open, end, max).map(|g| ("grammar", json!(g.grammar)))
        }
        (Some(_), None) => None,
        (None, _) => match Gbnf::json_schema(&c, None) {
            Some(schema) => Some(("json_schema", schema)),
            None => {
                let g = llamacpp_grammar(&c, None);
                g.triggers.is_empty().then(|| ("grammar", json!(g.grammar)))
            }
        },
    };
    Ok(sent)
}

/// Whether `prompt` leaves reasoning open: its last `open` marker comes
/// after its last `end` marker (the template wrote the opener for the model).
fn opened(prompt: &str, open: &str, end: &str) -> bool {
    match (prompt.rfind(open), prompt.rfind(end)) {
        (Some(o), Some(e)) => o > e,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// [`FIELDS`] as the Markdown table of `docs/serve.md` (`gateway`: done by
/// the gateway; a name: sent under that name; `400`: refused).
pub fn markdown_table() -> String {
    let fate = |f: Fate| match f {
        Fate::Gateway => "gateway".to_string(),
        Fate::Forward(n) => format!("`{n}`"),
        Fate::Refuse => "400".to_string(),
    };
    let mut out =
        String::from("| field | `completions` | `llamacpp` | `chat` |\n| --- | --- | --- | --- |\n");
    for f in FIELDS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.name,
            fate(f.completions),
            fate(f.llamacpp),
            fate(f.chat)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table in `docs/serve.md` is this table (each row's behaviour is
    /// checked end to end by `crates/llmsift-cli/tests/gateway_fidelity.rs`).
    #[test]
    fn the_docs_table_is_the_code_table() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/serve.md")).unwrap();
        let table = markdown_table();
        assert!(doc.contains(&table), "docs/serve.md must hold this table:\n{table}");
    }

    #[test]
    fn the_fields_are_vllm_0_34s() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/oracle/vllm-chat-request-fields.json");
        let Ok(text) = std::fs::read_to_string(path) else {
            return; // a packaged crate has no scripts/; the repository's CI has
        };
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert!(doc["vllm"].as_str().unwrap().starts_with("0.34."), "{doc}");
        let mut want: Vec<&str> =
            doc["fields"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        let mut have: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        want.sort_unstable();
        have.sort_unstable();
        assert_eq!(have, want, "FIELDS must list exactly vLLM 0.34's request fields");
    }

    #[test]
    fn every_field_once() {
        let mut names: Vec<_> = FIELDS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len());
    }
}
