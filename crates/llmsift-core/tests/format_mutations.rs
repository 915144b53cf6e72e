//! Property: a format file edited at random (lines dropped, doubled or
//! swapped, a quoted word replaced by another from the file, the text cut
//! short), alone or composed with an unedited format of the other kind,
//! either fails to compile with a typed error or compiles into a
//! format that parses any output without panicking, streams exactly like
//! one-shot, and writes JSON arguments. Formats are data a user can load
//! at run time, so a broken one must never take the parser down.
//!
//! `SIFT_FUZZ_CASES=N` runs N cases instead of the default 256.

use llmsift_core::format::spec::Kind;
use llmsift_core::{Folder, FormatSpec, ParserFactory, Request, ToolChoice};
use proptest::prelude::*;
use std::sync::OnceLock;

fn files() -> &'static Vec<String> {
    static F: OnceLock<Vec<String>> = OnceLock::new();
    F.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("formats");
        let mut out = vec![];
        for dir in ["reasoning", "tools"] {
            let mut paths: Vec<_> =
                std::fs::read_dir(root.join(dir)).unwrap().flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths.iter().filter(|p| p.extension().is_some_and(|x| x == "toml")) {
                out.push(std::fs::read_to_string(p).unwrap());
            }
        }
        assert!(out.len() > 80, "format files found: {}", out.len());
        out
    })
}

fn cases() -> u32 {
    std::env::var("SIFT_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

/// The quoted words of a file (state names, terminal names, spellings).
fn words(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).filter(|w| !w.is_empty() && w.len() < 40).collect()
}

fn mutate(text: &str, edits: &[(u8, prop::sample::Index, prop::sample::Index)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for (kind, a, b) in edits {
        if lines.is_empty() {
            break;
        }
        let i = a.index(lines.len());
        let j = b.index(lines.len());
        match kind % 5 {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(j, l);
            }
            2 => lines.swap(i, j),
            3 => {
                let joined = lines.join("\n");
                let ws = words(&joined);
                let wl = words(&lines[i]);
                if !ws.is_empty() && !wl.is_empty() {
                    let from = wl[a.index(wl.len())].to_string();
                    let to = ws[b.index(ws.len())].to_string();
                    lines[i] = lines[i].replacen(&format!("\"{from}\""), &format!("\"{to}\""), 1);
                }
            }
            _ => {
                let l = &lines[i];
                let cut =
                    (0..=l.len()).filter(|k| l.is_char_boundary(*k)).nth(b.index(l.len() + 1)).unwrap_or(0);
                lines[i].truncate(cut);
            }
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn edited_format_files_fail_cleanly_or_parse_cleanly(
        file in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<u8>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..4),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), any::<bool>()), 0..30),
        cut in any::<prop::sample::Index>(),
        named in any::<bool>(),
        partner in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let text = mutate(&files()[file.index(files().len())], &edits);
        if let Ok(path) = std::env::var("SIFT_FUZZ_TRACE") {
            std::fs::write(&path, &text).unwrap();
        }
        let Ok(spec) = FormatSpec::from_toml(&text) else { return Ok(()) };
        // Alone, or composed with an unedited grammar of the other kind.
        let partner = partner.map(|i| &files()[i.index(files().len())]).and_then(|t| FormatSpec::from_toml(t).ok());
        let partner = partner.filter(|p| p.kind != spec.kind);
        let built = match spec.kind {
            Kind::Reasoning => ParserFactory::new(Some(&spec), partner.as_ref()),
            Kind::Tools => ParserFactory::new(partner.as_ref(), Some(&spec)),
        };
        let Ok(f) = built else { return Ok(()) };
        let spellings: Vec<String> = f.format().spellings().map(str::to_string).collect();
        let mut out = String::new();
        for (i, ch, frag) in &picks {
            if *frag && !spellings.is_empty() {
                out.push_str(&spellings[i.index(spellings.len())]);
            } else {
                out.push(*ch);
            }
        }
        let tool_choice = if named { ToolChoice::Named("f".into()) } else { ToolChoice::Unset };
        let req = Request { tool_choice, id_seed: Some(1), ..Request::default() };
        let mut whole = f.parser(&req);
        let one = whole.parse(&out, None);
        let mut c = cut.index(out.len() + 1);
        while !out.is_char_boundary(c) {
            c += 1;
        }
        let mut p = f.parser(&req);
        let mut fold = Folder::default();
        fold.push(&p.push(&out[..c], None));
        fold.push(&p.push(&out[c..], None));
        fold.push(&p.finish());
        prop_assert_eq!(fold.finish(), one.clone(), "edited format:\n{}\noutput {:?}", text, out);
        for (i, call) in one.tool_calls.iter().enumerate() {
            // Only the call the output's end cut keeps non-JSON arguments (as written, issue 23).
            prop_assert!(whole.cut_call() == Some(i) || serde_json::from_str::<serde_json::Value>(&call.arguments).is_ok(),
                "arguments {:?}\nedited format:\n{}", call.arguments, text);
        }
    }
}
