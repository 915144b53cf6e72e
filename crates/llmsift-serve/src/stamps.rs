//! Per-chunk relay stamps: when each streamed backend chunk's bytes arrived
//! and when its client frames were handed to the client's connection
//! (`sift serve --stamps`, read and drained with `GET /debug/stamps`).
//!
//! Owns the record the load test (`crates/llmsift-serve/examples/load.rs`)
//! pairs with the backend's send times and the client's read times, so the
//! time the gateway adds is measured chunk by chunk rather than as a
//! difference of two percentiles (which can even come out negative).
//!
//! Invariants: off unless enabled, and then recording costs one atomic load
//! per chunk; a stamp is `[seed, chunk, received, written]`, keyed by the
//! request's `seed` (0 when it has none) and the chunk's position in the
//! backend stream, times in Unix nanoseconds of the system clock (the clock
//! the replay backend and the load test read); `written ≥ received`. The log
//! grows until read, so it is for bounded load tests only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One chunk: `(seed, chunk, received, written)`.
pub type Stamp = (u64, u32, u128, u128);

/// The stamp log (off by default).
#[derive(Debug, Default)]
pub struct Stamps {
    on: AtomicBool,
    log: Mutex<Vec<Stamp>>,
}

impl Stamps {
    /// Starts recording.
    pub fn enable(&self) {
        self.on.store(true, Ordering::Relaxed);
    }

    /// Whether stamps are recorded.
    pub fn enabled(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Records chunk `chunk` of request `seed`: its bytes arrived at
    /// `received`, its frames are handed over now.
    pub fn record(&self, seed: u64, chunk: u32, received: Instant) {
        if !self.enabled() {
            return;
        }
        // Both times from one reading of the system clock, so that a clock
        // step between two readings cannot make `written` precede `received`.
        let written = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let received = written.saturating_sub(received.elapsed().as_nanos());
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push((seed, chunk, received, written));
    }

    /// Everything recorded since the last call.
    pub fn drain(&self) -> Vec<Stamp> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
