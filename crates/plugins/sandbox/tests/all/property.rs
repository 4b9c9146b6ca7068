//! Property: whatever the input, the resolved path is inside an allowed root,
//! or the call is refused.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tack_core::capability::{Access, FileSystem};
use tack_sandbox::SandboxPolicy;

use crate::fixture::Fixture;

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("".to_owned()),
        Just("in-link".to_owned()),
        Just("out-link".to_owned()),
        Just("root-link".to_owned()),
        Just("loop".to_owned()),
        Just("file".to_owned()),
        Just("dir".to_owned()),
        Just("proc".to_owned()),
        Just("self".to_owned()),
        Just("root".to_owned()),
        Just("etc".to_owned()),
        Just("%2e%2e".to_owned()),
        Just("\u{2025}".to_owned()),
        Just("\0".to_owned()),
        "[a-z.]{1,4}",
        "\\PC{1,6}",
    ]
}

fn input() -> impl Strategy<Value = String> {
    prop_oneof![
        (any::<bool>(), prop::collection::vec(segment(), 0..8)).prop_map(
            |(absolute, parts)| format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"))
        ),
        any::<String>(),
    ]
}

struct World {
    _fx: Fixture,
    _docs: tempfile::TempDir,
    fs: std::sync::Arc<dyn FileSystem>,
    read_roots: Vec<PathBuf>,
    write_roots: Vec<PathBuf>,
}

fn world() -> World {
    let fx = Fixture::new();
    let ws = fx.ws.path();
    std::fs::create_dir(ws.join("dir")).unwrap();
    std::fs::write(ws.join("file"), b"f").unwrap();
    fx.link("in-link", "dir");
    fx.link("out-link", fx.outside());
    fx.link("root-link", "/");
    fx.link("loop", "loop");
    fx.link("dir/up", "../..");
    let docs_dir = tempfile::tempdir().unwrap();
    let docs = docs_dir.path().to_path_buf();
    let sandbox =
        crate::fixture::sandbox(SandboxPolicy::workspace_write(ws).with_readable_root(&docs))
            .unwrap();
    World {
        fs: sandbox.fs(),
        read_roots: vec![fx.ws(), docs.canonicalize().unwrap()],
        write_roots: vec![fx.ws()],
        _fx: fx,
        _docs: docs_dir,
    }
}

fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn resolved_paths_stay_inside_or_are_refused(raw in input()) {
        thread_local! { static WORLD: World = world(); }
        WORLD.with(|w| {
            let path = Path::new(&raw);
            if let Ok(resolved) = w.fs.resolve(path, Access::Read) {
                prop_assert!(inside(&resolved, &w.read_roots), "{raw:?} read -> {}", resolved.display());
                prop_assert!(resolved.is_absolute());
            }
            if let Ok(resolved) = w.fs.resolve(path, Access::Write) {
                prop_assert!(inside(&resolved, &w.write_roots), "{raw:?} write -> {}", resolved.display());
                // The canonical part never goes through a symlink.
                let existing = resolved.ancestors().find(|p| p.exists()).unwrap();
                prop_assert_eq!(existing.canonicalize().unwrap(), existing.to_path_buf());
            }
            Ok(())
        })?;
    }
}
