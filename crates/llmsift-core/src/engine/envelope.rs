//! The JSON envelope kernel: calls written as JSON objects
//! `{"name": …, "arguments": {…}}` (Hermes inside `<tool_call>`, Llama 3's
//! bare objects separated by `;`, the `required` tool choice's array).
//!
//! A call commits when its name is known and its arguments have started
//! with `{` plus one more valid byte; from then on argument bytes stream
//! through [`super::args::RawJson`]. Before that, the raw text is recorded:
//! if the object proves not to be a call (invalid JSON, no name, no
//! arguments), the recorded text and everything after it go to the format's
//! `fail` state, so nothing is lost. The decision depends only on the bytes
//! seen so far, which is what keeps streaming equal to one-shot.

use super::frames::{Env, EnvPhase as Phase, Role};
use super::{ArgsW, Engine, RawJson};
use crate::format::compiled::{EnvelopeCfg, Mode};
use crate::json::{JsonScanner, Scan};
use crate::message::Delta;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Length of a JSON string body up to its closing quote (exclusive), if present.
fn string_end(s: &[u8], esc: &mut bool) -> Option<usize> {
    for (i, &b) in s.iter().enumerate() {
        if *esc {
            *esc = false;
        } else if b == b'\\' {
            *esc = true;
        } else if b == b'"' {
            return Some(i);
        }
    }
    None
}

enum Step {
    /// Consumed `n` bytes.
    Took(usize),
    /// Not a call: the rest (from this byte) goes to the fail state.
    Fail,
    /// Not a call, found `n` bytes on: those `n` are the call's text (as
    /// they would be had they come in an earlier delta), the rest fails.
    FailAfter(usize),
    /// The calls are over: the rest goes to the done state.
    Done,
}

