//! Which layer confines commands: the `sandbox_layer` setting and
//! `--sandbox-layer` flag, and the line that says which layer ran and why.

use std::fmt;
use std::str::FromStr;

use tack_sandbox::{Enforcement, Namespaces, Sandbox, SandboxMode};

/// `auto`, `namespaces` or `floor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxLayer {
    /// The namespace layer (bubblewrap) where it works here, else the floor.
    #[default]
    Auto,
    /// The namespace layer, or no command runs (the session refuses to start).
    Namespaces,
    /// The kernel-only floor, even where bubblewrap works.
    Floor,
}

impl SandboxLayer {
    /// Every value, as written.
    pub const NAMES: &'static str = "auto, namespaces, floor";

    /// As the settings and the flag write it.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxLayer::Auto => "auto",
            SandboxLayer::Namespaces => "namespaces",
            SandboxLayer::Floor => "floor",
        }
    }

    /// The sandbox's option.
    pub fn namespaces(self) -> Namespaces {
        match self {
            SandboxLayer::Auto => Namespaces::Auto,
            SandboxLayer::Namespaces => Namespaces::Required,
            SandboxLayer::Floor => Namespaces::Disabled,
        }
    }
}

impl fmt::Display for SandboxLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxLayer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(SandboxLayer::Auto),
            "namespaces" => Ok(SandboxLayer::Namespaces),
            "floor" => Ok(SandboxLayer::Floor),
            other => Err(format!(
                "unknown sandbox layer `{other}`: use one of {}",
                Self::NAMES
            )),
        }
    }
}

/// Which layer confines this sandbox's commands, and why, in one line (for
/// `tack config`, the start of a session and its log).
pub fn describe(sandbox: &Sandbox, layer: SandboxLayer) -> String {
    let status = sandbox.status();
    let Some(policy) = status.policy.as_ref() else {
        return "commands: no sandbox policy".to_owned();
    };
    if sandbox.policy().mode() == SandboxMode::FullAccess {
        return "commands: unconfined (sandbox full-access)".to_owned();
    }
    let bwrap = status
        .bwrap
        .clone()
        .unwrap_or_else(|| "bubblewrap".to_owned());
    if let tack_sandbox::CommandAdmission::Refused { reason } = &policy.commands {
        return format!("commands: REFUSED ({reason})");
    }
    if policy.namespaces == Enforcement::Enforced {
        let why = match layer {
            SandboxLayer::Namespaces => "required by sandbox_layer = namespaces",
            _ => "it works here",
        };
        return format!("commands: namespace layer ({bwrap}; {why})");
    }
    let why = match layer {
        SandboxLayer::Floor => "chosen by sandbox_layer = floor".to_owned(),
        _ => status.bwrap_unavailable.as_ref().map_or_else(
            || "the namespace layer is not available here".to_owned(),
            |reason| format!("no namespace layer: {reason}"),
        ),
    };
    format!(
        "commands: floor (Landlock, seccomp, no capabilities; {why}); existing protected paths are not read-only to commands (what a command changes in them is put back when it ends)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_choices() {
        for layer in [
            SandboxLayer::Auto,
            SandboxLayer::Namespaces,
            SandboxLayer::Floor,
        ] {
            assert_eq!(layer.as_str().parse::<SandboxLayer>(), Ok(layer));
        }
        let err = "bwrap".parse::<SandboxLayer>().unwrap_err();
        assert_eq!(
            err,
            "unknown sandbox layer `bwrap`: use one of auto, namespaces, floor"
        );
    }

    #[test]
    fn the_floor_chosen_says_so() {
        let ws = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(
            tack_sandbox::SandboxPolicy::workspace_write(ws.path())
                .with_namespaces(SandboxLayer::Floor.namespaces()),
        )
        .unwrap();
        let line = describe(&sandbox, SandboxLayer::Floor);
        assert!(
            line.starts_with("commands: floor") || line.starts_with("commands: REFUSED"),
            "{line}"
        );
        if line.starts_with("commands: floor") {
            assert!(line.contains("chosen by sandbox_layer = floor"), "{line}");
        }
    }
}
