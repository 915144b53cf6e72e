//! Server-sent events read from a byte stream.
//!
//! Owns reassembly: bytes arrive cut anywhere (inside a frame, inside a
//! multi-byte UTF-8 character), and a frame is decoded only once its blank
//! line has arrived, so a cut never corrupts text.
//!
//! Invariant: [`Frames::push`] returns each complete frame's `data` exactly
//! once, in order; bytes after the last blank line stay buffered.

/// The reassembly buffer.
#[derive(Debug, Default)]
pub struct Frames {
    buf: Vec<u8>,
}

/// One frame's data, or why it is not text.
pub type Frame = Result<String, String>;

impl Frames {
    /// Adds bytes; returns the data of every frame they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((end, sep)) = frame_end(&self.buf) {
            let frame: Vec<u8> = self.buf.drain(..end + sep).take(end).collect();
            match String::from_utf8(frame) {
                Ok(text) => {
                    let data: Vec<&str> = text
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:").map(|d| d.strip_prefix(' ').unwrap_or(d)))
                        .collect();
                    if !data.is_empty() {
                        out.push(Ok(data.join("\n")));
                    }
                }
                Err(e) => out.push(Err(format!("a frame is not UTF-8 ({e})"))),
            }
        }
        out
    }
}

fn frame_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = memchr::memmem::find(buf, b"\n\n").map(|i| (i, 2));
    let crlf = memchr::memmem::find(buf, b"\r\n\r\n").map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_inside_a_character() {
        let all = "data: {\"t\":\"°C ☔\"}\n\ndata: [DONE]\n\n".as_bytes();
        for cut in 0..all.len() {
            let mut f = Frames::default();
            let mut got = f.push(&all[..cut]);
            got.extend(f.push(&all[cut..]));
            assert_eq!(got, vec![Ok("{\"t\":\"°C ☔\"}".to_string()), Ok("[DONE]".to_string())], "cut {cut}");
        }
    }
}
