//! Adversarial outputs (issue 12, point 3): each parses to a defined answer
//! without a panic, the same streamed (in several cuts) and one-shot, and
//! each limit gives the answer `docs/limits.md` documents.
//!
//! The large inputs are generated lazily and fed in chunks. Their default
//! sizes keep a debug run to seconds while still passing every limit;
//! `SIFT_ADVERSARIAL_FULL=1` runs the issue's sizes (100 MB, 50 MB; use
//! `--release`).

use llmsift_core::json::JsonScanner;
use llmsift_core::{Delta, Exceeded, Folder, Limits, Message, ParserFactory, Registry, Request, Tools};
use std::sync::Arc;

fn full() -> bool {
    std::env::var_os("SIFT_ADVERSARIAL_FULL").is_some()
}

fn factory(r: Option<&str>, t: Option<&str>) -> ParserFactory {
    Registry::builtin().factory(r, t).expect("built-in pair")
}

fn tools(names: &[&str]) -> Request {
    let t: Vec<_> = names
        .iter()
        .map(|n| serde_json::json!({"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "x": {"type": "string"}}}}}))
        .collect();
    Request {
        tools: Arc::new(Tools::from_json(&serde_json::Value::Array(t))),
        id_seed: Some(7),
        ..Request::default()
    }
}

/// The answer and the limits hit, for one way of cutting `text`.
fn run(
    f: &ParserFactory,
    req: &Request,
    limits: Limits,
    chunks: &mut dyn Iterator<Item = &str>,
) -> (Message, Vec<Exceeded>) {
    let mut p = f.parser(req).with_limits(limits);
    let (mut fold, mut d) = (Folder::default(), Delta::default());
    for c in chunks {
        d.clear();
        p.push_into(c, None, &mut d);
        fold.push(&d);
        assert!(p.held_bytes() < llmsift_core::MAX_HELD_BYTES);
    }
    d.clear();
    p.finish_into(&mut d);
    fold.push(&d);
    (fold.finish(), p.exceeded().to_vec())
}

/// Cuts `s` into pieces of `n` bytes (on char boundaries).
fn cuts(s: &str, n: usize) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= s.len() {
            return None;
        }
        let mut end = (at + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        let piece = &s[at..end];
        at = end;
        Some(piece)
    })
}

/// One-shot, then streamed in cuts of 1 (short texts), 7, 4093 and 1 MiB
/// bytes: every answer is the same; every call has a name and JSON-object
/// arguments. Returns the one-shot answer.
fn check(f: &ParserFactory, req: &Request, limits: Limits, text: &str) -> (Message, Vec<Exceeded>) {
    let one = run(f, req, limits, &mut std::iter::once(text));
    let mut sizes = vec![7, 4093, 1 << 20];
    if text.len() < 4096 {
        sizes.push(1);
    }
    for n in sizes {
        let streamed = run(f, req, limits, &mut cuts(text, n));
        assert!(streamed == one, "cut {n}: streamed differs from one-shot");
    }
    for c in &one.0.tool_calls {
        assert!(!c.name.is_empty(), "a call without a name");
        let mut s = JsonScanner::new();
        s.feed(c.arguments.as_bytes());
        assert!(
            s.is_complete() && c.arguments.starts_with('{'),
            "arguments not a JSON object: {:.200}",
            c.arguments
        );
    }
    one
}

#[test]
fn marker_prefixes_for_100_mb_hold_fewer_bytes_than_a_marker() {
    let f = factory(Some("qwen3"), Some("hermes"));
    let mb = if full() { 100 } else { 8 };
    let unit = "<tool_".repeat(1 << 10);
    let n = mb * (1 << 20) / unit.len();
    let mut p = f.parser(&tools(&["f"]));
    let (mut d, mut reasoning, mut held) = (Delta::default(), 0usize, 0usize);
    for chunk in std::iter::once("<think>").chain(std::iter::repeat_n(unit.as_str(), n)) {
        // Marker prefixes cut everywhere: 7-byte pieces of each chunk.
        for piece in cuts(chunk, 7) {
            d.clear();
            p.push_into(piece, None, &mut d);
            assert!(d.content.is_empty() && d.tool_calls.is_empty());
            reasoning += d.reasoning.len();
            held = held.max(p.held_bytes());
        }
    }
    d.clear();
    p.finish_into(&mut d);
    reasoning += d.reasoning.len();
    assert_eq!(reasoning, n * unit.len(), "every byte is reasoning");
    assert!(held < "<tool_call>".len(), "held {held} bytes");
    assert!(p.exceeded().is_empty());
}

#[test]
fn a_call_10000_levels_deep_is_cut_at_the_depth_limit() {
    let f = factory(None, Some("hermes"));
    let nest = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
    let text = format!(
        "<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"x\": {}}}}}\n</tool_call>after",
        nest(10_000)
    );
    let (m, hits) = check(&f, &tools(&["f"]), Limits::default(), &text);
    // The arguments object is level 1: the value keeps 127 levels, closed.
    assert_eq!(hits, [Exceeded::Depth { index: 0, limit: 128 }]);
    assert_eq!(m.tool_calls[0].arguments, format!("{{\"x\": {}}}", nest(127)));
    assert_eq!(m.content.as_deref(), Some("after"));
}

#[test]
fn a_call_deeper_than_the_depth_limit_is_cut_and_closed() {
    let f = factory(None, Some("hermes"));
    let nest = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
    let text = format!(
        "<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"a\": 1, \"x\": {}}}}}\n</tool_call>",
        nest(20)
    );
    let limits = Limits { max_depth: 8, ..Limits::default() };
    let (m, hits) = check(&f, &tools(&["f"]), limits, &text);
    assert_eq!(hits, [Exceeded::Depth { index: 0, limit: 8 }]);
    assert_eq!(m.tool_calls[0].arguments, format!("{{\"a\": 1, \"x\": {}}}", nest(7)));
    // Within the limit, nothing changes.
    let ok = format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"x\": {}}}}}\n</tool_call>", nest(7));
    let (m, hits) = check(&f, &tools(&["f"]), limits, &ok);
    assert!(hits.is_empty());
    assert_eq!(m.tool_calls[0].arguments, format!("{{\"x\": {}}}", nest(7)));
}

