//! How MCP tool names become tack tool names.
//!
//! A server `S`'s tool `T` is registered as `mcp__S__T` (Claude Code's
//! convention). tack names are 1 to 64 characters from `A-Z a-z 0-9 _ -`, so:
//!
//! 1. every other character of `S` and `T` becomes `_`;
//! 2. if the result is longer than 64 characters, it is cut to 55 and
//!    `_` plus 8 hex digits of the FNV-1a hash of the original `mcp__S__T` is
//!    appended (so two long names that share a prefix stay apart);
//! 3. the same hash suffix is used when two tools of one server map to the
//!    same name (the first, in the server's order, keeps the plain name).
//!
//! The call always goes to the server under the tool's original name.

/// tack's tool-name length limit.
const MAX_LEN: usize = 64;

fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The 32-bit FNV-1a hash of `text`.
fn fnv1a(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// `mcp__<server>__<tool>` with the hash suffix of rule 2.
fn hashed(server: &str, tool: &str) -> String {
    let plain = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    let mut cut: String = plain.chars().take(MAX_LEN - 9).collect();
    cut.push_str(&format!(
        "_{:08x}",
        fnv1a(&format!("mcp__{server}__{tool}"))
    ));
    cut
}

/// The tack name of `server`'s tool `tool` (rules 1 and 2).
///
/// ```
/// use tack_mcp::tack_tool_name;
/// assert_eq!(tack_tool_name("github", "create_issue"), "mcp__github__create_issue");
/// assert_eq!(tack_tool_name("my server", "get.file"), "mcp__my_server__get_file");
/// assert_eq!(tack_tool_name("s", &"x".repeat(80)).len(), 64);
/// ```
pub fn tack_tool_name(server: &str, tool: &str) -> String {
    let plain = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if plain.len() <= MAX_LEN {
        plain
    } else {
        hashed(server, tool)
    }
}

/// The tack names of `tools` (in order), with rule 3 for collisions.
pub(crate) fn tack_tool_names<'a>(
    server: &str,
    tools: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    tools
        .into_iter()
        .map(|tool| {
            let name = tack_tool_name(server, tool);
            if seen.insert(name.clone()) {
                name
            } else {
                let other = hashed(server, tool);
                seen.insert(other.clone());
                other
            }
        })
        .collect()
}

/// The prefix of every tool of `server` (`mcp__<server>__`), for rules.
pub fn server_prefix(server: &str) -> String {
    format!("mcp__{}__", sanitize(server))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tack_core::tool::ToolName;

    #[test]
    fn collisions_get_distinct_names() {
        let names = tack_tool_names("s", ["a.b", "a_b", "a b"]);
        assert_eq!(names[0], "mcp__s__a_b");
        assert_ne!(names[1], names[0]);
        assert_ne!(names[2], names[1]);
        for n in &names {
            ToolName::new(n).unwrap();
        }
    }

    proptest::proptest! {
        #[test]
        fn every_mapped_name_is_valid(server in "\\PC{1,40}", tool in "\\PC{1,80}") {
            let name = tack_tool_name(&server, &tool);
            proptest::prop_assert!(ToolName::new(&name).is_ok(), "{}", name);
            proptest::prop_assert!(name.starts_with("mcp__"));
        }
    }
}
