//! Everyday habits of the `sift` binary, run as a process: `--version`,
//! shell completions, one-line errors (a backtrace only on request), and
//! `sift serve`'s log lines under `RUST_LOG` beside the URL line it always
//! prints.

#![cfg_attr(not(feature = "serve"), allow(dead_code, unused_imports))]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn sift() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sift"));
    // The caller's settings must not decide what these tests see.
    c.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE").env_remove("RUST_LOG");
    c
}

fn run(c: &mut Command) -> Output {
    c.stdin(Stdio::null()).output().expect("running sift")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn version_is_the_crate_version() {
    let out = run(sift().arg("--version"));
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), format!("sift {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn completions_for_each_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(sift().args(["completions", shell]));
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for word in ["sift", "parse", "serve", "completions", "--reasoning-parser"] {
            assert!(script.contains(word), "{shell} completions lack {word:?}");
        }
    }
    let out = run(sift().args(["completions", "tcsh"]));
    assert!(!out.status.success());
}

#[test]
fn an_error_is_one_line_with_its_causes() {
    let out =
        run(sift().args(["parse", "--reasoning-parser", "qwen3", "--tools", "/nonexistent/tools.json", "-"]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("sift: error: reading /nonexistent/tools.json: "), "{err}");

    let out = run(sift().args(["parse", "--reasoning-parser", "no_such_parser", "-"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "sift: error: unknown parser name \"no_such_parser\"\n");
}

#[test]
fn rust_backtrace_adds_the_backtrace() {
    let out =
        run(sift().env("RUST_BACKTRACE", "1").args(["parse", "--tools", "/nonexistent/tools.json", "-"]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("sift: error: reading /nonexistent/tools.json: "), "{err}");
    assert!(err.lines().count() > 1 && err.contains("main"), "no backtrace: {err}");
}

/// `sift serve --demo` on a free port; the stderr lines before and including
/// the URL line, and a receiver for the lines after it.
struct Serve {
    child: Child,
    addr: String,
    before: Vec<String>,
    after: mpsc::Receiver<String>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(rust_log: Option<&str>) -> Serve {
    let mut c = sift();
    c.args(["serve", "--demo", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(f) = rust_log {
        c.env("RUST_LOG", f);
    }
    let mut child = c.spawn().expect("starting sift serve");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut before = Vec::new();
    loop {
        let Ok(line) = rx.recv_timeout(Duration::from_secs(120)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sift serve said nothing for 120 s");
        };
        if let Some(rest) = line.strip_prefix("sift serve: listening on http://") {
            let addr = rest.split_whitespace().next().unwrap_or_default().to_string();
            before.push(line);
            return Serve { child, addr, before, after: rx };
        }
        before.push(line);
    }
}

/// One GET, by hand (no client crate needed for a status line).
fn get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(s, "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n").expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    out
}

#[cfg(feature = "serve")]
#[test]
fn serve_prints_its_url_and_logs_what_rust_log_asks() {
    // Default (info): what is served, then the URL line.
    let s = serve(None);
    assert!(
        s.before.iter().any(|l| l.contains(" INFO ") && l.contains("serving") && l.contains("qwen3-demo")),
        "{:?}",
        s.before
    );
    assert!(get(&s.addr, "/health").starts_with("HTTP/1.1 200"));
    drop(s);

    // Filtered off: the URL line alone, still.
    let s = serve(Some("off"));
    assert_eq!(s.before.len(), 1, "{:?}", s.before);
    drop(s);

    // Per-request events at debug.
    let s = serve(Some("tower_http=debug"));
    assert!(get(&s.addr, "/v1/models").starts_with("HTTP/1.1 200"));
    let mut seen = Vec::new();
    while let Ok(line) = s.after.recv_timeout(Duration::from_secs(10)) {
        let done = line.contains("finished processing request");
        seen.push(line);
        if done {
            break;
        }
    }
    assert!(seen.iter().any(|l| l.contains("DEBUG") && l.contains("/v1/models")), "{seen:?}");
    assert!(
        seen.iter().any(|l| l.contains("finished processing request") && l.contains("status=200")),
        "{seen:?}"
    );
}

#[test]
fn render_gives_the_content_format_asked() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("t.jinja");
    // Loops over a message's content: vLLM's `auto` detects `openai`.
    std::fs::write(
        &template,
        "{% for m in messages %}{% if m.content is string %}{{ m.content }}\
         {% else %}{% for p in m.content %}[{{ p.text }}]{% endfor %}{% endif %};{% endfor %}",
    )
    .unwrap();
    let request = dir.path().join("r.json");
    std::fs::write(&request, r#"{"messages": [{"role": "user", "content": "hi"}]}"#).unwrap();
    let render = |format: Option<&str>| {
        let mut c = sift();
        c.arg("render").arg("--template").arg(&template).arg(&request);
        if let Some(f) = format {
            c.args(["--chat-template-content-format", f]);
        }
        let out = run(&mut c);
        assert!(out.status.success(), "{format:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(render(None), "hi;");
    assert_eq!(render(Some("string")), "hi;");
    assert_eq!(render(Some("openai")), "[hi];");
    assert_eq!(render(Some("auto")), "[hi];");
    let out = run(sift()
        .arg("render")
        .arg("--template")
        .arg(&template)
        .arg(&request)
        .args(["--chat-template-content-format", "parts"]));
    assert!(
        !out.status.success() && text(&out.stderr).contains("auto, string, openai"),
        "{}",
        text(&out.stderr)
    );
}
