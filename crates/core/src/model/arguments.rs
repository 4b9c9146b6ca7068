//! The arguments of one call: the exact text the model sent, and the JSON
//! object parsed from it, checked to say the same thing.
//!
//! tack does not switch on serde_json's `arbitrary_precision` or
//! `preserve_order` (they would change how every crate of a host
//! deserializes). A parsed [`Value`] therefore holds each number as an `i64`,
//! a `u64` or an `f64`, and its objects' keys in the map order serde_json was
//! built with. What that could lose is handled here instead:
//!
//! * **the text is kept**: [`Arguments::text`] is exactly what was sent, and
//!   typed tools deserialize from it (not from a re-serialized value);
//! * **no number is rounded silently**: an integer beyond `i64`/`u64`, or a
//!   decimal with more digits than an `f64` keeps, is refused with
//!   [`ArgumentsError::InexactNumber`], naming its JSON pointer, so every
//!   stage (schema, hooks, guards, the tool) sees the same number;
//! * **no key is given twice**: a repeated key is refused
//!   ([`ArgumentsError::DuplicateKey`]), so the value the hooks see (the last
//!   one) cannot differ from what a tool reading the text takes;
//! * **key order**: the text keeps the model's order; the parsed value does
//!   not promise one (serde_json's default map is sorted by key).

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most characters of a refused number a message quotes.
const QUOTED_NUMBER_CHARS: usize = 40;

/// Why an argument text is not a call's arguments. Every message says what
/// was wrong and how to fix it, for the model to act on.
///
/// ```
/// use tack_core::host::{Arguments, ArgumentsError};
/// let err = Arguments::parse(r#"{"n": 123456789012345678901234567890}"#).unwrap_err();
/// assert!(matches!(err, ArgumentsError::InexactNumber { .. }));
/// assert_eq!(err.pointer(), Some("/n"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentsError {
    /// The text is not JSON.
    #[error(
        "the arguments are not valid JSON ({reason}): send one JSON object, e.g. {{\"path\": \"src/main.rs\"}}"
    )]
    NotJson {
        /// The JSON parser's message, with line and column.
        reason: String,
    },
    /// The text nests deeper than the JSON parser goes (128 levels).
    #[error("the arguments are nested too deeply ({reason}): flatten them")]
    TooDeep {
        /// The JSON parser's message, with line and column.
        reason: String,
    },
    /// A number is beyond the range of a 64-bit float (such as `1e400`).
    #[error(
        "the arguments hold a number beyond the range of a 64-bit float ({reason}): send a smaller number, or the number as a string if the tool takes one"
    )]
    NumberOutOfRange {
        /// The JSON parser's message, with line and column.
        reason: String,
    },
    /// The text is JSON but not an object.
    #[error("the arguments must be a JSON object with named fields, got {found}")]
    NotAnObject {
        /// What it is instead (`an array`, `a string`, …).
        found: &'static str,
    },
    /// An integer beyond `i64`/`u64`, or a decimal an `f64` does not hold
    /// exactly (see [`Arguments`]).
    #[error(
        "the arguments hold the number {number} {}, which a 64-bit integer or float cannot hold exactly (it would become {nearest}): send an integer within 64 bits or a decimal of at most 17 significant digits, or the number as a string if the tool takes one",
        place(pointer)
    )]
    InexactNumber {
        /// The JSON pointer of the number.
        pointer: String,
        /// The number as sent (shortened when long).
        number: String,
        /// The nearest 64-bit float.
        nearest: String,
    },
    /// An object names the same key twice.
    #[error(
        "the arguments give the key {key:?} more than once in the object {}: give each key once",
        place(pointer)
    )]
    DuplicateKey {
        /// The JSON pointer of the object.
        pointer: String,
        /// The repeated key.
        key: String,
    },
}

impl ArgumentsError {
    /// The JSON pointer of what was wrong, when it is known (`""` is the
    /// whole object).
    pub fn pointer(&self) -> Option<&str> {
        match self {
            Self::InexactNumber { pointer, .. } | Self::DuplicateKey { pointer, .. } => {
                Some(pointer)
            }
            Self::NotAnObject { .. } => Some(""),
            _ => None,
        }
    }
}

