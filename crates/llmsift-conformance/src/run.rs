//! Running a case: request reading, chunking, one-shot and streamed parses.

use crate::answer::{delta_json, message_json, Answer};
use crate::case::Case;
use llmsift_core::{Delta, Folder, Message, ParserFactory, Registry, Request, ToolChoice, Tools};
use llmsift_tokenizers::{named_tokenizer_path, MarkerStrip, TokenizerView};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A compiled pair's cache key: reasoning parser, tool parser, tokenizer.
type FactoryKey = (Option<String>, Option<String>, Option<String>);

/// Runs cases, caching compiled pairs and tokenizers.
#[derive(Default)]
pub struct Runner {
    registry: Option<Registry>,
    factories: HashMap<FactoryKey, Result<ParserFactory, String>>,
    tokenizers: HashMap<String, Result<TokenizerView, String>>,
    /// Directory of named tokenizers (overrides the default assets location).
    pub tokenizers_dir: Option<PathBuf>,
}

/// Reads the parsing-relevant part of a case's request.
pub fn read_request(v: &Value) -> (Request, bool) {
    let mut r = Request { id_seed: Some(0x5157), ..Request::default() };
    if let Some(t) = v.get("tools") {
        r.tools = Arc::new(Tools::from_json(t));
    }
    if let Some(tc) = v.get("tool_choice") {
        r.tool_choice = ToolChoice::from_json(tc);
    }
    if let Some(b) = v.get("include_reasoning").and_then(Value::as_bool) {
        r.include_reasoning = b;
    }
    r.chat_template_kwargs = v.get("chat_template_kwargs").cloned().filter(|k| !k.is_null());
    r.prompt = v.get("prompt_text").and_then(Value::as_str).map(str::to_string);
    r.init_kwargs = v.get("parser_init_kwargs").cloned().filter(|k| !k.is_null());
    r.vllm_text_loss = v.get("vllm_text_loss").and_then(Value::as_bool).unwrap_or(false);
    r.vllm_one_shot = v.get("vllm_one_shot").and_then(Value::as_bool).unwrap_or(false);
    r.atomic_calls = v.get("atomic_calls").and_then(Value::as_bool).unwrap_or(false);
    let parallel = v.get("parallel_tool_calls").and_then(Value::as_bool).unwrap_or(true);
    (r, parallel)
}

