//! Keys.
