//! Parameter types and literal arguments, for `API006 parameter-type-mismatch`.
//!
//! Deliberately conservative: a type is judged only when it is built from `str`, `int`,
//! `float`, `bool`, `None`, `list`/`tuple`/`set`, `dict`, `Any`, unions (`|`, `Union`,
//! `Optional`) and `Literal[...]` (JSON-schema spellings `string`, `integer`, `number`,
//! `boolean`, `array`, `null` included); any other name makes the verdict
//! [`Verdict::Unknown`]. Arguments are judged only when they are literals.
//!
//! Two modes. `lax` follows Pydantic v2's lax mode, which Colony uses to validate action inputs
//! (colony-reference §2.2 "Values are coerced in lax mode"): numeric strings are accepted for
//! numbers, `0`/`1` and `"true"`/`"no"`... for `bool`, tuples and sets for lists. Strict mode
//! (plain Python tools, functions dialect) accepts what the annotation says, plus `int` for
//! `float` and `bool` for `int` as Python does.

use crate::parse;
use serde_json::Value;
use tree_sitter::Node;

/// A parameter type, as far as cellguard judges it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// Anything goes.
    Any,
    /// `str`.
    Str,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `None`.
    NoneType,
    /// `list[T]` (or `list`: `Any` elements).
    List(Box<Ty>),
    /// `set[T]`.
    Set(Box<Ty>),
    /// `tuple[T, ...]` (homogeneous) or `tuple[A, B]` (elements not judged).
    Tuple(Option<Box<Ty>>),
    /// `dict[K, V]`.
    Dict(Box<Ty>),
    /// `A | B`.
    Union(Vec<Ty>),
    /// `Literal[...]`.
    Literal(Vec<Value>),
    /// A type cellguard does not judge (models, callables, `object`, ...).
    Unknown,
}

/// Parses a type as written in a knowledge base. Never fails: unknown parts become
/// [`Ty::Unknown`].
pub fn parse_type(text: &str) -> Ty {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return Ty::Unknown;
        }
    }
    if depth != 0 {
        return Ty::Unknown;
    }
    parse_union(text.trim(), 0)
}

fn parse_union(text: &str, depth: usize) -> Ty {
    if depth > 16 {
        return Ty::Unknown;
    }
    let parts = split_top(text, '|');
    if parts.len() > 1 {
        return Ty::Union(
            parts
                .iter()
                .map(|p| parse_atom(p.trim(), depth + 1))
                .collect(),
        );
    }
    parse_atom(text, depth + 1)
}

fn parse_atom(text: &str, depth: usize) -> Ty {
    let text = text.trim();
    let (name, args) = match text.find('[') {
        Some(i) if text.ends_with(']') => (&text[..i], Some(&text[i + 1..text.len() - 1])),
        Some(_) => return Ty::Unknown,
        None => (text, None),
    };
    let name = name.trim();
    let name = name
        .strip_prefix("typing.")
        .or_else(|| name.strip_prefix("t."))
        .unwrap_or(name);
    let inner = |i: usize| -> Ty {
        args.map(|a| split_top(a, ','))
            .and_then(|v| v.get(i).map(|s| parse_union(s.trim(), depth + 1)))
            .unwrap_or(Ty::Any)
    };
    match (name, args) {
        ("str" | "string" | "String", None) => Ty::Str,
        ("int" | "integer", None) => Ty::Int,
        ("float" | "number", None) => Ty::Float,
        ("bool" | "boolean", None) => Ty::Bool,
        ("None" | "NoneType" | "null", None) => Ty::NoneType,
        ("Any" | "any", None) => Ty::Any,
        ("list" | "List" | "array", _) => Ty::List(Box::new(inner(0))),
        ("set" | "Set" | "frozenset" | "FrozenSet", _) => Ty::Set(Box::new(inner(0))),
        ("dict" | "Dict", _) => Ty::Dict(Box::new(inner(1))),
        ("tuple" | "Tuple", None) => Ty::Tuple(None),
        ("tuple" | "Tuple", Some(a)) => {
            let parts = split_top(a, ',');
            if parts.len() == 2 && parts[1].trim() == "..." {
                Ty::Tuple(Some(Box::new(parse_union(parts[0].trim(), depth + 1))))
            } else {
                Ty::Tuple(None)
            }
        }
        ("Optional", Some(a)) => Ty::Union(vec![parse_union(a, depth + 1), Ty::NoneType]),
        ("Union", Some(a)) => Ty::Union(
            split_top(a, ',')
                .iter()
                .map(|p| parse_union(p.trim(), depth + 1))
                .collect(),
        ),
        ("Literal", Some(a)) => literal_values(a).map(Ty::Literal).unwrap_or(Ty::Unknown),
        _ => Ty::Unknown,
    }
}