fn place(pointer: &str) -> String {
    if pointer.is_empty() {
        "at the top level".to_owned()
    } else {
        format!("at `{pointer}`")
    }
}

/// A call's arguments: the exact text the model sent, and the JSON object
/// parsed from it. The pipeline takes the text over from the call rather than
/// copying it, and shares the arguments inside the call's frozen
/// [`ToolExecution`](crate::tool::ToolExecution); cloning copies the text and shares
/// the value.
///
/// Built by [`parse`](Self::parse), which guarantees that the two agree:
///
/// * the value is a JSON object (blank text is `{}`);
/// * every number of the text is held exactly by the value: an integer
///   (no fraction, no exponent) as an `i64` or a `u64`, any other number as
///   an `f64` whose shortest decimal (what serde_json writes back) is the
///   number written. So `0.1`, `1.50` and `1e23` pass, while
///   `0.30000000000000000001` (more digits than an `f64` keeps) and
///   `123456789012345678901234567890` (beyond `u64`) are refused with
///   [`ArgumentsError::InexactNumber`], never rounded silently. Deserializing
///   a type from the value or from the text then gives the same numbers;
/// * no object gives a key twice.
///
/// Key order: the text keeps the model's order; the value's maps do not
/// promise one (serde_json's default map is sorted). Code that cares about the
/// order, or about the spelling of a number (`1.50`), reads the
/// [`text`](Self::text) — typed tools do: they deserialize from it.
///
/// ```
/// use tack_core::host::Arguments;
/// let args = Arguments::parse(r#"{"z": 1.50, "a": 18446744073709551615}"#).unwrap();
/// assert_eq!(args.text(), r#"{"z": 1.50, "a": 18446744073709551615}"#);
/// assert_eq!(args.value()["a"].as_u64(), Some(u64::MAX));
///
/// #[derive(serde::Deserialize)]
/// struct Big { a: u128 }
/// assert_eq!(args.deserialize::<Big>().unwrap().a, u128::from(u64::MAX));
///
/// // A number beyond what a 64-bit float holds is refused, not rounded.
/// let err = Arguments::parse(r#"{"pi": 3.14159265358979323846264338}"#).unwrap_err();
/// assert_eq!(err.pointer(), Some("/pi"));
/// ```
#[derive(Clone)]
pub struct Arguments {
    text: String,
    value: Arc<Value>,
}

impl Arguments {
    /// Parses `text` into arguments, checking that the parsed object holds
    /// exactly what the text says (see the type's documentation).
    ///
    /// # Errors
    ///
    /// [`ArgumentsError`] for text that is not JSON, not an object, too deep
    /// for the parser, holds a number a 64-bit integer or float cannot hold
    /// exactly, or gives a key twice.
    pub fn parse(text: &str) -> Result<Self, ArgumentsError> {
        let value = parse_value(text)?;
        Ok(Self {
            text: text.to_owned(),
            value: Arc::new(value),
        })
    }

    /// As [`parse`](Self::parse), taking the text over instead of copying
    /// it: on success `text` is left empty (the arguments hold it); on error
    /// it is left as it was.
    ///
    /// ```
    /// use tack_core::host::Arguments;
    /// let mut text = String::from(r#"{"x": 1}"#);
    /// let args = Arguments::parse_from(&mut text).unwrap();
    /// assert_eq!((args.text(), text.as_str()), (r#"{"x": 1}"#, ""));
    ///
    /// let mut bad = String::from("[1]");
    /// assert!(Arguments::parse_from(&mut bad).is_err());
    /// assert_eq!(bad, "[1]");
    /// ```
    ///
    /// # Errors
    ///
    /// As [`parse`](Self::parse).
    pub fn parse_from(text: &mut String) -> Result<Self, ArgumentsError> {
        let value = parse_value(text)?;
        Ok(Self {
            text: std::mem::take(text),
            value: Arc::new(value),
        })
    }

