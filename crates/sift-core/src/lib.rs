//! Sift's pure core. See ARCHITECTURE.md.
pub mod token;
pub use token::{ReasoningCounter, Vocab};