fn literal_values(args: &str) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    for part in split_top(args, ',') {
        let p = part.trim();
        if p.len() >= 2
            && ((p.starts_with('"') && p.ends_with('"'))
                || (p.starts_with('\'') && p.ends_with('\'')))
        {
            out.push(Value::String(p[1..p.len() - 1].to_string()));
        } else if let Ok(i) = p.parse::<i64>() {
            out.push(Value::from(i));
        } else if p == "True" || p == "False" {
            out.push(Value::Bool(p == "True"));
        } else if p == "None" {
            out.push(Value::Null);
        } else {
            return None;
        }
    }
    Some(out)
}

/// Splits on `sep` outside brackets and quotes.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(' | '{') => depth += 1,
            (None, ']' | ')' | '}') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() || out.is_empty() {
        out.push(&s[start..]);
    }
    out
}

/// A literal argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// A string; its value when constant (f-strings with fields have none).
    Str(Option<String>),
    /// An integer literal (value when it fits).
    Int(Option<i128>),
    /// A float literal.
    Float(f64),
    /// `True`/`False`.
    Bool(bool),
    /// `None`.
    None,
    /// `[...]`.
    List(Vec<Lit>),
    /// `(...)`.
    Tuple(Vec<Lit>),
    /// `{a, b}`.
    Set(Vec<Lit>),
    /// `{k: v}`.
    Dict(Vec<Lit>),
    /// Not a literal (a name, a call, ...).
    NotLiteral,
}

impl Lit {
    /// Python type name of the literal.
    pub fn type_name(&self) -> &'static str {
        match self {
            Lit::Str(_) => "str",
            Lit::Int(_) => "int",
            Lit::Float(_) => "float",
            Lit::Bool(_) => "bool",
            Lit::None => "None",
            Lit::List(_) => "list",
            Lit::Tuple(_) => "tuple",
            Lit::Set(_) => "set",
            Lit::Dict(_) => "dict",
            Lit::NotLiteral => "expression",
        }
    }

    fn as_json(&self) -> Option<Value> {
        match self {
            Lit::Str(Some(s)) => Some(Value::String(s.clone())),
            Lit::Int(Some(i)) => i64::try_from(*i).ok().map(Value::from),
            Lit::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number),
            Lit::Bool(b) => Some(Value::Bool(*b)),
            Lit::None => Some(Value::Null),
            _ => None,
        }
    }
}

