//! The one dependency rule, read from the manifests: a plugin crate (and the
//! builtin tools) depends on `tack-core` alone among tack's crates, and
//! without its `host` feature — the host plumbing (`tack_core::host`) is not
//! there for a plugin's own code to reach. Its tests, benches and examples
//! may use anything (`[dev-dependencies]`).

use std::path::{Path, PathBuf};

use tack_docs::root;

/// The plugin crates: every crate under `crates/plugins`, and the builtin tools.
fn plugin_crates() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join("crates/plugins"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|d| d.join("Cargo.toml").is_file())
        .collect();
    found.push(root().join("crates/builtin-tools"));
    found.sort();
    found
}

/// What is wrong with the `[dependencies]` of the manifest at `manifest`
/// (empty when it keeps the rule).
fn rule_breaks(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let mut breaks = Vec::new();
    let deps = doc
        .get("dependencies")
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    if !deps.contains_key("tack-core") {
        breaks.push("does not depend on tack-core".to_owned());
    }
    for (name, spec) in &deps {
        if name.starts_with("tack-") && name != "tack-core" {
            breaks.push(format!(
                "depends on {name} (a plugin depends on tack-core only)"
            ));
        }
        if name == "tack-core" {
            let features = spec
                .get("features")
                .and_then(|f| f.as_array())
                .cloned()
                .unwrap_or_default();
            if features.iter().any(|f| f.as_str() == Some("host")) {
                breaks.push(
                    "turns on tack-core's `host` feature (only hosts do; a plugin's tests may, \
                     under [dev-dependencies])"
                        .to_owned(),
                );
            }
        }
    }
    breaks
}

#[test]
fn plugin_crates_depend_on_the_contract_alone() {
    let crates = plugin_crates();
    assert!(crates.len() >= 7, "found {crates:?}");
    let mut broken = Vec::new();
    for dir in crates {
        for why in rule_breaks(&dir.join("Cargo.toml")) {
            broken.push(format!("{}: {why}", dir.display()));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_rule_catches_a_host_feature_and_another_tack_crate() {
    let dir = std::env::temp_dir().join(format!("tack-deps-rule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("Cargo.toml");
    std::fs::write(
        &manifest,
        "[package]\nname = \"p\"\n\n[dependencies]\n\
         tack-core = { workspace = true, features = [\"host\"] }\n\
         tack-pipeline.workspace = true\n\n\
         [dev-dependencies]\ntack-core = { workspace = true, features = [\"host\"] }\n",
    )
    .unwrap();
    let breaks = rule_breaks(&manifest);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(breaks.len(), 2, "{breaks:?}");
    assert!(breaks[0].contains("`host` feature") || breaks[1].contains("`host` feature"));
    assert!(breaks.iter().any(|b| b.contains("tack-pipeline")));

    let ok = std::env::temp_dir().join(format!("tack-deps-ok-{}", std::process::id()));
    std::fs::create_dir_all(&ok).unwrap();
    std::fs::write(
        ok.join("Cargo.toml"),
        "[package]\nname = \"p\"\n\n[dependencies]\ntack-core.workspace = true\n\n\
         [dev-dependencies]\ntack-core = { workspace = true, features = [\"host\"] }\n\
         tack-pipeline.workspace = true\n",
    )
    .unwrap();
    let none = rule_breaks(&ok.join("Cargo.toml"));
    std::fs::remove_dir_all(&ok).unwrap();
    assert!(none.is_empty(), "{none:?}");
}
