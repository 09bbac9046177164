//! The core builds without the stores' heavy dependencies: with no features, the normal
//! dependency graph has no HTTP client, object_store, XML parser or zip reader. `.ci/test`
//! also compiles that core (`cargo check --no-default-features --lib`).

use std::process::Command;

const STORE_ONLY: [&str; 4] = ["reqwest", "object_store", "quick-xml", "zip"];

/// Crate names in the host's normal dependency graph, with `args` added (the wasm32 table
/// adds none of these: it only signs and fetches for the `http` feature's stores).
fn dependencies(args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree", "-e", "normal", "--prefix", "none", "--format", "{p}",
        ])
        .args([
            "--manifest-path",
            concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
        ])
        .args(args)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn core_has_no_store_dependencies() {
    let core = dependencies(&["--no-default-features"]);
    assert!(core.iter().any(|c| c == "parquet"), "{core:?}");
    for name in STORE_ONLY {
        assert!(!core.iter().any(|c| c == name), "{name} in the core");
    }
}

#[test]
fn default_features_bring_the_stores() {
    let all = dependencies(&[]);
    for name in STORE_ONLY {
        assert!(all.iter().any(|c| c == name), "{name} missing by default");
    }
}

/// SQL (feature `datafusion`) is native only: the wasm32 build never pulls DataFusion or its
/// arrow, even with the feature on.
#[test]
fn datafusion_stays_out_of_wasm32() {
    let native = dependencies(&["--features", "datafusion"]);
    assert!(native.iter().any(|c| c == "datafusion"), "{native:?}");
    let wasm = dependencies(&[
        "--features",
        "datafusion",
        "--target",
        "wasm32-unknown-unknown",
    ]);
    assert!(wasm.iter().any(|c| c == "parquet"), "{wasm:?}");
    assert!(
        !wasm.iter().any(|c| c.starts_with("datafusion")),
        "{wasm:?}"
    );
}

/// Distributed SQL (feature `ballista`) is native only too: the wasm32 build with the feature
/// on has no Ballista, gRPC stack or DataFusion.
#[test]
fn ballista_stays_out_of_wasm32() {
    let native = dependencies(&["--features", "ballista"]);
    for name in ["ballista-scheduler", "ballista-executor", "tonic"] {
        assert!(native.iter().any(|c| c == name), "{name}: {native:?}");
    }
    let wasm = dependencies(&[
        "--features",
        "ballista",
        "--target",
        "wasm32-unknown-unknown",
    ]);
    assert!(wasm.iter().any(|c| c == "parquet"), "{wasm:?}");
    for prefix in ["ballista", "datafusion", "tonic", "prost"] {
        assert!(
            !wasm.iter().any(|c| c.starts_with(prefix)),
            "{prefix}: {wasm:?}"
        );
    }
}