/// Reads a literal argument. Containers hold [`Lit::NotLiteral`] for non-literal elements.
pub fn literal(node: Node, src: &str, depth: usize) -> Lit {
    if depth > 32 {
        return Lit::NotLiteral;
    }
    let node = parse::unparenthesize(node);
    let elems = |n: Node| -> Vec<Lit> {
        let mut c = n.walk();
        n.named_children(&mut c)
            .filter(|e| e.kind() != "comment")
            .map(|e| {
                if matches!(e.kind(), "list_splat" | "dictionary_splat") {
                    Lit::NotLiteral
                } else {
                    literal(e, src, depth + 1)
                }
            })
            .collect()
    };
    match node.kind() {
        "string" | "concatenated_string" => {
            let is_bytes = parse::walk(node)
                .filter(|n| n.kind() == "string")
                .any(|s| parse::string_prefix(s, src).contains('b'));
            if is_bytes {
                Lit::NotLiteral
            } else {
                Lit::Str(parse::literal_str(node, src))
            }
        }
        "integer" => {
            let t: String = parse::text(node, src)
                .chars()
                .filter(|&c| c != '_')
                .collect();
            let lower = t.to_ascii_lowercase();
            if lower.ends_with('j') {
                return Lit::NotLiteral;
            }
            let v = if let Some(h) = lower.strip_prefix("0x") {
                i128::from_str_radix(h, 16).ok()
            } else if let Some(o) = lower.strip_prefix("0o") {
                i128::from_str_radix(o, 8).ok()
            } else if let Some(b) = lower.strip_prefix("0b") {
                i128::from_str_radix(b, 2).ok()
            } else {
                lower.parse::<i128>().ok()
            };
            Lit::Int(v)
        }
        "float" => {
            let t: String = parse::text(node, src)
                .chars()
                .filter(|&c| c != '_')
                .collect();
            if t.ends_with(['j', 'J']) {
                return Lit::NotLiteral;
            }
            t.parse::<f64>().map(Lit::Float).unwrap_or(Lit::NotLiteral)
        }
        "true" => Lit::Bool(true),
        "false" => Lit::Bool(false),
        "none" => Lit::None,
        "unary_operator" => {
            let op = node.child_by_field_name("operator").map(|o| o.kind());
            let arg = node.child_by_field_name("argument");
            match (op, arg.map(|a| literal(a, src, depth + 1))) {
                (Some("-"), Some(Lit::Int(v))) => Lit::Int(v.map(|v| -v)),
                (Some("-"), Some(Lit::Float(f))) => Lit::Float(-f),
                (Some("+"), Some(l @ (Lit::Int(_) | Lit::Float(_)))) => l,
                _ => Lit::NotLiteral,
            }
        }
        "list" => Lit::List(elems(node)),
        "tuple" => Lit::Tuple(elems(node)),
        "set" => Lit::Set(elems(node)),
        "dictionary" => {
            let mut c = node.walk();
            let values = node
                .named_children(&mut c)
                .filter(|p| p.kind() != "comment")
                .map(|p| match (p.kind(), p.child_by_field_name("value")) {
                    ("pair", Some(v)) => literal(v, src, depth + 1),
                    _ => Lit::NotLiteral,
                })
                .collect();
            Lit::Dict(values)
        }
        _ => Lit::NotLiteral,
    }
}

/// Outcome of judging a literal against a type.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The value fits.
    Ok,
    /// It cannot fit; the reason names what was found.
    Mismatch(String),
    /// cellguard cannot tell.
    Unknown,
}

fn numeric_str(s: &Option<String>) -> bool {
    s.as_deref()
        .is_some_and(|s| s.trim().parse::<f64>().is_ok())
}

/// Judges `lit` against `ty` (`lax`: Pydantic lax mode, see the module docs).
pub fn judge(ty: &Ty, lit: &Lit, lax: bool) -> Verdict {
    judge_inner(ty, lit, lax, 0)
}