#[test]
fn a_50_mb_argument_is_cut_at_the_limit_and_closed() {
    let f = factory(None, Some("hermes"));
    let mb = if full() { 50 } else { 10 };
    let big = "abcdefé日\\n".repeat(mb * (1 << 20) / 13);
    let text =
        format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"code\": \"{big}\"}}}}\n</tool_call>tail");
    let (m, hits) = check(&f, &tools(&["f"]), Limits::default(), &text);
    let limit = Limits::default().max_argument_bytes;
    assert_eq!(hits, [Exceeded::ArgumentBytes { index: 0, limit }]);
    let args = &m.tool_calls[0].arguments;
    // The first `limit` bytes (on a whole character and escape), closed: `"}`.
    assert!(args.len() <= limit + 2 && args.len() > limit - 8, "{}", args.len());
    assert!(args.ends_with("\"}") && big.starts_with(&args[10..args.len() - 2]));
    assert_eq!(m.content.as_deref(), Some("tail"));
    // Without the limit, the whole argument is the call's.
    let (m, hits) = check(&f, &tools(&["f"]), Limits::unlimited(), &text);
    assert!(hits.is_empty());
    assert_eq!(m.tool_calls[0].arguments.len(), big.len() + 12);
}

#[test]
fn a_small_argument_limit_cuts_between_members() {
    let f = factory(None, Some("hermes"));
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": [true, null], \"c\": \"xyz\"}}\n</tool_call>";
    let limits = Limits { max_argument_bytes: 24, ..Limits::default() };
    let (m, hits) = check(&f, &tools(&["f"]), limits, text);
    assert_eq!(hits, [Exceeded::ArgumentBytes { index: 0, limit: 24 }]);
    // `{"a": 1, "b": [true, nu` is the first 24 bytes; `nu` completes to `null`.
    assert_eq!(m.tool_calls[0].arguments, "{\"a\": 1, \"b\": [true, null]}");
}

