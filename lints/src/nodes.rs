//! A flat pre-order table of every node of one cell's syntax tree, built in a single cursor walk
//! and shared by every rule family.
//!
//! Walking a tree-sitter tree is not cheap: each cursor step looks up visibility, aliases and
//! fields, and in tree-sitter 0.25 `Node::parent()` descends again from the root. Rule families
//! that each re-walked the tree paid that price once per family (and `parent()` loops paid it per
//! node). The table stores, for each node in pre-order (document order), the node itself, its
//! kind, its field name in its parent, its parent's index and the index one past its subtree, so
//! iterating all nodes, the children of a node, a node's subtree or its ancestors is plain array
//! access.
//!
//! Indices ([`NodeId`]) are positions in pre-order: the root is `0`, a node's descendants are
//! exactly the indices `id + 1 .. subtree_end(id)`, and a node's start byte never decreases with
//! its index (so a [`Node`] is found again by binary search, see [`NodeTable::id_of`]).
//! Named and anonymous nodes are both present, as with `TreeCursor`.

use std::ops::Range;
use tree_sitter::{Node, Tree};

/// Index of a node in a [`NodeTable`] (its position in pre-order; the root is `0`).
pub type NodeId = usize;

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Info {
    kind: &'static str,
    /// `Node::kind_id`.
    kind_id: u16,
    field: Option<&'static str>,
    parent: u32,
    end: u32,
    child_count: u32,
    /// The grammar's id of `field` (`0` for none), as `Node::child_by_field_id` takes it.
    field_id: u16,
    named: bool,
    /// `Node::is_extra` (comments and line continuations, which hang from no field).
    extra: bool,
}

/// Name and namedness of every node kind of the Python grammar, by kind id (what `Node::kind`
/// and `Node::is_named` return for a node of that `kind_id`, without their per-node lookups).
fn kinds() -> &'static [(&'static str, bool)] {
    static KINDS: std::sync::OnceLock<Vec<(&'static str, bool)>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        (0..language.node_kind_count() as u16)
            .map(|id| {
                (
                    language.node_kind_for_id(id).unwrap_or(""),
                    language.node_kind_is_named(id),
                )
            })
            .collect()
    })
}

/// Every field name of the Python grammar, by field id (what `TreeCursor::field_name` returns
/// for a cursor whose `field_id` is that id, without its per-node C string length and UTF-8
/// check).
fn field_names() -> &'static [Option<&'static str>] {
    static FIELDS: std::sync::OnceLock<Vec<Option<&'static str>>> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        (0..=language.field_count() as u16)
            .map(|id| language.field_name_for_id(id))
            .collect()
    })
}

/// What `node.kind()` returns, read from the grammar's kind table by `kind_id` (no per-call
/// C string length and UTF-8 check).
pub fn kind_of(node: Node) -> &'static str {
    kinds()
        .get(node.kind_id() as usize)
        .map(|k| k.0)
        .unwrap_or_else(|| node.kind())
}

/// Every node of one tree in pre-order, with kinds, fields, parents and subtree extents.
/// See the module docs.
#[derive(Debug)]
pub struct NodeTable<'t> {
    nodes: Vec<Node<'t>>,
    info: Vec<Info>,
    /// Start byte of each node (what `Node::start_byte` returns), kept apart so that
    /// [`NodeTable::id_of`] searches a plain array instead of calling into tree-sitter per probe.
    starts: Vec<u32>,
    /// The tree the nodes belong to (`TSNode::tree` of the root), telling its nodes apart from
    /// another tree's in [`NodeTable::child_by_field_id`].
    tree: usize,
    /// Index of each node by `Node::id`, built on the first [`NodeTable::child_by_field_id`].
    index: std::sync::OnceLock<rustc_hash::FxHashMap<usize, u32>>,
}

impl<'t> NodeTable<'t> {
    /// Builds the table of `tree` in one cursor walk. Memory: about 80 bytes per node.
    pub fn new(tree: &'t Tree) -> Self {
        Self::from_root(tree.root_node())
    }

