//! `tack trust`: record that the user reviewed a file defining hooks or MCP
//! servers, by its canonical path and the SHA-256 of its exact contents.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

use crate::args::TrustArgs;
use crate::output::print_text;
use crate::session::workspace;
use crate::trust::store::{self, Entry, MISSING, TrustStore, sha256_hex};
use crate::trust::{describe, inside};

/// What a file starts, read once: its text, hash and description.
struct Examined {
    canonical: PathBuf,
    sha256: String,
    starts: Vec<String>,
    commands: Vec<String>,
    servers: BTreeMap<String, Value>,
}

/// Reads `path` as a settings file or an `.mcp.json` (the `hooks` and
/// `mcpServers` keys; both are checked as a session would).
fn examine(path: &Path) -> Result<Examined, String> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let canonical = path
        .canonicalize()
        .map_err(|e| format!("cannot resolve {name}: {e}"))?;
    let value: Value = if crate::settings::codex::is_codex_file(path) {
        // codex's hooks.json or config.toml, read as a session reads it.
        crate::settings::codex::read_codex(path, &text, &Default::default())?
            .settings
            .unwrap_or_else(|| serde_json::json!({}))
    } else {
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "{name} is not JSON ({e}); only settings files, .mcp.json files and codex's hooks files are trusted"
            )
        })?
    };
    let hooks = match value.get("hooks") {
        Some(_) => Some(
            tack_hooks::HooksConfig::from_settings(&value, Some(path))
                .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    let servers: BTreeMap<String, Value> = match value.get("mcpServers") {
        Some(servers) => serde_json::from_value(servers.clone())
            .map_err(|e| format!("{name}: key `mcpServers`: {e}"))?,
        None => BTreeMap::new(),
    };
    tack_mcp::McpConfig::from_servers(servers.clone())
        .map_err(|e| format!("{name}: key `mcpServers`: {e}"))?;
    Ok(Examined {
        canonical,
        sha256: sha256_hex(text.as_bytes()),
        starts: describe(hooks.as_ref(), &servers),
        commands: crate::trust::hook_commands(hooks.as_ref()),
        servers,
    })
}

/// The workspace's files that define hooks or MCP servers.
fn workspace_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut candidates = Vec::new();
    if let Some(user) = crate::settings::user_settings_path()
        && inside(&user, root)
    {
        candidates.push(user);
    }
    if let Some(claude) = crate::settings::claude::claude_user_settings_path()
        && inside(&claude, root)
    {
        candidates.push(claude);
    }
    candidates.extend(crate::settings::claude::claude_workspace_settings_paths(
        root,
    ));
    if let Some(home) = crate::settings::codex::codex_home() {
        candidates.extend(
            [home.join("hooks.json"), home.join("config.toml")]
                .into_iter()
                .filter(|p| inside(p, root)),
        );
    }
    candidates.extend(crate::settings::codex::codex_workspace_paths(root));
    candidates.push(root.join(".tack").join("settings.json"));
    candidates.push(root.join(".mcp.json"));
    let mut files = Vec::new();
    for path in candidates {
        if path.is_file() && !examine(&path)?.starts.is_empty() {
            files.push(path);
        }
    }
    Ok(files)
}

