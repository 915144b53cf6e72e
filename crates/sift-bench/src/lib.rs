//! Workload generators for the benchmarks.
