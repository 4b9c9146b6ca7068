//! Compiling the glob patterns the model sends (`glob`'s `pattern`, `grep`'s
//! `glob`) and the ones it can plant in a `.gitignore`, within limits.
//!
//! `globset` turns every `{a,b}` level into a regex group. Its regex engine
//! refuses a pattern nested past a few hundred groups or compiling to more
//! than its size limit, and `globset` answers that refusal with a panic (it
//! assumes its own output always compiles). So a pattern is checked here
//! *before* `globset` sees it: no more than [`MAX_GLOB_NESTING`] levels of
//! braces and no more than [`MAX_GLOB_LEN`] bytes. Real globs need two or
//! three levels and well under a hundred bytes.

use std::panic::{AssertUnwindSafe, catch_unwind};

use globset::{GlobBuilder, GlobMatcher};
use tack_core::tool::ToolError;

/// The deepest nesting of `{…}` alternates a glob may have.
pub(crate) const MAX_GLOB_NESTING: usize = 16;

/// The longest glob accepted, in bytes.
pub(crate) const MAX_GLOB_LEN: usize = 4096;

/// Why a pattern is refused before compilation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum GlobLimit {
    /// Alternates nested too deep.
    #[error(
        "its `{{…}}` alternates nest {depth} levels deep, and at most {MAX_GLOB_NESTING} are \
         allowed: flatten the alternates (`{{a,b,c}}` instead of `{{a,{{b,c}}}}`) or split the \
         search into several calls"
    )]
    Nesting {
        /// The deepest nesting found (counting stops just past the limit).
        depth: usize,
    },
    /// The pattern is too long.
    #[error(
        "it is {len} bytes long, and at most {MAX_GLOB_LEN} are allowed: use a shorter pattern \
         (`*` and `**` instead of listing names)"
    )]
    Length {
        /// The pattern's length in bytes.
        len: usize,
    },
}

/// The deepest `{` nesting of `pattern`, honouring backslash escapes; counting
/// stops one past [`MAX_GLOB_NESTING`]. Braces inside a character class are
/// counted too: over-counting only refuses a pattern no one writes.
pub(crate) fn brace_nesting(pattern: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > MAX_GLOB_NESTING {
                    break;
                }
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Checks `pattern` against the limits globset needs.
///
/// # Errors
///
/// The limit it breaks.
pub(crate) fn check_glob_limits(pattern: &str) -> Result<(), GlobLimit> {
    if pattern.len() > MAX_GLOB_LEN {
        return Err(GlobLimit::Length { len: pattern.len() });
    }
    match brace_nesting(pattern) {
        depth if depth > MAX_GLOB_NESTING => Err(GlobLimit::Nesting { depth }),
        _ => Ok(()),
    }
}

/// Compiles a glob whose `*` does not cross `/`.
///
/// # Errors
///
/// `INVALID_ARGUMENTS` naming the problem: a broken limit, or what `globset`
/// says is wrong and where.
pub(crate) fn compile_glob(argument: &str, pattern: &str) -> Result<GlobMatcher, ToolError> {
    let invalid = |reason: String| {
        ToolError::invalid_arguments(format!("`{argument}` is not a valid glob: {reason}"))
    };
    check_glob_limits(pattern).map_err(|limit| invalid(limit.to_string()))?;
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| invalid(e.to_string()))?;
    // The limits above keep globset's regex within its engine's bounds; should
    // one still be refused, globset panics, and that is still the pattern's
    // fault, not a failure of the tool.
    catch_unwind(AssertUnwindSafe(|| glob.compile_matcher())).map_err(|_| {
        invalid(
            "it is too complex to compile: use fewer alternates and character classes".to_owned(),
        )
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use tack_core::tool::ErrorCode;

    /// What `compile_glob` does, without its `catch_unwind`: a panic here
    /// fails the property.
    fn compile_unguarded(pattern: &str) {
        if let Ok(glob) = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
        {
            let _ = glob.compile_matcher();
        }
    }

    proptest! {
        /// Any pattern within the limits compiles or is refused by globset's
        /// parser, never by a panic.
        #[test]
        fn within_the_limits_globset_never_panics(pattern in r"[{},\[\]!*?\\a/.-]{0,400}") {
            if check_glob_limits(&pattern).is_ok() {
                compile_unguarded(&pattern);
            }
        }

        /// Alternates nested up to the limit, with any content around them.
        #[test]
        fn nesting_up_to_the_limit_never_panics(
            depth in 0..=MAX_GLOB_NESTING,
            fill in r"[,*?a/\[\]!]{0,6}",
        ) {
            let pattern = format!("{}x{}", format!("{{{fill},").repeat(depth), "}".repeat(depth));
            prop_assert!(check_glob_limits(&pattern).is_ok() || pattern.len() > MAX_GLOB_LEN);
            compile_unguarded(&pattern);
        }
    }

    fn nested(depth: usize) -> String {
        format!("{}x{}", "{a,".repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn nesting_counts_the_deepest_level_and_honours_escapes() {
        assert_eq!(brace_nesting("*.rs"), 0);
        assert_eq!(brace_nesting("{a,b}/{c,{d,e}}"), 2);
        assert_eq!(brace_nesting(r"\{\{\{x"), 0);
        assert_eq!(brace_nesting(&nested(3)), 3);
        assert_eq!(brace_nesting(&nested(10_000)), MAX_GLOB_NESTING + 1);
    }

    #[test]
    fn the_deepest_allowed_nesting_and_the_longest_pattern_compile() {
        compile_glob("pattern", &nested(MAX_GLOB_NESTING)).unwrap();
        let long = format!("{}*", "[a-\u{10000}]?".repeat(MAX_GLOB_LEN / 12));
        assert!(long.len() <= MAX_GLOB_LEN);
        compile_glob("pattern", &long).unwrap();
        let alternates = format!("{{{}}}", vec!["**/x?[!/]"; MAX_GLOB_LEN / 11].join(","));
        assert!(alternates.len() <= MAX_GLOB_LEN);
        compile_glob("pattern", &alternates).unwrap();
    }

    #[test]
    fn past_the_limits_the_error_says_what_and_how() {
        let err = compile_glob("glob", &nested(MAX_GLOB_NESTING + 1)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert!(
            err.message().contains("`glob` is not a valid glob"),
            "{err}"
        );
        assert!(err.message().contains("at most 16 are allowed"), "{err}");
        assert!(err.message().contains("flatten the alternates"), "{err}");
        let err = compile_glob("pattern", &"a".repeat(MAX_GLOB_LEN + 1)).unwrap_err();
        assert!(err.message().contains("4097 bytes long"), "{err}");
    }
}
