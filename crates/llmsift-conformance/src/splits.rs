//! The split checker: one output parsed one-shot must equal the same output
//! streamed in any cut — every two-way cut at a char boundary (short
//! outputs), one char per delta, and seeded random multi-byte chunks — and
//! after every delta of those streams each call's arguments so far must be a
//! prefix of its final one-shot arguments (the watermark contract: a client
//! that concatenates fragments never sees a byte taken back).

use crate::answer::message_json;
use llmsift_core::{Folder, Message, ParserFactory, Request};

/// Streams `chunks` and folds the deltas.
pub fn stream_message(f: &ParserFactory, req: &Request, chunks: &[&str]) -> Message {
    let mut p = f.parser(req);
    let mut fold = Folder::default();
    for c in chunks {
        fold.push(&p.push(c, None));
    }
    fold.push(&p.finish());
    fold.finish()
}

fn boundaries(text: &str) -> Vec<usize> {
    (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect()
}

/// A small deterministic generator (no dependency needed for chunk sizes).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// Random chunks of 1..=max bytes, cut at char boundaries.
pub fn random_chunks(text: &str, seed: u64, max: usize) -> Vec<&str> {
    let mut rng = Lcg(seed);
    let mut out = vec![];
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 1 + rng.next(max)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// Streams `chunks`, checking after every delta that each call's arguments
/// so far are a prefix of `one`'s; the folded answer, or where it broke.
fn stream_as_prefixes(
    f: &ParserFactory,
    req: &Request,
    chunks: &[&str],
    one: &Message,
) -> Result<Message, String> {
    let mut p = f.parser(req);
    let mut fold = Folder::default();
    let mut args: Vec<String> = vec![];
    let deltas = chunks.iter().map(Some).chain([None]);
    for (i, c) in deltas.enumerate() {
        let d = match c {
            Some(c) => p.push(c, None),
            None => p.finish(),
        };
        for call in &d.tool_calls {
            if args.len() <= call.index {
                args.resize(call.index + 1, String::new());
            }
            args[call.index].push_str(&call.arguments);
            let fin = one.tool_calls.get(call.index).map_or("", |c| c.arguments.as_str());
            if !fin.starts_with(&args[call.index]) {
                return Err(format!(
                    "after delta {i}: streamed arguments {:?} are not a prefix of {fin:?}",
                    args[call.index]
                ));
            }
        }
        fold.push(&d);
    }
    Ok(fold.finish())
}

/// Checks every cut of `text`; returns a description of the first difference.
/// `full_byte_limit`: outputs up to this many bytes are cut at every boundary.
pub fn check_splits(
    f: &ParserFactory,
    req: &Request,
    text: &str,
    full_byte_limit: usize,
) -> Result<(), String> {
    let one = f.parse(req, text, None);
    let same = |how: &str, chunks: &[&str]| -> Result<(), String> {
        let m = stream_as_prefixes(f, req, chunks, &one).map_err(|e| format!("{how}: {e}"))?;
        if m == one {
            Ok(())
        } else {
            Err(format!("{how}: streamed {} != one-shot {}", message_json(&m), message_json(&one)))
        }
    };
    let chars: Vec<&str> = crate::stream_chunks(text, None);
    same("one char per delta", &chars)?;
    if text.len() <= full_byte_limit {
        for cut in boundaries(text) {
            let parts = [&text[..cut], &text[cut..]];
            same(&format!("cut at byte {cut}"), &parts)?;
        }
    }
    for seed in 1..=4u64 {
        let parts = random_chunks(text, seed, 1 + 7 * seed as usize);
        same(&format!("random chunks seed {seed}"), &parts)?;
    }
    Ok(())
}
