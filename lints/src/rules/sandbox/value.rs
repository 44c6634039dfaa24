//! Abstract values of the sandbox analysis: what an expression of a cell may evaluate to, as far
//! as escapes are concerned (constant strings and small integers for names, builtins, modules,
//! module members, namespace dicts, user functions), plus the constant folding of strings.
//!
//! Every operation is bounded: sets hold at most [`MAX_SET`] values, folded strings at most
//! [`MAX_STR`] bytes, sequences at most [`MAX_SEQ`] elements; anything beyond becomes
//! [`Val::Unknown`].
//!
//! Values are cheap to clone: strings, modules and containers are reference-counted, and a set
//! of one value (by far the most common, `{Unknown}`) is stored inline without allocating.

use smallvec::SmallVec;
use std::rc::Rc;

/// Maximum number of values in a [`VSet`].
pub const MAX_SET: usize = 16;
/// Maximum length in bytes of a folded string.
pub const MAX_STR: usize = 4096;
/// Maximum number of elements of a folded sequence.
pub const MAX_SEQ: usize = 64;

/// What the state of a module value says about reporting escapes from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModState {
    /// Allowed or pre-bound: attributes leaving the allowlist are reported.
    Ok,
    /// Bound by `import a.b` where only `a.b` is allowed: every attribute except an allowed
    /// submodule is reported (the parent is not allowed).
    Parent,
    /// Reached through an import the allowlist blocks (already reported as IMP001), a dynamic
    /// import, or an unbound host-module name: only private attributes and hops from a harmless
    /// module to a host-reaching one are reported.
    Blocked,
    /// An escape already reported in this chain: nothing further is reported from it.
    Quiet,
}

/// A module value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModVal {
    /// How the cell reached it (`collections._sys`, `c` resolved to `collections`).
    pub path: Rc<str>,
    /// Its real `__name__` (`sys`, `posixpath`).
    pub real: Rc<str>,
    /// Reporting state.
    pub state: ModState,
}

impl ModVal {
    /// A module value.
    pub fn new(path: impl Into<Rc<str>>, real: impl Into<Rc<str>>, state: ModState) -> Self {
        ModVal {
            path: path.into(),
            real: real.into(),
            state,
        }
    }
}

/// One abstract value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Val {
    /// A constant string.
    Str(Rc<str>),
    /// A constant bytes value.
    Bytes(Rc<[u8]>),
    /// A small constant integer.
    Int(i64),
    /// A tuple or list with known elements (shared: values are cloned often).
    Seq(Rc<Vec<VSet>>),
    /// A dict display with known pairs (shared).
    Dict(Rc<Vec<(VSet, VSet)>>),
    /// A builtin function or type, by name (`getattr`, `eval`, `__import__`, `str`).
    Builtin(&'static str),
    /// A module.
    Module(Rc<ModVal>),
    /// A non-module attribute of a module, by dotted real path (`asyncio.create_subprocess_exec`,
    /// `sys.modules`); `asyncio.AbstractEventLoop` stands for any event loop.
    Member(Rc<str>),
    /// The namespace dict of a value (`vars(m)`, `m.__dict__`, `globals()`).
    Ns(Rc<Val>),
    /// The cell's own module (`__main__`).
    Main,
    /// A function or lambda defined in the cell (index into the interpreter's table).
    Func(u32),
    /// A class defined by a `class` statement of the cell (index into the interpreter's class
    /// table).
    Class(u32),
    /// An instance of a cell class whose construction cellguard can see through (no metaclass,
    /// no `__new__`/`__getattribute__`, only cell classes and plain library bases as bases):
    /// its declared fields are data the cell stored, not modules reached from it.
    Inst(u32),
    /// Anything else.
    Unknown,
}

