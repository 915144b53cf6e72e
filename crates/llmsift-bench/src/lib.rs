//! Workload generators for Sift's benchmarks (`benches/workloads.rs`).
//!
//! Every generator is deterministic (a fixed-seed SplitMix64), so a run of
//! the benchmarks always parses the same bytes and the tests below can check
//! what each workload must parse to.
//!
//! - **W1** ([`w1`]): Qwen3 reasoning output with no tools: a `<think>` block
//!   of about 8,000 tokens of English prose (a token ≈ 4 bytes), `</think>`,
//!   then about 500 tokens of content, streamed in 4-byte deltas.
//! - **W2** ([`w2_hermes`], [`w2_qwen3_coder`]): one tool call whose `content`
//!   argument is a 4,000-character code-like string (quotes, backslashes,
//!   newlines, `<` and `>`), in the Hermes JSON form and in the Qwen3-Coder
//!   XML form, streamed in ~4-byte deltas.
//! - **W3**: the W1 text parsed one-shot (throughput).
//!
//! The side-by-side benchmark against other parsers (`crates/llmsift-peers`)
//! cuts the same texts three more ways: one token per delta with each marker
//! a whole token ([`split_tokens`], its W1), blindly every 4 bytes so that
//! `</think>` straddles two deltas ([`split_deltas`], its W1b), and several
//! tokens per delta ([`group`], its W4).
//!
//! Each generator takes a `scale` (1, 2, 4 in the benchmarks) that multiplies
//! the length of the generated text.

use llmsift_core::{Registry, Request, Tools};
use serde_json::{json, Value};
use std::sync::Arc;

/// Bytes per "token" used to size the workloads.
pub const BYTES_PER_TOKEN: usize = 4;
/// W1 reasoning length at scale 1, in tokens.
pub const W1_REASONING_TOKENS: usize = 8_000;
/// W1 content length at scale 1, in tokens.
pub const W1_CONTENT_TOKENS: usize = 500;
/// W2 string argument length at scale 1, in characters (ASCII, so bytes).
pub const W2_ARG_CHARS: usize = 4_000;
/// Delta size used by the streaming benchmarks, in bytes.
pub const DELTA_BYTES: usize = 4;
/// The function called in W2.
pub const W2_FUNCTION: &str = "write_file";
/// The `path` argument of the W2 call.
pub const W2_PATH: &str = "src/engine/lexer.rs";
/// Call id seed used by [`request`] (deterministic ids, no clock read).
pub const ID_SEED: u64 = 0x5eed;

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with a fixed seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Words the prose is made of: the vocabulary of a model thinking about code,
/// with a few non-ASCII words so that delta cuts must respect char boundaries.
const WORDS: &[&str] = &[
    "the",
    "the",
    "the",
    "a",
    "a",
    "of",
    "of",
    "to",
    "to",
    "and",
    "and",
    "is",
    "is",
    "in",
    "that",
    "it",
    "for",
    "this",
    "we",
    "I",
    "need",
    "should",
    "can",
    "will",
    "would",
    "be",
    "not",
    "but",
    "so",
    "if",
    "then",
    "when",
    "which",
    "with",
    "on",
    "as",
    "at",
    "from",
    "by",
    "user",
    "wants",
    "function",
    "value",
    "list",
    "string",
    "number",
    "file",
    "returns",
    "call",
    "check",
    "first",
    "next",
    "case",
    "edge",
    "empty",
    "input",
    "output",
    "loop",
    "index",
    "each",
    "element",
    "result",
    "error",
    "handle",
    "maybe",
    "actually",
    "wait",
    "let",
    "me",
    "think",
    "about",
    "consider",
    "approach",
    "simpler",
    "better",
    "answer",
    "question",
    "example",
    "test",
    "because",
    "since",
    "however",
    "therefore",
    "also",
    "only",
    "all",
    "some",
    "any",
    "other",
    "same",
    "different",
    "order",
    "sorted",
    "count",
    "length",
    "total",
    "sum",
    "twice",
    "again",
    "step",
    "problem",
    "solution",
    "memory",
    "time",
    "complexity",
    "linear",
    "quadratic",
    "naïve",
    "café",
    "résumé",
    "über",
    "déjà",
    "vu",
    "—",
    "weather",
    "Tokyo",
    "Paris",
    "temperature",
    "celsius",
    "request",
    "response",
    "parser",
    "stream",
    "token",
    "delta",
    "buffer",
    "marker",
];