    /// The text, given back (what [`parse_from`](Self::parse_from) took).
    pub fn into_text(self) -> String {
        self.text
    }

    /// The text exactly as it was sent (blank text stays blank; it stands for
    /// `{}`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed JSON object.
    pub fn value(&self) -> &Arc<Value> {
        &self.value
    }

    /// Deserializes `T` from the [`text`](Self::text) (`{}` when it is
    /// blank), so `T` sees the model's key order and number spelling, and may
    /// hold types a parsed value cannot give (`u128`, `Box<RawValue>`).
    ///
    /// # Errors
    ///
    /// serde_json's error when the text does not fit `T`.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        if self.text.trim().is_empty() {
            serde_json::from_str("{}")
        } else {
            serde_json::from_str(&self.text)
        }
    }
}

impl Default for Arguments {
    /// No arguments: `{}`.
    fn default() -> Self {
        Self {
            text: "{}".to_owned(),
            value: Arc::new(Value::Object(Default::default())),
        }
    }
}

impl From<Arc<Value>> for Arguments {
    /// Arguments a host built as a value: the text is the value's compact
    /// JSON, which parses back to the same value.
    fn from(value: Arc<Value>) -> Self {
        Self {
            text: value.to_string(),
            value,
        }
    }
}

impl From<Value> for Arguments {
    /// As `From<Arc<Value>>`.
    fn from(value: Value) -> Self {
        Self::from(Arc::new(value))
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Arguments({})", self.text)
    }
}

/// What kind of JSON value `value` is, with its article ("an object").
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses and checks `text` (see [`Arguments`]); blank text is `{}`.
fn parse_value(text: &str) -> Result<Value, ArgumentsError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let reason = e.to_string();
        if reason.contains("recursion limit") {
            ArgumentsError::TooDeep { reason }
        } else if reason.contains("number out of range") {
            ArgumentsError::NumberOutOfRange { reason }
        } else {
            ArgumentsError::NotJson { reason }
        }
    })?;
    if !value.is_object() {
        return Err(ArgumentsError::NotAnObject {
            found: kind_of(&value),
        });
    }
    check_agrees(text, &value)?;
    Ok(value)
}

/// The number of object members in `value` (a repeated key of the text is
/// one member here).
fn members(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len() + map.values().map(members).sum::<usize>(),
        Value::Array(items) => items.iter().map(members).sum(),
        _ => 0,
    }
}

/// The index just past the string literal that starts at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index just past the number literal that starts at `start`.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
        i += 1;
    }
    i
}