fn judge_inner(ty: &Ty, lit: &Lit, lax: bool, depth: usize) -> Verdict {
    use Verdict::*;
    if depth > 16 || matches!(lit, Lit::NotLiteral) {
        return Unknown;
    }
    let got = || Mismatch(format!("got `{}`", lit.type_name()));
    match ty {
        Ty::Any => Ok,
        Ty::Unknown => Unknown,
        Ty::Union(members) => {
            let verdicts: Vec<Verdict> = members
                .iter()
                .map(|m| judge_inner(m, lit, lax, depth + 1))
                .collect();
            if verdicts.contains(&Ok) {
                Ok
            } else if verdicts.iter().all(|v| matches!(v, Mismatch(_))) {
                // Report the reason of the member with the same container kind, if any.
                verdicts
                    .into_iter()
                    .find(|v| matches!(v, Mismatch(m) if m.contains("element")))
                    .unwrap_or_else(got)
            } else {
                Unknown
            }
        }
        Ty::Literal(values) => match lit.as_json() {
            Some(v) => {
                if values.iter().any(|a| json_eq(a, &v)) {
                    Ok
                } else {
                    Mismatch(format!("got {}", render_json(&v)))
                }
            }
            None => match lit {
                Lit::Str(None) => Unknown,
                _ => got(),
            },
        },
        Ty::Str => match lit {
            Lit::Str(_) => Ok,
            _ => got(),
        },
        Ty::Int => match lit {
            Lit::Int(_) | Lit::Bool(_) => Ok,
            Lit::Float(f) if lax && f.fract() == 0.0 => Ok,
            Lit::Str(s) if lax && s.is_none() => Unknown,
            Lit::Str(s)
                if lax
                    && s.as_deref()
                        .is_some_and(|s| s.trim().parse::<i128>().is_ok()) =>
            {
                Ok
            }
            _ => got(),
        },
        Ty::Float => match lit {
            Lit::Int(_) | Lit::Float(_) | Lit::Bool(_) => Ok,
            Lit::Str(s) if lax && s.is_none() => Unknown,
            Lit::Str(s) if lax && numeric_str(s) => Ok,
            _ => got(),
        },
        Ty::Bool => match lit {
            Lit::Bool(_) => Ok,
            Lit::Int(Some(0 | 1)) => Ok,
            Lit::Float(f) if lax && (*f == 0.0 || *f == 1.0) => Ok,
            Lit::Str(None) if lax => Unknown,
            Lit::Str(Some(s))
                if lax
                    && matches!(
                        s.trim().to_ascii_lowercase().as_str(),
                        "0" | "1"
                            | "true"
                            | "false"
                            | "t"
                            | "f"
                            | "yes"
                            | "no"
                            | "y"
                            | "n"
                            | "on"
                            | "off"
                    ) =>
            {
                Ok
            }
            _ => got(),
        },
        Ty::NoneType => match lit {
            Lit::None => Ok,
            _ => got(),
        },
        Ty::List(inner) | Ty::Set(inner) => match lit {
            Lit::List(items) | Lit::Tuple(items) | Lit::Set(items) => {
                elements(inner, items, lax, depth)
            }
            _ => got(),
        },
        Ty::Tuple(inner) => match lit {
            Lit::List(items) | Lit::Tuple(items) => match inner {
                Some(t) => elements(t, items, lax, depth),
                None => Ok,
            },
            Lit::Set(_) if lax => Unknown,
            _ => got(),
        },
        Ty::Dict(value_ty) => match lit {
            Lit::Dict(values) => elements(value_ty, values, lax, depth),
            _ => got(),
        },
    }
}

