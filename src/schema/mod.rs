//! Schemas.
