//! A test's child process (`sift serve`, `sift-replay`): started with its
//! standard error read until it says where it listens, killed and reaped
//! when dropped, so a failing test leaves no process behind.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child process that listens on `addr`, killed when dropped.
pub struct Proc {
    pub child: Child,
    pub addr: String,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cmd` (no stdin or stdout; stderr read, and drained after) and
/// waits at most `wait` for its `listening on http://ADDR` line; otherwise
/// kills it and panics with what it said.
pub fn start(mut cmd: Command, wait: Duration) -> Proc {
    let what = format!("{:?}", cmd.get_program());
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sent {
                continue;
            }
            match line.split("listening on http://").nth(1) {
                Some(a) => {
                    let _ = tx.send(Ok(a.split_whitespace().next().unwrap_or_default().to_string()));
                    sent = true;
                }
                None => {
                    let _ = tx.send(Err(line));
                }
            }
        }
    });
    let deadline = std::time::Instant::now() + wait;
    let mut said = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(Ok(addr)) => return Proc { child, addr },
            Ok(Err(line)) => said.push(line),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{what} did not start:\n{}", said.join("\n"));
            }
        }
    }
}
