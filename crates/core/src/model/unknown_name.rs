//! The one error of parsing a name from a closed set.

use std::fmt;

/// A string that is none of the names a closed set accepts: the
/// [`FromStr`](std::str::FromStr) error of
/// [`ErrorCode`](crate::tool::ErrorCode) (`error code`, its wire forms),
/// [`Action`](crate::policy::Action) (`action`) and
/// [`ToolFormat`](crate::host::ToolFormat) (`tool format`), which parse from
/// text on the host's side. Its message says what was rejected and lists what
/// is accepted.
///
/// ```
/// use tack_core::policy::Action;
/// use tack_core::tool::ErrorCode;
/// assert_eq!("ask".parse::<Action>().unwrap(), Action::Ask);
/// assert_eq!("TIMEOUT".parse::<ErrorCode>().unwrap(), ErrorCode::Timeout);
/// let err = "maybe".parse::<Action>().unwrap_err();
/// assert_eq!((err.kind, err.value.as_str()), ("action", "maybe"));
/// assert_eq!(err.expected, ["allow", "ask", "deny"]);
/// assert_eq!(err.to_string(), "unknown action `maybe`: expected `allow`, `ask` or `deny`");
/// let err = "timeout".parse::<ErrorCode>().unwrap_err();
/// assert!(err.to_string().contains("names are case-sensitive: did you mean `TIMEOUT`?"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownName {
    /// What kind of name was expected, in words: `error code`, `action`,
    /// `tool format`.
    pub kind: &'static str,
    /// The rejected string.
    pub value: String,
    /// The names accepted.
    pub expected: &'static [&'static str],
}

impl UnknownName {
    /// `value` is not one of the `expected` names of `kind`.
    pub(crate) fn new(kind: &'static str, value: &str, expected: &'static [&'static str]) -> Self {
        Self {
            kind,
            value: value.to_owned(),
            expected,
        }
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            kind,
            value,
            expected,
        } = self;
        if value.is_empty() {
            write!(f, "the {kind} is empty: expected ")?;
        } else {
            write!(f, "unknown {kind} `{value}`: expected ")?;
        }
        let last = expected.len().saturating_sub(1);
        for (i, name) in expected.iter().enumerate() {
            let sep = match i {
                0 => "",
                _ if i == last => " or ",
                _ => ", ",
            };
            write!(f, "{sep}`{name}`")?;
        }
        if let Some(name) = expected.iter().find(|n| n.eq_ignore_ascii_case(value)) {
            write!(f, " (names are case-sensitive: did you mean `{name}`?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownName {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_lists_the_names_and_points_at_a_case_slip() {
        let one = UnknownName::new("thing", "x", &["a"]);
        assert_eq!(one.to_string(), "unknown thing `x`: expected `a`");
        let two = UnknownName::new("thing", "x", &["a", "b"]);
        assert_eq!(two.to_string(), "unknown thing `x`: expected `a` or `b`");
        let empty = UnknownName::new("thing", "", &["a", "b", "c"]);
        assert_eq!(
            empty.to_string(),
            "the thing is empty: expected `a`, `b` or `c`"
        );
        let slip = UnknownName::new("thing", "Ab", &["ab"]);
        assert_eq!(
            slip.to_string(),
            "unknown thing `Ab`: expected `ab` (names are case-sensitive: did you mean `ab`?)"
        );
    }
}
