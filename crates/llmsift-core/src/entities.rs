//! Entities in attribute values: a call's name or a parameter key that a
//! family writes as an XML attribute (Kimi K3's XTML `tool="…"`, `key="…"`,
//! whose template escapes `&` and `"`), read back as the text it stands for.
//!
//! Invariant: pure and total: any text is an answer; a reference that is
//! not one (`&bogus;`, `&#xZZ;`, an unpaired surrogate, an `&` with no `;`)
//! stays as written, so no byte the model wrote is lost.

/// `text` with XML's five named entities and its numeric character
/// references unescaped, in one left-to-right pass (`&amp;lt;` is `&lt;`).
pub(crate) fn unescape_xml(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        // A reference is short: the longest is `&#x10FFFF;` (10 bytes).
        let end = rest.bytes().take(12).position(|b| b == b';');
        let ch = end.and_then(|e| reference(&rest[1..e]));
        match (ch, end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// vLLM's reading of the same values (Kimi K3's `_attrs`): `&quot;`, then
/// `&amp;`, replaced everywhere; any other reference stays as written.
pub(crate) fn unescape_vllm(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return text.into();
    }
    text.replace("&quot;", "\"").replace("&amp;", "&").into()
}

/// The character a reference's body (between `&` and `;`) names.
fn reference(body: &str) -> Option<char> {
    match body {
        "amp" => return Some('&'),
        "lt" => return Some('<'),
        "gt" => return Some('>'),
        "quot" => return Some('"'),
        "apos" => return Some('\''),
        _ => {}
    }
    let num = body.strip_prefix('#')?;
    let code = match num.strip_prefix(['x', 'X']) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u32::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) => num.parse().ok()?,
        None => return None,
    };
    // XML's Char production: no NUL, no surrogates (char::from_u32 refuses those).
    char::from_u32(code).filter(|c| *c != '\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_numeric_references() {
        let cases = [
            ("q&amp;a", "q&a"),
            ("&lt;b&gt; &quot;x&quot; &apos;y&apos;", "<b> \"x\" 'y'"),
            ("&#38;&#x26;&#X26;&#233;", "&&&é"),
            ("&amp;lt;", "&lt;"),
            ("a & b", "a & b"),
            ("&bogus; &#xZZ; &#; &#xD800; &#0; &", "&bogus; &#xZZ; &#; &#xD800; &#0; &"),
            ("&amp", "&amp"),
            ("plain", "plain"),
        ];
        for (i, o) in cases {
            assert_eq!(unescape_xml(i), o, "{i}");
        }
    }

    #[test]
    fn vllm_reads_quot_and_amp_only() {
        assert_eq!(unescape_vllm("q&amp;a &lt; &quot;"), "q&a &lt; \"");
        assert_eq!(unescape_vllm("&amp;quot;"), "&quot;");
    }
}
