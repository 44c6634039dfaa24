//! Python type annotations as text: normalisation, Colony's lossy prompt rendering, `Literal`
//! values, Python literals <-> JSON, and JSON Schema for a parameter type.
//!
//! Types are kept as written in the source (`list[str]`, `Literal["a", "b"]`, `int | None`);
//! nothing here imports or evaluates Python.

use serde_json::{json, Map, Value};

/// Splits `s` on `sep` where it is not nested in brackets or quotes.
pub fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Canonical text of a type for comparisons: whitespace dropped outside string literals, single
/// quotes made double, `typing.`/`typing_extensions.`/`t.` prefixes dropped.
pub fn normalize(ty: &str) -> String {
    let ty = ty.trim();
    let ty = if ty.len() >= 2
        && ((ty.starts_with('"') && ty.ends_with('"'))
            || (ty.starts_with('\'') && ty.ends_with('\'')))
        && !ty[1..ty.len() - 1].contains(['"', '\''])
    {
        // A whole annotation written as a string (forward reference).
        &ty[1..ty.len() - 1]
    } else {
        ty
    };
    let mut out = String::with_capacity(ty.len());
    let mut quote = None::<char>;
    for c in ty.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                    out.push('"');
                } else {
                    out.push(c);
                }
            }
            None => match c {
                '"' | '\'' => {
                    quote = Some(c);
                    out.push('"');
                }
                c if c.is_whitespace() => {}
                c => out.push(c),
            },
        }
    }
    for prefix in ["typing_extensions.", "typing.", "t."] {
        while let Some(pos) = find_name_start(&out, prefix) {
            out.replace_range(pos..pos + prefix.len(), "");
        }
    }
    out
}

/// Position of `prefix` where it starts a name (not preceded by an identifier character).
fn find_name_start(s: &str, prefix: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(prefix) {
        let pos = from + p;
        let before = s[..pos].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '"') {
            return Some(pos);
        }
        from = pos + prefix.len();
    }
    None
}

/// The head of a subscripted type (`list` for `list[str]`, `Optional` for `typing.Optional[int]`),
/// else the last dotted segment (`Model` for `models.Model`).
pub fn head(ty: &str) -> String {
    let n = normalize(ty);
    let base = n.split('[').next().unwrap_or(&n);
    base.rsplit('.').next().unwrap_or(base).to_string()
}

