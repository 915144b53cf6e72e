//! `sift parse --request` takes a plain Chat Completions body with the model
//! output as the positional file (or `-`), or the wrapper form; exactly one
//! of them gives the output. Each case: arguments, standard input, and what
//! the run must print (`data/request-forms/` holds the request files).

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const DIR: &str = "crates/llmsift-cli/tests/data/request-forms";

struct Case {
    name: &'static str,
    args: &'static [&'static str],
    stdin: &'static str,
    ok: bool,
    /// A JSON pointer and its value in the one-shot answer, or text the
    /// output (stdout, then stderr) must contain.
    expect: Expect,
}

enum Expect {
    Json(&'static str, &'static str),
    Text(&'static str),
}

const QWEN: &[&str] = &["--reasoning-parser", "qwen3", "--tool-call-parser", "qwen3_coder"];

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "plain body, output from the positional file",
            args: &["plain.json", "examples/qwen3-coder-output.txt"],
            stdin: "",
            ok: true,
            expect: Expect::Json(
                "/choices/0/message/tool_calls/1/function/arguments",
                r#""{\"city\": \"Tokyo\", \"days\": 1}""#,
            ),
        },
        Case {
            name: "plain body, the model name is the body's",
            args: &["plain.json", "examples/qwen3-coder-output.txt"],
            stdin: "",
            ok: true,
            expect: Expect::Json("/model", r#""Qwen/Qwen3-Coder-30B-A3B-Instruct""#),
        },
        Case {
            name: "plain body, output from standard input",
            args: &["plain.json", "-"],
            stdin: "<think>Easy.</think>Paris is sunny.",
            ok: true,
            expect: Expect::Json("/choices/0/message/content", r#""Paris is sunny.""#),
        },
        Case {
            name: "plain body, streamed by its own `stream: true`",
            args: &["plain-stream.json", "-"],
            stdin: "<think>Easy.</think>Paris is sunny.",
            ok: true,
            expect: Expect::Text("data: [DONE]"),
        },
        Case {
            name: "plain body in the Anthropic dialect",
            args: &["plain.json", "-", "--api", "anthropic"],
            stdin: "<think>Easy.</think>Paris is sunny.",
            ok: true,
            expect: Expect::Json("/stop_reason", r#""end_turn""#),
        },
        Case {
            name: "plain body without an output",
            args: &["plain.json"],
            stdin: "",
            ok: false,
            expect: Expect::Text("no model output for"),
        },
        Case {
            name: "wrapper with an output, and a positional file too",
            args: &["wrapper.json", "-"],
            stdin: "x",
            ok: false,
            expect: Expect::Text("two model outputs: the positional file and the request file's `output`"),
        },
        Case {
            name: "wrapper without an output takes the positional file",
            args: &["wrapper-no-output.json", "-"],
            stdin: "<think>Hm.</think>Rain.",
            ok: true,
            expect: Expect::Json("/choices/0/message/reasoning", r#""Hm.""#),
        },
        Case {
            name: "wrapper keeps working",
            args: &["wrapper.json"],
            stdin: "",
            ok: true,
            expect: Expect::Json("/choices/0/message/content", r#""Sunny.""#),
        },
        Case {
            name: "plain body the checks refuse: the OpenAI error body",
            args: &["refused.json", "-"],
            stdin: "x",
            ok: false,
            expect: Expect::Json("/error/message", r#""When using `tool_choice`, `tools` must be set.""#),
        },
    ]
}

#[test]
fn request_forms() {
    let mut failures = Vec::new();
    for c in cases() {
        let mut args = vec!["parse".to_string()];
        args.extend(QWEN.iter().map(|s| s.to_string()));
        args.push("--request".into());
        args.push(format!("{DIR}/{}", c.args[0]));
        // The request file is in the data folder; the rest is as given (from the repo root).
        args.extend(c.args[1..].iter().map(|a| a.to_string()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_sift"))
            .args(&args)
            .current_dir(ROOT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(c.stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if out.status.success() != c.ok {
            failures.push(format!("{}: exit status {}\n{stdout}{stderr}", c.name, out.status));
            continue;
        }
        let met = match c.expect {
            Expect::Json(pointer, want) => serde_json::from_str::<Value>(&stdout)
                .ok()
                .and_then(|v| v.pointer(pointer).cloned())
                .is_some_and(|got| got == serde_json::from_str::<Value>(want).unwrap()),
            Expect::Text(t) => stdout.contains(t) || stderr.contains(t),
        };
        if !met {
            failures.push(format!("{}: expected {}\n{stdout}{stderr}", c.name, describe(&c.expect)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn describe(e: &Expect) -> String {
    match e {
        Expect::Json(p, v) => format!("{p} = {v}"),
        Expect::Text(t) => format!("text {t:?}"),
    }
}
