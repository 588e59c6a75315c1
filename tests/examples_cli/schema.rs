//! A validator for the subset of JSON Schema (draft 2020-12) that `docs/report.schema.json`
//! uses: `type` (one or a list), `enum`, `required`, `properties`, `additionalProperties:
//! false`, `items`, `minItems`, `minimum`, `minLength`, `pattern` (anchored literals, character
//! classes and `{n}` counts), `$ref` into `#/$defs/`. Any other keyword is an error, so the
//! schema cannot outgrow the validator unnoticed.

use serde_json::Value;

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &["$schema", "$id", "$defs", "title", "description"];

/// Every violation of `schema` (rooted at `root`) by `value`, each naming its JSON path.
pub fn validate(root: &Value, schema: &Value, value: &Value, path: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(keywords) = schema.as_object() else {
        return vec![format!("{path}: the schema is not an object")];
    };
    for (key, arg) in keywords {
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let target = arg
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .and_then(|name| root["$defs"].get(name));
                match target {
                    Some(s) => errors.extend(validate(root, s, value, path)),
                    None => errors.push(format!("{path}: unresolved $ref {arg}")),
                }
            }
            "type" => {
                let types: Vec<&str> = match arg {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                if !types.iter().any(|t| has_type(value, t)) {
                    errors.push(format!("{path}: {value} is not of type {arg}"));
                }
            }
            "enum" => {
                if !arg.as_array().is_some_and(|a| a.contains(value)) {
                    errors.push(format!("{path}: {value} is not one of {arg}"));
                }
            }
            "required" => {
                if let Some(obj) = value.as_object() {
                    for name in arg
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                    {
                        if !obj.contains_key(name) {
                            errors.push(format!("{path}: missing `{name}`"));
                        }
                    }
                }
            }
            "properties" => {
                if let (Some(obj), Some(props)) = (value.as_object(), arg.as_object()) {
                    for (name, sub) in props {
                        if let Some(v) = obj.get(name) {
                            errors.extend(validate(root, sub, v, &format!("{path}.{name}")));
                        }
                    }
                }
            }
            "additionalProperties" => {
                if arg != &Value::Bool(false) {
                    errors.push(format!(
                        "{path}: only additionalProperties: false is supported"
                    ));
                }
                if let Some(obj) = value.as_object() {
                    let known = keywords.get("properties").and_then(Value::as_object);
                    for name in obj.keys() {
                        if !known.is_some_and(|k| k.contains_key(name)) {
                            errors.push(format!("{path}: unexpected property `{name}`"));
                        }
                    }
                }
            }
            "items" => {
                for (i, v) in value.as_array().into_iter().flatten().enumerate() {
                    errors.extend(validate(root, arg, v, &format!("{path}[{i}]")));
                }
            }
            "minItems" => {
                if let (Some(a), Some(min)) = (value.as_array(), arg.as_u64()) {
                    if (a.len() as u64) < min {
                        errors.push(format!("{path}: fewer than {min} items"));
                    }
                }
            }
            "minLength" => {
                if let (Some(s), Some(min)) = (value.as_str(), arg.as_u64()) {
                    if (s.chars().count() as u64) < min {
                        errors.push(format!("{path}: shorter than {min}"));
                    }
                }
            }
            "minimum" => {
                if let (Some(x), Some(min)) = (value.as_f64(), arg.as_f64()) {
                    if x < min {
                        errors.push(format!("{path}: {x} is below {min}"));
                    }
                }
            }
            "pattern" => {
                if let (Some(s), Some(p)) = (value.as_str(), arg.as_str()) {
                    match matches_pattern(p, s) {
                        Ok(true) => {}
                        Ok(false) => errors.push(format!("{path}: `{s}` does not match {p}")),
                        Err(e) => errors.push(format!("{path}: pattern {p}: {e}")),
                    }
                }
            }
            other => errors.push(format!("{path}: keyword `{other}` is not supported")),
        }
    }
    errors
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.is_u64() || value.is_i64(),
        _ => false,
    }
}

/// One element of a pattern: a set of characters and how many times it repeats.
struct Atom {
    chars: Vec<(char, char)>,
    count: usize,
}

/// `pattern` (`^`, literals, `[a-z0-9]` classes, `{n}` counts, `$`) matches all of `s`.
fn matches_pattern(pattern: &str, s: &str) -> Result<bool, String> {
    let body = pattern
        .strip_prefix('^')
        .and_then(|p| p.strip_suffix('$'))
        .ok_or("only patterns anchored by ^ and $ are supported")?;
    let mut atoms: Vec<Atom> = Vec::new();
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '[' => {
                let mut chars = Vec::new();
                loop {
                    let lo = it.next().ok_or("unclosed [")?;
                    if lo == ']' {
                        break;
                    }
                    if it.peek() == Some(&'-') {
                        it.next();
                        let hi = it.next().ok_or("unclosed range")?;
                        chars.push((lo, hi));
                    } else {
                        chars.push((lo, lo));
                    }
                }
                atoms.push(Atom { chars, count: 1 });
            }
            '{' => {
                let digits: String = it.by_ref().take_while(|&d| d != '}').collect();
                let count = digits
                    .parse()
                    .map_err(|_| format!("bad count {{{digits}}}"))?;
                atoms
                    .last_mut()
                    .ok_or("a count with nothing before it")?
                    .count = count;
            }
            '\\' | '(' | ')' | '*' | '+' | '?' | '|' | '.' => {
                return Err(format!("`{c}` is not supported"));
            }
            lit => atoms.push(Atom {
                chars: vec![(lit, lit)],
                count: 1,
            }),
        }
    }
    let mut input = s.chars();
    for atom in &atoms {
        for _ in 0..atom.count {
            match input.next() {
                Some(c) if atom.chars.iter().any(|&(lo, hi)| lo <= c && c <= hi) => {}
                _ => return Ok(false),
            }
        }
    }
    Ok(input.next().is_none())
}
