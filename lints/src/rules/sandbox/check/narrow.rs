//! Instances of the cell's own classes, recognised from the binder of a name (issue 4 round 8,
//! S8-1..S8-4, S8-7). The interpreter's bindings are merged by name over the whole cell, so a
//! parameter, a lambda parameter or a comprehension variable that the cell also uses elsewhere
//! is "anything" there, and `r.os` on it looks like a module attribute. Here the nearest
//! lexical binder of the name decides instead:
//!
//! - a comprehension or `for` variable iterating a collection of instances of plain cell
//!   classes (a display of instances, a comprehension building them, a name holding only such
//!   collections, a parameter annotated `list[Rec]`);
//! - a lambda parameter of `sorted`/`min`/`max`/`list.sort` (`key=`), `map` or `filter` over
//!   such a collection;
//! - a parameter annotated with a plain cell class (`def f(r: Rec)`, `Optional[Rec]`,
//!   `"Rec"`), of an undecorated function that is not a method, that the cell only ever calls
//!   directly by name and never passes a module: every argument for it is an instance, plain
//!   data, or a value cellguard cannot resolve that no module flows into (see
//!   [`Sbx::host_laundered`]).
//!
//! A binder that is rebound in its scope (`r = m` in the function body, a walrus in a lambda)
//! proves nothing. The attribute is then read on an instance: a field the class declares is
//! the cell's data (see `attr_findings`), anything else is judged as before.

use super::*;

/// Collection types whose parameter annotation (`list[Rec]`) makes every element a `Rec`.
const COLLECTION_ANNOTATIONS: &[&str] = &[
    "list",
    "List",
    "Sequence",
    "MutableSequence",
    "Iterable",
    "Iterator",
    "Collection",
    "set",
    "Set",
    "AbstractSet",
    "frozenset",
    "FrozenSet",
    "tuple",
    "Tuple",
];

/// `a` lies inside `b`.
fn within(a: Node, b: Node) -> bool {
    a.start_byte() >= b.start_byte() && a.end_byte() <= b.end_byte()
}

/// The class ids of a set whose every value is an instance of a cell class, if it is one.
fn inst_ids(v: &VSet) -> Option<Vec<u32>> {
    let mut ids = Vec::new();
    for x in v.iter() {
        match x {
            Val::Inst(id) => ids.push(*id),
            _ => return None,
        }
    }
    (!ids.is_empty()).then_some(ids)
}

/// The class ids of a set whose every value is a sequence of instances of cell classes.
fn seq_inst_ids(v: &VSet) -> Option<Vec<u32>> {
    let mut ids = Vec::new();
    for x in v.iter() {
        match x {
            Val::Seq(items) => {
                for s in items.iter() {
                    ids.extend(inst_ids(s)?);
                }
            }
            _ => return None,
        }
    }
    (!ids.is_empty()).then_some(ids)
}

impl<'t, 'a> Sbx<'t, 'a> {
    /// The plain cell classes whose instances identifier `obj` holds, as its nearest lexical
    /// binder shows (see the module documentation), or `None` when it shows nothing.
    pub(super) fn scoped_instance(&mut self, obj: Node<'t>, depth: u32) -> Option<Vec<u32>> {
        let obj = unparen(obj);
        if depth > 6 || obj.kind_name() != "identifier" {
            return None;
        }
        if let Some(v) = self.narrow_memo.get(&obj.id()) {
            return v.clone();
        }
        self.narrow_memo.insert(obj.id(), None);
        let v = self.scoped_instance_uncached(obj, depth);
        // A result cut short by the depth bound is not memoised.
        if v.is_some() || depth == 0 {
            self.narrow_memo.insert(obj.id(), v.clone());
        } else {
            self.narrow_memo.remove(&obj.id());
        }
        v
    }

