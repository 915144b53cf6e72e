//! A stream's state carried by the client between replicas: a compact,
//! versioned, authenticated token (`docs/scale-out.md`).
//!
//! Owns the token format and its checks:
//!
//! ```text
//! base64url( 'S' | envelope u8 | layout u16 | body length u32 | body
//!            | auth tag (16) | request tag (16) )
//! body        = MessagePack of the state (structs as arrays: no field names)
//! auth tag    = HMAC-SHA256(key, "auth" | header | body)[..16]
//! request tag = HMAC-SHA256(key, "bind" | auth tag | SHA-256(binding))[..16]
//! ```
//!
//! The binding is what the caller says identifies the request (its id and
//! body), so a state is only accepted for the request it was saved for.
//! Two tags let a refusal say which check failed: a bad auth tag is a
//! forgery (or another key), a good auth tag with a bad request tag is a
//! state replayed for another request. Tags are HMAC-SHA256 truncated to
//! 128 bits (RFC 2104 §5).
//!
//! Invariant: [`open`] never panics and never allocates more than the token
//! it is given; every refusal is a [`CarryError`] that names its cause, and
//! every one is the client's fault (HTTP 400).
//!
//! Also owns what a [`ChoiceProcessor`] carries: the parser's state and the
//! serving rules' counters (usage, reasoning tokens, calls sent, the finish
//! reason), everything else is rebuilt from the request.

use crate::check::CheckedRequest;
use crate::processor::{ChoiceProcessor, FinishReason, Options};
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use llmsift_core::state::STATE_LAYOUT;
use llmsift_core::{ParserFactory, ParserState, ParserStateRef, ReasoningCounter, ResumeError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// The envelope's own version (the header and tags); the body's layout is
/// the core's [`STATE_LAYOUT`].
pub const ENVELOPE_VERSION: u8 = 1;

const MAGIC: u8 = b'S';
const HEADER: usize = 8;
const TAG: usize = 16;

/// The shortest key accepted, in bytes.
pub const MIN_KEY_LEN: usize = 16;

/// base64url, written without padding, read with or without it and with any
/// trailing bits (a cut token then reads as the bytes it still has).
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// The key the replicas share.
#[derive(Clone)]
pub struct StateKey(Vec<u8>);

impl StateKey {
    /// A key from its text (`--state-key`, `SIFT_STATE_KEY`): at least
    /// [`MIN_KEY_LEN`] bytes, used as given.
    pub fn new(text: &str) -> Result<StateKey, String> {
        if text.len() < MIN_KEY_LEN {
            return Err(format!("the state key must be at least {MIN_KEY_LEN} bytes (got {})", text.len()));
        }
        Ok(StateKey(text.as_bytes().to_vec()))
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any length")
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateKey(…)")
    }
}

/// Why a carried state was refused. Every one is the client's (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CarryError {
    /// Not a state token at all (not base64url, or another magic byte).
    Malformed,
    /// Shorter than its header says: the token was cut.
    Truncated,
    /// Made by another version of the state format.
    OtherVersion {
        /// The token's envelope version and body layout.
        found: (u8, u16),
        /// This server's.
        expected: (u8, u16),
    },
    /// The authentication tag is wrong: altered, or made with another key.
    Forged,
    /// Authentic, but saved for another request.
    OtherRequest,
    /// Authentic and for this request, but not a state of this layout.
    Undecodable,
    /// Authentic, but for another parser format (another pair or version
    /// of a format file on the replica that saved it).
    OtherFormat,
    /// Authentic, but it does not fit the request's parser.
    Mismatch(&'static str),
}

impl CarryError {
    /// A stable machine-readable name (`state_forged`, …).
    pub fn code(&self) -> &'static str {
        match self {
            CarryError::Malformed => "state_malformed",
            CarryError::Truncated => "state_truncated",
            CarryError::OtherVersion { .. } => "state_other_version",
            CarryError::Forged => "state_forged",
            CarryError::OtherRequest => "state_other_request",
            CarryError::Undecodable => "state_undecodable",
            CarryError::OtherFormat => "state_other_format",
            CarryError::Mismatch(_) => "state_mismatch",
        }
    }
}

impl fmt::Display for CarryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CarryError::Malformed => f.write_str("stream_state is not a state token"),
            CarryError::Truncated => f.write_str("stream_state is truncated"),
            CarryError::OtherVersion { found, expected } => write!(
                f,
                "stream_state was made by another version (envelope {}, layout {}; this server reads envelope {}, layout {})",
                found.0, found.1, expected.0, expected.1
            ),
            CarryError::Forged => f.write_str("stream_state failed authentication (altered, or another state key)"),
            CarryError::OtherRequest => f.write_str("stream_state belongs to another request"),
            CarryError::Undecodable => f.write_str("stream_state does not decode"),
            CarryError::OtherFormat => f.write_str("stream_state belongs to another parser format"),
            CarryError::Mismatch(what) => write!(f, "stream_state does not fit this request's parser ({what})"),
        }
    }
}

impl std::error::Error for CarryError {}

impl From<ResumeError> for CarryError {
    fn from(e: ResumeError) -> CarryError {
        match e {
            ResumeError::OtherFormat => CarryError::OtherFormat,
            ResumeError::Mismatch(what) => CarryError::Mismatch(what),
        }
    }
}