/// How Colony's prompt renders an annotation (`SchemaDetail.SELECTIVE`, colony-reference §2.8):
/// the annotation's `__name__` when it has one (`list[str]` -> `list`, `Optional[int]` ->
/// `Optional`, `Literal['a']` -> `Literal`, `models.Page` -> `Page`), otherwise `str(annotation)`
/// (a PEP 604 union such as `int | None` stays as written).
pub fn colony_display(ty: &str) -> String {
    let n = normalize(ty);
    if split_top(&n, '|').len() > 1 {
        return split_top(&n, '|')
            .iter()
            .map(|m| m.trim().to_string())
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if n == "None" {
        return "NoneType".into();
    }
    head(&n)
}

/// Heads whose prompt rendering drops detail (element types, allowed values, members).
const LOSSY_HEADS: [&str; 24] = [
    "list",
    "dict",
    "set",
    "frozenset",
    "tuple",
    "type",
    "List",
    "Dict",
    "Set",
    "FrozenSet",
    "Tuple",
    "Type",
    "Optional",
    "Union",
    "Literal",
    "Sequence",
    "Mapping",
    "MutableMapping",
    "Iterable",
    "Collection",
    "Callable",
    "Annotated",
    "Any",
    "object",
];

/// True when a type read from Colony's prompt text may be a lossy rendering of a more precise
/// annotation: a generic head shown without its arguments (`list`, `dict`, `Optional`,
/// `Literal`, ...), or an expanded model (`Model {f: T}`). Plain scalars (`str`, `int`, ...),
/// class names and PEP 604 unions of those are shown exactly.
pub fn prompt_type_is_lossy(display: &str) -> bool {
    let d = display.trim();
    if d.contains('{') {
        return true;
    }
    split_top(d, '|').iter().any(|m| {
        let m = m.trim();
        LOSSY_HEADS.contains(&m)
    })
}

/// True when two renderings can describe the same type. Exact types compare by
/// [`normalize`]d text (and `Optional[X]` equals `X | None`); an approximate type is consistent
/// with an exact one when it equals the exact type's Colony rendering or head.
pub fn consistent(a: &str, a_approx: bool, b: &str, b_approx: bool) -> bool {
    let (na, nb) = (canonical_union(a), canonical_union(b));
    if na == nb {
        return true;
    }
    match (a_approx, b_approx) {
        (false, false) => {
            same_modulo_qualification(a, b) || is_bare_head_of(a, b) || is_bare_head_of(b, a)
        }
        (true, true) => head(a) == head(b),
        (true, false) => approx_matches(a, b),
        (false, true) => approx_matches(b, a),
    }
}

fn approx_matches(approx: &str, exact: &str) -> bool {
    let shown = approx.split('{').next().unwrap_or(approx).trim();
    let na = normalize(shown);
    na == normalize(&colony_display(exact)) || na == head(exact)
}

/// True when two exact types differ only in how their names are qualified: Colony's prompt
/// shows a PEP 604 union as `str(annotation)`, which writes classes with their module
/// (`datetime.datetime | None`, `pkg.models.QueryContext | None`) where the source wrote
/// `datetime | None`.
pub fn same_modulo_qualification(a: &str, b: &str) -> bool {
    strip_qualifiers(&canonical_union(a)) == strip_qualifiers(&canonical_union(b))
}

/// True when `bare` is the unsubscripted head of the generic `full` (`Page` for
/// `Page[T]`, `models.Page` for `Page[Any]`): the same type written less precisely, as
/// Colony's prompt shows a generic alias by its `__name__`.
pub fn is_bare_head_of(bare: &str, full: &str) -> bool {
    let (b, f) = (normalize(bare), normalize(full));
    !b.contains(['[', '|', '"'])
        && f.contains('[')
        && split_top(&f, '|').len() == 1
        && strip_qualifiers(&b) == strip_qualifiers(f.split('[').next().unwrap_or(""))
}

/// `a.b.C` -> `C` for every dotted name outside string literals.
fn strip_qualifiers(n: &str) -> String {
    let mut out = String::with_capacity(n.len());
    let mut quote = None::<char>;
    let mut word_start = 0;
    for c in n.chars() {
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            word_start = out.len();
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                out.push(c);
            }
            '.' if out[word_start..]
                .chars()
                .next()
                .is_some_and(|f| f.is_alphabetic() || f == '_') =>
            {
                // Drop the qualifier written so far.
                out.truncate(word_start);
                continue;
            }
            c if c.is_alphanumeric() || c == '_' => {
                out.push(c);
                continue;
            }
            _ => out.push(c),
        }
        word_start = out.len();
    }
    out
}

/// `Optional[X]` -> `X|None`, `Union[A, B]` -> `A|B`, members sorted; for comparisons only.
fn canonical_union(ty: &str) -> String {
    let n = normalize(ty);
    let mut members: Vec<String> = union_members(&n);
    members.sort();
    members.dedup();
    members.join("|")
}

/// Members of a union written as `A | B`, `Optional[A]` or `Union[A, B]` (nested unions
/// flattened); a non-union gives itself.
pub fn union_members(ty: &str) -> Vec<String> {
    let n = normalize(ty);
    let parts = split_top(&n, '|');
    if parts.len() > 1 {
        return parts.iter().flat_map(|p| union_members(p)).collect();
    }
    if let Some(inner) = subscript_of(&n, "Optional") {
        let mut v = union_members(inner);
        v.push("None".into());
        return v;
    }
    if let Some(inner) = subscript_of(&n, "Union") {
        return split_top(inner, ',')
            .iter()
            .filter(|p| !p.trim().is_empty())
            .flat_map(|p| union_members(p))
            .collect();
    }
    vec![n]
}