    /// Builds the table of the subtree rooted at `root` (index `0` is `root`).
    pub fn from_root(root: Node<'t>) -> Self {
        // `descendant_count` is stored in the tree: the table never reallocates.
        let capacity = root.descendant_count();
        let mut nodes: Vec<Node<'t>> = Vec::with_capacity(capacity);
        let mut info: Vec<Info> = Vec::with_capacity(capacity);
        let mut starts: Vec<u32> = Vec::with_capacity(capacity);
        let kinds = kinds();
        let fields = field_names();
        let mut cursor = root.walk();
        let mut ancestors: Vec<u32> = Vec::new();
        // For each of `ancestors`, how many of its children the walk has not entered yet.
        let mut siblings_left: Vec<u32> = Vec::new();
        'walk: loop {
            let node = cursor.node();
            let id = nodes.len() as u32;
            let parent = ancestors.last().copied().unwrap_or(NONE);
            if parent != NONE {
                info[parent as usize].child_count += 1;
            }
            nodes.push(node);
            // Cells are far below 4 GiB (the server and the CLI read files whole); a larger
            // offset saturates and only makes `id_of` scan further.
            starts.push(u32::try_from(node.start_byte()).unwrap_or(u32::MAX));
            let kind_id = node.kind_id();
            let (kind, named) = kinds
                .get(kind_id as usize)
                .copied()
                .unwrap_or_else(|| (node.kind(), node.is_named()));
            // The root of the table has no parent here, whatever its field in the tree.
            let field_id = if parent == NONE {
                None
            } else {
                cursor.field_id()
            };
            info.push(Info {
                kind,
                kind_id,
                field: field_id.and_then(|f| {
                    fields
                        .get(f.get() as usize)
                        .copied()
                        .unwrap_or_else(|| cursor.field_name())
                }),
                parent,
                end: NONE,
                child_count: 0,
                field_id: field_id.map_or(0, |f| f.get()),
                named,
                extra: node.is_extra(),
            });
            // `Node::child_count` is the number of children the cursor visits (stored in the
            // tree), so a leaf is not asked for a first child and the last child of a node is
            // not asked for a next sibling: a failed cursor step costs as much as a move.
            let children = node.child_count() as u32;
            if children > 0 && cursor.goto_first_child() {
                ancestors.push(id);
                siblings_left.push(children - 1);
                continue;
            }
            info[id as usize].end = id + 1;
            loop {
                if let Some(left) = siblings_left.last_mut().filter(|l| **l > 0) {
                    *left -= 1;
                    if cursor.goto_next_sibling() {
                        break;
                    }
                }
                match ancestors.pop() {
                    Some(p) if cursor.goto_parent() => {
                        siblings_left.pop();
                        info[p as usize].end = nodes.len() as u32
                    }
                    _ => break 'walk,
                }
            }
        }
        // Anything left open (cannot happen with a well-formed cursor) ends at the table's end.
        let len = nodes.len() as u32;
        for i in info.iter_mut().filter(|i| i.end == NONE) {
            i.end = len;
        }
        NodeTable {
            nodes,
            info,
            starts,
            tree: root.into_raw().tree as usize,
            index: std::sync::OnceLock::new(),
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the table has no node (never for a table built from a tree).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every node, in pre-order.
    pub fn nodes(&self) -> &[Node<'t>] {
        &self.nodes
    }

    /// Every node with its index, in pre-order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, Node<'t>)> + '_ {
        self.nodes.iter().copied().enumerate()
    }

    /// The indices of the nodes of kind `kind`, in pre-order.
    pub fn of_kind<'s>(&'s self, kind: &'s str) -> impl Iterator<Item = NodeId> + 's {
        self.info
            .iter()
            .enumerate()
            .filter(move |(_, i)| i.kind == kind)
            .map(|(id, _)| id)
    }

