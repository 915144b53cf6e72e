//! Measurement: thread CPU time, best of N, and bytes held.
//!
//! Time is the calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, via
//! `cpu-time`), so a run is not charged for the time the shared machine
//! gives other processes. Bytes held come from `allocation-counter`'s
//! counting global allocator, compiled in only with the `count-alloc`
//! feature: it costs every allocation a few nanoseconds, which would tax the
//! peers that allocate per delta, so timed runs never use it.

use cpu_time::ThreadTime;
use std::hint::black_box;
use std::time::Duration;

/// The CPU time `f` takes, in nanoseconds.
pub fn cpu_ns<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let t0 = ThreadTime::now();
    let out = black_box(f());
    (t0.elapsed().as_nanos() as u64, out)
}

/// The lowest of the CPU times of `run` over at least `min_reps` runs, more
/// while the total stays under `budget` and the count under `max_reps`.
/// `setup` builds each run's input outside the timed region.
pub fn best_of<I>(
    min_reps: usize,
    max_reps: usize,
    budget: Duration,
    mut setup: impl FnMut() -> I,
    mut run: impl FnMut(I),
) -> (u64, usize) {
    let mut best = u64::MAX;
    let mut spent = 0u64;
    let mut reps = 0;
    while reps < min_reps || (reps < max_reps && spent < budget.as_nanos() as u64) {
        let input = setup();
        let (ns, ()) = cpu_ns(|| run(input));
        best = best.min(ns);
        spent += ns;
        reps += 1;
    }
    (best, reps)
}

/// Bytes `f` left allocated (allocated minus freed while it ran), or `None`
/// in a build without the counting allocator.
#[cfg(feature = "count-alloc")]
pub fn held(f: impl FnOnce()) -> Option<i64> {
    Some(allocation_counter::measure(f).bytes_current)
}

/// Bytes `f` left allocated, or `None` in a build without the counting
/// allocator (this one).
#[cfg(not(feature = "count-alloc"))]
pub fn held(f: impl FnOnce()) -> Option<i64> {
    f();
    None
}
