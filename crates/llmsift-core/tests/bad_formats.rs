//! Malformed format files fail when read, each with an error naming the
//! file, the table and the key. The cases are data: every
//! `tests/bad-formats/*.toml` starts with `# expect: MESSAGE`, the error's
//! text in full (its file named as `bad-formats/NAME.toml`).

use llmsift_core::Registry;

#[test]
fn every_bad_format_file_fails_with_its_message() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bad-formats");
    let mut files: Vec<_> =
        std::fs::read_dir(dir).expect("bad-formats").flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(files.len() >= 10, "the bad-formats cases are missing");
    let mut wrong = vec![];
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read");
        let want =
            text.lines().next().and_then(|l| l.strip_prefix("# expect: ")).expect("a `# expect:` line");
        let file = format!("bad-formats/{}", path.file_name().unwrap().to_string_lossy());
        match Registry::default().add_file(&file, &text) {
            Ok(_) => wrong.push(format!("{file}: accepted, want {want:?}")),
            Err(e) if e.to_string() != want => {
                wrong.push(format!("{file}: got {:?}, want {want:?}", e.to_string()))
            }
            Err(_) => {}
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
