//! Creating session logs: private modes, new files only, and never through
//! a symbolic link (the world outside is checked unchanged).

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use tack_agent::{LogError, SessionLog, workspace_key};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn create_error(result: Result<SessionLog, LogError>) -> String {
    match result {
        Ok(log) => panic!("created {}", log.path().display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_default_log_is_private_and_under_the_workspace_key() {
    let state = tempfile::tempdir().unwrap();
    let home = state.path().join("state");
    let ws = Path::new("/some/where/my ws");
    let log = SessionLog::create_for_workspace(&home, ws).unwrap();
    let dir = home.join("tack/sessions").join(workspace_key(ws));
    assert_eq!(log.path().parent().unwrap(), dir);
    let name = log.path().file_name().unwrap().to_str().unwrap().to_owned();
    let stem = name.strip_suffix(".jsonl").unwrap();
    let (ms, pid) = stem.split_once('-').unwrap();
    assert!(ms.parse::<u128>().is_ok(), "{name}");
    assert_eq!(pid, std::process::id().to_string());
    assert_eq!(mode(log.path()), 0o600);
    for d in [&home, &home.join("tack"), &home.join("tack/sessions"), &dir] {
        assert_eq!(mode(d), 0o700, "{}", d.display());
    }
    // A second session in the same millisecond gets its own file.
    let other = SessionLog::create_for_workspace(&home, ws).unwrap();
    assert_ne!(other.path(), log.path());
}

#[test]
fn a_linked_sessions_folder_is_not_followed() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("state");
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(home.join("tack")).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, home.join("tack/sessions")).unwrap();
    let err = create_error(SessionLog::create_for_workspace(&home, Path::new("/w")));
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // The workspace key's folder as a link.
    std::fs::remove_file(home.join("tack/sessions")).unwrap();
    std::fs::create_dir(home.join("tack/sessions")).unwrap();
    symlink(
        &elsewhere,
        home.join("tack/sessions")
            .join(workspace_key(Path::new("/w"))),
    )
    .unwrap();
    let err = create_error(SessionLog::create_for_workspace(&home, Path::new("/w")));
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn log_file_is_never_a_link_nor_an_existing_file() {
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("target.txt");
    std::fs::write(&target, "precious\n").unwrap();
    let link = root.path().join("log.jsonl");
    symlink(&target, &link).unwrap();
    let err = create_error(SessionLog::create(&link));
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    // A dangling link is not followed either (it would create the target).
    let dangling = root.path().join("dangling.jsonl");
    symlink(root.path().join("created-through-link"), &dangling).unwrap();
    create_error(SessionLog::create(&dangling));
    assert!(!root.path().join("created-through-link").exists());
    // An existing file is not appended to or truncated.
    let err = create_error(SessionLog::create(&target));
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
}

#[test]
fn missing_folders_of_an_explicit_log_are_created_private_without_links() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("a/b/s.jsonl");
    let log = SessionLog::create(&path).unwrap();
    assert_eq!(log.path(), path);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&root.path().join("a")), 0o700);
    assert_eq!(mode(&root.path().join("a/b")), 0o700);
    // A dangling link where a folder must be created is refused, and
    // nothing appears where it points.
    let away = root.path().join("away");
    symlink(&away, root.path().join("c")).unwrap();
    let err = create_error(SessionLog::create(&root.path().join("c/d/s.jsonl")));
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!away.exists());
}
