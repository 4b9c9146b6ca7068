//! The session log's hash chain.
//!
//! Every line is a JSON object whose last member is
//! `"hash":"<64 lowercase hex digits>"`. The hash is the SHA-256 of the
//! line's *body*: the line's exact bytes with that last member removed, that
//! is the text before `,"hash":"` followed by `}`. The body holds `prev`, the
//! hash of the record before ([`GENESIS_HASH`] for the first record), so
//! each record seals the one before it.

use std::fmt::Write;

use sha2::{Digest, Sha256};

/// The `prev` of a session's first record: 64 zeros.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

const HASH_KEY: &str = ",\"hash\":\"";
/// `,"hash":"` + 64 hex digits + `"}`.
const SUFFIX_LEN: usize = HASH_KEY.len() + 64 + 2;

/// The lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The line for `body` (a compact JSON object with at least one member) and
/// its hash.
pub(crate) fn seal(body: &str) -> (String, String) {
    let hash = sha256_hex(body.as_bytes());
    let open = body.strip_suffix('}').unwrap_or(body);
    let line = format!("{open}{HASH_KEY}{hash}\"}}");
    (line, hash)
}

/// Splits a line into its body and the hash it claims.
///
/// # Errors
///
/// A message when the line does not end with a `hash` member.
pub(crate) fn unseal(line: &str) -> Result<(String, &str), String> {
    let missing = || {
        "the record has no `hash` as its last member (not written by this tack, or edited)"
            .to_owned()
    };
    let split = line.len().checked_sub(SUFFIX_LEN).ok_or_else(missing)?;
    let (open, suffix) = (line.get(..split).ok_or_else(missing)?, &line[split..]);
    let hash = suffix
        .strip_prefix(HASH_KEY)
        .and_then(|rest| rest.strip_suffix("\"}"))
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        .ok_or_else(missing)?;
    Ok((format!("{open}}}"), hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_and_unseal_round_trip() {
        let (line, hash) = seal(r#"{"seq":1,"prev":"00"}"#);
        assert_eq!(line, format!(r#"{{"seq":1,"prev":"00","hash":"{hash}"}}"#));
        let (body, claimed) = unseal(&line).unwrap();
        assert_eq!(body, r#"{"seq":1,"prev":"00"}"#);
        assert_eq!(claimed, hash);
        assert_eq!(sha256_hex(body.as_bytes()), hash);
    }

    #[test]
    fn a_line_without_a_hash_is_refused() {
        for line in [
            "",
            "{}",
            r#"{"seq":1}"#,
            &format!(r#"{{"seq":1,"hash":"{}"}}"#, "G".repeat(64)),
            "é".repeat(60).as_str(),
        ] {
            assert!(unseal(line).is_err(), "{line}");
        }
    }

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
