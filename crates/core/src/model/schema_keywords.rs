//! Keywords misplaced for a schema's declared `type`: `items` on an object,
//! `properties` on an array, `minLength` on an integer. JSON Schema ignores a
//! keyword that does not apply to the instance's type, so such a keyword
//! constrains nothing — almost always an author's mistake that silently
//! weakens validation. [`misplaced_keyword`] finds the first one.

use serde_json::{Map, Value};

/// The instance types a keyword constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Applies {
    Object,
    Array,
    String,
    Number,
}

impl Applies {
    fn describe(self) -> &'static str {
        match self {
            Applies::Object => "objects (`\"type\": \"object\"`)",
            Applies::Array => "arrays (`\"type\": \"array\"`)",
            Applies::String => "strings (`\"type\": \"string\"`)",
            Applies::Number => "numbers (`\"type\": \"number\"` or `\"integer\"`)",
        }
    }

    /// Whether the JSON Schema type name `ty` is constrained by keywords of this kind.
    fn covers(self, ty: &str) -> bool {
        matches!(
            (self, ty),
            (Applies::Object, "object")
                | (Applies::Array, "array")
                | (Applies::String, "string")
                | (Applies::Number, "number" | "integer")
        )
    }
}

/// The type-specific keywords, and the type each constrains.
fn applies(keyword: &str) -> Option<Applies> {
    Some(match keyword {
        "properties"
        | "patternProperties"
        | "additionalProperties"
        | "required"
        | "propertyNames"
        | "minProperties"
        | "maxProperties"
        | "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties" => Applies::Object,
        "items" | "prefixItems" | "additionalItems" | "contains" | "minItems" | "maxItems"
        | "uniqueItems" | "minContains" | "maxContains" | "unevaluatedItems" => Applies::Array,
        "minLength" | "maxLength" | "pattern" | "contentEncoding" | "contentMediaType" => {
            Applies::String
        }
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            Applies::Number
        }
        _ => return None,
    })
}

/// One misplaced keyword.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Misplaced {
    /// The JSON pointer of the keyword in the schema, e.g. `/properties/tags/minLength`.
    pub(crate) pointer: String,
    /// The keyword.
    pub(crate) keyword: String,
    /// The declared `type`.
    pub(crate) declared: Value,
    /// What the keyword constrains, in words.
    pub(crate) applies_to: &'static str,
}

/// The first keyword (in document order) that sits in a (sub)schema whose
/// declared `type` it does not constrain, if any. Subschemas are every place
/// JSON Schema puts one (`properties`, `items`, `allOf`, `$defs`, …), not
/// data such as `enum`, `const`, `default` or `examples`. A schema without
/// `type`, or with a type name this check does not know, is not checked.
///
/// Recursive: schemas reach this check only within the depth limit.
pub(crate) fn misplaced_keyword(schema: &Value) -> Option<Misplaced> {
    let mut pointer = String::new();
    walk(schema, &mut pointer)
}