impl Val {
    /// A sequence value.
    pub fn seq(items: Vec<VSet>) -> Val {
        Val::Seq(Rc::new(items))
    }
    /// A dict value.
    pub fn dict(pairs: Vec<(VSet, VSet)>) -> Val {
        Val::Dict(Rc::new(pairs))
    }
    /// A string value.
    pub fn str(s: impl Into<Rc<str>>) -> Val {
        Val::Str(s.into())
    }
    /// A bytes value.
    pub fn bytes(b: impl Into<Rc<[u8]>>) -> Val {
        Val::Bytes(b.into())
    }
    /// A module value.
    pub fn module(m: ModVal) -> Val {
        Val::Module(Rc::new(m))
    }
    /// A module member value.
    pub fn member(path: impl Into<Rc<str>>) -> Val {
        Val::Member(path.into())
    }
    /// The namespace dict of `v`.
    pub fn ns(v: Val) -> Val {
        Val::Ns(Rc::new(v))
    }

    /// Values worth keeping when a set overflows (they carry escapes, not just data).
    fn interesting(&self) -> bool {
        match self {
            Val::Str(s) => s.starts_with('_'),
            Val::Bytes(_) | Val::Int(_) | Val::Seq(_) | Val::Dict(_) | Val::Unknown => false,
            _ => true,
        }
    }
}

/// A set of possible values (a may-set). An empty set means "no binding seen". At most
/// [`MAX_SET`] values (a few more when values that carry escapes overflow it), so membership
/// tests are a bounded scan; a single value is stored inline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct VSet(pub SmallVec<[Val; 1]>);

impl VSet {
    /// `{v}`.
    pub fn one(v: Val) -> Self {
        let mut s = SmallVec::new();
        s.push(v);
        VSet(s)
    }
    /// `{Unknown}`.
    pub fn unknown() -> Self {
        Self::one(Val::Unknown)
    }
    /// A set of the given values, deduplicated and bounded.
    pub fn of(vals: Vec<Val>) -> Self {
        vals.into_iter().collect()
    }
    /// `{Str(s)}`, or `{Unknown}` when `s` is too long.
    pub fn str(s: impl AsRef<str> + Into<Rc<str>>) -> Self {
        if s.as_ref().len() > MAX_STR {
            Self::unknown()
        } else {
            Self::one(Val::Str(s.into()))
        }
    }
    /// True when no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Number of values.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// The values.
    pub fn iter(&self) -> impl Iterator<Item = &Val> {
        self.0.iter()
    }
    /// True when some value is [`Val::Unknown`].
    pub fn has_unknown(&self) -> bool {
        self.0.iter().any(|v| matches!(v, Val::Unknown))
    }
    /// True when every value is [`Val::Unknown`] (or the set is empty).
    pub fn only_unknown(&self) -> bool {
        self.0.iter().all(|v| matches!(v, Val::Unknown))
    }
    /// The constant strings in the set.
    pub fn strs(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|v| match v {
            Val::Str(s) => Some(&**s),
            _ => None,
        })
    }
    /// The builtins in the set.
    pub fn builtins(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().filter_map(|v| match v {
            Val::Builtin(b) => Some(*b),
            _ => None,
        })
    }
    /// True when the set holds builtin `name`.
    pub fn has_builtin(&self, name: &str) -> bool {
        self.builtins().any(|b| b == name)
    }

    /// Adds one value; returns true when the set changed. Past [`MAX_SET`] values, plain data
    /// is dropped in favour of [`Val::Unknown`] and of values that carry escapes.
    pub fn push(&mut self, v: Val) -> bool {
        if self.0.contains(&v) {
            return false;
        }
        self.push_new(v)
    }

    /// [`VSet::push`] of a value known not to be in the set.
    fn push_new(&mut self, v: Val) -> bool {
        if self.0.len() < MAX_SET {
            self.0.push(v);
            return true;
        }
        let mut changed = false;
        if !self.has_unknown() {
            if let Some(i) = self.0.iter().position(|x| !x.interesting()) {
                self.0[i] = Val::Unknown;
            } else {
                self.0.push(Val::Unknown);
            }
            changed = true;
        }
        if v.interesting() {
            if let Some(i) = self
                .0
                .iter()
                .position(|x| !x.interesting() && *x != Val::Unknown)
            {
                self.0[i] = v;
                return true;
            }
            if self.0.len() < 4 * MAX_SET {
                self.0.push(v);
                return true;
            }
        }
        changed
    }

    /// Adds every value of `other`; returns true when the set changed.
    pub fn join(&mut self, other: &VSet) -> bool {
        if self.0.is_empty() && other.0.len() <= MAX_SET {
            // Sets are always deduplicated: below the bound, a copy is the union.
            self.0 = other.0.clone();
            return !self.0.is_empty();
        }
        let mut changed = false;
        if self.0.len() * other.0.len() > 4 * MAX_SET {
            // Large sets: membership by hashing, so a join stays linear.
            let fresh: Vec<Val> = {
                let mine: rustc_hash::FxHashSet<&Val> = self.0.iter().collect();
                other
                    .0
                    .iter()
                    .filter(|v| !mine.contains(v))
                    .cloned()
                    .collect()
            };
            for v in fresh {
                changed |= self.push_new(v);
            }
            return changed;
        }
        for v in &other.0 {
            changed |= self.push(v.clone());
        }
        changed
    }

    /// The union of two sets.
    pub fn union(mut self, other: &VSet) -> VSet {
        self.join(other);
        self
    }

    /// Never empty: `{Unknown}` for an empty set.
    pub fn or_unknown(self) -> VSet {
        if self.0.is_empty() {
            VSet::unknown()
        } else {
            self
        }
    }
}

