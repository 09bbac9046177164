//! Where bytes live: one [`crate::storage::Storage`] implementation per kind of host. Each
//! answers the verbs and says what it can do in its `Capabilities`; counting, caching and
//! the other cross-cutting behaviour stay in [`crate::storage::layers`], so a backend does
//! only its host's I/O.
//!
//! - [`memory`]: objects in memory (tests, bytes handed in from JS, a `.zip`);
//! - `local`: native files (feature `local`);
//! - `http`: plain HTTP(S), presigned URLs and, in wasm, S3 with its own SigV4 signer
//!   (feature `http`), over a transport: `fetch` in wasm, reqwest natively;
//! - `object_store`: S3 natively through the object_store crate, and the reqwest transport;
//! - `s3`: the options and URLs both S3 clients share;
//! - `fetch`: the wasm transport (`globalThis.fetch`).

#[cfg(all(target_arch = "wasm32", feature = "http"))]
pub mod fetch;
#[cfg(feature = "http")]
pub mod http;
#[cfg(all(not(target_arch = "wasm32"), feature = "local"))]
pub mod local;
pub mod memory;
#[cfg(all(not(target_arch = "wasm32"), feature = "http"))]
pub mod object_store;
#[cfg(feature = "http")]
pub mod s3;