#[test]
fn calls_past_the_limit_are_dropped() {
    let f = factory(None, Some("hermes"));
    let call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"1\"}}\n</tool_call>\n";
    let text = call.repeat(1030);
    let (m, hits) = check(&f, &tools(&["f"]), Limits::default(), &text);
    assert_eq!(m.tool_calls.len(), 1024);
    assert_eq!(hits, [Exceeded::Calls { limit: 1024 }]);
    let (m, hits) = check(&f, &tools(&["f"]), Limits { max_calls: 2, ..Limits::default() }, &call.repeat(3));
    assert_eq!((m.tool_calls.len(), hits), (2, vec![Exceeded::Calls { limit: 2 }]));
}

#[test]
fn nul_bytes_are_kept() {
    let f = factory(Some("qwen3"), Some("qwen3_coder"));
    let text = "<think>a\0b</think>c\0d<tool_call>\n<function=f>\n<parameter=code>\0x\0\n</parameter>\n</function>\n</tool_call>";
    let (m, _) = check(&f, &tools(&["f"]), Limits::default(), text);
    assert_eq!(m.reasoning.as_deref(), Some("a\0b"));
    assert_eq!(m.content.as_deref(), Some("c\0d"));
    assert_eq!(m.tool_calls[0].arguments, "{\"code\": \"\\u0000x\\u0000\"}");
}

#[test]
fn a_lone_surrogate_escape_is_kept_verbatim() {
    let f = factory(None, Some("hermes"));
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"\\ud800 and \\udfff\\ud800\"}}\n</tool_call>";
    let (m, _) = check(&f, &tools(&["f"]), Limits::default(), text);
    // Python's json reads lone surrogates; the escape text passes through.
    assert_eq!(m.tool_calls[0].arguments, "{\"x\": \"\\ud800 and \\udfff\\ud800\"}");
}

#[test]
fn a_marker_inside_a_json_string_is_text() {
    let f = factory(None, Some("hermes"));
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"a </tool_call> b <tool_call> c\"}}\n</tool_call>";
    let (m, _) = check(&f, &tools(&["f"]), Limits::default(), text);
    // Hermes reads markers inside an open JSON string as the string's text
    // (`markers_in_strings = "text"`): the call is whole. vLLM's non-greedy
    // regex fails the call and answers it as content (docs/deviations.md).
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].arguments, "{\"x\": \"a </tool_call> b <tool_call> c\"}");
    assert_eq!(m.content, None);
}

#[test]
fn a_closing_marker_inside_an_argument_value() {
    let f = factory(None, Some("qwen3_coder"));
    let code = "if s == \"</parameter>\":\n    print(\"</tool_call>\")";
    let text = format!(
        "<tool_call>\n<function=f>\n<parameter=code>\n{code}\n</parameter>\n</function>\n</tool_call>"
    );
    let (m, _) = check(&f, &tools(&["f"]), Limits::default(), &text);
    // A closer followed by text is the value's text (`markers_in_values =
    // "follow"`, issue 23): the value is whole and no call is nameless.
    // vLLM's qwen3_coder ends the value at the first `</parameter>`.
    assert_eq!(m.tool_calls.len(), 1, "{m:?}");
    assert_eq!(m.tool_calls[0].name, "f");
    let args: serde_json::Value = serde_json::from_str(&m.tool_calls[0].arguments).unwrap();
    assert_eq!(args, serde_json::json!({ "code": code }), "{m:?}");
    assert_eq!(m.content, None);
}

#[test]
fn several_think_blocks() {
    let f = factory(Some("qwen3"), Some("hermes"));
    let text = "<think>a</think>b<think>c</think>d";
    let (m, _) = check(&f, &tools(&["f"]), Limits::default(), text);
    assert_eq!(m.reasoning.as_deref(), Some("a"));
    // As vLLM's qwen3: a second `<think>` is content, a repeated `</think>` is absorbed.
    assert_eq!(m.content.as_deref(), Some("b<think>cd"));
}

