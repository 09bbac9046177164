//! The wasm-bindgen face.
