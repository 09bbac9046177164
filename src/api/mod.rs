//! What the faces (the CLI, the wasm face) share and the core does not know: the wire types
//! (one Rust type and one name per concept, printed by the CLI and handed to JS), read
//! options as JS sends them, row encodings, and the URL → storage factory. The core never
//! imports this module.

pub mod commit;
pub mod create;
pub mod input;
pub mod ipc;
pub mod options;
pub mod output;
/// The factory needs the HTTP stores (S3 goes through them); every face enables them.
#[cfg(feature = "http")]
pub mod storage;
pub mod wire;

/// Read by the wasm face, which reaches the engine through this module only.
pub use crate::config::TimelineTimezone;
pub use crate::write::limits::InputLimits;
/// What a `cluster` call asks for.
pub use crate::write::ClusterRequest;
/// What a `compact` call asks for (the faces name it here, not in `write`).
pub use crate::write::CompactRequest;
#[cfg(feature = "http")]
pub use storage::{storage_for, Host, RemoteOptions};
