//! Formats: the language ([`spec`]), compilation and validation
//! ([`mod@compile`]), and the immutable compiled form the engine reads.
pub mod compile;
pub mod compiled;
pub mod response_template;
pub mod spec;
pub mod terminals;

pub use compile::compile;
pub use compiled::{Format, StateId, TermId};
pub use spec::FormatSpec;