/// `X[inner]` -> `inner` when the normalised head is `name`.
fn subscript_of<'a>(n: &'a str, name: &str) -> Option<&'a str> {
    let open = n.find('[')?;
    if !n.ends_with(']') {
        return None;
    }
    let h = &n[..open];
    if h.rsplit('.').next() != Some(name) {
        return None;
    }
    Some(&n[open + 1..n.len() - 1])
}

/// The allowed values of a type built from `Literal[...]` members, optionally in a union with
/// other `Literal`s or `None` (`Literal["a", "b"] | None` -> `["a", "b", null]`). `None` when
/// some member is not a literal.
pub fn allowed_values(ty: &str) -> Option<Vec<Value>> {
    let members = union_members(ty);
    let mut out = Vec::new();
    let mut any_literal = false;
    for m in members {
        if m == "None" {
            out.push(Value::Null);
            continue;
        }
        let inner = subscript_of(&m, "Literal")?;
        any_literal = true;
        for part in split_top(inner, ',') {
            if part.trim().is_empty() {
                continue;
            }
            out.push(python_literal_to_json(part)?);
        }
    }
    if !any_literal {
        return None;
    }
    let mut dedup = Vec::new();
    for v in out {
        if !dedup.contains(&v) {
            dedup.push(v);
        }
    }
    Some(dedup)
}

/// The JSON value of a simple Python literal: strings (any quote style, no prefix other than
/// `r`/`u`), integers, floats, `True`/`False`/`None`, and lists/tuples/dicts of those. `None`
/// for anything else (names, calls, expressions).
pub fn python_literal_to_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    match t {
        "True" => return Some(Value::Bool(true)),
        "False" => return Some(Value::Bool(false)),
        "None" => return Some(Value::Null),
        _ => {}
    }
    let lower = t.to_ascii_lowercase();
    let (prefix_len, raw) = if lower.starts_with("r'") || lower.starts_with("r\"") {
        (1, true)
    } else if lower.starts_with("u'") || lower.starts_with("u\"") {
        (1, false)
    } else {
        (0, false)
    };
    let body = &t[prefix_len..];
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if body.len() >= 2 * q.len() && body.starts_with(q) && body.ends_with(q) {
            let inner = &body[q.len()..body.len() - q.len()];
            if q.len() == 1 && inner.contains(q) && !inner.contains('\\') {
                return None;
            }
            return Some(Value::String(if raw {
                inner.to_string()
            } else {
                unescape_all(inner)
            }));
        }
    }
    let digits = t.replace('_', "");
    if let Ok(i) = digits.parse::<i64>() {
        return Some(Value::from(i));
    }
    // `0x1F`, `0o17`, `0b101` (optionally negative).
    let (neg, unsigned) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits.as_str()),
    };
    let lower_digits = unsigned.to_ascii_lowercase();
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(body) = lower_digits.strip_prefix(prefix) {
            let v = i64::from_str_radix(body, radix).ok()?;
            return Some(Value::from(if neg { -v } else { v }));
        }
    }
    if t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '.')
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E' | '_'))
    {
        if let Ok(f) = digits.parse::<f64>() {
            return serde_json::Number::from_f64(f).map(Value::Number);
        }
    }
    let (open, close) = (t.chars().next()?, t.chars().next_back()?);
    match (open, close) {
        ('[', ']') | ('(', ')') => {
            let inner = &t[1..t.len() - 1];
            let mut items = Vec::new();
            for part in split_top(inner, ',') {
                if part.trim().is_empty() {
                    continue;
                }
                items.push(python_literal_to_json(part)?);
            }
            Some(Value::Array(items))
        }
        ('{', '}') => {
            let inner = &t[1..t.len() - 1];
            let mut map = Map::new();
            for part in split_top(inner, ',') {
                if part.trim().is_empty() {
                    continue;
                }
                let kv = split_top(part, ':');
                if kv.len() != 2 {
                    return None;
                }
                let Value::String(k) = python_literal_to_json(kv[0])? else {
                    return None;
                };
                map.insert(k, python_literal_to_json(kv[1])?);
            }
            Some(Value::Object(map))
        }
        _ => None,
    }
}