/// Checks that `value`, parsed from the JSON text `text`, holds every number
/// of the text exactly and every member (no key given twice). One pass over
/// the text without allocating; the pointer of a problem is found by a
/// second, slower pass only when there is one.
fn check_agrees(text: &str, value: &Value) -> Result<(), ArgumentsError> {
    let bytes = text.as_bytes();
    let mut colons = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b':' => {
                colons += 1;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let end = number_end(bytes, i);
                if nearest_if_inexact(&text[i..end]).is_some() {
                    return Err(locate(text));
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    if colons != members(value) {
        return Err(locate(text));
    }
    Ok(())
}

/// `None` when serde_json's value for the number literal `token` is the
/// number written: an integer as an `i64` or `u64`, another number as an
/// `f64` whose shortest decimal (what serde_json writes back) is the same
/// number; otherwise that value, as serde_json writes it.
fn nearest_if_inexact(token: &str) -> Option<String> {
    let integer = !token.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
    if integer {
        let fits = if token.starts_with('-') {
            token.parse::<i64>().is_ok()
        } else {
            token.parse::<u64>().is_ok()
        };
        if fits {
            return None;
        }
    }
    // serde_json holds any other number as the f64 it parses to.
    let float: f64 = serde_json::from_str(token).ok()?;
    if integer {
        // Even when the float equals it, an integer held as a float is not
        // one any more: an integer field could not be read from the value.
        return Some(written(float));
    }
    let mut shortest = ShortText::default();
    // The decimal serde_json writes `float` back as (finite: serde_json
    // refuses numbers beyond f64's range). It is a shortest decimal that
    // parses back to `float`, but not always Rust's: when two are equally
    // short and equally near (`…929.2` and `…929.3` for the f64
    // `…929.25`), the two pick differently, and what reaches a tool is
    // serde_json's.
    serde_json::to_writer(&mut shortest, &float).ok()?;
    if Decimal::of(token) == Decimal::of(shortest.as_str()) {
        None
    } else {
        Some(written(float))
    }
}

/// `float` as serde_json writes it.
fn written(float: f64) -> String {
    serde_json::Number::from_f64(float).map_or_else(|| float.to_string(), |n| n.to_string())
}

/// A short text on the stack (a formatted `f64` takes at most 24 bytes).
struct ShortText {
    bytes: [u8; 48],
    len: usize,
}

impl Default for ShortText {
    fn default() -> Self {
        Self {
            bytes: [0; 48],
            len: 0,
        }
    }
}

impl ShortText {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl std::io::Write for ShortText {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let end = self.len + buf.len();
        let slot = self
            .bytes
            .get_mut(self.len..end)
            .ok_or(std::io::ErrorKind::WriteZero)?;
        slot.copy_from_slice(buf);
        self.len = end;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A decimal number literal as significant digits and a power of ten:
/// `int ++ frac` (no leading or trailing zeros) × 10^`scale`.
struct Decimal<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    scale: i128,
}

impl<'a> Decimal<'a> {
    /// Reads `-?digits(.digits)?([eE][+-]?digits)?` (JSON's number grammar,
    /// and Rust's `{:e}` output).
    fn of(token: &'a str) -> Self {
        let mut rest = token.as_bytes();
        let negative = rest.first() == Some(&b'-');
        if negative {
            rest = &rest[1..];
        }
        let (mantissa, exponent) = match rest.iter().position(|b| matches!(b, b'e' | b'E')) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &[][..]),
        };
        let (exp_negative, exp_digits) = match exponent.first() {
            Some(b'-') => (true, &exponent[1..]),
            Some(b'+') => (false, &exponent[1..]),
            _ => (false, exponent),
        };
        // Saturates far beyond any f64 exponent: a saturated exponent never
        // equals a float's.
        let mut exp: i128 = 0;
        for digit in exp_digits {
            exp = (exp * 10 + i128::from(digit - b'0')).min(1 << 80);
        }
        if exp_negative {
            exp = -exp;
        }
        let (mut int, mut frac) = match mantissa.iter().position(|&b| b == b'.') {
            Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
            None => (mantissa, &[][..]),
        };
        let mut scale = exp - frac.len() as i128;
        while let [head @ .., b'0'] = frac {
            frac = head;
            scale += 1;
        }
        if frac.is_empty() {
            while let [head @ .., b'0'] = int {
                int = head;
                scale += 1;
            }
        }
        while let [b'0', tail @ ..] = int {
            int = tail;
        }
        if int.is_empty() {
            while let [b'0', tail @ ..] = frac {
                frac = tail;
            }
        }
        Self {
            negative,
            int,
            frac,
            scale,
        }
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }
}

impl PartialEq for Decimal<'_> {
    fn eq(&self, other: &Self) -> bool {
        if self.is_zero() || other.is_zero() {
            return self.is_zero() && other.is_zero();
        }
        self.negative == other.negative
            && self.scale == other.scale
            && self
                .int
                .iter()
                .chain(self.frac)
                .eq(other.int.iter().chain(other.frac))
    }
}

/// One open container while locating a problem.
enum Frame {
    Object {
        keys: HashSet<String>,
        key: Option<String>,
    },
    Array {
        index: usize,
    },
}

/// `~` and `/` escaped for a JSON pointer token.
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The JSON pointer of the frames' current positions.
fn pointer(frames: &[Frame]) -> String {
    let mut out = String::new();
    for frame in frames {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                out.push('/');
                out.push_str(&pointer_token(key));
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => {
                out.push('/');
                out.push_str(&index.to_string());
            }
        }
    }
    out
}