/// Sentence endings and in-sentence punctuation (no `<` anywhere).
const ENDS: &[&str] = &[".", ".", ".", "?", "!", ":"];
const MIDS: &[&str] = &[",", ",", ";", " —", " (maybe)", " -", ":"];

/// Deterministic English-like prose of exactly `len` bytes (or `len` rounded
/// down to a char boundary when a multi-byte word would straddle it; the
/// result never exceeds `len`). Sentences start with a capital, carry some
/// punctuation, and paragraphs are separated by newlines. Contains no `<`.
pub fn prose(len: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::with_capacity(len + 32);
    let mut sentence_words = 0;
    let mut sentence_len = 6 + rng.below(14);
    let mut sentences_in_par = 0;
    let mut par_len = 2 + rng.below(5);
    while s.len() < len {
        let w = *rng.pick(WORDS);
        if sentence_words == 0 {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                s.extend(c.to_uppercase());
                s.push_str(cs.as_str());
            }
        } else {
            s.push_str(w);
        }
        sentence_words += 1;
        if sentence_words >= sentence_len {
            s.push_str(rng.pick::<&str>(ENDS));
            sentence_words = 0;
            sentence_len = 6 + rng.below(14);
            sentences_in_par += 1;
            if sentences_in_par >= par_len {
                s.push_str(if rng.below(3) == 0 { "\n" } else { "\n\n" });
                sentences_in_par = 0;
                par_len = 2 + rng.below(5);
            } else {
                s.push(' ');
            }
        } else {
            if rng.below(9) == 0 {
                s.push_str(rng.pick::<&str>(MIDS));
            }
            s.push(' ');
        }
    }
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

/// Substrings the W2 argument must not contain: they are markers of the two
/// tool formats and would end the call or the parameter.
pub const FORBIDDEN_IN_ARG: &[&str] =
    &["<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>"];

/// Lines of code-like text the W2 argument is made of: quotes, backslashes,
/// `<`, `>`, `</` (closing tags that are no marker) and indentation.
const CODE_LINES: &[&str] = &[
    "fn parse_{n}(input: &str) -> Result<Vec<String>, Error> {",
    "    let mut out: Vec<String> = Vec::with_capacity(input.len() / 4);",
    "    if a < b && c > d { return Err(Error::new(\"bad \\\"range\\\"\")); }",
    "    let path = \"C:\\\\Users\\\\dev\\\\file_{n}.txt\";",
    "    println!(\"{} -> {}\\n\", key, value);",
    "    for (i, line) in input.lines().enumerate() {",
    "        if line.starts_with(\"<div>\") || line.ends_with(\"</div>\") { continue; }",
    "        let html = \"<p class=\\\"x\\\">{n} &lt; 3</p>\";",
    "        out.push(format!(\"{i}: {line}\\t<{n}>\"));",
    "    }",
    "    // TODO: handle the 'quoted' case and tabs\tlike this",
    "    match x { Some(v) if v >= 10 => v << 2, Some(v) => v >> 1, None => 0 }",
    "    let re = Regex::new(r\"^\\s*(\\w+)\\s*=\\s*\\\"([^\\\"]*)\\\"$\").unwrap();",
    "    Ok(out)",
    "}",
    "",
    "/// Returns `true` when `x` is in `lo..=hi` (i.e. lo <= x <= hi).",
    "impl<T: Display> Render for Wrapper<T> { fn render(&self) -> String { format!(\"<{}>\", self.0) } }",
];

/// Deterministic code-like text of exactly `len` bytes (ASCII), containing
/// none of [`FORBIDDEN_IN_ARG`], ending with a byte that is neither white
/// space nor a backslash.
pub fn code_text(len: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::with_capacity(len + 160);
    while s.len() < len {
        let n = rng.below(1000).to_string();
        s.push_str(&rng.pick(CODE_LINES).replace("{n}", &n));
        s.push('\n');
    }
    s.truncate(len);
    // No wrapping white space: the XML form strips one newline on each side.
    while s.ends_with(|c: char| c.is_ascii_whitespace() || c == '\\') {
        s.pop();
        s.push('x');
    }
    debug_assert!(FORBIDDEN_IN_ARG.iter().all(|m| !s.contains(m)));
    s
}

