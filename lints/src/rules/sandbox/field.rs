//! Field children by field id.
//!
//! `Node::child_by_field_name` looks the field's id up by name on every call (tree-sitter
//! compares the name against each field name of the grammar); the analysis asks for field
//! children of most nodes it visits, so it resolves the ids once here and asks by id.
//!
//! Inside [`with_table`], field children of the nodes of the cell's tree are read from its
//! [`NodeTable`] instead (`child_by_field_id` iterates the node's children through
//! tree-sitter's hidden nodes on every call, and was the analysis's most called FFI function).

use crate::nodes::NodeTable;
use std::cell::Cell;
use std::ptr::NonNull;
use tree_sitter::Node;

thread_local! {
    /// The table [`with_table`] installed on this thread, while its closure runs.
    static TABLE: Cell<Option<NonNull<NodeTable<'static>>>> = const { Cell::new(None) };
}

/// Runs `f` with `table` answering [`FieldChild::field`] on this thread for the nodes of its
/// tree (other nodes are still asked of tree-sitter). The answers are the same
/// ([`NodeTable::child_by_field_id`]); only the cost differs. Nested calls restore the outer
/// table when they return or unwind.
pub fn with_table<R>(table: &NodeTable<'_>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<NonNull<NodeTable<'static>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            TABLE.with(|t| t.set(self.0));
        }
    }
    let installed = NonNull::from(table).cast::<NodeTable<'static>>();
    let _restore = Restore(TABLE.with(|t| t.replace(Some(installed))));
    f()
}

/// Calls `f` with the installed table, if any.
///
/// `f` must hand out only nodes of the tree of a node it was given that the table holds
/// ([`NodeTable::index_of`] is `Some`): the table's nodes are typed `'static` here, a stand-in
/// for its tree's lifetime, and are valid as long as that tree is, which is the given node's
/// `'t`.
fn installed<R>(f: impl FnOnce(&NodeTable<'static>) -> Option<R>) -> Option<R> {
    TABLE.with(|t| {
        let table = t.get()?;
        // SAFETY: `with_table` installs the pointer only while its closure runs and the
        // borrow of the table it was made from lasts, and restores the previous one after
        // (also on unwinding; the guard is not reachable by callers, so it cannot be leaked).
        // The `'static` lifetime of the nodes is handled as said above.
        let table: &NodeTable<'static> = unsafe { table.as_ref() };
        f(table)
    })
}

/// `node.child_by_field_id(id)` as the installed table answers it, if any.
fn from_table<'t>(node: Node<'t>, id: u16) -> Option<Option<Node<'t>>> {
    installed(|table| table.child_by_field_id(node, id))
}

/// Calls `f` with the children of `node` (named and anonymous, in order, each with
/// `is_named()` and `kind()`) read from the installed table, when the table holds `node`;
/// `None` otherwise (the caller then asks tree-sitter).
pub fn table_children<'t, R>(
    node: Node<'t>,
    f: impl FnOnce(&mut dyn Iterator<Item = (Node<'t>, bool, &'static str)>) -> R,
) -> Option<R> {
    installed(|table| {
        let id = table.index_of(node)?;
        let mut kids = table
            .children(id)
            .map(|c| (table.node(c), table.is_named(c), table.kind(c)));
        Some(f(&mut kids))
    })
}

macro_rules! fields {
    ($($variant:ident => $name:literal,)*) => {
        /// A field of the Python grammar that the sandbox analysis reads.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum F {
            $(
                #[doc = concat!("The `", $name, "` field.")]
                $variant,
            )*
        }

        /// Field names, by [`F`] discriminant.
        const NAMES: &[&str] = &[$($name,)*];
    };
}

fields! {
    Alias => "alias",
    Argument => "argument",
    Arguments => "arguments",
    Attribute => "attribute",
    Body => "body",
    Condition => "condition",
    Definition => "definition",
    Expression => "expression",
    FormatSpecifier => "format_specifier",
    Function => "function",
    Key => "key",
    Left => "left",
    ModuleName => "module_name",
    Name => "name",
    Object => "object",
    Operator => "operator",
    Parameters => "parameters",
    ReturnType => "return_type",
    Right => "right",
    Superclasses => "superclasses",
    Type => "type",
    TypeConversion => "type_conversion",
    Value => "value",
}

/// The grammar's id of each field in [`NAMES`] (`None` for a name the grammar lacks, which a
/// grammar update could cause: such a field is then never found, as by name).
fn ids() -> &'static [Option<std::num::NonZeroU16>] {
    static IDS: std::sync::OnceLock<Vec<Option<std::num::NonZeroU16>>> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        NAMES
            .iter()
            .map(|n| language.field_id_for_name(n))
            .collect()
    })
}

