//! The pythonic calls kernel: `[f(a=1, b='x'), g()]` (Llama 4, LFM2) or
//! newline-separated `f(a=1)\ng()` (OLMo 3). Arguments are Python literals,
//! converted to JSON as they stream ([`super::pyvalue`]).
//!
//! A call commits when its first argument's value is complete (or at `)` for
//! a call without arguments): text that is not a call list — `hello[A(A=`,
//! an empty `[]` — is recorded and handed back whole to the `fail` state, so
//! it stays content. The decision depends only on the bytes seen so far.

use super::frames::PyPhase as Phase;
use super::pyvalue::{Py, PyArgs};
use super::{ArgsW, Engine};
use crate::format::compiled::PyCfg;
use crate::message::Delta;

enum Step {
    Took,
    Fail,
    Done,
}

fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Engine {
    pub(super) fn py_text(&mut self, cfg: &PyCfg, s: &str, out: &mut Delta) -> Option<usize> {
        for (i, c) in s.char_indices() {
            match self.py_step(cfg, c, out) {
                Step::Took => {
                    if self.call.as_ref().is_some_and(|c| c.index.is_none()) {
                        self.record(&s[i..i + c.len_utf8()]);
                    }
                }
                Step::Fail => {
                    self.end_call(out);
                    self.py = None;
                    self.state = cfg.fail;
                    self.enter(cfg.fail, out);
                    return Some(i);
                }
                Step::Done => {
                    self.end_call(out);
                    self.py = None;
                    self.state = cfg.done;
                    self.enter(cfg.done, out);
                    return Some(i);
                }
            }
        }
        None
    }

    fn py_args(&mut self, out: &mut Delta, f: impl FnOnce(&mut PyArgs, &mut String) -> Py) -> Py {
        let mut r = Py::Bad;
        self.with_args(out, |a, o| {
            if let ArgsW::Py(p) = a {
                r = f(p, o);
            }
        });
        r
    }

    fn py_commit(&mut self, out: &mut Delta) {
        if self.call.as_ref().is_some_and(|c| c.index.is_none()) {
            let name = self.py.as_ref().map(|p| p.name.clone()).unwrap_or_default();
            self.commit(name, None, out);
        }
    }

    fn committed(&self) -> bool {
        self.call.as_ref().is_some_and(|c| c.index.is_some())
    }

    fn py_step(&mut self, cfg: &PyCfg, c: char, out: &mut Delta) -> Step {
        let st = self.py.get_or_insert_with(Box::default);
        let ws = c.is_whitespace();
        match st.phase {
            Phase::Lead => {
                if self.call.is_none() {
                    self.begin_call();
                }
                let st = self.py.as_mut().expect("py");
                match c {
                    _ if ws => Step::Took,
                    '[' => {
                        st.bracketed = true;
                        st.phase = Phase::CallStart;
                        Step::Took
                    }
                    _ if !cfg.bracketed && ident(c) => {
                        st.name.clear();
                        st.name.push(c);
                        st.phase = Phase::Name;
                        Step::Took
                    }
                    _ => Step::Fail,
                }
            }
            Phase::CallStart | Phase::AfterCall => match c {
                _ if ws => Step::Took,
                ',' if st.phase == Phase::AfterCall && st.bracketed => {
                    st.phase = Phase::CallStart;
                    Step::Took
                }
                ']' if st.bracketed => {
                    if st.phase == Phase::CallStart && !self.committed() && self.next_index == 0 {
                        return Step::Fail;
                    }
                    let st = self.py.as_mut().expect("py");
                    st.phase = Phase::Trail;
                    Step::Took
                }
                _ if ident(c) && (st.phase == Phase::CallStart || !st.bracketed) => {
                    st.name.clear();
                    st.name.push(c);
                    st.phase = Phase::Name;
                    if self.call.is_none() {
                        self.begin_call();
                    }
                    Step::Took
                }
                _ if self.next_index > 0 => Step::Done,
                _ => Step::Fail,
            },
            Phase::Name => match c {
                '(' => {
                    st.phase = Phase::ArgKey;
                    if let Some(call) = &mut self.call {
                        call.args = ArgsW::Py(PyArgs::default());
                    }
                    Step::Took
                }
                _ if ident(c) || c == '.' || c == '-' => {
                    st.name.push(c);
                    Step::Took
                }
                _ => self.py_bad(),
            },
            Phase::ArgKey => match c {
                _ if ws => Step::Took,
                ')' => self.py_call_end(out),
                _ if ident(c) => {
                    st.key.clear();
                    st.key.push(c);
                    st.phase = Phase::Key;
                    Step::Took
                }
                _ => self.py_bad(),
            },
            Phase::Key | Phase::Eq => match c {
                '=' => {
                    let key = std::mem::take(&mut st.key);
                    st.phase = Phase::Value;
                    self.py_args(out, |p, o| {
                        p.key(&key, o);
                        Py::Ok
                    });
                    Step::Took
                }
                _ if ws => {
                    st.phase = Phase::Eq;
                    Step::Took
                }
                _ if ident(c) && st.phase == Phase::Key => {
                    st.key.push(c);
                    Step::Took
                }
                _ => self.py_bad(),
            },
            Phase::Value => match self.py_args(out, |p, o| p.push(c, o)) {
                Py::Ok => {
                    if self.value_done() {
                        self.py_commit(out);
                        self.py.as_mut().expect("py").phase = Phase::AfterArg;
                    }
                    Step::Took
                }
                Py::End => {
                    self.py_commit(out);
                    self.py.as_mut().expect("py").phase = Phase::AfterArg;
                    self.py_step(cfg, c, out)
                }
                Py::Bad => {
                    // A value that cannot end here (`A=)`) is not a call.
                    self.py_bad()
                }
            },
            Phase::AfterArg => match c {
                _ if ws => Step::Took,
                ',' => {
                    st.phase = Phase::ArgKey;
                    Step::Took
                }
                ')' => self.py_call_end(out),
                _ => self.py_bad(),
            },
            // Text after the list is the `done` state's (content): the calls
            // already streamed, and no byte after them is dropped.
            Phase::Trail => Step::Done,
        }
    }

    fn value_done(&self) -> bool {
        match self.call.as_ref().map(|c| &c.args) {
            Some(ArgsW::Py(p)) => p.value_done(),
            _ => false,
        }
    }

    fn py_call_end(&mut self, out: &mut Delta) -> Step {
        self.py_commit(out);
        self.end_call(out);
        if let Some(st) = &mut self.py {
            st.phase = Phase::AfterCall;
        }
        Step::Took
    }

    /// A byte that breaks the call syntax.
    fn py_bad(&mut self) -> Step {
        if self.committed() {
            Step::Done
        } else {
            Step::Fail
        }
    }

    /// The pythonic state is left (a closing marker, or the end of output).
    pub(super) fn py_finish(&mut self, out: &mut Delta) {
        self.py = None;
        self.end_call(out);
    }
}
