//! Field children by field id.
//!
//! `Node::child_by_field_name` looks the field's id up by name on every call (tree-sitter
//! compares the name against each field name of the grammar); the analysis asks for field
//! children of most nodes it visits, so it resolves the ids once here and asks by id.

use tree_sitter::Node;

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
        self.child_by_field_id(id.get())
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
