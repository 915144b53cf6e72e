//! End-to-end tests of `sift serve` (written next).