/// One generated model output and what it must parse to.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The whole model output.
    pub text: String,
    /// The reasoning the output carries (W1), empty otherwise.
    pub reasoning: String,
    /// The content the output carries (W1), empty otherwise.
    pub content: String,
    /// The string argument `content` of the call (W2), empty otherwise.
    pub argument: String,
}

impl Workload {
    /// The output cut into `n`-byte deltas (see [`split_deltas`]).
    pub fn deltas(&self, n: usize) -> Vec<&str> {
        split_deltas(&self.text, n)
    }
}

/// W1: `<think>` + ~8,000·`scale` tokens of reasoning prose + `</think>` +
/// ~500·`scale` tokens of content.
pub fn w1(scale: usize) -> Workload {
    let reasoning = prose(W1_REASONING_TOKENS * BYTES_PER_TOKEN * scale, 1);
    let content = prose(W1_CONTENT_TOKENS * BYTES_PER_TOKEN * scale, 2);
    let text = format!("<think>{reasoning}</think>{content}");
    Workload { text, reasoning, content, argument: String::new() }
}

/// W2, Hermes form: one `<tool_call>` with a JSON envelope whose `content`
/// argument is a 4,000·`scale`-character code-like string.
pub fn w2_hermes(scale: usize) -> Workload {
    let argument = code_text(W2_ARG_CHARS * scale, 3);
    let call = json!({"name": W2_FUNCTION, "arguments": {"path": W2_PATH, "content": argument}});
    let text = format!("<tool_call>\n{call}\n</tool_call>");
    Workload { text, reasoning: String::new(), content: String::new(), argument }
}

/// W2, Qwen3-Coder form: one `<tool_call>` with `<function=…>` and two
/// `<parameter=…>` blocks, the `content` one a 4,000·`scale`-character
/// code-like string written raw.
pub fn w2_qwen3_coder(scale: usize) -> Workload {
    let argument = code_text(W2_ARG_CHARS * scale, 3);
    let text = format!(
        "<tool_call>\n<function={W2_FUNCTION}>\n<parameter=path>\n{W2_PATH}\n</parameter>\n\
         <parameter=content>\n{argument}\n</parameter>\n</function>\n</tool_call>"
    );
    Workload { text, reasoning: String::new(), content: String::new(), argument }
}

/// Cuts `text` into deltas of `n` bytes, each cut moved back to the nearest
/// char boundary (a delta is never empty: a cut that would make one is moved
/// forward instead).
pub fn split_deltas(text: &str, n: usize) -> Vec<&str> {
    assert!(n > 0, "delta size must be positive");
    let mut out = Vec::with_capacity(text.len() / n + 1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + n).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end == start {
            end = start + n;
            while !text.is_char_boundary(end) {
                end += 1;
            }
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// The markers of the W1 text, each one token in the Qwen3 and DeepSeek-R1
/// vocabularies.
pub const W1_MARKERS: &[&str] = &["<think>", "</think>"];

/// Cuts `text` the way a detokenizer streams it: each occurrence of one of
/// `markers` is a delta of its own (a marker is one special token), and the
/// text between markers is cut into `n`-byte deltas as [`split_deltas`] does.
pub fn split_tokens<'a>(text: &'a str, markers: &[&str], n: usize) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(text.len() / n + 2 * markers.len() + 1);
    let mut start = 0;
    loop {
        let next = markers.iter().filter_map(|m| text[start..].find(m).map(|at| (start + at, m.len()))).min();
        let end = next.map_or(text.len(), |(at, _)| at);
        out.extend(split_deltas(&text[start..end], n));
        match next {
            Some((at, len)) => {
                out.push(&text[at..at + len]);
                start = at + len;
            }
            None => return out,
        }
    }
}

/// Joins every `k` consecutive deltas of `text` (contiguous slices of it, in
/// order, as [`split_deltas`] and [`split_tokens`] return) into one delta.
pub fn group<'a>(text: &'a str, deltas: &[&str], k: usize) -> Vec<&'a str> {
    assert!(k > 0, "group size must be positive");
    let mut start = 0;
    deltas
        .chunks(k)
        .map(|run| {
            let len: usize = run.iter().map(|d| d.len()).sum();
            let piece = &text[start..start + len];
            start += len;
            piece
        })
        .collect()
}