    fn scoped_instance_uncached(&mut self, obj: Node<'t>, depth: u32) -> Option<Vec<u32>> {
        let src = self.it.src;
        let name = ident(obj, src).into_owned();
        if let Some(id) = self.self_instance(obj) {
            let def = self.enclosing_def(obj)?;
            return (!self.rebinds_in(def, &name)).then(|| vec![id]);
        }
        let mut cur = obj;
        loop {
            let p = self.it.parent(cur)?;
            match p.kind_name() {
                "list_comprehension"
                | "set_comprehension"
                | "generator_expression"
                | "dictionary_comprehension" => {
                    let mut found = None;
                    for c in named(p) {
                        if c.kind_name() != "for_in_clause" {
                            continue;
                        }
                        let (Some(l), Some(r)) = (c.field(F::Left), c.field(F::Right)) else {
                            continue;
                        };
                        if within(obj, r) {
                            continue;
                        }
                        if target_names(l).iter().any(|t| ident(*t, src) == name) {
                            if l.kind_name() != "identifier" {
                                return None;
                            }
                            found = Some(r);
                        }
                    }
                    if let Some(r) = found {
                        return self.element_instances(r, depth + 1);
                    }
                }
                "lambda" => {
                    let params = p.field(F::Parameters).map(named).unwrap_or_default();
                    if let Some(i) = params
                        .iter()
                        .position(|q| q.kind_name() == "identifier" && ident(*q, src) == name)
                    {
                        if self.bindings_of(&name, p) != 1 {
                            return None;
                        }
                        return self.lambda_param_instance(p, i, depth + 1);
                    }
                    if params.iter().any(|q| {
                        parse::walk(*q)
                            .any(|x| x.kind_name() == "identifier" && ident(x, src) == name)
                    }) {
                        return None;
                    }
                }
                "for_statement" => {
                    if let (Some(l), Some(r), Some(b)) =
                        (p.field(F::Left), p.field(F::Right), p.field(F::Body))
                    {
                        if l.kind_name() == "identifier" && ident(l, src) == name && within(obj, b)
                        {
                            let scope = self.scope_of(p);
                            if self.bindings_of(&name, scope) != 1 {
                                return None;
                            }
                            return self.element_instances(r, depth + 1);
                        }
                    }
                }
                "function_definition" => {
                    return self.param_instance(p, &name, false, depth + 1);
                }
                "class_definition" | "module" => return None,
                _ => {}
            }
            cur = p;
        }
    }

    /// The value of `e` for reading attributes on it: the interpreter's, or the instances (or,
    /// for `type(x)`, the classes) that [`Self::scoped_instance`] finds when the interpreter
    /// cannot resolve it.
    pub(super) fn narrowed_value(&mut self, e: Node<'t>, env: &Env) -> VSet {
        let v = self.it.eval(e, env, 0);
        if !v.has_unknown() {
            return v;
        }
        let e = unparen(e);
        match e.kind_name() {
            "identifier" => match self.scoped_instance(e, 0) {
                Some(ids) => VSet::of(ids.into_iter().map(Val::Inst).collect()),
                None => v,
            },
            "call" => {
                let is_type = e.field(F::Function).is_some_and(|f| {
                    let f = unparen(f);
                    f.kind_name() == "identifier"
                        && self
                            .it
                            .eval(f, env, 0)
                            .iter()
                            .all(|x| *x == Val::Builtin("type"))
                });
                let (pos, kws, splat) = call_args(e.field(F::Arguments), self.it.src);
                if !is_type || pos.len() != 1 || !kws.is_empty() || splat {
                    return v;
                }
                match self.scoped_instance(pos[0], 0) {
                    Some(ids) => VSet::of(ids.into_iter().map(Val::Class).collect()),
                    None => v,
                }
            }
            _ => v,
        }
    }

    /// The plain cell classes whose instances every element of the collection `e` is: a
    /// visible sequence of instances, a comprehension whose element is an instance, `sorted`,
    /// `list`, `tuple`, `reversed`, `filter`... of such a collection, a parameter annotated as a
    /// collection of a cell class, or a name whose every binding in the cell is a plain
    /// assignment of such a collection that is never changed afterwards.
    fn element_instances(&mut self, e: Node<'t>, depth: u32) -> Option<Vec<u32>> {
        if depth > 6 {
            return None;
        }
        let e = unparen(e);
        let src = self.it.src;
        if let Some(ids) = seq_inst_ids(&self.it.eval(e, &Env::Global, 0)) {
            return Some(ids);
        }
        match e.kind_name() {
            // `[r, s]`, `(r,)`: every element an instance.
            "list" | "tuple" | "set" => {
                let mut ids = Vec::new();
                for x in named(e) {
                    if !self.is_instance_expr(x, depth) {
                        return None;
                    }
                    ids.extend(
                        inst_ids(&self.it.eval(x, &Env::Global, 0))
                            .or_else(|| self.scoped_instance(x, depth + 1))?,
                    );
                }
                (!ids.is_empty()).then_some(ids)
            }
            "list_comprehension" | "set_comprehension" | "generator_expression" => {
                let body = e.field(F::Body)?;
                if let Some(ids) = inst_ids(&self.it.eval(body, &Env::Global, 0)) {
                    return Some(ids);
                }
                self.scoped_instance(body, depth + 1)
            }
            "call" => {
                let f = unparen(e.field(F::Function)?);
                let (pos, kws, splat) = call_args(e.field(F::Arguments), src);
                if splat || f.kind_name() != "identifier" {
                    return None;
                }
                let fname = ident(f, src).into_owned();
                let fv = self.it.eval(f, &Env::Global, 0);
                if fv.len() != 1 || !fv.has_builtin(&fname) {
                    return None;
                }
                let arg = match fname.as_str() {
                    "sorted" | "list" | "tuple" | "set" | "frozenset" | "reversed" | "iter" => {
                        (pos.len() == 1 && kws.iter().all(|(k, _)| k == "key" || k == "reverse"))
                            .then(|| pos[0])
                    }
                    "filter" if pos.len() == 2 => Some(pos[1]),
                    _ => None,
                }?;
                self.element_instances(arg, depth + 1)
            }
            "identifier" => {
                let name = ident(e, src).into_owned();
                // A parameter of the enclosing function annotated as a collection.
                let mut cur = e;
                while let Some(p) = self.it.parent(cur) {
                    match p.kind_name() {
                        "function_definition" => {
                            if self.def_param(p, &name).is_some() {
                                return self.param_instance(p, &name, true, depth + 1);
                            }
                            break;
                        }
                        "lambda" | "class_definition" | "module" => break,
                        _ => cur = p,
                    }
                }
                // Every binding of the name is `name = <collection of instances>`.
                let scope = self.scope_of(e);
                let rhs: Vec<Node<'t>> = self
                    .assignments_of(&name)
                    .iter()
                    .copied()
                    .filter(|r| self.scope_of(*r).id() == scope.id())
                    .collect();
                if rhs.is_empty() || self.bindings_of(&name, scope) != rhs.len() {
                    return None;
                }
                let mut ids = Vec::new();
                for r in rhs {
                    let plain = self.it.parent(r).is_some_and(|a| {
                        a.kind_name() == "assignment"
                            && a.field(F::Left)
                                .is_some_and(|l| l.kind_name() == "identifier")
                    });
                    if !plain {
                        return None;
                    }
                    ids.extend(self.element_instances(r, depth + 1)?);
                }
                if ids.is_empty() || !self.only_instances_added(&name, scope, depth) {
                    return None;
                }
                Some(ids)
            }
            _ => None,
        }
    }

