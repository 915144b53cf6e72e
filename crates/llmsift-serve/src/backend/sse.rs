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
        let mut start = 0;
        while let Some((end, sep)) = frame_end(&self.buf[start..]) {
            match std::str::from_utf8(&self.buf[start..start + end]) {
                Ok(text) => {
                    let mut data = text
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:").map(|d| d.strip_prefix(' ').unwrap_or(d)));
                    if let Some(first) = data.next() {
                        let mut joined = first.to_string();
                        for more in data {
                            joined.push('\n');
                            joined.push_str(more);
                        }
                        out.push(Ok(joined));
                    }
                }
                Err(e) => out.push(Err(format!("a frame is not UTF-8 ({e})"))),
            }
            start += end + sep;
        }
        self.buf.drain(..start);
        out
    }
}

/// Where the first frame ends: the offset of its blank line and the
/// separator's length (`\n\n`, or `\r\n\r\n`), whichever comes first.
fn frame_end(buf: &[u8]) -> Option<(usize, usize)> {
    memchr::memchr_iter(b'\n', buf).find_map(|i| {
        if buf.get(i + 1) == Some(&b'\n') {
            Some((i, 2))
        } else if i >= 1 && buf[i - 1] == b'\r' && buf.get(i + 1..i + 3) == Some(b"\r\n") {
            Some((i - 1, 4))
        } else {
            None
        }
    })
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

    #[test]
    fn separators_and_multi_line_data() {
        let all = b"data: a\r\n\r\nevent: x\ndata: b\ndata:c\n\n: comment\n\ndata: \xff\n\ndata: d\r\n\r\ndata: held";
        let mut f = Frames::default();
        let got = f.push(all);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[..2], [Ok("a".to_string()), Ok("b\nc".to_string())]);
        assert!(got[2].is_err());
        assert_eq!(got[3], Ok("d".to_string()));
        assert_eq!(f.push(b"\n\n"), vec![Ok("held".to_string())]);
    }
}
