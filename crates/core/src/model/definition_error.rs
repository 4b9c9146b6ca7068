//! Why a tool definition or a tool name was refused.

use serde_json::Value;

/// Why a [`ToolDefinition`](crate::tool::ToolDefinition) could not be built, or
/// a string is not a valid [`ToolName`](super::ToolName) (the first three
/// variants). Each message names the tool, says what was wrong and how to fix
/// it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The name is empty.
    #[error("tool name is empty: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`")]
    EmptyName,
    /// The name is longer than [`ToolName::MAX_LEN`](super::ToolName::MAX_LEN).
    #[error(
        "tool name `{name}` is {len} characters long: the limit is 64 (A-Z, a-z, 0-9, `_`, `-`)"
    )]
    NameTooLong {
        /// The rejected name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The name contains a character outside `A–Z a–z 0–9 _ -`.
    #[error(
        "tool name `{name}` has {found:?} at position {position}: only A-Z, a-z, 0-9, `_` and `-` are allowed"
    )]
    InvalidNameCharacter {
        /// The rejected name.
        name: String,
        /// The first offending character.
        found: char,
        /// Its position, counted in characters from 0.
        position: usize,
    },
    /// No description, or only whitespace.
    #[error("tool `{tool}` has no description: tell the model what it does and when to use it")]
    EmptyDescription {
        /// The tool.
        tool: String,
    },
    /// No input schema was given.
    #[error("tool `{tool}` has no input schema: give the JSON Schema of its arguments object")]
    MissingInputSchema {
        /// The tool.
        tool: String,
    },
    /// The input schema is not a JSON object.
    #[error("the input schema of tool `{tool}` must be a JSON Schema object, found {found}")]
    InputSchemaNotObject {
        /// The tool.
        tool: String,
        /// What was found instead ("an array", "a boolean" …).
        found: &'static str,
    },
    /// The input schema does not say `"type": "object"`.
    #[error(
        "the input schema of tool `{tool}` must say `\"type\": \"object\"` (tool arguments are always a JSON object), found {}",
        found.as_deref().map_or_else(|| "no `type`".to_owned(), |t| format!("`\"type\": {t}`"))
    )]
    InputSchemaNotObjectType {
        /// The tool.
        tool: String,
        /// The `type` found, as JSON, if any.
        found: Option<String>,
    },
    /// No output declaration was given.
    #[error(
        "tool `{tool}` has no output declaration: give an OutputSpec with the JSON Schema of its result"
    )]
    MissingOutput {
        /// The tool.
        tool: String,
    },
    /// The output schema cannot be used.
    #[error("the output schema of tool `{tool}` is invalid: {reason}")]
    OutputSchemaInvalid {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// Generating a schema from a type failed (its `JsonSchema` impl panicked).
    #[error("could not generate the {which} schema of tool `{tool}`: {message}")]
    SchemaGeneration {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A schema nests deeper than [`ToolDefinition::MAX_SCHEMA_DEPTH`](crate::tool::ToolDefinition::MAX_SCHEMA_DEPTH).
    #[error(
        "the {which} schema of tool `{tool}` goes deeper than {limit} levels (JSON objects and \
         arrays, with each local `$ref` followed into what it points to): flatten it, with \
         fewer nested objects and arrays and shorter chains of `$ref`s"
    )]
    SchemaTooDeep {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A keyword sits in a schema whose declared `type` it does not
    /// constrain (`items` on an object, `properties` on an array,
    /// `minLength` on an integer): JSON Schema would ignore it, so it would
    /// silently constrain nothing. (Its larger fields are boxed, so a
    /// `DefinitionError` stays small.)
    #[error(
        "the {which} schema of tool `{tool}` has `{keyword}` at `{pointer}` in a schema with \
         `\"type\": {declared}`, but `{keyword}` constrains only {applies_to}, so it would be \
         ignored: move it into the schema it is meant for, fix that schema's `type`, or remove \
         it (a schema that must keep it as written can be built with \
         `ToolDefinitionBuilder::allow_misplaced_keywords`)"
    )]
    MisplacedKeyword {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// The JSON pointer of the keyword in the schema.
        pointer: Box<str>,
        /// The keyword.
        keyword: Box<str>,
        /// The declared `type` (a type name, or a list of them).
        declared: Box<Value>,
        /// What the keyword constrains, in words.
        applies_to: &'static str,
    },
    /// No handler was given.
    #[error("tool `{tool}` has no handler: give the body that runs a call")]
    MissingHandler {
        /// The tool.
        tool: String,
    },
    /// A zero timeout was declared.
    #[error(
        "tool `{tool}` declares a timeout of 0: a timeout must be positive (leave it unset for no deadline)"
    )]
    ZeroTimeout {
        /// The tool.
        tool: String,
    },
}