    /// The number of places in the cell that bind `name` in `scope` (assignment, `for`,
    /// comprehension, `with`/`except`/`import` targets, parameters, `def`/`class` names,
    /// walrus, `del`, match captures); `usize::MAX` when some `global` or `nonlocal` statement
    /// names it (a function may then bind it for every scope).
    fn bindings_of(&mut self, name: &str, scope: Node<'t>) -> usize {
        if !self.bindings_memo.contains_key(name) {
            let counts = self.binding_counts(name);
            self.bindings_memo.insert(name.to_string(), counts);
        }
        match self.bindings_memo.get(name) {
            Some(Some(m)) => m.get(&scope.id()).copied().unwrap_or(0),
            _ => usize::MAX,
        }
    }

    /// The number of bindings of `name` per scope node id, or `None` when some `global` or
    /// `nonlocal` statement names it (one pass over the name's identifiers).
    fn binding_counts(&mut self, name: &str) -> Option<rustc_hash::FxHashMap<usize, usize>> {
        let index = self.index()?;
        let ids = index.identifiers(&[name]);
        let mut counts: rustc_hash::FxHashMap<usize, usize> = Default::default();
        for n in ids {
            if !self.is_binding(n) {
                continue;
            }
            if self
                .it
                .parent(n)
                .is_some_and(|p| matches!(p.kind_name(), "global_statement" | "nonlocal_statement"))
            {
                return None;
            }
            *counts.entry(self.scope_of(n).id()).or_default() += 1;
        }
        Some(counts)
    }

    /// True when identifier `n` sits where it binds its name (see [`Self::bindings_of`]).
    fn is_binding(&self, n: Node<'t>) -> bool {
        binds_name(&self.it, n)
    }

