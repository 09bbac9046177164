//! Reads.