fn tags(key: &StateKey, signed: &[u8], binding: &[u8]) -> ([u8; TAG], [u8; TAG]) {
    let mut m = key.mac();
    m.update(b"auth");
    m.update(signed);
    let auth: [u8; TAG] = m.finalize().into_bytes()[..TAG].try_into().expect("16 of 32 bytes");
    let mut m = key.mac();
    m.update(b"bind");
    m.update(&auth);
    m.update(&Sha256::digest(binding));
    let bind: [u8; TAG] = m.finalize().into_bytes()[..TAG].try_into().expect("16 of 32 bytes");
    (auth, bind)
}

/// The token of `value`, for the request `binding` identifies.
pub fn seal<T: Serialize + ?Sized>(key: &StateKey, binding: &[u8], value: &T) -> String {
    let body = rmp_serde::to_vec(value).expect("carried states serialize");
    let mut buf = Vec::with_capacity(HEADER + body.len() + 2 * TAG);
    buf.push(MAGIC);
    buf.push(ENVELOPE_VERSION);
    buf.extend_from_slice(&STATE_LAYOUT.to_le_bytes());
    buf.extend_from_slice(&(body.len() as u32).to_le_bytes());
    buf.extend_from_slice(&body);
    let (auth, bind) = tags(key, &buf, binding);
    buf.extend_from_slice(&auth);
    buf.extend_from_slice(&bind);
    B64.encode(buf)
}

/// The value of a token made by [`seal`] for the same request `binding`.
pub fn open<T: DeserializeOwned>(key: &StateKey, binding: &[u8], token: &str) -> Result<T, CarryError> {
    let bytes = match B64.decode(token.trim()) {
        Ok(b) => b,
        // A token cut one character past a 3-byte group.
        Err(base64::DecodeError::InvalidLength(_)) => {
            let t = token.trim();
            B64.decode(&t[..t.len().saturating_sub(1)]).map_err(|_| CarryError::Malformed)?
        }
        Err(_) => return Err(CarryError::Malformed),
    };
    match bytes.first() {
        None => return Err(CarryError::Truncated),
        Some(&MAGIC) => {}
        Some(_) => return Err(CarryError::Malformed),
    }
    if bytes.len() < 4 {
        return Err(CarryError::Truncated);
    }
    let found = (bytes[1], u16::from_le_bytes([bytes[2], bytes[3]]));
    let expected = (ENVELOPE_VERSION, STATE_LAYOUT);
    if found != expected {
        return Err(CarryError::OtherVersion { found, expected });
    }
    if bytes.len() < HEADER {
        return Err(CarryError::Truncated);
    }
    let len = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
    let end = HEADER.saturating_add(len);
    let total = end.saturating_add(2 * TAG);
    if bytes.len() < total {
        return Err(CarryError::Truncated);
    }
    if bytes.len() > total {
        return Err(CarryError::Malformed);
    }
    let (auth, bind) = tags(key, &bytes[..end], binding);
    // Constant-time comparisons (`subtle` through `hmac`'s own `verify` would
    // need the full tag; these are truncated).
    if !same(&auth, &bytes[end..end + TAG]) {
        return Err(CarryError::Forged);
    }
    if !same(&bind, &bytes[end + TAG..]) {
        return Err(CarryError::OtherRequest);
    }
    rmp_serde::from_slice(&bytes[HEADER..end]).map_err(|_| CarryError::Undecodable)
}

/// Compares two tags in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What a [`ChoiceProcessor`] carries, borrowed for [`seal`].
#[derive(Debug, Serialize)]
pub struct ProcessorStateRef<'a> {
    parser: ParserStateRef<'a>,
    counter: &'a Option<ReasoningCounter>,
    completion_tokens: u64,
    calls_sent: bool,
    finished: Option<FinishReason>,
}

/// What a [`ChoiceProcessor`] carries, as [`open`] reads it.
#[derive(Debug, Deserialize)]
pub struct ProcessorState {
    parser: ParserState,
    counter: Option<ReasoningCounter>,
    completion_tokens: u64,
    calls_sent: bool,
    finished: Option<FinishReason>,
}

impl ChoiceProcessor {
    /// The state to carry to another replica.
    pub fn snapshot(&self) -> ProcessorStateRef<'_> {
        ProcessorStateRef {
            parser: self.parser.snapshot(),
            counter: &self.counter,
            completion_tokens: self.completion_tokens,
            calls_sent: self.calls_sent,
            finished: self.finished,
        }
    }

    /// A processor for `req` that continues where `state` was saved (the
    /// same request, factory configuration and options).
    pub fn resume(
        factory: &ParserFactory,
        req: &CheckedRequest,
        opts: &Options,
        state: ProcessorState,
    ) -> Result<ChoiceProcessor, CarryError> {
        let mut p = ChoiceProcessor::new(factory, req, opts);
        p.parser = factory.resume(&ChoiceProcessor::core_request(req, opts), state.parser)?;
        p.counter = state.counter;
        p.completion_tokens = state.completion_tokens;
        p.calls_sent = state.calls_sent;
        p.finished = state.finished;
        Ok(p)
    }
}
