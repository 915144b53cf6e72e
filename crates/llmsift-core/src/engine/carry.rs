//! Relinking a carried engine state (`crate::state`) to the compiled format
//! and request settings of the parser that resumes it.
//!
//! A carried state holds only what the output moved: the compiled format,
//! the request's settings and its tools are not carried (they are rebuilt
//! from the model's configuration and the request on the receiving side),
//! so after decoding they are placeholders until [`Engine::relink`] puts
//! the fresh parser's own in.
//!
//! Invariant: a relinked engine names only states and terminals its format
//! has; anything else is refused, never indexed.

use super::{ArgsW, Engine};
use crate::format::Format;
use std::sync::{Arc, OnceLock};

impl Engine {
    /// Takes `fresh`'s format, settings and tools (a parser built for the
    /// same request); `Err` names what of the carried state the format lacks.
    pub(crate) fn relink(&mut self, fresh: &Engine) -> Result<(), &'static str> {
        self.fmt = fresh.fmt.clone();
        self.set = fresh.set.clone();
        let states = self.fmt.states.len();
        if usize::from(self.state) >= states {
            return Err("state");
        }
        if self.pending.iter().any(|t| usize::from(*t) >= self.fmt.terminals.len()) {
            return Err("terminal");
        }
        if let Some(c) = &mut self.call {
            match &mut c.args {
                ArgsW::Relaxed(r) => r.tools = self.set.tools.clone(),
                ArgsW::Xml(x) => x.tools = self.set.tools.clone(),
                ArgsW::None | ArgsW::Raw(_) | ArgsW::Params(_) | ArgsW::Py(_) => {}
            }
        }
        Ok(())
    }

    /// The compiled format this engine runs (for the state's fingerprint).
    pub(crate) fn format(&self) -> &Format {
        &self.fmt
    }
}

/// The placeholder format of a decoded engine until [`Engine::relink`]
/// replaces it (never parsed with: `resume` relinks before returning).
pub(super) fn unlinked_format() -> Arc<Format> {
    static EMPTY: OnceLock<Arc<Format>> = OnceLock::new();
    EMPTY
        .get_or_init(|| Arc::new(crate::format::compile(None, None).expect("the empty format compiles")))
        .clone()
}