/// Field children by [`F`]: what `child_by_field_name` returns, without the name lookup.
pub trait FieldChild<'t> {
    /// The child of this node in field `f` (the first, when several children have it).
    fn field(&self, f: F) -> Option<Node<'t>>;
    /// What `kind()` returns, from the grammar's kind table ([`crate::nodes::kind_of`]).
    fn kind_name(&self) -> &'static str;
}

impl<'t> FieldChild<'t> for Node<'t> {
    #[inline]
    fn field(&self, f: F) -> Option<Node<'t>> {
        let id = ids().get(f as usize).copied().flatten()?;
        from_table(*self, id.get()).unwrap_or_else(|| self.child_by_field_id(id.get()))
    }

    #[inline]
    fn kind_name(&self) -> &'static str {
        crate::nodes::kind_of(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_exists_in_the_grammar() {
        for (i, name) in NAMES.iter().enumerate() {
            assert!(
                ids()[i].is_some(),
                "field {name} missing from the Python grammar"
            );
        }
    }

    #[test]
    fn field_children_match_lookups_by_name() {
        let src = "import a.b as c\nfrom . import d as e\nx = f(g, k=h).i[j] + -y\n\
                   def m(n, o=1) -> p:\n    return {q: r for s in t}\n\
                   class U(V):\n    pass\nw = f\"{z!r:>3}\"\nlambda a: a or b\n";
        let tree = crate::parse::parse(src, None);
        let mut stack = vec![tree.root_node()];
        let mut found = 0;
        while let Some(n) = stack.pop() {
            assert_eq!(n.kind_name(), n.kind());
            for (i, name) in NAMES.iter().enumerate() {
                let f: F = variant(i);
                let by_id = n.field(f).map(|c| c.id());
                let by_name = n.child_by_field_name(name).map(|c| c.id());
                assert_eq!(by_id, by_name, "field {name} of {}", n.kind());
                found += usize::from(by_id.is_some());
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        assert!(found > 30, "only {found} field children seen");
    }

    #[test]
    fn the_installed_table_answers_as_tree_sitter() {
        use crate::rules::sandbox::scan::{first_named_child, named_children};
        let src = "import a.b as c\nx = f(g, k=h).i[j] + -y  # c\n\
                   def m(n, o=1) -> p:  # d\n    return {q: r for s in t}\n\
                   class U(V):\n    pass\nmatch w:\n    case [a, *b] if a: pass\n\
                   w = f\"{z!r:>3}\"\nlambda a: (a # e\n or b)\n";
        let tree = crate::parse::parse(src, None);
        let table = NodeTable::new(&tree);
        type Answers<'t> = (Vec<Option<Node<'t>>>, Vec<Node<'t>>, Option<Node<'t>>);
        fn answers(n: Node<'_>) -> Answers<'_> {
            let fields: Vec<_> = (0..NAMES.len()).map(|i| n.field(variant(i))).collect();
            (fields, named_children(n), first_named_child(n))
        }
        let from_tree: Vec<_> = table.nodes().iter().map(|&n| answers(n)).collect();
        let from_table: Vec<_> = with_table(&table, || {
            table.nodes().iter().map(|&n| answers(n)).collect()
        });
        assert_eq!(from_table, from_tree);
        // The table answered for nodes that have children (not only fell back).
        let answered = with_table(&table, || {
            table
                .nodes()
                .iter()
                .filter(|&&n| table_children(n, |k| k.count()).is_some_and(|c| c > 0))
                .count()
        });
        assert!(answered > 20, "{answered}");
        // Outside `with_table`, and for another tree's nodes, nothing is installed.
        assert!(table_children(tree.root_node(), |k| k.count()).is_none());
        let other = crate::parse::parse(src, None);
        assert!(with_table(&table, || table_children(other.root_node(), |k| k.count())).is_none());
        // Nested installs restore the outer table, also when the inner closure panics.
        let inner_tree = crate::parse::parse("y = 2\n", None);
        let inner = NodeTable::new(&inner_tree);
        with_table(&table, || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_table(&inner, || panic!("inner"))
            }));
            assert!(r.is_err());
            assert!(table_children(tree.root_node(), |k| k.count()).is_some());
        });
    }

    /// The variant with discriminant `i`.
    fn variant(i: usize) -> F {
        const ALL: &[F] = &[
            F::Alias,
            F::Argument,
            F::Arguments,
            F::Attribute,
            F::Body,
            F::Condition,
            F::Definition,
            F::Expression,
            F::FormatSpecifier,
            F::Function,
            F::Key,
            F::Left,
            F::ModuleName,
            F::Name,
            F::Object,
            F::Operator,
            F::Parameters,
            F::ReturnType,
            F::Right,
            F::Superclasses,
            F::Type,
            F::TypeConversion,
            F::Value,
        ];
        assert_eq!(ALL.len(), NAMES.len());
        assert_eq!(ALL[i] as usize, i);
        ALL[i]
    }
}