    /// The node at `id`.
    pub fn node(&self, id: NodeId) -> Node<'t> {
        self.nodes[id]
    }

    /// Its kind (`Node::kind`).
    pub fn kind(&self, id: NodeId) -> &'static str {
        self.info[id].kind
    }

    /// Its kind id (`Node::kind_id`).
    pub fn kind_id(&self, id: NodeId) -> u16 {
        self.info[id].kind_id
    }

    /// True for a named node (`Node::is_named`).
    pub fn is_named(&self, id: NodeId) -> bool {
        self.info[id].named
    }

    /// The field under which it hangs from its parent (`TreeCursor::field_name`).
    pub fn field(&self, id: NodeId) -> Option<&'static str> {
        self.info[id].field
    }

    /// Its parent (`None` for the root). O(1), unlike `Node::parent`.
    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        let p = self.info[id].parent;
        (p != NONE).then_some(p as usize)
    }

    /// Its ancestors, innermost first.
    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.parent(id), move |&p| self.parent(p))
    }

    /// Number of children (named and anonymous), like `Node::child_count`.
    pub fn child_count(&self, id: NodeId) -> usize {
        self.info[id].child_count as usize
    }

    /// One past the last index of its subtree: the subtree of `id` is `id..subtree_end(id)`.
    pub fn subtree_end(&self, id: NodeId) -> NodeId {
        self.info[id].end as usize
    }

    /// The indices of `id` and all its descendants, in pre-order.
    pub fn subtree(&self, id: NodeId) -> Range<NodeId> {
        id..self.subtree_end(id)
    }

    /// Its children (named and anonymous), in order.
    pub fn children(&self, id: NodeId) -> Children<'_, 't> {
        Children {
            table: self,
            next: if self.info[id].child_count > 0 {
                id + 1
            } else {
                self.subtree_end(id)
            },
            end: self.subtree_end(id),
        }
    }

    /// Its named children, in order.
    pub fn named_children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.children(id).filter(move |&c| self.info[c].named)
    }

    /// Its first child under `field`, as the cursor reports fields (the first of
    /// `Node::children_by_field_name`). This is `Node::child_by_field_name` except for fields
    /// inherited through hidden nodes, which tree-sitter-python has in one place: the
    /// `alternative` cases of a `match_statement` (found here under its `body`).
    pub fn child_by_field(&self, id: NodeId, field: &str) -> Option<NodeId> {
        self.children(id)
            .find(|&c| self.info[c].field == Some(field))
    }

    /// Its children under `field`, in order (`Node::children_by_field_name`).
    pub fn children_by_field<'s>(
        &'s self,
        id: NodeId,
        field: &'s str,
    ) -> impl Iterator<Item = NodeId> + 's {
        self.children(id)
            .filter(move |&c| self.info[c].field == Some(field))
    }

    /// What `node.child_by_field_id(field_id)` returns, read from the table: `Some(answer)`
    /// for a node of the table (the same node of the same tree), `None` when the table cannot
    /// answer and the caller must ask tree-sitter: for a node it does not hold, and for a node
    /// with an extra child (a comment) before the field's child (where a field names a hidden
    /// node that starts with the extra, `child_by_field_id` answers with the first visible
    /// child of that node, the extra, while the cursor gives extras no field), and for a
    /// `match_statement`, whose cases tree-sitter finds under `alternative` through its body
    /// while the cursor reports them as the body's children.
    ///
    /// Otherwise the answers agree by the grammar: `child_by_field_id` returns the child of
    /// the first field-map entry of `field_id` in child order, descending into hidden
    /// children whose fields the parent inherits, which is the first child the cursor reports
    /// under `field_id`; the `match_statement` body is the one place where a child carries
    /// both a field and inherited ones. `nodes::tests` checks every node of the fixtures and
    /// every field of the grammar against tree-sitter. Costs a hash probe and a scan of the
    /// node's children; the first call builds the index (a hash map of every node).
    pub fn child_by_field_id(&self, node: Node, field_id: u16) -> Option<Option<Node<'t>>> {
        let id = self.index_of(node)?;
        if self.info[id].kind == "match_statement" {
            return None;
        }
        for c in self.children(id) {
            let info = &self.info[c];
            if info.extra {
                return None;
            }
            if info.field_id == field_id {
                return Some(Some(self.nodes[c]));
            }
        }
        Some(None)
    }

    /// The index of `node`, when it is a node of the table: the same node (`Node::id`) of the
    /// same tree (`TSNode::tree`), found by a hash probe. The first call builds the index (a
    /// hash map of every node). Unlike [`NodeTable::id_of`], a node of another tree is never
    /// taken for one of this table's, even where the two trees share a subtree (an
    /// incremental re-parse re-uses the old tree's).
    pub fn index_of(&self, node: Node) -> Option<NodeId> {
        if node.into_raw().tree as usize != self.tree {
            return None;
        }
        let index = self.index.get_or_init(|| {
            let mut index = rustc_hash::FxHashMap::default();
            index.reserve(self.nodes.len());
            for (i, n) in self.nodes.iter().enumerate() {
                index.insert(n.id(), i as u32);
            }
            index
        });
        index.get(&node.id()).map(|&i| i as usize)
    }

    /// The index of `node`, when it belongs to the table's tree (binary search on the start
    /// bytes, then a scan over the nodes starting there).
    pub fn id_of(&self, node: Node) -> Option<NodeId> {
        let start = u32::try_from(node.start_byte()).unwrap_or(u32::MAX);
        let from = self.starts.partition_point(|&s| s < start);
        let id = node.id();
        self.starts[from..]
            .iter()
            .zip(&self.nodes[from..])
            .take_while(|(&s, _)| s == start)
            .position(|(_, n)| n.id() == id)
            .map(|i| from + i)
    }
}