/// Cuts `text` for streaming: exact chunks, N bytes (at char boundaries) or N chars.
pub fn stream_chunks(text: &str, bytes_per_delta: Option<usize>) -> Vec<&str> {
    let mut out = vec![];
    let mut start = 0;
    let n = bytes_per_delta.unwrap_or(1).max(1);
    let mut i = 0;
    let mut count = 0;
    for (pos, ch) in text.char_indices() {
        let _ = ch;
        if pos > start
            && (bytes_per_delta.is_some() && pos - start >= n || bytes_per_delta.is_none() && count >= n)
        {
            out.push(&text[start..pos]);
            start = pos;
            count = 0;
        }
        count += 1;
        i = pos;
    }
    let _ = i;
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The whole output pushed at once, except that each added token goes in a
/// push of its own, after the text before it: a push's ids belong to its text,
/// so a marker's spelling in ordinary tokens before its real token (inside
/// a value, then the call's real close) is never taken for it. Where the
/// decoded prefix is not a prefix of the text (a decoder that rewrites
/// joins), the rest goes in one push.
fn push_at_added_tokens(
    p: &mut llmsift_core::Parser,
    v: &TokenizerView,
    text: &str,
    ids: &[u32],
    d: &mut Delta,
) {
    let added: std::collections::HashSet<u32> =
        v.inner().get_added_tokens_decoder().keys().copied().collect();
    let (mut at, mut from) = (0usize, 0usize);
    for k in 0..ids.len() {
        if !added.contains(&ids[k]) {
            continue;
        }
        // The text before the token with its ids, then the token alone.
        let (before, upto) = (v.decode(&ids[..k]), v.decode(&ids[..=k]));
        if before.len() < at || upto.len() < before.len() || !text.starts_with(upto.as_str()) {
            break;
        }
        p.push_into(&text[at..before.len()], Some(&ids[from..k]), d);
        p.push_into(&text[before.len()..upto.len()], Some(&ids[k..=k]), d);
        (at, from) = (upto.len(), k + 1);
    }
    p.push_into(&text[at..], Some(&ids[from..]), d);
}

/// Whether the case asks for the serving path's `skip_special_tokens`: its
/// request carries vLLM's field (absent: the parsers are called directly on
/// the text, as vLLM's tests do). The pair's `keep_special_tokens` rules
/// decide, as vLLM's `adjust_request` does.
pub fn skips_special(factory: &ParserFactory, v: &Value) -> bool {
    let Some(requested) = v.get("skip_special_tokens").and_then(Value::as_bool) else { return false };
    let tools = v.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    let choice_none = match v.get("tool_choice") {
        Some(Value::String(s)) => s == "none",
        Some(Value::Null) | None => !tools,
        Some(_) => false,
    };
    factory.format().skips_special_tokens(Some(requested), tools, choice_none)
}

/// Keeps only call index 0 (`parallel_tool_calls: false`).
fn first_call_only(d: &mut Delta) {
    d.tool_calls.retain(|c| c.index == 0);
}

impl Runner {
    /// A runner over the built-in registry.
    pub fn new() -> Runner {
        Runner::default()
    }

    /// A runner over a given registry (built-ins plus loaded format files).
    pub fn with_registry(registry: Registry) -> Runner {
        Runner { registry: Some(registry), ..Runner::default() }
    }

    fn tokenizer(&mut self, name: &str) -> Result<TokenizerView, String> {
        let dir = self.tokenizers_dir.clone();
        self.tokenizers
            .entry(name.to_string())
            .or_insert_with(|| {
                if crate::tokspec::is_spec(name) {
                    return crate::tokspec::load(name, dir.as_deref());
                }
                let path = if name.ends_with(".json") {
                    Some(PathBuf::from(name))
                } else if let Some(d) = &dir {
                    Some(d.join(name).join("tokenizer.json"))
                } else {
                    named_tokenizer_path(name)
                };
                let path = path.ok_or_else(|| format!("unknown tokenizer {name:?}"))?;
                TokenizerView::from_file(&path).map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The compiled (and, with a tokenizer, bound) parser pair of a case.
    pub fn factory(&mut self, case: &Case) -> Result<ParserFactory, (String, String)> {
        let key = (case.reasoning_parser.clone(), case.tool_parser.clone(), case.tokenizer.clone());
        if !self.factories.contains_key(&key) {
            let reg = self.registry.as_ref().unwrap_or_else(|| Registry::builtin());
            let f = reg
                .factory(case.reasoning_parser.as_deref(), case.tool_parser.as_deref())
                .map_err(|e| e.to_string());
            let f = match (f, &case.tokenizer) {
                (Ok(f), Some(t)) => match self.tokenizer(t) {
                    Ok(view) => f.bind(&view).map_err(|e| e.to_string()),
                    Err(e) => Err(e),
                },
                (f, _) => f,
            };
            self.factories.insert(key.clone(), f);
        }
        self.factories[&key].clone().map_err(|e| ("unusable_case".to_string(), e))
    }

    /// Answers one case.
    pub fn answer(&mut self, case: &Case) -> Answer {
        let factory = match self.factory(case) {
            Ok(f) => f,
            Err((kind, msg)) => return Answer::error(&case.id, &kind, msg),
        };
        let (req, parallel) = read_request(&case.request);
        if let Some(Err(e)) = factory.request_template(&req) {
            // A response template Sift cannot express exactly is refused, not approximated.
            return Answer::error(&case.id, "unsupported_response_template", e.to_string());
        }
        let text = &case.model_output;
        let view = match &case.tokenizer {
            Some(t) => match self.tokenizer(t) {
                Ok(v) => Some(v),
                Err(e) => return Answer::error(&case.id, "unusable_case", e),
            },
            None => None,
        };
        let ids = match &view {
            Some(v) => match crate::tokspec::encode_runs(v, text, case.tokenized_as.as_deref()) {
                Ok(ids) => Some(ids),
                Err(e) => return Answer::error(&case.id, "unusable_case", e),
            },
            None => None,
        };
        // vLLM's serving path with special tokens skipped: the text is what
        // the detokenizer gives with them skipped (with a tokenizer), or the
        // text with the case's `special_markers` removed (without one), and
        // the skipped ids never reach the parser, whose markers then match
        // the text that is left.
        let skip = skips_special(&factory, &case.request);
        let strip_list: Vec<String> = match case.request.get("special_markers") {
            Some(Value::Array(a)) if skip => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => vec![],
        };
        let keep_ids = |ids: &[u32]| -> Vec<u32> {
            match &view {
                Some(v) if skip => ids.iter().copied().filter(|&i| !v.is_special(i)).collect(),
                _ => ids.to_vec(),
            }
        };
        let skipped_text;
        let text: &str = match (&view, &ids) {
            (Some(v), Some(ids)) if skip => {
                skipped_text = v.decode_with(ids, true);
                &skipped_text
            }
            _ if !strip_list.is_empty() => {
                let mut m = MarkerStrip::new(strip_list.iter().cloned());
                skipped_text = m.push(text) + &m.finish();
                &skipped_text
            }
            _ => text,
        };
        let one_ids = ids.as_deref().map(keep_ids);

        // One shot.
        let mut d = Delta::default();
        let mut p = factory.parser(&req);
        match (&view, &one_ids) {
            (Some(v), Some(ids)) if !skip => push_at_added_tokens(&mut p, v, text, ids, &mut d),
            _ => p.push_into(text, one_ids.as_deref(), &mut d),
        }
        p.finish_into(&mut d);
        if !parallel {
            first_call_only(&mut d);
        }
        let one_cut = p.cut_call().filter(|&i| parallel || i == 0);
        let mut f = Folder::default();
        f.push(&d);
        let message = f.finish();

        // Streamed.
        let spec = case.stream.clone().unwrap_or_default();
        let mut deltas: Vec<Delta> = vec![];
        let mut p = factory.parser(&req);
        let mut feed = |p: &mut llmsift_core::Parser, t: &str, ids: Option<&[u32]>| {
            let mut d = p.push(t, ids);
            if !parallel {
                first_call_only(&mut d);
            }
            if !d.is_empty() {
                deltas.push(d);
            }
        };
        // Text-only chunks pass through the case's marker stripper (a no-op
        // without `special_markers`); a case's exact chunks are the raw output.
        let mut strip = MarkerStrip::new(strip_list.iter().cloned());
        let raw = &case.model_output;
        match (&spec.chunks, spec.unit.as_deref(), &view, &ids) {
            (Some(chunks), _, _, _) => {
                for c in chunks {
                    let c = strip.push(c);
                    feed(&mut p, &c, None);
                }
            }
            (None, Some("bytes"), _, _) => {
                for c in stream_chunks(raw, Some(spec.size.unwrap_or(1))) {
                    let c = strip.push(c);
                    feed(&mut p, &c, None);
                }
            }
            (None, _, Some(v), Some(ids)) => {
                let n = spec.size.unwrap_or(1).max(1);
                let mut det = v.detokenizer_with(skip);
                for group in ids.chunks(n) {
                    let t = det.push_ids(group);
                    feed(&mut p, &t, Some(&keep_ids(group)));
                }
                let rest = det.finish();
                feed(&mut p, &rest, Some(&[]));
            }
            _ => {
                for c in stream_chunks(raw, None) {
                    let c = strip.push(c);
                    feed(&mut p, &c, None);
                }
            }
        }
        let rest = strip.finish();
        feed(&mut p, &rest, None);
        let mut last = p.finish();
        if !parallel {
            first_call_only(&mut last);
        }
        let stream_cut = p.cut_call().filter(|&i| parallel || i == 0);
        if !last.is_empty() {
            deltas.push(last);
        }
        let mut f = Folder::default();
        for d in &deltas {
            f.push(d);
        }
        let streamed: Message = f.finish();
        // A call the output's end cut, left as written, is no call to run:
        // the finish is `length` (the protocol layer's rule, issue 23).
        let finish = |m: &Message, cut: Option<usize>| {
            if cut.is_some() {
                "length"
            } else if m.tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
        };
        Answer {
            id: case.id.clone(),
            finish_reason: json!(finish(&message, one_cut)),
            stream: json!({
                "deltas": deltas.iter().map(delta_json).collect::<Vec<_>>(),
                "message": message_json(&streamed),
                "finish_reason": finish(&streamed, stream_cut),
            }),
            message: message_json(&message),
            error: Value::Null,
        }
    }
}