impl FromIterator<Val> for VSet {
    fn from_iter<I: IntoIterator<Item = Val>>(iter: I) -> Self {
        let mut s = VSet::default();
        for v in iter {
            s.push(v);
        }
        s
    }
}

/// True for `__name__`-style names: two underscores, an identifier, two underscores.
pub fn is_dunder(name: &str) -> bool {
    name.len() > 4
        && name.starts_with("__")
        && name.ends_with("__")
        && name[2..name.len() - 2]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name[2..name.len() - 2]
            .chars()
            .any(|c| c.is_ascii_alphanumeric())
}

/// True for an identifier with a leading underscore that is not a dunder.
pub fn is_private(name: &str) -> bool {
    name.starts_with('_') && !is_dunder(name)
}

/// Elements of the values of `v` when iterated (characters of strings, elements of sequences,
/// keys of dicts, integers of bytes), or `{Unknown}`.
pub fn elements(v: &VSet) -> VSet {
    let mut out = VSet::default();
    for val in v.iter() {
        match val {
            Val::Seq(items) => {
                for i in items.iter() {
                    out.join(i);
                }
                if items.is_empty() {
                    continue;
                }
            }
            Val::Str(s) => {
                for c in s.chars().take(MAX_SEQ) {
                    out.push(Val::str(c.to_string()));
                }
            }
            Val::Bytes(b) => {
                for x in b.iter().take(MAX_SEQ) {
                    out.push(Val::Int(*x as i64));
                }
            }
            Val::Dict(pairs) => {
                for (k, _) in pairs.iter() {
                    out.join(k);
                }
            }
            Val::Ns(_) | Val::Main => {
                out.push(Val::Unknown);
            }
            _ => {
                out.push(Val::Unknown);
            }
        }
    }
    out.or_unknown()
}

/// As a known sequence of element sets, when `v` is a single string, bytes or sequence.
pub fn as_sequence(v: &Val) -> Option<Vec<VSet>> {
    match v {
        Val::Seq(items) => Some(items.to_vec()),
        Val::Str(s) if s.chars().count() <= MAX_SEQ => Some(
            s.chars()
                .map(|c| VSet::one(Val::str(c.to_string())))
                .collect(),
        ),
        Val::Bytes(b) if b.len() <= MAX_SEQ => {
            Some(b.iter().map(|x| VSet::one(Val::Int(*x as i64))).collect())
        }
        Val::Dict(pairs) if pairs.len() <= MAX_SEQ => {
            Some(pairs.iter().map(|(k, _)| k.clone()).collect())
        }
        _ => None,
    }
}

/// Every combination of one string from each set, concatenated, at most [`MAX_SET`]
/// combinations; `None` when some set has a non-string value or the product is too big.
pub fn concat_product(parts: &[VSet]) -> Option<Vec<String>> {
    let mut acc: Vec<String> = vec![String::new()];
    for part in parts {
        let strs: Vec<&str> = part.strs().collect();
        if strs.len() != part.0.len() || strs.is_empty() {
            return None;
        }
        let mut next = Vec::new();
        for a in &acc {
            for s in &strs {
                if a.len() + s.len() > MAX_STR {
                    return None;
                }
                next.push(format!("{a}{s}"));
                if next.len() > MAX_SET {
                    return None;
                }
            }
        }
        acc = next;
    }
    Some(acc)
}