/// Iterator over the children of a node (see [`NodeTable::children`]).
#[derive(Debug, Clone)]
pub struct Children<'a, 't> {
    table: &'a NodeTable<'t>,
    next: NodeId,
    end: NodeId,
}

impl Iterator for Children<'_, '_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let c = self.next;
        self.next = self.table.subtree_end(c);
        Some(c)
    }
}

/// Whether a node of this tree-sitter kind is a container of assignment targets whose named
/// children are themselves targets (`a, b = ...`, `[a, *b] = ...`, `(a) = ...`, the target of
/// an `as` pattern). Shared by the semantic model's binder and the SBX rebinding check.
pub fn is_target_container(kind: &str) -> bool {
    matches!(
        kind,
        "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "expression_list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "list_splat"
            | "as_pattern_target"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    /// Checks every table query against the tree-sitter API it replaces.
    pub(crate) fn assert_matches_tree_sitter(src: &str) {
        let tree = parse::parse(src, None);
        let table = NodeTable::new(&tree);
        let walked: Vec<Node> = parse::walk(tree.root_node()).collect();
        assert_eq!(table.nodes(), walked.as_slice(), "{src:?}");
        for (id, node) in table.iter() {
            assert_eq!(table.kind(id), node.kind());
            assert_eq!(table.is_named(id), node.is_named());
            assert_eq!(table.child_count(id), node.child_count());
            assert_eq!(table.id_of(node), Some(id));
            assert_eq!(table.index_of(node), Some(id));
            assert_eq!(table.parent(id).map(|p| table.node(p)), node.parent());
            let mut cursor = node.walk();
            let kids: Vec<Node> = node.children(&mut cursor).collect();
            let got: Vec<Node> = table.children(id).map(|c| table.node(c)).collect();
            assert_eq!(got, kids);
            let named: Vec<Node> = node.named_children(&mut cursor).collect();
            let got: Vec<Node> = table.named_children(id).map(|c| table.node(c)).collect();
            assert_eq!(got, named);
            for (i, kid) in kids.iter().enumerate() {
                let field = node.field_name_for_child(i as u32);
                assert_eq!(table.field(table.id_of(*kid).unwrap()), field, "{src:?}");
            }
            for field in [
                "name",
                "body",
                "left",
                "right",
                "value",
                "function",
                "arguments",
                "object",
                "attribute",
                "condition",
                "consequence",
                "alternative",
                "alias",
                "key",
                "module_name",
                "parameters",
                "return_type",
                "type",
                "subject",
                "operator",
            ] {
                let want: Vec<Node> = node.children_by_field_name(field, &mut cursor).collect();
                let first = table.child_by_field(id, field).map(|c| table.node(c));
                assert_eq!(first, want.first().copied(), "{src:?} {field}");
                // `Node::child_by_field_name` also follows fields inherited through hidden
                // nodes, which the cursor (and the table) does not: only `alternative` of a
                // `match_statement` (its cases, through the body) differs.
                if (node.kind(), field) != ("match_statement", "alternative") {
                    assert_eq!(first, node.child_by_field_name(field), "{src:?} {field}");
                }
                let got: Vec<Node> = table
                    .children_by_field(id, field)
                    .map(|c| table.node(c))
                    .collect();
                assert_eq!(got, want, "{src:?} {field}");
            }
            let sub: Vec<Node> = parse::walk(node).collect();
            let got: Vec<Node> = table.subtree(id).map(|c| table.node(c)).collect();
            assert_eq!(got, sub);
        }
        assert_fields_match(src, &table);
    }

    /// Checks [`NodeTable::child_by_field_id`] against `Node::child_by_field_id` for every
    /// node of `tree` and every field of the grammar: the same node (id, kind and range) when
    /// the table answers, and no answer only for a node with an extra child. Returns the
    /// number of answers the table gave (found or not).
    fn assert_fields_match(src: &str, table: &NodeTable) -> usize {
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let mut answered = 0;
        for (id, node) in table.iter() {
            for field in 1..=language.field_count() as u16 {
                let want = node.child_by_field_id(field);
                match table.child_by_field_id(node, field) {
                    Some(got) => {
                        answered += 1;
                        let shape = |n: Option<Node>| {
                            n.map(|n| (n.id(), n.kind_id(), n.byte_range(), n.start_position()))
                        };
                        assert_eq!(
                            shape(got),
                            shape(want),
                            "{src:?}: field {field} of {} at {}",
                            node.kind(),
                            node.start_byte()
                        );
                    }
                    None => assert!(
                        table.kind(id) == "match_statement"
                            || table.children(id).any(|c| table.info[c].extra),
                        "{src:?}: no answer for field {field} of {}",
                        node.kind()
                    ),
                }
            }
        }
        // Nodes of another tree (the same text parsed again) are never answered for.
        let other = parse::parse(src, None);
        assert_eq!(table.child_by_field_id(other.root_node(), 1), None);
        answered
    }

    #[test]
    fn field_children_of_every_fixture_match_tree_sitter() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let mut stack = vec![dir];
        let (mut files, mut answered) = (0, 0);
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("fixtures dir reads") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "py") {
                    let bytes = std::fs::read(&path).expect("fixture reads");
                    let src = String::from_utf8_lossy(&bytes).into_owned();
                    let tree = parse::parse(&src, None);
                    let table = NodeTable::new(&tree);
                    // The table holds the nodes a plain cursor walk visits, in its order.
                    let walked: Vec<Node> = parse::walk(tree.root_node()).collect();
                    assert_eq!(table.nodes(), walked.as_slice(), "{}", path.display());
                    answered += assert_fields_match(&src, &table);
                    files += 1;
                }
            }
        }
        assert!(files > 100, "only {files} Python fixtures");
        assert!(answered > 100_000, "only {answered} answers from the table");
    }

    #[test]
    fn a_comment_before_a_field_child_is_left_to_tree_sitter() {
        // A comment among the children of `f`: the table does not answer for `f`, callers ask
        // tree-sitter (see `child_by_field_id`).
        let src = "def f():  # c\n    pass\n";
        let tree = parse::parse(src, None);
        let table = NodeTable::new(&tree);
        let def = tree.root_node().child(0).unwrap();
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let body = language.field_id_for_name("body").unwrap().get();
        assert_eq!(def.child_by_field_id(body).map(|n| n.kind()), Some("block"));
        assert_eq!(table.child_by_field_id(def, body), None);
        // A field child before the comment is answered.
        let name = language.field_id_for_name("name").unwrap().get();
        let got = table
            .child_by_field_id(def, name)
            .map(|n| n.map(|n| n.byte_range()));
        assert_eq!(got, Some(Some(4..5)));
        assert_fields_match(src, &table);
    }

    #[test]
    fn table_agrees_with_tree_sitter() {
        for src in [
            "",
            "x = 1\n",
            "import os, a.b as c\nfrom . import x\n",
            "async def f(a, b=1, *c, d: int = 2, **e) -> int:\n    return await run('A.b', x=[1, (2)])\n",
            "class A(B):\n    '''doc'''\n    def g(self): pass  # c\n",
            "if a:\n    b\nelif c:\n    d\nelse:\n    e\n",
            "try:\n    x\nexcept E as e:\n    y\nelse:\n    z\nfinally:\n    w\n",
            "with suppress(E), open(p) as f:\n    g(f)\n",
            "match p:\n    case [a, *b] if a: pass\n    case {'k': v, **r}: pass\n",
            "s = f'{a!r:>{w}}' 'b' \"\"\"c\n\"\"\" \\\n  + 1\n",
            "x = [i for i in y if i] + {k: v for k, v in z}\nlambda q: q\n",
            // Syntax errors: ERROR and MISSING nodes.
            "x = (\n",
            "def f(:\n  pass\n",
            "if x\n    y\n",
            "print 'a'\nreturn return\n",
            "@dec\n\nx = 1 +\n",
        ] {
            assert_matches_tree_sitter(src);
        }
    }

    #[test]
    fn subtree_of_an_inner_root() {
        let src = "f(a, b)\ny = 2\n";
        let tree = parse::parse(src, None);
        let call = tree.root_node().child(0).unwrap().child(0).unwrap();
        let table = NodeTable::from_root(call);
        assert_eq!(table.kind(0), "call");
        assert_eq!(table.parent(0), None);
        assert_eq!(table.field(0), None);
        assert_eq!(table.subtree_end(0), table.len());
        let kinds: Vec<&str> = table.children(0).map(|c| table.kind(c)).collect();
        assert_eq!(kinds, vec!["identifier", "argument_list"]);
        assert!(table.iter().all(|(_, n)| n.end_byte() <= call.end_byte()));
        // Nodes outside the subtree are not found, even where start bytes fall in its range.
        let module = tree.root_node();
        let assignment = module.child(1).unwrap();
        assert_eq!(table.id_of(module), None);
        assert_eq!(table.id_of(assignment), None);
        assert_eq!(table.id_of(call), Some(0));
    }
}