#[test]
fn a_call_to_a_tool_not_in_tools() {
    let f = factory(None, Some("hermes"));
    let text = "<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>";
    let (m, _) = check(&f, &tools(&["f"]), Limits::default(), text);
    // vLLM's hermes parser does not check names against `tools`: a call.
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.tool_calls[0].name, "nope");
}

// Regressions found by `fuzz/` (docs/fuzzing.md), minimised.

#[test]
fn fuzz_named_choice_with_a_leading_bracket_is_content() {
    // pairs: `- pythonic` with `tool_choice` named; `[A` made the arguments `[]`.
    // Arguments are a JSON object: output that is not one is content, whole.
    let f = factory(None, Some("pythonic"));
    let req = Request { tool_choice: llmsift_core::ToolChoice::Named("f".into()), ..tools(&["f"]) };
    for text in ["[A(A=\t)", "hello world[A(A=,\t", "[1, 2]", "[{\"a\": 1}]"] {
        let (m, _) = check(&f, &req, Limits::default(), text);
        assert!(m.tool_calls.is_empty(), "{text:?}");
        assert_eq!(m.content.as_deref(), Some(text));
    }
}

#[test]
fn fuzz_a_runaway_header_reads_the_next_marker_as_content_however_cut() {
    // pairs: `beam beam`, thinking off: an unframed header past 1024 bytes
    // turned content, but one-shot still applied the header's `<|message|>`.
    let f = factory(Some("beam"), Some("beam"));
    let req =
        Request { chat_template_kwargs: Some(serde_json::json!({"enable_thinking": false})), ..tools(&[]) };
    let text = format!("{}<|message|>x", "h".repeat(1030));
    let (m, _) = check(&f, &req, Limits::default(), &text);
    assert_eq!(m.content.as_deref(), Some(text.as_str()));
    // Two-byte characters across the limit: the same answer however cut.
    check(&f, &req, Limits::default(), &format!("{}<|message|>x<|end|>", "é".repeat(600)));
    // A marker of the content state after the 1,024th byte is read there,
    // however cut (fuzz: cut inside the header, one-shot kept `<|return|>`).
    check(&f, &req, Limits::default(), &format!("{}Done.<|return|>", "é".repeat(530)));
}