/// Python slice indices for a sequence of `len` items (CPython's `PySlice_AdjustIndices`).
pub fn slice_indices(
    len: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Option<Vec<usize>> {
    let len = len as i64;
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let adjust = |v: i64, lo: i64, hi: i64| -> i64 {
        if v < 0 {
            (v + len).max(lo)
        } else {
            v.min(hi)
        }
    };
    let (lo, hi) = if step > 0 { (0, len) } else { (-1, len - 1) };
    let start = match start {
        Some(s) => adjust(s, lo, hi),
        None => {
            if step > 0 {
                0
            } else {
                len - 1
            }
        }
    };
    let stop = match stop {
        Some(s) => adjust(s, lo, hi),
        None => {
            if step > 0 {
                len
            } else {
                -1
            }
        }
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if i >= 0 && i < len {
            out.push(i as usize);
        }
        if out.len() > MAX_STR {
            return None;
        }
        i = i.checked_add(step)?;
    }
    Some(out)
}

/// One replacement field of a format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatField {
    /// The field text between the braces (`0.__class__!r:>10`).
    pub text: String,
    /// The argument name or index (`0`, `x`, empty for automatic numbering).
    pub arg: String,
    /// Attribute and index steps after the argument.
    pub steps: Vec<FormatStep>,
    /// Conversion (`r`, `s`, `a`).
    pub conversion: Option<char>,
    /// The format spec after `:` (may itself contain fields).
    pub spec: String,
}

/// One `.name` or `[key]` step of a format field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatStep {
    /// `.name`.
    Attr(String),
    /// `[key]`.
    Index(String),
}

/// A parsed `str.format` template: literal pieces and fields in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatPiece {
    /// Literal text (`{{`/`}}` already unescaped).
    Lit(String),
    /// A replacement field.
    Field(FormatField),
}

/// Parses a `str.format` template as CPython's `MarkupIterator` does; `None` when it is
/// malformed (the call raises `ValueError` at runtime). Fields nested in a format spec are
/// returned as well, after their enclosing field.
pub fn parse_format(s: &str) -> Option<Vec<FormatPiece>> {
    parse_format_at(s, 0)
}

/// CPython allows fields nested two levels deep in a format spec ("Max string recursion
/// exceeded" beyond); deeper templates are malformed.
fn parse_format_at(s: &str, level: u32) -> Option<Vec<FormatPiece>> {
    if level > 2 {
        return None;
    }
    let mut out = Vec::new();
    let mut lit = String::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            if chars.get(i + 1) == Some(&'{') {
                lit.push('{');
                i += 2;
                continue;
            }
            // Find the matching close brace, counting nesting (fields in the spec).
            let mut depth = 1;
            let mut j = i + 1;
            let mut in_bracket = false;
            while j < chars.len() {
                match chars[j] {
                    '[' if depth == 1 => in_bracket = true,
                    ']' if depth == 1 => in_bracket = false,
                    '{' if !in_bracket => depth += 1,
                    '}' if !in_bracket => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j >= chars.len() {
                return None;
            }
            let inner: String = chars[i + 1..j].iter().collect();
            if !lit.is_empty() {
                out.push(FormatPiece::Lit(std::mem::take(&mut lit)));
            }
            let field = parse_field(&inner)?;
            let spec = field.spec.clone();
            out.push(FormatPiece::Field(field));
            if spec.contains('{') {
                for piece in parse_format_at(&spec, level + 1)? {
                    if let FormatPiece::Field(f) = piece {
                        out.push(FormatPiece::Field(f));
                    }
                }
            }
            i = j + 1;
        } else if c == '}' {
            if chars.get(i + 1) == Some(&'}') {
                lit.push('}');
                i += 2;
                continue;
            }
            return None;
        } else {
            lit.push(c);
            i += 1;
        }
    }
    if !lit.is_empty() {
        out.push(FormatPiece::Lit(lit));
    }
    Some(out)
}

