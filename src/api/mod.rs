//! What the faces (the CLI, the wasm face) share and the core does not know: the wire types
//! (one Rust type and one name per concept, printed by the CLI and handed to JS), read
//! options as JS sends them, row encodings, and the URL → storage factory. The core never
//! imports this module.

pub mod commit;
pub mod options;
pub mod output;
pub mod storage;
pub mod wire;

pub use storage::{storage_for, Host, RemoteOptions};