    /// `n`, an identifier naming something of the cell, climbed out of the parentheses around
    /// it; `None` when `n` is not a reference to that thing but an attribute's name (`x.n`) or
    /// a keyword (`f(n=...)`).
    fn reference_top(&self, n: Node<'t>) -> Option<Node<'t>> {
        if let Some(p) = self.it.parent(n) {
            if (p.kind_name() == "attribute" && is_field(p, F::Attribute, n))
                || (p.kind_name() == "keyword_argument" && is_field(p, F::Name, n))
            {
                return None;
            }
        }
        Some(paren_top(&self.it, n))
    }

    /// The scope a name at identifier `n` lives in: the nearest enclosing function, lambda,
    /// class body or comprehension, or the module. A `def`/`class` name binds in the scope
    /// around its statement; a walrus target in the nearest enclosing non-comprehension scope.
    fn scope_of(&self, n: Node<'t>) -> Node<'t> {
        let mut cur = n;
        let mut walrus = false;
        if let Some(p) = self.it.parent(n) {
            match p.kind_name() {
                "function_definition" | "class_definition" if is_field(p, F::Name, n) => cur = p,
                "named_expression" if is_field(p, F::Name, n) => walrus = true,
                _ => {}
            }
        }
        while let Some(p) = self.it.parent(cur) {
            match p.kind_name() {
                "function_definition" | "lambda" | "class_definition" => return p,
                "list_comprehension"
                | "set_comprehension"
                | "generator_expression"
                | "dictionary_comprehension"
                    if !walrus =>
                {
                    // The first iterable is evaluated in the enclosing scope.
                    let first = named(p)
                        .into_iter()
                        .find(|c| c.kind_name() == "for_in_clause")
                        .and_then(|c| c.field(F::Right));
                    if !first.is_some_and(|r| within(n, r)) {
                        return p;
                    }
                }
                _ => {}
            }
            cur = p;
        }
        cur
    }

    /// The parameter node of `def` that binds `name`, with its positional index (`None` for a
    /// keyword-only parameter) and its annotation and default.
    #[allow(clippy::type_complexity)]
    fn def_param(
        &self,
        def: Node<'t>,
        name: &str,
    ) -> Option<(Node<'t>, Option<usize>, Option<Node<'t>>, Option<Node<'t>>)> {
        let src = self.it.src;
        let ps = def.field(F::Parameters)?;
        let mut index = 0usize;
        let mut kw_only = false;
        for p in named(ps) {
            let (id, ty, default) = match p.kind_name() {
                "identifier" => (Some(p), None, None),
                "typed_parameter" => match first_named(p) {
                    Some(i) if i.kind_name() == "identifier" => (Some(i), p.field(F::Type), None),
                    other => {
                        kw_only = true;
                        if other.is_some_and(|o| {
                            parse::walk(o)
                                .any(|x| x.kind_name() == "identifier" && ident(x, src) == name)
                        }) {
                            return Some((p, None, None, None));
                        }
                        continue;
                    }
                },
                "default_parameter" => (p.field(F::Name), None, p.field(F::Value)),
                "typed_default_parameter" => {
                    (p.field(F::Name), p.field(F::Type), p.field(F::Value))
                }
                "list_splat_pattern" | "dictionary_splat_pattern" => {
                    kw_only = true;
                    if first_named(p).is_some_and(|i| ident(i, src) == name) {
                        return Some((p, None, None, None));
                    }
                    continue;
                }
                "keyword_separator" => {
                    kw_only = true;
                    continue;
                }
                _ => continue,
            };
            let Some(id) = id else { continue };
            let pos = (!kw_only).then_some(index);
            index += 1;
            if ident(id, src) == name {
                return Some((id, pos, ty, default));
            }
        }
        None
    }

    /// The plain cell classes that parameter `name` of `def` holds instances of (or, with
    /// `collection`, collections of instances of), from its annotation, when every call of
    /// `def` in the cell passes it an instance or a value no module flows into (see the module
    /// documentation).
    fn param_instance(
        &mut self,
        def: Node<'t>,
        name: &str,
        collection: bool,
        depth: u32,
    ) -> Option<Vec<u32>> {
        let src = self.it.src;
        let (pnode, index, ty, default) = self.def_param(def, name)?;
        let ids = self.annotation_classes(ty?, collection)?;
        if pnode.kind_name() != "identifier" || self.bindings_of(name, def) != 1 {
            return None;
        }
        // Decorated functions and methods may be called with anything, unseen.
        if self
            .it
            .parent(def)
            .is_some_and(|p| p.kind_name() == "decorated_definition")
            || self
                .it
                .parent(def)
                .and_then(|b| self.it.parent(b))
                .is_some_and(|c| c.kind_name() == "class_definition")
        {
            return None;
        }
        if let Some(d) = default {
            if unparen(d).kind_name() != "none" && !self.not_a_module(d, collection, depth) {
                return None;
            }
        }
        let def_name = def.field(F::Name)?;
        let fname = ident(def_name, src).into_owned();
        let refs = self.index()?.identifiers(&[&fname]);
        for n in refs {
            if n.id() == def_name.id() {
                continue;
            }
            let Some(e) = self.reference_top(n) else {
                continue;
            };
            let call = self
                .it
                .parent(e)
                .filter(|c| c.kind_name() == "call" && is_field(*c, F::Function, e))?;
            let (pos, kws, splat) = call_args(call.field(F::Arguments), src);
            if splat {
                return None;
            }
            let arg = match index {
                Some(i) if i < pos.len() => Some(pos[i]),
                _ => kws.iter().find(|(k, _)| k == name).map(|(_, v)| *v),
            };
            if let Some(a) = arg {
                if !self.not_a_module(a, collection, depth) {
                    return None;
                }
            }
        }
        Some(ids)
    }

    /// True when argument `a` (with `collection`, every element of it) is visibly not a
    /// module: an instance, plain data, or a value cellguard cannot resolve that no module
    /// flows into.
    fn not_a_module(&mut self, a: Node<'t>, collection: bool, depth: u32) -> bool {
        if collection && self.element_instances(a, depth + 1).is_some() {
            return true;
        }
        if !collection && self.scoped_instance(a, depth + 1).is_some() {
            return true;
        }
        let v = self.it.eval(a, &Env::Global, 0);
        fn data(x: &Val, collection: bool) -> Option<bool> {
            match x {
                Val::Inst(_) | Val::Str(_) | Val::Bytes(_) | Val::Int(_) | Val::Dict(_) => {
                    Some(true)
                }
                Val::Seq(items) if collection => {
                    let mut any_unknown = false;
                    for s in items.iter() {
                        for y in s.iter() {
                            match data(y, false) {
                                Some(true) => {}
                                Some(false) => return Some(false),
                                None => any_unknown = true,
                            }
                        }
                    }
                    if any_unknown {
                        None
                    } else {
                        Some(true)
                    }
                }
                Val::Seq(_) => Some(true),
                Val::Unknown => None,
                _ => Some(false),
            }
        }
        let mut unknown = false;
        for x in v.iter() {
            match data(x, collection) {
                Some(true) => {}
                Some(false) => return false,
                None => unknown = true,
            }
        }
        !unknown || !self.laundered(a)
    }

    /// [`Self::host_laundered`] of `a` as a yes/no, memoised: for a name it depends on the
    /// name alone (its binding sources in the cell).
    fn laundered(&mut self, a: Node<'t>) -> bool {
        let a = unparen(a);
        let key = if a.kind_name() == "identifier" {
            ident(a, self.it.src).into_owned()
        } else {
            format!("#{}", a.id())
        };
        if let Some(&b) = self.laundered_memo.get(&key) {
            return b;
        }
        let saved = self.laundered_at;
        let b = self.host_laundered(a, 0).is_some();
        self.laundered_at = saved;
        self.laundered_memo.insert(key, b);
        b
    }

    /// The plain cell classes an annotation names: `Rec`, `"Rec"`, `Optional[Rec]`,
    /// `Rec | None`; with `collection`, the element class of `list[Rec]`, `Sequence[Rec]`,
    /// `tuple[Rec, ...]`, ... The class name must be bound once in the cell, by its `class`
    /// statement.
    fn annotation_classes(&mut self, ty: Node<'t>, collection: bool) -> Option<Vec<u32>> {
        let mut t: String = self
            .text(ty)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if t.len() >= 2 && (t.starts_with('"') || t.starts_with('\'')) && t.ends_with(&t[..1]) {
            t = t[1..t.len() - 1].to_string();
        }
        fn unwrap<'s>(t: &'s str, heads: &[&str]) -> Option<&'s str> {
            let (head, rest) = t.split_once('[')?;
            let inner = rest.strip_suffix(']')?;
            let last = head.rsplit('.').next()?;
            heads.contains(&last).then_some(inner)
        }
        let mut elem: &str = &t;
        if collection {
            elem = unwrap(&t, COLLECTION_ANNOTATIONS)?;
            elem = elem.strip_suffix(",...").unwrap_or(elem);
        }
        if let Some(inner) = unwrap(elem, &["Optional"]) {
            elem = inner;
        }
        elem = elem
            .strip_suffix("|None")
            .or_else(|| elem.strip_prefix("None|"))
            .unwrap_or(elem);
        if elem.is_empty() || !elem.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let elem = elem.to_string();
        let root = self.root?;
        if self.bindings_of(&elem, root) != 1 {
            return None;
        }
        let class = self
            .index()?
            .of_kinds(&["class_definition"])
            .into_iter()
            .find(|c| {
                c.field(F::Name)
                    .is_some_and(|n| ident(n, self.it.src) == elem)
            })?;
        let id = *self.it.class_ids.get(&class.id())?;
        self.it.classes.get(id as usize)?.plain.then_some(vec![id])
    }