fn parse_field(inner: &str) -> Option<FormatField> {
    // The field name ends at the first `!` or `:` outside `[...]`.
    let mut end = inner.len();
    let mut in_bracket = false;
    for (i, c) in inner.char_indices() {
        match c {
            '[' => in_bracket = true,
            ']' => in_bracket = false,
            '!' | ':' if !in_bracket => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let name = &inner[..end];
    let rest = &inner[end..];
    let (conversion, spec) = if let Some(r) = rest.strip_prefix('!') {
        let mut cs = r.chars();
        let conv = cs.next();
        let after = cs.as_str();
        let spec = after.strip_prefix(':').unwrap_or(after);
        (conv, spec.to_string())
    } else {
        (None, rest.strip_prefix(':').unwrap_or(rest).to_string())
    };
    let arg_end = name.find(['.', '[']).unwrap_or(name.len());
    let arg = name[..arg_end].to_string();
    let mut steps = Vec::new();
    let mut rest = &name[arg_end..];
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let e = r.find(['.', '[']).unwrap_or(r.len());
            steps.push(FormatStep::Attr(r[..e].to_string()));
            rest = &r[e..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let e = r.find(']')?;
            steps.push(FormatStep::Index(r[..e].to_string()));
            rest = &r[e + 1..];
        } else {
            return None;
        }
    }
    Some(FormatField {
        text: inner.to_string(),
        arg,
        steps,
        conversion,
        spec,
    })
}

/// `str(v)` for the constant values the folding knows how to print.
pub fn display(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.to_string()),
        Val::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// Folds `template.format(*args, **kwargs)` for templates whose fields are plain (`{}`, `{0}`,
/// `{name}`, conversion `!s`, no spec). `None` when it cannot be folded.
pub fn fold_format(template: &str, args: &[VSet], kwargs: &[(String, VSet)]) -> Option<VSet> {
    let pieces = parse_format(template)?;
    let mut parts: Vec<VSet> = Vec::new();
    let mut auto = 0usize;
    for p in pieces {
        match p {
            FormatPiece::Lit(s) => parts.push(VSet::one(Val::str(s))),
            FormatPiece::Field(f) => {
                if !f.steps.is_empty()
                    || !f.spec.is_empty()
                    || matches!(f.conversion, Some(c) if c != 's')
                {
                    return None;
                }
                let value = if f.arg.is_empty() {
                    let v = args.get(auto)?;
                    auto += 1;
                    v
                } else if let Ok(i) = f.arg.parse::<usize>() {
                    args.get(i)?
                } else {
                    &kwargs.iter().find(|(k, _)| *k == f.arg)?.1
                };
                let strs: Option<VSet> = value
                    .iter()
                    .map(|v| display(v).map(Val::str))
                    .collect::<Option<Vec<_>>>()
                    .map(|v| v.into_iter().collect());
                parts.push(strs?);
            }
        }
    }
    concat_product(&parts).map(|v| v.into_iter().map(Val::str).collect())
}

/// Folds `template % args` for `%s`, `%d`, `%i`, `%c` and `%%` (with `%(name)s` against a
/// dict). `None` when it cannot be folded.
pub fn fold_percent(template: &str, args: &Val) -> Option<VSet> {
    let positional: Vec<VSet> = match args {
        Val::Seq(items) => items.to_vec(),
        Val::Dict(_) => Vec::new(),
        other => vec![VSet::one(other.clone())],
    };
    let mut parts: Vec<VSet> = Vec::new();
    let mut lit = String::new();
    let mut next = 0usize;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            lit.push(c);
            continue;
        }
        let mut key: Option<String> = None;
        if chars.peek() == Some(&'(') {
            chars.next();
            let mut k = String::new();
            for c in chars.by_ref() {
                if c == ')' {
                    break;
                }
                k.push(c);
            }
            key = Some(k);
        }
        let conv = chars.next()?;
        if conv == '%' {
            lit.push('%');
            continue;
        }
        let value = match &key {
            Some(k) => match args {
                Val::Dict(pairs) => pairs
                    .iter()
                    .find(|(kk, _)| kk.strs().any(|s| s == k) && kk.0.len() == 1)
                    .map(|(_, v)| v.clone())?,
                _ => return None,
            },
            None => {
                let v = positional.get(next)?.clone();
                next += 1;
                v
            }
        };
        let mut rendered = VSet::default();
        for v in value.iter() {
            let s = match (conv, v) {
                ('s', v) => display(v)?,
                ('d' | 'i', Val::Int(i)) => i.to_string(),
                ('c', Val::Int(i)) => char::from_u32(u32::try_from(*i).ok()?)?.to_string(),
                ('c', Val::Str(s)) if s.chars().count() == 1 => s.to_string(),
                _ => return None,
            };
            rendered.push(Val::str(s));
        }
        parts.push(VSet::one(Val::str(std::mem::take(&mut lit))));
        parts.push(rendered);
    }
    if key_less_leftover(&positional, next, args) {
        return None;
    }
    parts.push(VSet::one(Val::str(lit)));
    concat_product(&parts).map(|v| v.into_iter().map(Val::str).collect())
}