/// Runs `tack trust`.
pub fn trust(args: &TrustArgs) -> Result<ExitCode, String> {
    let store_path = store::default_path()?;
    let mut store = TrustStore::load(&store_path)?;
    if args.list {
        return list(&store);
    }
    if args.revoke {
        return revoke(&mut store, &args.paths);
    }
    let root = workspace(args.workspace.as_deref())?;
    if inside(&store_path, &root) {
        return Err(format!(
            "the trust store {} is inside the workspace {}, where the tools could write it; set XDG_STATE_HOME to a directory outside the workspace",
            store_path.display(),
            root.display()
        ));
    }
    let paths = if args.paths.is_empty() {
        let found = workspace_files(&root)?;
        if found.is_empty() {
            print_text(&format!(
                "nothing to trust: no file of the workspace {} defines hooks or MCP servers",
                root.display()
            ));
            return Ok(ExitCode::SUCCESS);
        }
        found
    } else {
        args.paths.clone()
    };
    let mut trusted = Vec::new();
    for path in &paths {
        let file = examine(path)?;
        print_text(&format!(
            "trusting {} (sha256 {}):",
            file.canonical.display(),
            &file.sha256[..16]
        ));
        if file.starts.is_empty() {
            print_text("  (it defines no hooks or MCP servers)");
        }
        for line in &file.starts {
            print_text(&format!("  {line}"));
        }
        if !inside(path, &root) {
            print_text("  (outside the workspace: yours, used without trust anyway)");
        }
        // What its commands run from inside the workspace, trusted with it.
        let runs = crate::trust::runs_of(&file.commands, &file.servers, &root);
        for (path, state) in &runs.files {
            match state {
                Some(sha256) => print_text(&format!(
                    "  and the file it runs {} (sha256 {})",
                    path.display(),
                    sha256.get(..16).unwrap_or(sha256)
                )),
                None => print_text(&format!(
                    "  NOTE: it would run {}, which does not exist: recorded as missing; if it appears, sessions refuse to start and its hooks refuse to run until you review it and run `tack trust` again",
                    path.display()
                )),
            }
        }
        for caveat in &runs.caveats {
            print_text(&format!("  cannot know: {caveat}"));
        }
        trusted.push((file, runs.files));
    }
    let at = store::now();
    store.update(|files| {
        for (file, runs) in &trusted {
            files.insert(
                file.canonical.clone(),
                Entry {
                    sha256: file.sha256.clone(),
                    trusted_at: at,
                },
            );
            for (path, state) in runs {
                files.insert(
                    path.clone(),
                    Entry {
                        sha256: state.clone().unwrap_or_else(|| MISSING.to_owned()),
                        trusted_at: at,
                    },
                );
            }
        }
    })?;
    print_text(&format!(
        "trusted {} file{} (recorded in {}); any change to {} needs `tack trust` again",
        trusted.len(),
        if trusted.len() == 1 { "" } else { "s" },
        store.path().display(),
        if trusted.len() == 1 { "it" } else { "them" },
    ));
    Ok(ExitCode::SUCCESS)
}

fn list(store: &TrustStore) -> Result<ExitCode, String> {
    if store.entries().next().is_none() {
        print_text(&format!("no trusted files ({})", store.path().display()));
    }
    for (path, entry) in store.entries() {
        let then = store.recorded(path);
        let now = crate::trust::command_files::state_of(path);
        let state = match (crate::trust::difference(then.as_ref(), &now), &now) {
            (None, None) => "missing, as recorded: it must not appear",
            (None, Some(_)) => "unchanged",
            (Some(_), None) => "missing",
            (Some(_), Some(_)) if entry.sha256 == MISSING => {
                "APPEARED since recorded as missing: refused until trusted again"
            }
            (Some(_), Some(_)) => "CHANGED since trusted: not used until trusted again",
        };
        print_text(&format!(
            "{}  sha256 {}  trusted at {} (Unix time)  {state}",
            path.display(),
            entry.sha256.get(..16).unwrap_or(&entry.sha256),
            entry.trusted_at
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn revoke(store: &mut TrustStore, paths: &[PathBuf]) -> Result<ExitCode, String> {
    let mut keys = Vec::new();
    for path in paths {
        let key = path
            .canonicalize()
            .or_else(|_| std::path::absolute(path))
            .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
        if store.get(&key).is_none() {
            return Err(format!(
                "{} is not trusted (see `tack trust --list`)",
                key.display()
            ));
        }
        keys.push(key);
    }
    store.update(|files| {
        for key in &keys {
            files.remove(key);
        }
    })?;
    for key in &keys {
        print_text(&format!("revoked {}", key.display()));
    }
    Ok(ExitCode::SUCCESS)
}