    /// The classes whose instances parameter `i` of lambda `lam` receives, when the lambda is
    /// the `key=` of `sorted`/`min`/`max`/`list.sort` or the function of `map`/`filter` over a
    /// collection of instances of cell classes.
    fn lambda_param_instance(&mut self, lam: Node<'t>, i: usize, depth: u32) -> Option<Vec<u32>> {
        let src = self.it.src;
        let mut e = lam;
        while let Some(p) = self
            .it
            .parent(e)
            .filter(|p| p.kind_name() == "parenthesized_expression")
        {
            e = p;
        }
        let p = self.it.parent(e)?;
        let (args, key) = match p.kind_name() {
            "keyword_argument" => {
                let k = ident(p.field(F::Name)?, src).into_owned();
                (self.it.parent(p)?, Some(k))
            }
            "argument_list" => (p, None),
            _ => return None,
        };
        let call = self.it.parent(args).filter(|c| c.kind_name() == "call")?;
        let f = unparen(call.field(F::Function)?);
        let (pos, _, splat) = call_args(Some(args), src);
        if splat {
            return None;
        }
        let iterable = match (f.kind_name(), key.as_deref()) {
            ("attribute", Some("key")) if i == 0 => {
                let a = ident(f.field(F::Attribute)?, src);
                (a == "sort").then(|| f.field(F::Object)).flatten()?
            }
            ("identifier", k) => {
                let fname = ident(f, src).into_owned();
                let fv = self.it.eval(f, &Env::Global, 0);
                if fv.len() != 1 || !fv.has_builtin(&fname) {
                    return None;
                }
                let first = pos.first().is_some_and(|x| x.id() == e.id());
                match (fname.as_str(), k) {
                    ("sorted" | "min" | "max", Some("key")) if i == 0 && pos.len() == 1 => pos[0],
                    ("map", None) if first => *pos.get(i + 1)?,
                    ("filter", None) if first && i == 0 => *pos.get(1)?,
                    _ => return None,
                }
            }
            _ => return None,
        };
        self.element_instances(iterable, depth + 1)
    }