fn key_less_leftover(positional: &[VSet], used: usize, args: &Val) -> bool {
    matches!(args, Val::Seq(_)) && used != positional.len()
}

/// Python-like `str.title()` (ASCII approximation).
pub fn title_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        if prev_cased {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        prev_cased = c.is_alphabetic();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dunder_and_private() {
        assert!(is_dunder("__class__"));
        assert!(is_dunder("__x__"));
        assert!(!is_dunder("____"));
        assert!(!is_dunder("_____"));
        assert!(!is_dunder("__init"));
        assert!(!is_dunder(r"__\w+__"));
        assert!(is_private("_os"));
        assert!(!is_private("__class__"));
        assert!(is_private("__os"));
    }

    #[test]
    fn format_fields() {
        let p = parse_format("a{0.__class__.__base__}b{{c}}{x[k]!r:>{w}}").unwrap();
        let fields: Vec<_> = p
            .iter()
            .filter_map(|p| match p {
                FormatPiece::Field(f) => Some(f.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(fields.len(), 3);
        assert_eq!(
            fields[0].steps,
            vec![
                FormatStep::Attr("__class__".into()),
                FormatStep::Attr("__base__".into())
            ]
        );
        assert_eq!(fields[1].arg, "x");
        assert_eq!(fields[1].steps, vec![FormatStep::Index("k".into())]);
        assert_eq!(fields[1].conversion, Some('r'));
        assert_eq!(fields[2].arg, "w");
        assert!(parse_format("{").is_none());
        assert!(parse_format("{0:{1:{2}}}").is_some());
        assert!(parse_format(&format!("{}{}", "{0:".repeat(5000), "}".repeat(5000))).is_none());
        assert!(parse_format("}").is_none());
    }

    #[test]
    fn folding_helpers() {
        let s = |x: &str| VSet::one(Val::str(x));
        assert_eq!(
            fold_format("{}{}", &[s("__cla"), s("ss__")], &[]),
            Some(s("__class__"))
        );
        assert_eq!(
            fold_format("{a}_{0}", &[s("x")], &[("a".into(), s("y"))]),
            Some(s("y_x"))
        );
        assert_eq!(fold_format("{0.x}", &[s("x")], &[]), None);
        assert_eq!(
            fold_percent("%s%s", &Val::seq(vec![s("o"), s("s")])),
            Some(s("os"))
        );
        assert_eq!(fold_percent("_%c", &Val::Int(111)), Some(s("_o")));
        assert_eq!(
            slice_indices(5, None, None, Some(-1)),
            Some(vec![4, 3, 2, 1, 0])
        );
        assert_eq!(
            slice_indices(5, Some(1), Some(-1), None),
            Some(vec![1, 2, 3])
        );
        assert_eq!(slice_indices(3, None, None, Some(0)), None);
        assert_eq!(
            concat_product(&[s("a"), VSet::of(vec![Val::str("b"), Val::str("c")])]),
            Some(vec!["ab".into(), "ac".into()])
        );
    }

    #[test]
    fn sets_are_bounded() {
        let mut v = VSet::default();
        for i in 0..100 {
            v.push(Val::Int(i));
        }
        assert!(v.0.len() <= MAX_SET + 1);
        assert!(v.has_unknown());
        v.push(Val::Builtin("getattr"));
        assert!(v.has_builtin("getattr"));
    }
}
