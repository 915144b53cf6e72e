//! The split checker: one output parsed one-shot must equal the same output
//! streamed in any cut — every two-way cut at a char boundary (short
//! outputs), one char per delta, and seeded random multi-byte chunks.

use crate::answer::message_json;
use sift_core::{Folder, Message, ParserFactory, Request};

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

/// Checks every cut of `text`; returns a description of the first difference.
/// `full_byte_limit`: outputs up to this many bytes are cut at every boundary.
pub fn check_splits(
    f: &ParserFactory,
    req: &Request,
    text: &str,
    full_byte_limit: usize,
) -> Result<(), String> {
    let one = f.parse(req, text, None);
    let same = |how: &str, m: Message| -> Result<(), String> {
        if m == one {
            Ok(())
        } else {
            Err(format!("{how}: streamed {} != one-shot {}", message_json(&m), message_json(&one)))
        }
    };
    let chars: Vec<&str> = crate::stream_chunks(text, None);
    same("one char per delta", stream_message(f, req, &chars))?;
    if text.len() <= full_byte_limit {
        for cut in boundaries(text) {
            let parts = [&text[..cut], &text[cut..]];
            same(&format!("cut at byte {cut}"), stream_message(f, req, &parts))?;
        }
    }
    for seed in 1..=4u64 {
        let parts = random_chunks(text, seed, 1 + 7 * seed as usize);
        same(&format!("random chunks seed {seed}"), stream_message(f, req, &parts))?;
    }
    Ok(())
}