impl Engine {
    /// Feeds envelope text; `Some(n)` when the kernel handed the rest (from
    /// byte `n`) to another state.
    pub(super) fn env_text(&mut self, cfg: &EnvelopeCfg, s: &str, out: &mut Delta) -> Option<usize> {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let step = self.env_step(cfg, s, i, out);
            match step {
                Step::Took(n) => {
                    if self.call.as_ref().is_some_and(|c| c.index.is_none()) {
                        self.record(&s[i..i + n]);
                    }
                    i += n;
                }
                Step::Fail => {
                    self.end_call(out);
                    self.switch(cfg.fail, out);
                    return Some(i);
                }
                Step::FailAfter(n) => {
                    self.record(&s[i..i + n]);
                    self.end_call(out);
                    self.switch(cfg.fail, out);
                    return Some(i + n);
                }
                Step::Done => {
                    self.end_call(out);
                    self.switch(cfg.done, out);
                    return Some(i);
                }
            }
        }
        None
    }

    fn switch(&mut self, to: crate::format::StateId, out: &mut Delta) {
        self.env = None;
        self.state = to;
        self.enter(to, out);
    }

    /// Commits when the name is known and the arguments have begun.
    fn env_try_commit(&mut self, out: &mut Delta) {
        if self.call.as_ref().is_none_or(|c| c.index.is_some()) {
            return;
        }
        let Some(env) = &self.env else { return };
        let (Some(name), true) = (&env.name, env.args_started) else {
            return;
        };
        let name = name.clone();
        if self.name_refused(&name) {
            // Not a function name: the call's text is content; the name is
            // forgotten so that it is not tried again on every byte.
            if let (Some(c), Some(env)) = (&mut self.call, &mut self.env) {
                c.nameless = true;
                env.name = None;
            }
            return;
        }
        let ready = match self.call.as_ref().map(|c| (&c.args, c.index)) {
            Some((ArgsW::Raw(r), None)) => r.fed() >= 2 || r.complete(),
            _ => false,
        };
        if ready {
            self.commit(name, None, out);
        }
    }

    fn env_step(&mut self, cfg: &EnvelopeCfg, s: &str, i: usize, out: &mut Delta) -> Step {
        let bytes = s.as_bytes();
        let c = bytes[i];
        let env = self.env.get_or_insert_with(Env::default);
        match env.phase {
            Phase::Lead | Phase::ArrLead | Phase::Between => {
                if self.call.is_none() && env.phase == Phase::Lead {
                    self.begin_call();
                }
                let env = self.env.as_mut().expect("env");
                if is_ws(c) || (env.phase == Phase::Between && Some(c) == cfg.separator) {
                    return Step::Took(1);
                }
                match c {
                    b'[' if cfg.array && !env.in_array => {
                        env.in_array = true;
                        env.phase = Phase::ArrLead;
                        Step::Took(1)
                    }
                    b']' if env.phase == Phase::ArrLead => Step::Done,
                    b'{' if !cfg.array || env.in_array => {
                        *env = Env { in_array: env.in_array, phase: Phase::Key, ..Env::default() };
                        if self.call.is_none() {
                            self.begin_call();
                        }
                        Step::Took(1)
                    }
                    _ if env.phase == Phase::Between => Step::Done,
                    _ => Step::Fail,
                }
            }
            Phase::Key => match c {
                _ if is_ws(c) => Step::Took(1),
                b'"' => {
                    env.key.clear();
                    env.esc = false;
                    env.phase = Phase::InKey;
                    Step::Took(1)
                }
                b'}' => self.env_object_end(cfg, out),
                _ => Step::Fail,
            },
            Phase::InKey => match string_end(&bytes[i..], &mut env.esc) {
                Some(n) => {
                    env.key.push_str(&s[i..i + n]);
                    env.phase = Phase::Colon;
                    Step::Took(n + 1)
                }
                None => {
                    env.key.push_str(&s[i..]);
                    Step::Took(bytes.len() - i)
                }
            },
            Phase::Colon => match c {
                _ if is_ws(c) => Step::Took(1),
                b':' if cfg.keyed => {
                    // `{"NAME": {arguments}}`: the key is the function name.
                    env.phase = Phase::Value;
                    if env.name.is_some() {
                        env.role = Some(Role::Skip);
                        return Step::Took(1);
                    }
                    match serde_json::from_str::<String>(&format!("\"{}\"", env.key)) {
                        Ok(name) if !name.is_empty() => {
                            env.name = Some(name);
                            env.role = Some(Role::Args);
                            Step::Took(1)
                        }
                        _ => Step::Fail,
                    }
                }
                b':' => {
                    env.phase = Phase::Value;
                    env.role = Some(if cfg.name_keys.contains(&env.key) {
                        Role::Name
                    } else if cfg.args_keys.contains(&env.key) {
                        Role::Args
                    } else {
                        Role::Skip
                    });
                    Step::Took(1)
                }
                _ => Step::Fail,
            },
            Phase::Value => {
                if is_ws(c) {
                    return Step::Took(1);
                }
                match env.role {
                    Some(Role::Name) if c == b'"' && env.name.is_none() => {
                        env.raw_name.clear();
                        env.esc = false;
                        env.phase = Phase::NameStr;
                        Step::Took(1)
                    }
                    Some(Role::Args) if c == b'{' && !env.args_started => {
                        env.args_started = true;
                        env.phase = Phase::ArgsVal;
                        if let Some(call) = &mut self.call {
                            call.args = ArgsW::Raw(RawJson::default());
                        }
                        self.env_args(s, i, out)
                    }
                    Some(Role::Skip) => {
                        env.skip = JsonScanner::new();
                        env.phase = Phase::SkipVal;
                        self.env_skip(s, i)
                    }
                    _ => Step::Fail,
                }
            }
            Phase::NameStr => match string_end(&bytes[i..], &mut env.esc) {
                Some(n) => {
                    env.raw_name.push_str(&s[i..i + n]);
                    let quoted = format!("\"{}\"", env.raw_name);
                    match serde_json::from_str::<String>(&quoted) {
                        Ok(name) if !name.is_empty() => {
                            env.name = Some(name);
                            env.phase = Phase::After;
                            self.env_try_commit(out);
                            Step::Took(n + 1)
                        }
                        // The whole string is the call's text, however it was cut;
                        // an empty name makes the call nameless, so that text is
                        // content even where uncommitted calls are dropped.
                        Ok(_) => {
                            if let Some(c) = &mut self.call {
                                c.nameless = true;
                            }
                            Step::FailAfter(n + 1)
                        }
                        Err(_) => Step::FailAfter(n + 1),
                    }
                }
                None => {
                    env.raw_name.push_str(&s[i..]);
                    Step::Took(bytes.len() - i)
                }
            },
            Phase::ArgsVal => self.env_args(s, i, out),
            Phase::SkipVal => self.env_skip(s, i),
            Phase::After => match c {
                _ if is_ws(c) => Step::Took(1),
                b',' => {
                    env.phase = Phase::Key;
                    Step::Took(1)
                }
                b'}' => self.env_object_end(cfg, out),
                _ => self.env_junk(cfg),
            },
            Phase::ArrAfter => match c {
                _ if is_ws(c) => Step::Took(1),
                b',' => {
                    env.phase = Phase::ArrLead;
                    Step::Took(1)
                }
                b']' => {
                    env.phase = Phase::Closed;
                    Step::Took(1)
                }
                _ => Step::Done,
            },
            Phase::Trail => Step::Took(bytes.len() - i),
            Phase::Closed if cfg.rest || matches!(self.fmt.states[cfg.done as usize].mode, Mode::Lost) => {
                Step::Done
            }
            Phase::Closed => Step::Took(bytes.len() - i),
            Phase::Single => Step::Done,
        }
    }

    /// Whether the envelope is inside an open JSON string: a key, the name,
    /// the arguments' strings or a skipped value's.
    pub(super) fn env_in_string(&self) -> bool {
        let Some(env) = &self.env else { return false };
        match env.phase {
            Phase::InKey | Phase::NameStr => true,
            Phase::ArgsVal => {
                matches!(self.call.as_ref().map(|c| &c.args), Some(ArgsW::Raw(r)) if r.in_string())
            }
            Phase::SkipVal => env.skip.in_string(),
            _ => false,
        }
    }

    fn env_args(&mut self, s: &str, i: usize, out: &mut Delta) -> Step {
        let mut used = 0;
        let mut stopped = false;
        let mut invalid = false;
        self.with_args(out, |a, o| {
            if let ArgsW::Raw(r) = a {
                used = r.feed(&s[i..], false, o);
                stopped = r.stopped();
                invalid = stopped && !r.complete();
            }
        });
        self.env_try_commit(out);
        let committed = self.call.as_ref().is_some_and(|c| c.index.is_some());
        if invalid && !committed {
            return Step::FailAfter(used);
        }
        if stopped {
            if let Some(env) = &mut self.env {
                env.phase = if invalid { Phase::Trail } else { Phase::After };
            }
        }
        Step::Took(used.max(usize::from(invalid && used == 0)))
    }

    fn env_skip(&mut self, s: &str, i: usize) -> Step {
        let env = self.env.as_mut().expect("env");
        match env.skip.feed(&s.as_bytes()[i..]) {
            Scan::More => Step::Took(s.len() - i),
            Scan::Complete { used } => {
                env.phase = Phase::After;
                Step::Took(used)
            }
            Scan::Invalid { at } => Step::FailAfter(at),
        }
    }

    /// Unexpected bytes after a member.
    fn env_junk(&mut self, cfg: &EnvelopeCfg) -> Step {
        let committed = self.call.as_ref().is_some_and(|c| c.index.is_some());
        if !committed {
            return Step::Fail;
        }
        if cfg.single {
            // One well-formed object or nothing: a held group fails.
            self.hold_fail(None);
            return Step::Fail;
        }
        if cfg.separator.is_some() {
            return Step::Done;
        }
        if let Some(env) = &mut self.env {
            env.phase = Phase::Trail;
        }
        Step::Took(1)
    }

    fn env_object_end(&mut self, cfg: &EnvelopeCfg, out: &mut Delta) -> Step {
        let env = self.env.as_mut().expect("env");
        // A deferred call counts as committed: it is emitted when it ends.
        let committed = self.call.as_ref().is_some_and(|c| c.index.is_some() || c.deferred.is_some());
        if !committed {
            match (&env.name, cfg.empty_args && !env.args_started) {
                (Some(name), true) => {
                    let name = name.clone();
                    self.commit(name, None, out);
                }
                _ => return Step::Fail,
            }
        }
        // The closing brace belongs to the envelope, not to the arguments.
        self.end_call(out);
        let env = self.env.as_mut().expect("env");
        env.closed = true;
        env.phase = if cfg.array {
            Phase::ArrAfter
        } else if cfg.single {
            Phase::Single
        } else if cfg.separator.is_some() {
            Phase::Between
        } else {
            Phase::Closed
        };
        Step::Took(1)
    }

    /// The envelope state is left (a closing marker, or the end of output).
    pub(super) fn env_finish(&mut self, out: &mut Delta) {
        let single = matches!(&self.fmt.states[self.state as usize].mode,
            crate::format::compiled::Mode::Envelope(c) if c.single);
        if single && !self.env.as_ref().is_some_and(|e| e.closed) {
            // A `single` object left unclosed: a held group fails.
            self.hold_fail(None);
        }
        let env = self.env.take();
        if self.cut_names_call()
            && self.call.as_ref().is_some_and(|c| c.index.is_none() && c.deferred.is_none())
        {
            // vLLM's engine answers a call the output's end cut once its name
            // is known, arguments as far as written (`vllm_text_loss`).
            // Under `begun` only once its arguments have begun (vLLM's Apertus
            // engine answers nothing for `[{"get_weather":`).
            let begun = !self.cut_needs_args();
            if let Some(name) = env.filter(|e| begun || e.args_started).and_then(|e| e.name) {
                self.commit(name, None, out);
            }
        }
        // A deferred call whose object never closed is not whole: it follows
        // the format's `uncommitted` policy.
        if let Some(c) = &mut self.call {
            if c.index.is_none() {
                c.deferred = None;
            }
        }
        self.end_call(out);
    }
}
