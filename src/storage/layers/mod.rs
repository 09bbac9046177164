//! Wrappers: a [`crate::storage::Storage`] around another one, adding one concern and
//! passing the verbs on. They stack in the meta client (instrumented, then the caches), so
//! every backend gets the same counting and caching without knowing of it.
//!
//! - [`Instrumented`]: counts requests, bytes and round trips by purpose;
//! - [`cache`]: the session's immutable objects; [`mdt_cache`]: metadata-table file bytes
//!   shared across handles (an isolate's); [`mdt_prefetch`]: the metadata table's
//!   properties and listing fetched beside the data table's open;
//! - [`prefixed`]: a sub-directory as a root (the metadata table);
//! - `latency` (native): a fixed delay per request, for benchmarks; [`crash`]: writes that
//!   fail from the k-th on, for crash tests;
//! - [`timer`]: waiting without a thread (backoff, lock renewal); [`js_failure`]: how a JS
//!   storage object's failures map to errors.
//!
//! Retries live with the transport that knows what is retryable (`http::Client` for
//! HTTP(S), object_store's own for native S3), not in a layer here.
//!
//! The two metadata-table wrappers belong with the metadata table, but the meta client
//! stacks them and the metadata table is built on the meta client, so under `metadata` they
//! would make a module cycle (`tests/module_layers.rs`).

pub mod cache;
pub mod crash;
mod instrumented;
pub mod js_failure;
#[cfg(not(target_arch = "wasm32"))]
pub mod latency;
pub mod mdt_cache;
pub mod mdt_prefetch;
pub mod prefixed;
pub mod timer;

pub use instrumented::{Instrumented, IoSnapshot, IoStats, PurposeIo};
pub use prefixed::Prefixed;