/// The `tools` array of the W2 requests: `write_file(path: string, content: string)`.
pub fn w2_tools_json() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": W2_FUNCTION,
            "description": "Writes a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"}
                },
                "required": ["path", "content"]
            }
        }
    }])
}

/// The request the benchmarks use: default settings, a fixed id seed, and
/// the W2 tools when `with_tools`.
pub fn request(with_tools: bool) -> Request {
    let mut req = Request { id_seed: Some(ID_SEED), ..Request::default() };
    if with_tools {
        req.tools = Arc::new(Tools::from_json(&w2_tools_json()));
    }
    req
}

/// The factory for W1/W3 (`qwen3`, no tool parser).
pub fn w1_factory() -> llmsift_core::ParserFactory {
    Registry::builtin().factory(Some("qwen3"), None).expect("qwen3 is built in")
}

/// The factory for W2 with tool parser `tools` (`hermes` or `qwen3_coder`), no reasoning parser.
pub fn w2_factory(tools: &str) -> llmsift_core::ParserFactory {
    Registry::builtin().factory(None, Some(tools)).expect("tool parser is built in")
}

/// The factory that parses Qwen3 output by TRL's Qwen3 response template
/// (`add_response_schema`) instead of a format file: `hf` with the template
/// as the model's own. Its tool regions hold the call until it closes, as
/// every response template's do.
pub fn rt_factory() -> llmsift_core::ParserFactory {
    let tpl = serde_json::json!({"start_anchor": "<|im_start|>assistant\n", "fields": {
        "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*", "content": "text"},
        "tool_calls": {"open": "<tool_call>", "close_pattern": "</tool_call>\\s*", "repeats": true, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": "<\\|im_end\\|>\\s*", "content": "text"}}});
    let f = Registry::builtin().factory(Some("hf"), Some("hf")).expect("hf is built in");
    f.with_template(&tpl).expect("the template is read")
}

/// The factory that parses by TRL's DeepSeek-R1-Distill response template,
/// whose reasoning opener is a lookahead over the rest of the output
/// (`(?=[\s\S]*?</think>)`): the text is held until the lookahead decides.
pub fn rt_lookahead_factory() -> llmsift_core::ParserFactory {
    let tpl = serde_json::json!({"start_anchor": "<｜Assistant｜><think>\n", "fields": {
        "reasoning_content": {"open_pattern": "(?=[\\s\\S]*?</think>)", "close_pattern": "</think>\\s*"},
        "content": {"close_pattern": "<｜end▁of▁sentence｜>\\s*|$"}}});
    let f = Registry::builtin().factory(Some("hf"), Some("hf")).expect("hf is built in");
    f.with_template(&tpl).expect("the template is read")
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsift_core::{Delta, Folder, Message, ParserFactory};

    fn stream(f: &ParserFactory, req: &Request, deltas: &[&str]) -> Message {
        let mut p = f.parser(req);
        let mut out = Delta::default();
        let mut fold = Folder::default();
        for d in deltas {
            out.clear();
            p.push_into(d, None, &mut out);
            fold.push(&out);
        }
        out.clear();
        p.finish_into(&mut out);
        fold.push(&out);
        fold.finish()
    }

    #[test]
    fn prose_is_sized_and_has_no_markers() {
        for (len, seed) in [(0, 1), (1, 1), (100, 2), (32_000, 1), (2_000, 2)] {
            let p = prose(len, seed);
            assert!(p.len() <= len && p.len() + 4 > len, "{len}: {}", p.len());
            assert!(!p.contains('<'));
        }
        let p = prose(32_000, 1);
        assert!(p.contains('\n') && p.contains('.') && p.contains(',') && !p.is_ascii());
        assert_eq!(p, prose(32_000, 1), "deterministic");
    }

    #[test]
    fn code_text_is_sized_and_safe() {
        for scale in [1, 2, 4] {
            let c = code_text(W2_ARG_CHARS * scale, 3);
            assert_eq!(c.len(), W2_ARG_CHARS * scale);
            for needed in ['"', '\\', '\n', '<', '>'] {
                assert!(c.contains(needed), "{needed:?}");
            }
            for m in FORBIDDEN_IN_ARG {
                assert!(!c.contains(m), "{m}");
            }
        }
    }

    #[test]
    fn deltas_cover_text_at_char_boundaries() {
        let w = w1(1);
        let d = w.deltas(DELTA_BYTES);
        assert_eq!(d.concat(), w.text);
        assert!(d.iter().all(|x| !x.is_empty() && x.len() <= DELTA_BYTES));
        assert!(d.len() >= w.text.len() / DELTA_BYTES);
        assert_eq!(split_deltas("ééé", 1).concat(), "ééé");
    }

    #[test]
    fn tokens_keep_markers_whole_and_blind_cuts_split_the_end_marker() {
        for scale in [1, 2, 4] {
            let w = w1(scale);
            let tokens = split_tokens(&w.text, W1_MARKERS, DELTA_BYTES);
            assert_eq!(tokens.concat(), w.text);
            assert!(tokens
                .iter()
                .all(|t| !t.is_empty() && (t.len() <= DELTA_BYTES || W1_MARKERS.contains(t))));
            assert_eq!(tokens.iter().filter(|t| W1_MARKERS.contains(t)).count(), 2, "{scale}");
            let blind = w.deltas(DELTA_BYTES);
            assert!(blind.iter().all(|d| !d.contains("</think>")), "{scale}: `</think>` is cut");
            let four = group(&w.text, &tokens, 4);
            assert_eq!(four.concat(), w.text);
            assert_eq!(four.len(), tokens.len().div_ceil(4));
        }
        assert_eq!(split_tokens("a<b>cd<b>", &["<b>"], 1), ["a", "<b>", "c", "d", "<b>"]);
        assert_eq!(group("abcde", &["a", "b", "c", "d", "e"], 2), ["ab", "cd", "e"]);
    }

    #[test]
    fn w1_parses_to_the_generated_reasoning_and_content() {
        let f = w1_factory();
        let req = request(false);
        for scale in [1, 2, 4] {
            let w = w1(scale);
            assert_eq!(w.reasoning.len(), W1_REASONING_TOKENS * BYTES_PER_TOKEN * scale);
            assert!(w.content.len() + 4 > W1_CONTENT_TOKENS * BYTES_PER_TOKEN * scale);
            let m = f.parse(&req, &w.text, None);
            assert_eq!(m.reasoning.as_deref().map(str::len), Some(w.reasoning.len()));
            assert_eq!(m.content.as_deref().map(str::len), Some(w.content.len()));
            assert_eq!(m.reasoning.as_deref(), Some(w.reasoning.as_str()));
            assert_eq!(m.content.as_deref(), Some(w.content.as_str()));
            assert!(m.tool_calls.is_empty());
            assert_eq!(stream(&f, &req, &w.deltas(DELTA_BYTES)), m, "streaming == one-shot");
        }
    }

    fn check_w2(tools: &str, w: &Workload) {
        let f = w2_factory(tools);
        let req = request(true);
        let m = f.parse(&req, &w.text, None);
        assert_eq!(m.tool_calls.len(), 1, "{tools}: {m:?}");
        assert_eq!(m.content, None, "{tools}");
        assert_eq!(m.reasoning, None, "{tools}");
        let call = &m.tool_calls[0];
        assert_eq!(call.name, W2_FUNCTION);
        let args: Value = serde_json::from_str(&call.arguments).expect("arguments are JSON");
        assert_eq!(args, json!({"path": W2_PATH, "content": w.argument}), "{tools}");
        assert_eq!(stream(&f, &req, &w.deltas(DELTA_BYTES)), m, "{tools}: streaming == one-shot");
    }

    #[test]
    fn w2_hermes_parses_to_one_call_with_the_generated_argument() {
        for scale in [1, 2, 4] {
            check_w2("hermes", &w2_hermes(scale));
        }
    }

    #[test]
    fn w2_qwen3_coder_parses_to_one_call_with_the_generated_argument() {
        for scale in [1, 2, 4] {
            check_w2("qwen3_coder", &w2_qwen3_coder(scale));
        }
    }
}