/// Every byte and depth limit, under cuts of 1 to 5 bytes: the same answer
/// as one shot (the held bytes above the watermark move with the cut, the
/// answer must not), and arguments stay a JSON object.
#[test]
fn every_limit_gives_the_same_answer_under_every_cut() {
    let f = factory(None, Some("hermes"));
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, {\"b\": \"x\\\"}\"}], \"c\": {\"d\": [[]]}, \"e\": -1.5e3}}\n</tool_call>";
    for bytes in 1..64 {
        for depth in 1..5 {
            let limits = Limits { max_argument_bytes: bytes, max_depth: depth, ..Limits::default() };
            let one = check(&f, &tools(&["f"]), limits, text);
            for n in 2..=5 {
                let streamed = run(&f, &tools(&["f"]), limits, &mut cuts(text, n));
                assert!(streamed == one, "bytes {bytes}, depth {depth}, cut {n}: streamed differs");
            }
        }
    }
}

/// What the limits' definition gives for arguments `a` (`docs/limits.md`):
/// the first bytes that fit the byte limit, or everything before the first
/// bracket that nests deeper than the depth limit, cut back to the JSON
/// watermark and repaired; `a` itself when nothing is passed.
fn cut_by_definition(a: &str, bytes: usize, depth: usize) -> String {
    let mut end = a.len().min(bytes);
    while !a.is_char_boundary(end) {
        end -= 1;
    }
    let mut s = JsonScanner::new();
    for (i, b) in a.as_bytes()[..end].iter().enumerate() {
        s.feed(&[*b]);
        if s.depth() > depth {
            end = i;
            break;
        }
    }
    if end == a.len() {
        return a.to_string();
    }
    let mut s = JsonScanner::new();
    s.feed(&a.as_bytes()[..end]);
    format!("{}{}", &a[..s.safe()], s.repair().unwrap_or_else(|| "{}".into()))
}

/// Long raw-JSON arguments (past the 4 KiB within which the limits start
/// holding bytes), limits on both sides of that margin and of the end:
/// every cut gives the call the definition says. The limits layer takes the
/// argument writer's scan when a fragment is far from every limit and scans
/// itself near one; both must give this answer, however the deltas fall.
#[test]
fn limits_on_long_arguments_cut_where_the_definition_says_however_cut() {
    let f = factory(None, Some("hermes"));
    let body: String = (0..700).map(|i| format!(r#"l{i} \"q\" \\ \u00e9 "#)).collect();
    let args = format!(
        r#"{{"a": "{body}", "b": [[[1, {{"c": [2, "{body}"]}}]]], "d": {{"e": [[["{body}"]]]}}, "f": -1.5e3}}"#
    );
    let text = format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {args}}}\n</tool_call>");
    let mut byte_limits: Vec<usize> = (0..args.len() + 64).step_by(1499).collect();
    byte_limits.extend([4095, 4096, 4097, 8191, args.len() - 1, args.len(), args.len() + 4096, usize::MAX]);
    for bytes in byte_limits {
        for depth in [2, 3, 4, 5, 128] {
            let limits = Limits { max_argument_bytes: bytes, max_depth: depth, ..Limits::default() };
            let want = cut_by_definition(&args, bytes, depth);
            for n in [3, 7, 64, 4093, usize::MAX] {
                let (m, _) = run(&f, &tools(&["f"]), limits, &mut cuts(&text, n.min(text.len())));
                assert!(m.tool_calls[0].arguments == want, "bytes {bytes}, depth {depth}, cut {n}");
            }
        }
    }
}

/// Fuzz (`pairs`, minimax_m3 + gemma4): a bare `049` in a Gemma call body
/// went out as a JSON number with a leading zero, so the arguments were not
/// JSON. A bare value that is not a JSON literal is a string.
#[test]
fn fuzz_a_bare_number_with_a_leading_zero_is_a_string() {
    let f = factory(Some("minimax_m3"), Some("gemma4"));
    let text = "<|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>,min_stars:049,days:+1}<tool_call|>";
    let (m, _) = check(&f, &tools(&["get_weather"]), Limits::default(), text);
    assert_eq!(m.tool_calls[0].arguments, r#"{"city": "Oslo", "min_stars": "049", "days": "+1"}"#);
}

/// Fuzz (`pairs`): a marker inside a harmony-style header that had just
/// reached its 1,024-byte cap added a separating space past the cap; the
/// next text then computed the room left as a negative number (a panic in
/// debug builds, an endless loop in release). Every header length around
/// the cap, with a marker after it, in every format with header states.
#[test]
fn fuzz_a_marker_after_a_full_header_neither_panics_nor_spins() {
    for (r, t) in
        [(Some("openai_gptoss"), Some("openai")), (Some("beam"), Some("beam")), (None, Some("openai"))]
    {
        let f = factory(r, t);
        for pre in ["<|channel|>commentary to=", "<|start|>assistant to=", "<|channel|>analysis "] {
            for n in 995..1030 {
                let text =
                    format!("{pre}{}<|channel|>xyz<|constrain|>json<|message|>{{}}<|call|>", "a".repeat(n));
                check(&f, &tools(&["f"]), Limits::default(), &text);
            }
        }
    }
}

/// Fuzz (`format_file`): a marker read again in the next state
/// (`reprocess`), where that state has a longer spelling starting with it,
/// was taken as text when a cut fell inside the longer spelling, and as the
/// longer marker in one shot. It is now held like any marker prefix.
#[test]
fn fuzz_a_reprocessed_marker_waits_for_a_longer_spelling_however_cut() {
    let toml = r#"
name = "fz_reprocess"
kind = "tools"
entry = "start"

[terminals]
open = ["<think>"]
whole = ["<think>a</think>"]

[states.start]
text = "content"
on.open = { to = "think", reprocess = true }

[states.think]
text = "drop"
on.whole = { to = "after", keep = true }

[states.after]
text = "content"
"#;
    let spec = llmsift_core::FormatSpec::from_toml(toml).expect("format");
    let f = ParserFactory::new(None, Some(&spec)).expect("factory");
    for text in ["<think>a</think>b", "x<think>a</think>b<think>", "<think>ab</think>c", "<think>a</thi"] {
        check(&f, &Request::default(), Limits::default(), text);
    }
    let (m, _) = check(&f, &Request::default(), Limits::default(), "<think>a</think>b");
    // The whole marker goes to the dropping state (`keep`); the text after it is content.
    assert_eq!(m.content.as_deref(), Some("b"));
}

/// Fuzz (`format_file`, an LFM2-style pythonic format): in a committed
/// call, a dict key the pythonic kernel refuses (`""f""` ends in an
/// f-string, which vLLM does not take as a key) left a half-decided dict,
/// and the call's arguments came out as `{…, "d": {: null}}`, not JSON.
/// A refused char now changes no state: the call ends with what was read,
/// completed into a JSON object.
#[test]
fn fuzz_a_refused_dict_key_leaves_object_arguments() {
    let f = factory(None, Some("pythonic"));
    for (text, args) in [
        (r#"[f(a=2),g(t="",d={""f"":1})]"#, r#"{"t": "", "d": [""]}"#),
        (r#"[f(a=2),g(t="",d={"a": 1, "b" f"c": 2})]"#, r#"{"t": "", "d": {"a": 1, "bc": null}}"#),
        (r#"[f(a=2),g(t="",d={"a": 1, -1: 2})]"#, r#"{"t": "", "d": {"a": 1, "-1": null}}"#),
    ] {
        let (m, _) = check(&f, &tools(&["f", "g"]), Limits::default(), text);
        assert_eq!(m.tool_calls[1].arguments, args, "{text}");
    }
}

/// Streams `pieces`, checking after every delta that each call's arguments
/// so far are a prefix of `one`'s final ones (the watermark contract the
/// `pairs` fuzz target checks), and returns the folded answer.
fn streamed_as_prefixes(f: &ParserFactory, req: &Request, pieces: &[&str], one: &Message) -> Message {
    let mut p = f.parser(req);
    let (mut fold, mut d) = (Folder::default(), Delta::default());
    let mut args: Vec<String> = vec![];
    for (i, s) in pieces.iter().map(Some).chain([None]).enumerate() {
        d.clear();
        match s {
            Some(s) => p.push_into(s, None, &mut d),
            None => p.finish_into(&mut d),
        }
        fold.push(&d);
        for c in &d.tool_calls {
            if args.len() <= c.index {
                args.resize(c.index + 1, String::new());
            }
            args[c.index].push_str(&c.arguments);
            let fin = one.tool_calls.get(c.index).map_or("", |c| c.arguments.as_str());
            assert!(
                fin.starts_with(&args[c.index]),
                "after delta {i} of {pieces:?}: streamed {:?}, final {fin:?}",
                args[c.index]
            );
        }
    }
    fold.finish()
}

/// Fuzz (`pairs`, `granite_toolcall_parser`; was
/// `fuzz/open/pairs-streamed-args-not-prefix`): a parameter value starting
/// `\n\n<too…`, cut after its first newline, lost its second newline too in
/// the stream (the buffer was empty again after the wrapping newline was
/// dropped, and the next newline was taken for it), so the streamed
/// `"<too` was not a prefix of the final `"\n<too…`. Every format with
/// XML-style parameters, values with leading and trailing newlines, white
/// space, `null` and markup, cut at every byte and at every pair of bytes
/// around the value: streamed arguments stay a prefix of the final ones and
/// the answer equals one shot.
#[test]
fn fuzz_a_held_wrapping_newline_is_never_overtaken_however_cut() {
    // `KEY` and `VAL`: the parameter's name and value; a second parameter follows.
    let q = "<tool_call>\n<function=get_weather>\n<parameter=KEY>\nVAL\n</parameter>\n<parameter=code>\nb\n</parameter>\n</function>\n</tool_call>";
    let dsml = |calls: &str, p: &str| {
        format!(
            "<｜DSML｜{calls}>\n<｜DSML｜{p}invoke name=\"get_weather\">\n<｜DSML｜{p}parameter name=\"KEY\" string=\"true\">VAL</｜DSML｜{p}parameter>\n<｜DSML｜{p}parameter name=\"code\" string=\"true\">b</｜DSML｜{p}parameter>\n</｜DSML｜{p}invoke>\n</｜DSML｜{calls}>"
        )
    };
    let kv = |open: &str, close: &str, sep: &str| {
        format!("{open}get_weather{sep}\n<arg_key>KEY</arg_key>\n<arg_value>VAL</arg_value>\n<arg_key>code</arg_key>\n<arg_value>b</arg_value>\n{close}")
    };
    let formats: Vec<(&str, String)> = vec![
        ("granite_toolcall_parser", q.into()),
        ("qwen3_coder", q.into()),
        ("step3p5", q.into()),
        ("mimo", q.into()),
        ("seed_oss", q.replace("tool_call>", "seed:tool_call>")),
        ("zaya", q.replace("tool_call>", "zyphra_tool_call>")),
        ("deepseek_v32", dsml("function_calls", "")),
        ("deepseek_v41", dsml(" calls", " ")),
        ("glm45", kv("<tool_call>", "</tool_call>", "")),
        ("poolside_v1", kv("<tool_call>", "</tool_call>", "")),
        ("hy_v3", kv("<tool_calls><tool_call>", "</tool_call></tool_calls>", "<tool_sep>")),
        ("hy_v4", kv("<tool_calls><tool_call>", "</tool_call></tool_calls>", "")),
        ("k2_horizon", kv("<ifm|tool_calls>\n<ifm|tool_call>", "</ifm|tool_call>\n</ifm|tool_calls>", "")
            .replace("<arg_", "<ifm|arg_")
            .replace("</arg_", "</ifm|arg_")),
        ("minimax_m2", "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"KEY\">VAL</parameter>\n<parameter name=\"code\">b</parameter>\n</invoke>\n</minimax:tool_call>".into()),
        ("minicpm5", "<function name=\"get_weather\"><param name=\"KEY\">VAL</param><param name=\"code\">b</param></function>".into()),
        ("step3", "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"KEY\">VAL</steptml:parameter><steptml:parameter name=\"code\">b</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>".into()),
        ("kimi_k3", "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"KEY\" type=\"string\"<|sep|>VAL<|close|>argument<|sep|><|open|>argument key=\"code\" type=\"string\"<|sep|>b<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>".into()),
    ];
    let values = [
        "\n\n<tool_call><function=get_weather>",
        "\n\nx",
        "\n\n",
        "\n",
        "\n\n\n",
        "\nnull",
        "\n\nnull",
        "null\n\n",
        "\nnull\n",
        "a\n\n",
        " \n x \n ",
        "\r\n\r\nz\r\n",
        "<![CDATA[\n\nq]]>\n\n",
    ];
    let req = tools(&["get_weather"]);
    for (tool, template) in &formats {
        let f = factory(None, Some(tool));
        // The template is a call in its format (not content).
        let plain = template.replacen("KEY", "x", 1).replacen("VAL", "v", 1);
        assert_eq!(f.parse(&req, &plain, None).tool_calls.len(), 1, "{tool}: {plain:?}");
        for key in ["x", "n"] {
            for v in values {
                let text = template.replacen("KEY", key, 1).replacen("VAL", v, 1);
                let one = f.parse(&req, &text, None);
                let at = text.find(v).expect("value in text");
                let near: Vec<usize> = (at.saturating_sub(4)..=(at + v.len() + 4).min(text.len()))
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                let every: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
                let check = |cuts: &[usize]| {
                    let mut pieces = vec![];
                    let mut from = 0;
                    for &c in cuts.iter().chain([&text.len()]) {
                        pieces.push(&text[from..c]);
                        from = c;
                    }
                    let m = streamed_as_prefixes(&f, &req, &pieces, &one);
                    assert!(m == one, "{tool}: {pieces:?}: streamed differs from one-shot");
                };
                for &i in &every {
                    check(&[i]);
                }
                for (n, &i) in near.iter().enumerate() {
                    for &j in &near[n..] {
                        check(&[i, j]);
                    }
                }
                check(&every[1..]);
            }
        }
    }
}