/// Shortens a long number literal for a message.
fn quoted_number(token: &str) -> String {
    if token.len() <= QUOTED_NUMBER_CHARS {
        token.to_owned()
    } else {
        format!(
            "{}… ({} characters)",
            &token[..QUOTED_NUMBER_CHARS],
            token.len()
        )
    }
}

/// The first problem of `text` (valid JSON) in text order, with its pointer:
/// a number its parsed value would not hold exactly, or a repeated key.
fn locate(text: &str) -> ArgumentsError {
    let bytes = text.as_bytes();
    let mut frames: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                frames.push(Frame::Object {
                    keys: HashSet::new(),
                    key: None,
                });
                i += 1;
            }
            b'[' => {
                frames.push(Frame::Array { index: 0 });
                i += 1;
            }
            b'}' | b']' => {
                frames.pop();
                i += 1;
            }
            b',' => {
                match frames.last_mut() {
                    Some(Frame::Array { index }) => *index += 1,
                    Some(Frame::Object { key, .. }) => *key = None,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let end = string_end(bytes, i);
                let at_key = matches!(frames.last(), Some(Frame::Object { key: None, .. }));
                if at_key {
                    let name: String = serde_json::from_str(&text[i..end]).unwrap_or_default();
                    let depth = frames.len() - 1;
                    let container = pointer(&frames[..depth]);
                    if let Some(Frame::Object { keys, key }) = frames.last_mut() {
                        if !keys.insert(name.clone()) {
                            return ArgumentsError::DuplicateKey {
                                pointer: container,
                                key: name,
                            };
                        }
                        *key = Some(name);
                    }
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = number_end(bytes, i);
                let token = &text[i..end];
                if let Some(nearest) = nearest_if_inexact(token) {
                    return ArgumentsError::InexactNumber {
                        pointer: pointer(&frames),
                        number: quoted_number(token),
                        nearest,
                    };
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    // Unreachable for text the fast pass flagged; refused all the same (fail
    // closed), in words the model can act on.
    ArgumentsError::NotJson {
        reason: "its numbers or keys do not survive parsing".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact(token: &str) -> bool {
        nearest_if_inexact(token).is_none()
    }

    #[test]
    fn integers_in_range_and_short_decimals_are_exact() {
        for token in [
            "0",
            "-0",
            "1",
            "-1",
            "18446744073709551615",
            "-9223372036854775808",
            "1.50",
            "0.1",
            "1e2",
            "1E+2",
            "-0.0",
            "0e999",
            "2.5e-3",
            "1.7976931348623157e308",
            "5e-324",
            // The shortest decimal of an f64 beyond u64, written as a float.
            "1e23",
            // Found by the property test below: a float past 2^50, where an
            // f64 still holds one decimal.
            "-2240269879843929.2",
        ] {
            assert!(exact(token), "{token}");
        }
    }

    #[test]
    fn numbers_an_f64_would_round_are_inexact() {
        for token in [
            // 2^64 and 10^23: an f64 holds them, but as floats.
            "18446744073709551616",
            "100000000000000000000000",
            "18446744073709551617",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "3.14159265358979323846",
            "0.30000000000000000001",
            "9007199254740993.0",
            "1e-400",
        ] {
            assert!(!exact(token), "{token}");
        }
        assert_eq!(
            nearest_if_inexact("123456789012345678901234567890").as_deref(),
            Some("1.2345678901234568e+29")
        );
    }

    #[test]
    fn a_refused_number_names_its_pointer() {
        let err = Arguments::parse(r#"{"a": [1, {"b/c": 0.30000000000000000001}]}"#).unwrap_err();
        assert_eq!(err.pointer(), Some("/a/1/b~1c"));
        let message = err.to_string();
        assert!(message.contains("0.30000000000000000001"), "{message}");
        assert!(message.contains("it would become 0.3"), "{message}");
        assert!(message.contains("at `/a/1/b~1c`"), "{message}");
    }

    #[test]
    fn a_repeated_key_is_refused_with_its_object() {
        let err = Arguments::parse(r#"{"x": {"k": 1, "j": "k", "k": 2}}"#).unwrap_err();
        assert_eq!(
            err,
            ArgumentsError::DuplicateKey {
                pointer: "/x".to_owned(),
                key: "k".to_owned()
            }
        );
        // Spelled differently, the same key.
        let err = Arguments::parse(r#"{"a": 1, "\u0061": 2}"#).unwrap_err();
        assert_eq!(err.pointer(), Some(""));
        assert!(err.to_string().contains("at the top level"), "{err}");
        // The same key in sibling objects is fine.
        assert!(
            Arguments::parse(r#"{"a": {"k": 1}, "b": {"k": 1}, "c": [{"k": 1}, {"k": 2}]}"#)
                .is_ok()
        );
    }

    #[test]
    fn out_of_range_deep_and_non_objects_are_refused() {
        assert!(matches!(
            Arguments::parse(r#"{"a": 1e400}"#),
            Err(ArgumentsError::NumberOutOfRange { .. })
        ));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            Arguments::parse(&format!(r#"{{"a": {deep}}}"#)),
            Err(ArgumentsError::TooDeep { .. })
        ));
        assert_eq!(
            Arguments::parse("[1]").unwrap_err(),
            ArgumentsError::NotAnObject { found: "an array" }
        );
        assert!(matches!(
            Arguments::parse("{"),
            Err(ArgumentsError::NotJson { .. })
        ));
    }

    #[test]
    fn blank_text_is_an_empty_object_and_stays_blank() {
        let args = Arguments::parse("  ").unwrap();
        assert_eq!(args.text(), "  ");
        assert_eq!(**args.value(), serde_json::json!({}));
        #[derive(serde::Deserialize)]
        struct Nothing {}
        assert!(args.deserialize::<Nothing>().is_ok());
    }

    #[test]
    fn a_long_number_is_quoted_short() {
        let digits = "7".repeat(300);
        let err = Arguments::parse(&format!(r#"{{"n": {digits}}}"#)).unwrap_err();
        assert!(err.to_string().contains("(300 characters)"), "{err}");
        assert!(err.to_string().len() < 400, "{err}");
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z~/\"\\\\]{0,4}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z~/]{0,3}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_serialized_object_is_accepted_unchanged(value in json_value()) {
            let object = serde_json::json!({"v": value});
            let text = object.to_string();
            let args = Arguments::parse(&text).unwrap();
            prop_assert_eq!(&**args.value(), &object);
            let pretty = serde_json::to_string_pretty(&object).unwrap();
            let reparsed = Arguments::parse(&pretty).unwrap();
            prop_assert_eq!(&**reparsed.value(), &object);
        }

        #[test]
        fn a_repeated_key_anywhere_is_found(value in json_value(), key in "[a-z]{1,3}") {
            let text = format!(r#"{{"w": [{{"{key}": 1, "v": {value}, "{key}": 2}}]}}"#);
            let err = Arguments::parse(&text).unwrap_err();
            prop_assert_eq!(err, ArgumentsError::DuplicateKey { pointer: "/w/0".to_owned(), key });
        }

        #[test]
        fn an_integer_is_accepted_exactly_when_a_64_bit_integer_holds_it(n in any::<i128>()) {
            let text = format!(r#"{{"n": {n}}}"#);
            let held = i64::try_from(n).is_ok() || u64::try_from(n).is_ok();
            prop_assert_eq!(Arguments::parse(&text).is_ok(), held, "{}", text);
        }

        #[test]
        fn any_text_is_arguments_or_a_clear_error(text in ".{0,64}") {
            match Arguments::parse(&text) {
                Ok(args) => prop_assert!(args.value().is_object()),
                Err(err) => prop_assert!(err.to_string().starts_with("the arguments"), "{}", err),
            }
        }
    }
}