    /// True when the cell uses the name of model class `id` only where no validator can get
    /// it (round 8 S8-3): its own `class` statement, calls of it (`M(os="linux")` validates
    /// keyword values, not attributes of an object), annotations of parameters and return
    /// types of undecorated functions, and the class argument of `isinstance`; and the cell
    /// has no validator that takes a type it cannot see (`TypeAdapter`, `validate_call`,
    /// `parse_obj_as`, a `model_validate`/`validate_python`/`from_orm` on a model it cannot
    /// resolve). Such a model is never validated from attributes, so its field names are not
    /// `getattr` reads.
    pub(super) fn model_inert(&mut self, id: u32) -> bool {
        let src = self.it.src;
        if [
            "TypeAdapter",
            "validate_call",
            "validate_arguments",
            "parse_obj_as",
            "create_model",
        ]
        .iter()
        .any(|w| src.contains(w))
        {
            return false;
        }
        let Some(index) = self.index() else {
            return false;
        };
        let calls = index.of_kinds(&["call"]);
        let classes = index.of_kinds(&["class_definition"]);
        let Some(class) = classes
            .into_iter()
            .find(|c| self.it.class_ids.get(&c.id()) == Some(&id))
        else {
            return false;
        };
        // Every validator call must be on a model the cell resolves.
        for call in calls {
            let Some(f) = call.field(F::Function).map(unparen) else {
                continue;
            };
            if f.kind_name() != "attribute" {
                continue;
            }
            let Some(a) = f.field(F::Attribute) else {
                continue;
            };
            if !matches!(
                &*ident(a, src),
                "model_validate"
                    | "validate_python"
                    | "from_orm"
                    | "parse_obj"
                    | "model_validate_json"
            ) {
                continue;
            }
            let Some(o) = f.field(F::Object) else {
                continue;
            };
            let ov = self.it.eval(o, &Env::Global, 0);
            if ov.is_empty() || !ov.iter().all(|v| matches!(v, Val::Class(c) if *c != id)) {
                return false;
            }
        }
        let Some(cname) = class.field(F::Name) else {
            return false;
        };
        let name = ident(cname, src).into_owned();
        let Some(index) = self.index() else {
            return false;
        };
        for n in index.identifiers(&[&name]) {
            if n.id() == cname.id() {
                continue;
            }
            let Some(e) = self.reference_top(n) else {
                continue;
            };
            let Some(p) = self.it.parent(e) else {
                return false;
            };
            if p.kind_name() == "call" && is_field(p, F::Function, e) {
                continue;
            }
            // `isinstance(x, M)`
            if p.kind_name() == "argument_list" {
                let args = named(p);
                let is_isinstance = self.it.parent(p).is_some_and(|c| {
                    c.field(F::Function).map(unparen).is_some_and(|f| {
                        f.kind_name() == "identifier" && ident(f, src) == "isinstance"
                    })
                });
                if is_isinstance && args.len() == 2 && args[1].id() == e.id() {
                    continue;
                }
                return false;
            }
            // An annotation of a parameter or the return type of an undecorated function.
            if p.kind_name() == "type" {
                let Some(q) = self.it.parent(p) else {
                    return false;
                };
                let def = match q.kind_name() {
                    "typed_parameter" | "typed_default_parameter" => {
                        self.it.parent(q).and_then(|ps| self.it.parent(ps))
                    }
                    "function_definition" => Some(q),
                    _ => None,
                };
                let ok = def.is_some_and(|d| {
                    let decorated = self
                        .it
                        .parent(d)
                        .is_some_and(|x| x.kind_name() == "decorated_definition");
                    d.kind_name() == "function_definition" && !decorated
                });
                if ok {
                    continue;
                }
            }
            return false;
        }
        true
    }