fn walk(schema: &Value, pointer: &mut String) -> Option<Misplaced> {
    let Value::Object(map) = schema else {
        return None;
    };
    if let Some(found) = check_one(map, pointer) {
        return Some(found);
    }
    for (keyword, value) in map {
        let at = pointer.len();
        push_token(pointer, keyword);
        let found = match keyword.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                members(value, pointer)
            }
            "dependencies" => members(value, pointer), // array members are not schemas
            "items" | "prefixItems" | "allOf" | "anyOf" | "oneOf" => match value {
                Value::Array(items) => elements(items, pointer),
                other => walk(other, pointer),
            },
            "additionalProperties"
            | "additionalItems"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contentSchema" => walk(value, pointer),
            _ => None,
        };
        pointer.truncate(at);
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Each member of an object of subschemas.
fn members(value: &Value, pointer: &mut String) -> Option<Misplaced> {
    let Value::Object(map) = value else {
        return None;
    };
    for (name, schema) in map {
        let at = pointer.len();
        push_token(pointer, name);
        let found = walk(schema, pointer);
        pointer.truncate(at);
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Each element of an array of subschemas.
fn elements(items: &[Value], pointer: &mut String) -> Option<Misplaced> {
    for (index, schema) in items.iter().enumerate() {
        let at = pointer.len();
        pointer.push('/');
        pointer.push_str(&index.to_string());
        let found = walk(schema, pointer);
        pointer.truncate(at);
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The misplaced keyword of one schema object, if any.
fn check_one(map: &Map<String, Value>, pointer: &str) -> Option<Misplaced> {
    let declared = map.get("type")?;
    let types: Vec<&str> = match declared {
        Value::String(ty) => vec![ty.as_str()],
        Value::Array(types) => types.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    const KNOWN: [&str; 7] = [
        "object", "array", "string", "number", "integer", "boolean", "null",
    ];
    if types.is_empty() || types.iter().any(|ty| !KNOWN.contains(ty)) {
        return None;
    }
    map.keys().find_map(|keyword| {
        let kind = applies(keyword)?;
        if types.iter().any(|ty| kind.covers(ty)) {
            return None;
        }
        let mut at = pointer.to_owned();
        push_token(&mut at, keyword);
        Some(Misplaced {
            pointer: at,
            keyword: keyword.clone(),
            declared: declared.clone(),
            applies_to: kind.describe(),
        })
    })
}

/// Appends `/token`, escaped as a JSON pointer token (`~` → `~0`, `/` → `~1`).
fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(schema: Value) -> Option<(String, String)> {
        misplaced_keyword(&schema).map(|m| (m.pointer, m.keyword))
    }

    #[test]
    fn finds_keywords_for_another_type_and_names_their_pointer() {
        assert_eq!(
            at(json!({"type": "object", "items": {"type": "string"}})),
            Some(("/items".into(), "items".into()))
        );
        assert_eq!(
            at(
                json!({"type": "object", "properties": {"tags": {"type": "array", "properties": {}}}})
            ),
            Some(("/properties/tags/properties".into(), "properties".into()))
        );
        assert_eq!(
            at(json!({"type": "object", "properties": {"n": {"type": "integer", "minLength": 1}}})),
            Some(("/properties/n/minLength".into(), "minLength".into()))
        );
        assert_eq!(
            at(
                json!({"type": "object", "properties": {"a/b": {"anyOf": [{"type": "string"}, {"type": "string", "minimum": 0}]}}})
            ),
            Some(("/properties/a~1b/anyOf/1/minimum".into(), "minimum".into()))
        );
        assert_eq!(
            at(json!({"type": "object", "$defs": {"x": {"type": "boolean", "maxItems": 1}}})),
            Some(("/$defs/x/maxItems".into(), "maxItems".into()))
        );
    }

    #[test]
    fn accepts_what_applies_and_what_is_not_a_schema() {
        for fine in [
            json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1, "pattern": "a"}}, "required": ["s"]}),
            json!({"type": ["string", "array"], "minLength": 1, "items": {}}),
            json!({"type": "integer", "minimum": 0, "multipleOf": 2}),
            json!({"type": "array", "items": [{"type": "string"}], "minItems": 1}),
            // No type: keywords apply to whatever the value is.
            json!({"minLength": 1, "items": {}}),
            // Data, not schemas: `enum`, `const`, `default`, `examples`.
            json!({"type": "object", "default": {"type": "string", "items": 1}, "enum": [{"type": "integer", "minLength": 1}]}),
            // A property named like a keyword is a property.
            json!({"type": "object", "properties": {"items": {"type": "string"}, "minLength": {"type": "integer"}}}),
            // A type name the check does not know: not checked.
            json!({"type": "any", "items": {}}),
        ] {
            assert_eq!(at(fine.clone()), None, "{fine}");
        }
    }
}
