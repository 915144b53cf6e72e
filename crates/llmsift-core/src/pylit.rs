//! Python's reading and printing of literals, as vLLM's parsers rely on them:
//! `str.strip`'s white space, `int(text)`, `float(text)`, `repr(float)` and
//! `int(x)` of an integral float.
//!
//! Schema typing of argument values (`coerce.rs`, `engine/xmlargs.rs`) and
//! the XML parameter kernel (`engine/args.rs`) share these, so a value reads
//! the same in every format. Pure functions; integers are kept as exact
//! decimal text, however large, because Python's `int` is unbounded.

/// Python's `str.isspace` for one character: Unicode white space plus the
/// four ASCII separators (`\x1c`–`\x1f`) that Rust does not count.
pub(crate) fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// Digits with single underscores between them (Python's numeric literals);
/// `None` for an underscore at either end or next to a non-digit.
fn strip_underscores(s: &str) -> Option<String> {
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let ok = i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit();
            if !ok {
                return None;
            }
        }
    }
    Some(s.replace('_', ""))
}

/// Python's `int(text)`, as canonical decimal text (no leading zeros, `0`
/// for negative zero).
pub(crate) fn py_int(text: &str) -> Option<String> {
    let t = py_strip(text);
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = strip_underscores(digits)?;
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    Some(match (digits.is_empty(), neg) {
        (true, _) => "0".to_string(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_string(),
    })
}

/// Python's `float(text)` (infinities and NaN included; callers that need a
/// JSON number filter on `is_finite`).
pub(crate) fn py_float(text: &str) -> Option<f64> {
    let t = strip_underscores(py_strip(text))?;
    let body = t.trim_start_matches(['+', '-']);
    // Rust also reads what Python does not (`1.` and `.5` both parse in each).
    if body.is_empty() || t.len() - body.len() > 1 {
        return None;
    }
    t.parse::<f64>().ok()
}

/// A Python numeric literal as `json.dumps` writes its value: integers
/// (decimal, `0x`/`0o`/`0b`, `_` separators) as exact decimal text, floats
/// (`1.`, `.5`, `1e5`) as `repr(float)`. Zero-padded integers (`07`), which
/// Python rejects, read as integers, as vLLM's LFM2 parser rewrites them.
/// `None` for anything else (names, complex `1j`, an infinite float, which
/// has no JSON spelling).
pub(crate) fn py_number_literal(t: &str) -> Option<String> {
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' && b[1].is_ascii_alphabetic() {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => return None,
        };
        // `0x_ff` is valid: one underscore may follow the prefix.
        let rest = t[2..].strip_prefix('_').unwrap_or(&t[2..]);
        if rest.is_empty() || rest.ends_with('_') || rest.contains("__") {
            return None;
        }
        let digits = rest.replace('_', "");
        return u128::from_str_radix(&digits, radix).ok().map(|v| v.to_string());
    }
    if digit_part(t) {
        return py_int(t);
    }
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    if let Some(e) = exp {
        if !digit_part(e.strip_prefix(['+', '-']).unwrap_or(e)) {
            return None;
        }
    }
    let ok = match mant.split_once('.') {
        Some((i, f)) => {
            (i.is_empty() || digit_part(i))
                && (f.is_empty() || digit_part(f))
                && !(i.is_empty() && f.is_empty())
        }
        None => exp.is_some() && digit_part(mant),
    };
    if !ok {
        return None;
    }
    let x: f64 = t.replace('_', "").parse().ok()?;
    x.is_finite().then(|| float_repr(x))
}

/// Python's `digitpart`: digits with single underscores between them.
fn digit_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_digit()
        && b[b.len() - 1].is_ascii_digit()
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'_')
        && !s.contains("__")
}

/// An integral float as Python's `int(x)` prints it.
pub(crate) fn int_text(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    format!("{x:.0}")
}

/// Python's `repr(float)`: shortest round-trip digits, positional for
/// exponents in [-4, 16), else `d.ddde+XX` (sign and at least two digits).
pub(crate) fn float_repr(x: f64) -> String {
    // Rust's `{:e}` is the shortest round-trip form: "-1.2345e-7", "0e0".
    let s = format!("{x:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.push_str(&"0".repeat(int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!("e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs()));
    }
    out
}

/// A finite float as Python prints `int(x) if x.is_integer() else x`.
pub(crate) fn number_text(x: f64) -> String {
    if x.fract() == 0.0 {
        int_text(x)
    } else {
        float_repr(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_read_like_python() {
        assert_eq!(py_int(" 1_000 ").as_deref(), Some("1000"));
        assert_eq!(py_int("-007").as_deref(), Some("-7"));
        assert_eq!(py_int("-0").as_deref(), Some("0"));
        assert_eq!(py_int("\x1c42\x1f").as_deref(), Some("42"));
        assert_eq!(
            py_int("123456789012345678901234567890").as_deref(),
            Some("123456789012345678901234567890")
        );
        for bad in ["", "-", "1__0", "_1", "1_", "+-1", "1.0", "0x10"] {
            assert_eq!(py_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_read_like_python() {
        assert_eq!(py_float("1_000.5"), Some(1000.5));
        assert_eq!(py_float(" -2.5e3 "), Some(-2500.0));
        assert!(py_float("inf").is_some_and(f64::is_infinite));
        for bad in ["", "--1", "1__0.0", "abc"] {
            assert_eq!(py_float(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn numeric_literals_read_like_python() {
        for (t, want) in [
            ("1", "1"),
            ("1_000", "1000"),
            ("07", "7"),
            ("0x1F", "31"),
            ("0o17", "15"),
            ("0b_101", "5"),
            ("1.0", "1.0"),
            ("1.", "1.0"),
            (".5", "0.5"),
            ("1e5", "100000.0"),
            ("2.50", "2.5"),
            ("1_0.5e-1_0", "1.05e-09"),
        ] {
            assert_eq!(py_number_literal(t).as_deref(), Some(want), "{t}");
        }
        for bad in ["", ".", "1j", "1e", "1__0", "_1", "0x", "inf", "nan", "1e400", "e5", "1.2.3"] {
            assert_eq!(py_number_literal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_print_like_python_repr() {
        assert_eq!(float_repr(0.5), "0.5");
        assert_eq!(float_repr(1e-5), "1e-05");
        assert_eq!(float_repr(1.5e-7), "1.5e-07");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(123.456), "123.456");
        assert_eq!(float_repr(-123.25), "-123.25");
        assert_eq!(float_repr(1.5e16), "1.5e+16");
        assert_eq!(float_repr(1.5e300), "1.5e+300");
        assert_eq!(float_repr(100.0), "100.0");
        assert_eq!(number_text(-0.0), "0");
        assert_eq!(number_text(3.0), "3");
        assert_eq!(number_text(2.5), "2.5");
    }
}
