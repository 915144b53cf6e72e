//! (c) The format-file compiler. Arbitrary text as a format file: it either
//! fails with a typed `FormatError` or compiles; a compiled format then
//! parses the text after a `\n---\n` separator (or a fixed sample) without
//! a panic, streamed equal to one-shot, every call named with JSON-object
//! arguments.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use llmsift_core::format::spec::Kind;
use llmsift_core::{FormatSpec, ParserFactory, Request};

const SAMPLE: &str = "<think>hm</think>hi <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (file, output) = text.split_once("\n---\n").unwrap_or((&text, SAMPLE));
    let Ok(spec) = FormatSpec::from_toml(file) else { return };
    let f = match spec.kind {
        Kind::Reasoning => ParserFactory::new(Some(&spec), None),
        Kind::Tools => ParserFactory::new(None, Some(&spec)),
    };
    let Ok(f) = f else { return };
    let req = Request { id_seed: Some(1), ..Request::default() };
    let one = f.parse(&req, output, None);
    common::check_calls(&one);
    let cut = common::pieces(output, common::hash(data));
    assert_eq!(common::stream(f.parser(&req), &cut, &one), one);
});