fn elements(ty: &Ty, items: &[Lit], lax: bool, depth: usize) -> Verdict {
    let mut unknown = false;
    for item in items {
        match judge_inner(ty, item, lax, depth + 1) {
            Verdict::Ok => {}
            Verdict::Unknown => unknown = true,
            Verdict::Mismatch(_) => {
                return Verdict::Mismatch(match (ty, item.as_json()) {
                    (Ty::Literal(_), Some(v)) => format!("got the element {}", render_json(&v)),
                    _ => format!("got an element of type `{}`", item.type_name()),
                })
            }
        }
    }
    if unknown {
        Verdict::Unknown
    } else {
        Verdict::Ok
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// How a type is named in messages: allowed values spelled out, otherwise `None` (the caller
/// shows the type as written).
pub fn describe(ty: &Ty) -> Option<String> {
    let values = |vs: &[Value]| vs.iter().map(render_json).collect::<Vec<_>>().join(", ");
    match ty {
        Ty::Literal(vs) => Some(format!("one of {}", values(vs))),
        Ty::List(inner) | Ty::Set(inner) => match inner.as_ref() {
            Ty::Literal(vs) => Some(format!("a list of {}", values(vs))),
            _ => None,
        },
        Ty::Tuple(Some(inner)) => match inner.as_ref() {
            Ty::Literal(vs) => Some(format!("a list of {}", values(vs))),
            _ => None,
        },
        Ty::Union(members) => match members.as_slice() {
            [t, Ty::NoneType] => describe(t).map(|d| format!("{d}, or None")),
            _ => None,
        },
        _ => None,
    }
}

/// Python spelling of a JSON scalar (`'a'`, `3`, `True`, `None`).
pub fn render_json(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit_of(src: &str) -> Lit {
        let tree = parse::parse(src, None);
        let expr = tree
            .root_node()
            .named_child(0)
            .unwrap()
            .named_child(0)
            .unwrap();
        literal(expr, src, 0)
    }

    #[test]
    fn parses_kb_types() {
        assert_eq!(
            parse_type("list[str] | None"),
            Ty::Union(vec![Ty::List(Box::new(Ty::Str)), Ty::NoneType])
        );
        assert_eq!(
            parse_type("Optional[int]"),
            Ty::Union(vec![Ty::Int, Ty::NoneType])
        );
        assert_eq!(
            parse_type("Literal['a', \"b\"]"),
            Ty::Literal(vec![Value::from("a"), Value::from("b")])
        );
        assert_eq!(parse_type("dict[str, Any]"), Ty::Dict(Box::new(Ty::Any)));
        assert_eq!(
            parse_type("tuple[str, ...]"),
            Ty::Tuple(Some(Box::new(Ty::Str)))
        );
        assert_eq!(parse_type("MyModel"), Ty::Unknown);
        assert_eq!(parse_type("array"), Ty::List(Box::new(Ty::Any)));
        assert_eq!(parse_type("Dict[str, List[int]"), Ty::Unknown);
    }

    #[test]
    fn judges_literals() {
        let ids = parse_type("list[str] | None");
        assert_eq!(judge(&ids, &lit_of("['a', 'b']"), true), Verdict::Ok);
        assert_eq!(judge(&ids, &lit_of("None"), true), Verdict::Ok);
        assert!(matches!(
            judge(&ids, &lit_of("'agent-1'"), true),
            Verdict::Mismatch(_)
        ));
        assert!(
            matches!(judge(&ids, &lit_of("[1]"), true), Verdict::Mismatch(m) if m.contains("element"))
        );
        assert_eq!(judge(&ids, &lit_of("[x]"), true), Verdict::Unknown);
        let f = parse_type("float | None");
        assert_eq!(judge(&f, &lit_of("3"), false), Verdict::Ok);
        assert_eq!(judge(&f, &lit_of("-2.5"), false), Verdict::Ok);
        assert!(matches!(
            judge(&f, &lit_of("'3'"), false),
            Verdict::Mismatch(_)
        ));
        assert_eq!(judge(&f, &lit_of("'3'"), true), Verdict::Ok);
        let lit = parse_type("Literal['planning', 'execution']");
        assert_eq!(judge(&lit, &lit_of("'planning'"), true), Verdict::Ok);
        assert_eq!(
            judge(&lit, &lit_of("'plan'"), true),
            Verdict::Mismatch("got 'plan'".into())
        );
        assert_eq!(judge(&Ty::Str, &lit_of("f'{x}'"), false), Verdict::Ok);
        assert_eq!(judge(&Ty::Unknown, &lit_of("1"), false), Verdict::Unknown);
    }
}
