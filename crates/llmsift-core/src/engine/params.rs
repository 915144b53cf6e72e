//! Parameters of XML-like calls (`param_value` states): opening one typed
//! by the request's tools or the transition that opened it, closing it,
//! and, where the output's end may still take an open parameter back
//! (`cut_param_lost` with vLLM's text loss), holding its bytes until it
//! closes (flush) or is cut (abandon).
//!
//! Invariant: a parameter's held bytes go out only when it closes, in order,
//! where the call's other argument bytes go (`with_args`).

use super::args::{self, Params};
use super::policy::ParamFlow;
use super::{unwrap, ArgsW, Engine};
use crate::message::Delta;
use std::sync::Arc;

impl Engine {
    /// Parameters are held until they close, since the end of the output may
    /// still take an open one back (`cut_param_lost` with `vllm_text_loss`).
    pub(super) fn holds_params(&self) -> bool {
        self.set.policy.params == ParamFlow::HeldUntilClosed
    }

    /// The output's end cut the open parameter: its held bytes and the
    /// writer's record of it go, the call stays.
    pub(super) fn abandon_param(&mut self) {
        if let Some(c) = &mut self.call {
            if c.param_buf.take().is_some() {
                if let ArgsW::Params(p) = &mut c.args {
                    p.abandon();
                }
            }
        }
    }

    /// The open parameter closed: its held bytes go where the call's go.
    pub(super) fn flush_param(&mut self, out: &mut Delta) {
        let Some(b) = self.call.as_mut().and_then(|c| c.param_buf.take()) else { return };
        if !b.is_empty() {
            self.with_args(out, |_, o| o.push_str(&b));
        }
    }

    pub(super) fn open_param(&mut self, out: &mut Delta) {
        let tools = Arc::clone(&self.set.tools);
        let Some(c) = &mut self.call else { return };
        if c.index.is_none() && c.deferred.is_none() {
            return;
        }
        let first = matches!(c.args, ArgsW::None);
        if first {
            let mut p = Params::default();
            p.verbatim_keys = self.fmt.calls.verbatim_keys;
            p.verbatim_values = self.fmt.calls.verbatim_values;
            p.trim_values = self.fmt.calls.trim_values;
            c.args = ArgsW::Params(p);
        }
        let key = std::mem::take(&mut c.param_key);
        // An attribute value's entities (`entities = "xml"`): the key is what they stand for.
        let key =
            super::calls::attr_text(self.fmt.calls.entities, self.set.policy.readings(), &key).into_owned();
        let lookup = if self.fmt.calls.verbatim_keys { key.as_str() } else { key.trim() };
        if first && unwrap::holds(&self.fmt.calls.unwrap_params, &tools, &c.name, lookup) {
            c.held = Some(String::new());
        } else if let Some(h) = c.held.take() {
            // A second parameter: the wrapper does not unwrap; release what was held.
            if let (Some(i), false) = (c.index, self.set.suppress_calls) {
                out.call_fragment(i).arguments.push_str(&h);
            }
        }
        if self.holds_params() {
            // What an earlier parameter still holds goes out with it (it
            // ended without its closing marker: the next one opened).
            self.with_args(out, |a, o| {
                if let ArgsW::Params(p) = a {
                    p.close(o)
                }
            });
            self.flush_param(out);
            if let Some(c) = &mut self.call {
                c.param_buf = Some(String::new());
            }
        }
        let Some(c) = &mut self.call else { return };
        use crate::format::compiled::ParamForce;
        let engine =
            args::engine_open(&tools, &c.name, lookup, self.param_override, self.fmt.calls.coerce_values);
        if let Some(how) = engine {
            self.param_override = None;
            self.with_args(out, |a, o| {
                if let ArgsW::Params(p) = a {
                    p.open_engine(&key, how, o)
                }
            });
            return;
        }
        let (ty, literal) = match self.param_override.take() {
            Some(ParamForce::Type(t)) => (t, false),
            Some(ParamForce::Admitted(_)) => (crate::schema::ParamType::Json, false),
            Some(ParamForce::Declared) => match tools.declared_type(&c.name, lookup) {
                Some(t) => (t, !tools.nullable(&c.name, lookup)),
                None => (crate::schema::ParamType::Json, false),
            },
            None if self.fmt.calls.union_string && tools.admits_string(&c.name, lookup) => {
                (crate::schema::ParamType::String, false)
            }
            None => (tools.param_type(&c.name, lookup), false),
        };
        self.with_args(out, |a, o| {
            if let ArgsW::Params(p) = a {
                p.open_as(&key, ty, literal, o)
            }
        });
    }

    pub(super) fn close_param(&mut self, out: &mut Delta) {
        self.with_args(out, |a, o| {
            if let ArgsW::Params(p) = a {
                p.close(o)
            }
        });
        self.flush_param(out);
    }
}