    /// True when every use of the collection named `name` in `scope` reads it or adds
    /// instances of cell classes to it: its bindings, iteration, item reads, read-only builtins
    /// (`sorted`, `len`, `map`, `filter`, `print`, ...), reordering and removing methods, and
    /// `append`/`insert`/`extend`/item stores of instances. Anything else (handing it to a
    /// cell function or an unknown call, aliasing it, storing another value) may put a module
    /// into it.
    fn only_instances_added(&mut self, name: &str, scope: Node<'t>, depth: u32) -> bool {
        const READERS: &[&str] = &[
            "sorted",
            "min",
            "max",
            "map",
            "filter",
            "list",
            "tuple",
            "set",
            "frozenset",
            "len",
            "enumerate",
            "zip",
            "print",
            "any",
            "all",
            "sum",
            "reversed",
            "iter",
            "str",
            "repr",
            "bool",
        ];
        let src = self.it.src;
        let Some(index) = self.index() else {
            return false;
        };
        for n in index.identifiers(&[name]) {
            if self.scope_of(n).id() != scope.id() && !within(n, scope) {
                continue;
            }
            let Some(p) = self.it.parent(n) else {
                return false;
            };
            let ok = match p.kind_name() {
                "attribute" if is_field(p, F::Attribute, n) => true,
                "keyword_argument" if is_field(p, F::Name, n) => true,
                "assignment" if is_field(p, F::Left, n) => true,
                "parameters" | "typed_parameter" => true,
                "default_parameter" | "typed_default_parameter" if is_field(p, F::Name, n) => true,
                "for_statement" | "for_in_clause" if is_field(p, F::Right, n) => true,
                "subscript" if is_field(p, F::Value, n) => {
                    // `recs[i]` read, or `recs[i] = <instance>`.
                    match self.it.parent(p) {
                        Some(a) if a.kind_name() == "assignment" && is_field(a, F::Left, p) => a
                            .field(F::Right)
                            .is_some_and(|v| self.is_instance_expr(v, depth)),
                        Some(a) if a.kind_name() == "delete_statement" => true,
                        Some(a)
                            if a.kind_name() == "augmented_assignment"
                                && is_field(a, F::Left, p) =>
                        {
                            false
                        }
                        _ => true,
                    }
                }
                "argument_list" => {
                    let f = self
                        .it
                        .parent(p)
                        .and_then(|c| c.field(F::Function))
                        .map(unparen);
                    f.is_some_and(|f| {
                        f.kind_name() == "identifier" && {
                            let fname = ident(f, src).into_owned();
                            (READERS.contains(&fname.as_str())
                                && self.it.eval(f, &Env::Global, 0).has_builtin(&fname))
                                || self.cell_function_keeps_instances(f, p, n, depth)
                        }
                    })
                }
                "attribute" if is_field(p, F::Object, n) => {
                    let meth = p.field(F::Attribute).map(|a| ident(a, src).into_owned());
                    let call = self
                        .it
                        .parent(p)
                        .filter(|c| c.kind_name() == "call" && is_field(*c, F::Function, p));
                    match (meth.as_deref(), call) {
                        (
                            Some(
                                "sort" | "reverse" | "pop" | "remove" | "clear" | "index" | "count"
                                | "copy",
                            ),
                            Some(_),
                        ) => true,
                        (Some("append"), Some(c)) => {
                            let (pos, kws, splat) = call_args(c.field(F::Arguments), src);
                            !splat
                                && kws.is_empty()
                                && pos.len() == 1
                                && self.is_instance_expr(pos[0], depth)
                        }
                        (Some("insert"), Some(c)) => {
                            let (pos, kws, splat) = call_args(c.field(F::Arguments), src);
                            !splat
                                && kws.is_empty()
                                && pos.len() == 2
                                && self.is_instance_expr(pos[1], depth)
                        }
                        (Some("extend"), Some(c)) => {
                            let (pos, kws, splat) = call_args(c.field(F::Arguments), src);
                            !splat
                                && kws.is_empty()
                                && pos.len() == 1
                                && self.element_instances(pos[0], depth + 1).is_some()
                        }
                        _ => false,
                    }
                }
                _ => {
                    // Any other read that does not hand the list on: a comparison, an
                    // `if recs:` test, `len`-like operators.
                    matches!(
                        p.kind_name(),
                        "comparison_operator"
                            | "not_operator"
                            | "if_statement"
                            | "boolean_operator"
                    )
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// True when expression `e` is an instance of a plain cell class (see
    /// [`Self::scoped_instance`]).
    fn is_instance_expr(&mut self, e: Node<'t>, depth: u32) -> bool {
        inst_ids(&self.it.eval(e, &Env::Global, 0)).is_some()
            || self.scoped_instance(e, depth + 1).is_some()
    }

    /// True when `arg` (a positional argument in `args` of a call of `f`) goes to a parameter
    /// of a cell function (`def f`, bound once at module level) that only reads the collection
    /// or adds instances to it (see [`Self::only_instances_added`]).
    fn cell_function_keeps_instances(
        &mut self,
        f: Node<'t>,
        args: Node<'t>,
        arg: Node<'t>,
        depth: u32,
    ) -> bool {
        if depth > 6 {
            return false;
        }
        let src = self.it.src;
        let fname = ident(f, src).into_owned();
        let Some(root) = self.root else {
            return false;
        };
        if self.bindings_of(&fname, root) != 1 {
            return false;
        }
        let Some(index) = self.index() else {
            return false;
        };
        let Some(def) = index
            .of_kinds(&["function_definition"])
            .into_iter()
            .find(|d| d.field(F::Name).is_some_and(|n| ident(n, src) == fname))
        else {
            return false;
        };
        let Some(i) = named(args).iter().position(|a| a.id() == arg.id()) else {
            return false;
        };
        if named(args)[..i].iter().any(|a| {
            !matches!(
                a.kind_name(),
                "identifier"
                    | "attribute"
                    | "call"
                    | "string"
                    | "integer"
                    | "list"
                    | "tuple"
                    | "subscript"
            )
        }) {
            return false;
        }
        // The parameter at position `i` (plain or annotated, before any `*`).
        let Some(ps) = def.field(F::Parameters) else {
            return false;
        };
        let Some(param) = named(ps).get(i).copied() else {
            return false;
        };
        let pname = match param.kind_name() {
            "identifier" => param,
            "typed_parameter" => match first_named(param) {
                Some(x) if x.kind_name() == "identifier" => x,
                _ => return false,
            },
            "default_parameter" | "typed_default_parameter" => match param.field(F::Name) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
        let pname = ident(pname, src).into_owned();
        self.bindings_of(&pname, def) == 1 && self.only_instances_added(&pname, def, depth + 1)
    }

    /// The strings of class attribute `attr` of cell class `id` when its class body binds it
    /// once to a tuple (or list) display of constant strings and the cell never stores,
    /// deletes or changes it anywhere else (any other use of the name is a plain read):
    /// `_FIELDS = ("a", "b")` (round 8 S8-6).
    pub(super) fn class_constant_names(&mut self, id: u32, attr: &str) -> Option<Vec<String>> {
        let src = self.it.src;
        let index = self.index()?;
        let class = index
            .of_kinds(&["class_definition"])
            .into_iter()
            .find(|c| self.it.class_ids.get(&c.id()) == Some(&id))?;
        let body = class.field(F::Body)?;
        let mut value = None;
        for st in named(body) {
            let Some(a) = first_named(st).filter(|a| a.kind_name() == "assignment") else {
                continue;
            };
            let Some(l) = a.field(F::Left) else { continue };
            if l.kind_name() == "identifier" && ident(l, src) == attr {
                if value.is_some() {
                    return None;
                }
                value = Some(a.field(F::Right)?);
            }
        }
        let value = unparen(value?);
        if !matches!(value.kind_name(), "tuple" | "list") {
            return None;
        }
        let mut out = Vec::new();
        for e in named(value) {
            if !matches!(e.kind_name(), "string" | "concatenated_string") {
                return None;
            }
            let v = self.it.eval(e, &Env::Global, 0);
            let [s] = v.strs().collect::<Vec<_>>()[..] else {
                return None;
            };
            if v.len() != 1 {
                return None;
            }
            out.push(s.to_string());
        }
        // Every other use of the name reads it: no store, deletion, augmented assignment,
        // method call (`_FIELDS.append`) or item store.
        let refs = self.index()?.identifiers(&[attr]);
        for n in refs {
            let p = self.it.parent(n)?;
            if within(n, value) {
                continue;
            }
            if p.kind_name() == "assignment" && is_field(p, F::Left, n) {
                if self
                    .it
                    .parent(p)
                    .and_then(|x| self.it.parent(x))
                    .map(|b| b.id())
                    == Some(body.id())
                {
                    continue;
                }
                return None;
            }
            let e = if p.kind_name() == "attribute" && is_field(p, F::Attribute, n) {
                p
            } else {
                n
            };
            let q = self.it.parent(e)?;
            // A list may be changed through an alias: it is only iterated.
            let tuple = value.kind_name() == "tuple";
            let ok = match q.kind_name() {
                "for_statement" | "for_in_clause" => is_field(q, F::Right, e),
                "argument_list" | "expression_statement" | "comparison_operator" => tuple,
                "assignment" => tuple && is_field(q, F::Right, e),
                _ => false,
            };
            if !ok {
                return None;
            }
        }
        Some(out)
    }
}