fn unescape_all(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&(_, n)) = chars.peek() else {
            out.push('\\');
            break;
        };
        let len = match n {
            'x' => 4,
            'u' => 6,
            'U' => 10,
            '0'..='7' => {
                let mut l = 1;
                let bytes = s.as_bytes();
                while l < 4 && bytes.get(i + l).is_some_and(|b| (b'0'..=b'7').contains(b)) {
                    l += 1;
                }
                l
            }
            _ => 2,
        };
        let end = (i + len).min(s.len());
        let esc = s.get(i..end).unwrap_or("\\");
        out.push_str(&crate::parse::unescape(esc));
        while chars.peek().is_some_and(|&(j, _)| j < end) {
            chars.next();
        }
    }
    out
}

/// A JSON value as Python literal source text (`"economy"` -> `'economy'`, `true` -> `True`,
/// `null` -> `None`), as a KB records defaults.
pub fn json_to_python_literal(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let mut out = String::from("'");
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' => out.push_str("\\'"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter()
                .map(json_to_python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!(
                    "{}: {}",
                    json_to_python_literal(&Value::String(k.clone())),
                    json_to_python_literal(v)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// JSON Schema of values of a Python type (as written). Unknown classes and approximate types
/// give permissive schemas rather than wrong ones: an approximate `list` is an array of
/// anything, a class name is any value.
pub fn json_schema_for(ty: &str, approximate: bool) -> Value {
    let members = union_members(ty);
    if members.len() > 1 {
        let schemas: Vec<Value> = members
            .iter()
            .map(|m| single_schema(m, approximate))
            .collect();
        if schemas
            .iter()
            .any(|s| s.as_object().is_some_and(Map::is_empty))
        {
            return json!({});
        }
        return json!({ "anyOf": schemas });
    }
    single_schema(&normalize(ty), approximate)
}

fn single_schema(n: &str, approximate: bool) -> Value {
    if approximate && n.contains('{') {
        return json!({ "type": "object" });
    }
    let h = head(n);
    let args: Vec<&str> = n
        .find('[')
        .filter(|_| n.ends_with(']'))
        .map(|open| {
            split_top(&n[open + 1..n.len() - 1], ',')
                .into_iter()
                .filter(|p| !p.trim().is_empty())
                .collect()
        })
        .unwrap_or_default();
    match h.as_str() {
        "str" => json!({"type": "string"}),
        "int" => json!({"type": "integer"}),
        "float" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        "None" | "NoneType" => json!({"type": "null"}),
        "list" | "List" | "Sequence" | "MutableSequence" | "Iterable" | "Collection" => {
            match args.first() {
                Some(inner) => json!({"type": "array", "items": json_schema_for(inner, false)}),
                None => json!({"type": "array"}),
            }
        }
        "set" | "Set" | "frozenset" | "FrozenSet" | "AbstractSet" => match args.first() {
            Some(inner) => {
                json!({"type": "array", "items": json_schema_for(inner, false), "uniqueItems": true})
            }
            None => json!({"type": "array", "uniqueItems": true}),
        },
        "tuple" | "Tuple" => {
            if args.len() == 2 && args[1].trim() == "..." {
                json!({"type": "array", "items": json_schema_for(args[0], false)})
            } else if !args.is_empty() {
                let items: Vec<Value> = args.iter().map(|a| json_schema_for(a, false)).collect();
                json!({"type": "array", "prefixItems": items, "minItems": items.len(), "maxItems": items.len()})
            } else {
                json!({"type": "array"})
            }
        }
        "dict" | "Dict" | "Mapping" | "MutableMapping" => match args.get(1) {
            Some(v) => json!({"type": "object", "additionalProperties": json_schema_for(v, false)}),
            None => json!({"type": "object"}),
        },
        "Literal" => {
            let values: Vec<Value> = args
                .iter()
                .filter_map(|a| python_literal_to_json(a))
                .collect();
            if values.len() == args.len() && !values.is_empty() {
                json!({ "enum": values })
            } else {
                json!({})
            }
        }
        "Annotated" => args
            .first()
            .map(|a| json_schema_for(a, false))
            .unwrap_or_else(|| json!({})),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn qualified_and_bare_generic_spellings_agree() {
        assert!(consistent(
            "datetime | None",
            false,
            "datetime.datetime | None",
            false
        ));
        assert!(consistent(
            "QueryContext | None",
            false,
            "pkg.models.QueryContext | None",
            false
        ));
        assert!(consistent(
            "dict[str, Any] | None",
            false,
            "dict[str, typing.Any] | None",
            false
        ));
        assert!(consistent(
            "ScopeAwareResult[T]",
            false,
            "ScopeAwareResult",
            false
        ));
        assert!(consistent("Page", false, "models.Page[Any]", false));
        // Real differences stay differences.
        assert!(!consistent(
            "QueryContext | None",
            false,
            "Query | None",
            false
        ));
        assert!(!consistent("int | None", false, "str | None", false));
        assert!(!consistent(
            "Literal[\"a.b\"]",
            false,
            "Literal[\"b\"]",
            false
        ));
        assert!(!consistent("Page | None", false, "Page[T]", false));
        assert!(!is_bare_head_of("list[str]", "list[int]"));
    }

    #[test]
    fn radix_integer_literals() {
        assert_eq!(python_literal_to_json("0x10"), Some(json!(16)));
        assert_eq!(python_literal_to_json("-0b11"), Some(json!(-3)));
        assert_eq!(python_literal_to_json("0o17"), Some(json!(15)));
        assert_eq!(python_literal_to_json("0xZZ"), None);
    }

    use super::*;

    #[test]
    fn display_matches_colony_rendering() {
        for (ty, shown) in [
            ("list[str]", "list"),
            ("dict[str, Any]", "dict"),
            ("Optional[int]", "Optional"),
            ("Literal['a','b']", "Literal"),
            ("int | None", "int | None"),
            ("typing.List[str]", "List"),
            ("models.Page", "Page"),
            ("str", "str"),
        ] {
            assert_eq!(colony_display(ty), shown, "{ty}");
        }
    }

    #[test]
    fn consistency() {
        assert!(consistent("list[str]", false, "list", true));
        assert!(consistent("Optional[int]", false, "int | None", false));
        assert!(consistent(
            "Literal['a', 'b']",
            false,
            "Literal[\"a\",\"b\"]",
            false
        ));
        assert!(!consistent("list[str]", false, "str", false));
        assert!(!consistent("list[str]", false, "dict", true));
        assert!(consistent(
            "dict[str, Any] | None",
            false,
            "dict[str, Any] | None",
            true
        ));
    }

    #[test]
    fn allowed_values_through_unions() {
        assert_eq!(
            allowed_values("Literal['a', \"b\"] | None"),
            Some(vec![json!("a"), json!("b"), Value::Null])
        );
        assert_eq!(
            allowed_values("Optional[Literal[1, 2]]"),
            Some(vec![json!(1), json!(2), Value::Null])
        );
        assert_eq!(allowed_values("str | None"), None);
        assert_eq!(
            allowed_values("typing.Literal['x']"),
            Some(vec![json!("x")])
        );
    }

    #[test]
    fn python_literals_round_trip() {
        for (py, js) in [
            ("'it\\'s'", json!("it's")),
            ("3", json!(3)),
            ("-2.5", json!(-2.5)),
            ("None", Value::Null),
            ("[1, 'a', True]", json!([1, "a", true])),
            ("{'k': (1, 2)}", json!({"k": [1, 2]})),
        ] {
            assert_eq!(python_literal_to_json(py), Some(js.clone()), "{py}");
            assert_eq!(
                python_literal_to_json(&json_to_python_literal(&js)),
                Some(js)
            );
        }
        assert_eq!(python_literal_to_json("SOME_CONST"), None);
        assert_eq!(python_literal_to_json("f(x)"), None);
    }

    #[test]
    fn schema_for_types() {
        assert_eq!(
            json_schema_for("list[str]", false),
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(
            json_schema_for("int | None", false),
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
        );
        assert_eq!(
            json_schema_for("Literal['a', 'b']", false),
            json!({"enum": ["a", "b"]})
        );
        assert_eq!(json_schema_for("list", true), json!({"type": "array"}));
        assert_eq!(json_schema_for("MyModel | None", false), json!({}));
    }
}
