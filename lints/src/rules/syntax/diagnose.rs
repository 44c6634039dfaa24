//! The one `SyntaxError` CPython 3.11 would raise for a cell (message, line, place), from the
//! tokens of [`super::tokenize`] and the tree-sitter tree.
//!
//! CPython's order is reproduced: its tokenizer errors win over parser errors, except that an
//! `unexpected indent` found before them stands, and a bracket still open at the end of the input
//! is reported (`'(' was never closed`) unless the parser failed before reaching it. Parser
//! errors come from checks on the token stream that mirror CPython's grammar for the mistakes
//! models make (prose lines, fences and `%magic` left in the code, a missing `:`, missing or
//! unexpected indentation, juxtaposed expressions, dangling operators), from the decoding of
//! string literals and f-strings ([`super::literals`]), from tree-sitter for the
//! things only a parse tree shows (argument order, default parameters), and, as a last resort,
//! from tree-sitter's first `ERROR`/`MISSING` node as `invalid syntax`.

use super::tokenize::{is_keyword, tokenize, ErrorClass, Kind, Token, Tokens};
use crate::nodes::{NodeId, NodeTable};
use crate::source::TextRange;
use tree_sitter::Node;

/// A syntax error as CPython reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PySyntaxError {
    /// CPython's message, e.g. `'(' was never closed` (without `(<unknown>, line N)`).
    pub message: String,
    /// Where to point in the cell (byte offsets; may be empty).
    pub range: TextRange,
    /// Zero-based line CPython reports (its `lineno` is `line + 1`).
    pub line: usize,
    /// The exception class.
    pub class: ErrorClass,
}

impl PySyntaxError {
    /// `str(e)` of the exception `ast.parse` raises: `msg (<unknown>, line N)`.
    pub fn cpython_str(&self) -> String {
        format!("{} (<unknown>, line {})", self.message, self.line + 1)
    }
}

/// Compound-statement keywords and how CPython names them in "expected an indented block after
/// ..." messages.
fn block_owner(first: &str, second: Option<&str>) -> Option<&'static str> {
    Some(match first {
        "if" => "'if' statement",
        "elif" => "'elif' statement",
        "else" => "'else' statement",
        "while" => "'while' statement",
        "for" => "'for' statement",
        "with" => "'with' statement",
        "try" => "'try' statement",
        "except" if second == Some("*") => "'except*' statement",
        "except" => "'except' statement",
        "finally" => "'finally' statement",
        "def" => "function definition",
        "class" => "class definition",
        "match" => "'match' statement",
        "case" => "'case' statement",
        _ => return None,
    })
}

/// Diagnoses `src`, whose tree-sitter tree is rooted at `root`. `None` when CPython would parse
/// it (as far as these checks can tell).
pub fn diagnose(src: &str, root: Node) -> Option<PySyntaxError> {
    diagnose_at_depth(src, &NodeTable::from_root(root), 0)
}

/// [`diagnose`] over the node table of the tree of `src`.
pub fn diagnose_table(src: &str, nodes: &NodeTable) -> Option<PySyntaxError> {
    diagnose_at_depth(src, nodes, 0)
}

/// `depth` counts f-string replacement fields being compiled (they are checked recursively).
pub(super) fn diagnose_at_depth(
    src: &str,
    nodes: &NodeTable,
    depth: usize,
) -> Option<PySyntaxError> {
    if let Some(i) = src.find('\0') {
        return Some(PySyntaxError {
            message: "source code string cannot contain null bytes".to_string(),
            range: TextRange::new(i, i + 1),
            line: line_of(src, i),
            class: ErrorClass::Syntax,
        });
    }
    let toks = tokenize(src);
    // A string literal tree-sitter scans differently from CPython (`\N` in bytes) can leave
    // an error far from the literal (`f(b"""\N""")` runs to the end of the cell): the parser
    // checks read the tree of a same-length rewrite both read alike ([`super::repair`]).
    let repaired = super::repair::rewrite_with_tokens(nodes.node(0), src, &toks.tokens);
    let repaired_nodes = repaired
        .as_ref()
        .map(|(_, tree)| NodeTable::from_root(tree.root_node()));
    let nodes = repaired_nodes.as_ref().unwrap_or(nodes);
    let cx = Cx::new(src, &toks, depth);
    let parser = cx.parser_error(nodes);
    if let Some(te) = &toks.error {
        // CPython's parser meets the tokenizer error when it reads that token. Errors it found
        // before stand when they are "unexpected indent" (raised without reading on) or when
        // the tokenizer error is one that sets no exception until then (indentation, tabs,
        // end of input inside a continuation); other tokenizer errors replace them, because
        // CPython tokenizes the rest of the source to look for one.
        let quiet = matches!(te.class, ErrorClass::Indentation | ErrorClass::Tab)
            || te.message == "unexpected EOF while parsing";
        if let Some(p) = parser.filter(|p| {
            !p.fallback
                && p.end <= te.range.start
                && (quiet || p.err.message == "unexpected indent")
        }) {
            return Some(p.err);
        }
        return Some(PySyntaxError {
            message: te.message.clone(),
            range: te.range,
            line: te.line,
            class: te.class,
        });
    }
    if let Some(open) = toks.unclosed {
        // CPython reports the bracket when its parser reads on to the end of the input, or when
        // the error it found is on a later line than the bracket.
        if let Some(p) = parser {
            let contains = p.fallback && p.err.range.start <= open.offset && open.offset < p.end;
            if p.end <= open.offset || (p.err.line <= open.line && !p.reads_on && !contains) {
                return Some(p.err);
            }
        }
        return Some(PySyntaxError {
            message: format!("'{}' was never closed", open.ch),
            range: TextRange::new(open.offset, open.offset + 1),
            line: open.line,
            class: ErrorClass::Syntax,
        });
    }
    parser.map(|p| p.err)
}

/// Zero-based line of `offset`, counting `\n`, `\r\n` and lone `\r` as line ends.
fn line_of(src: &str, offset: usize) -> usize {
    let bytes = &src.as_bytes()[..offset.min(src.len())];
    let mut line = 0;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'\n' => line += 1,
            b'\r' if src.as_bytes().get(i + 1) != Some(&b'\n') => line += 1,
            _ => {}
        }
    }
    line
}

/// One logical line: indices into the token list of its tokens (no INDENT/DEDENT/NEWLINE), and
/// of its NEWLINE token when present.
struct Logical {
    toks: Vec<usize>,
    newline: Option<usize>,
}

struct Cx<'a> {
    src: &'a str,
    toks: &'a [Token],
    eof_line: usize,
    lines: Vec<Logical>,
    /// f-string nesting depth (see [`diagnose_at_depth`]).
    depth: usize,
}

/// A candidate parser error and the byte offset where CPython's parser fails.
struct Candidate {
    pos: usize,
    err: PySyntaxError,
    /// CPython's parser keeps reading after this point while looking for a better message
    /// (juxtaposed expressions): inside an unclosed bracket it then reaches the end of the
    /// input and reports the bracket instead.
    reads_on: bool,
}

/// The parser error chosen for a cell.
struct ParserError {
    err: PySyntaxError,
    /// Where the parser fails (for tree-sitter's fallback: the end of its ERROR node).
    end: usize,
    reads_on: bool,
    /// It is tree-sitter's first ERROR node (its place is approximate).
    fallback: bool,
}

const CANNOT_START: &[&str] = &[
    "=", ",", ")", "]", "}", ":", ";", ".", "/", "//", "%", "==", "!=", "<", ">", "<=", ">=", "|",
    "&", "^", "<<", ">>", "**", "+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=", ">>=",
    "<<=", "**=", "@=", "->", ":=", "<>",
];

const NEEDS_OPERAND_AFTER: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=", ">>=", "<<=", "**=", "@=", "==",
    "!=", "<", ">", "<=", ">=", "+", "-", "~", "/", "//", "%", "&", "|", "^", "<<", ">>", "**",
    "*", "(", "[", "{", ",", ":=", "->",
];

const CANNOT_FOLLOW_OPERATOR: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=", ">>=", "<<=", "**=", "@=", "==",
    "!=", "<", ">", "<=", ">=", "/", "//", "%", "|", "&", "^", "<<", ">>", ",", ";", ".", ":=",
    "->", ")", "]", "}",
];

const DANGLING_OPS: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=", ">>=", "<<=", "**=", "@=", "+",
    "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "~", "<", ">", "<=", ">=", "==",
    "!=", "<>", ".", "->", ":=", "@",
];

const DANGLING_WORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "lambda", "import", "from", "def", "class", "del", "assert",
    "if", "elif", "while", "for", "with", "await", "global", "nonlocal", "as", "async",
];

const SIMPLE_STATEMENTS: &[&str] = &[
    "expression_statement",
    "return_statement",
    "delete_statement",
    "raise_statement",
    "pass_statement",
    "break_statement",
    "continue_statement",
    "import_statement",
    "import_from_statement",
    "future_import_statement",
    "assert_statement",
    "global_statement",
    "nonlocal_statement",
    "print_statement",
    "exec_statement",
    "type_alias_statement",
];

impl<'a> Cx<'a> {
    fn new(src: &'a str, tokens: &'a Tokens, depth: usize) -> Self {
        let toks = tokens.tokens.as_slice();
        let mut lines = Vec::new();
        let mut cur = Logical {
            toks: Vec::new(),
            newline: None,
        };
        for (i, t) in toks.iter().enumerate() {
            match t.kind {
                Kind::Indent | Kind::Dedent | Kind::EndMarker => {}
                Kind::Newline => {
                    cur.newline = Some(i);
                    lines.push(std::mem::replace(
                        &mut cur,
                        Logical {
                            toks: Vec::new(),
                            newline: None,
                        },
                    ));
                }
                _ => cur.toks.push(i),
            }
        }
        if !cur.toks.is_empty() {
            lines.push(cur);
        }
        Cx {
            src,
            toks,
            eof_line: tokens.eof_line,
            lines,
            depth,
        }
    }

    fn text(&self, i: usize) -> &'a str {
        &self.src[self.toks[i].range.as_range()]
    }

    fn is_op(&self, i: usize, op: &str) -> bool {
        self.toks[i].kind == Kind::Op && self.text(i) == op
    }

    fn is_word(&self, i: usize, w: &str) -> bool {
        self.toks[i].kind == Kind::Name && self.text(i) == w
    }

    fn err(&self, pos: usize, message: impl Into<String>, range: TextRange) -> Candidate {
        Candidate {
            pos,
            err: PySyntaxError {
                message: message.into(),
                range,
                line: line_of(self.src, range.start),
                class: ErrorClass::Syntax,
            },
            reads_on: false,
        }
    }

    fn invalid_at(&self, i: usize) -> Candidate {
        let r = self.toks[i].range;
        self.err(r.start, "invalid syntax", r)
    }

    /// `invalid syntax` at the NEWLINE ending a logical line (empty range at the line end).
    fn invalid_at_newline(&self, line: &Logical) -> Option<Candidate> {
        let nl = line.newline?;
        let at = self.toks[nl].range.start;
        let mut c = self.err(at, "invalid syntax", TextRange::empty(at));
        c.err.line = self.toks[nl].line;
        Some(c)
    }

    /// The first token of a logical line, skipping `async`.
    fn head(&self, line: &Logical) -> Option<(usize, usize)> {
        let first = *line.toks.first()?;
        if self.is_word(first, "async") && line.toks.len() > 1 {
            Some((line.toks[1], 1))
        } else {
            Some((first, 0))
        }
    }

    fn owner(&self, line: &Logical) -> Option<&'static str> {
        let (h, k) = self.head(line)?;
        if self.toks[h].kind != Kind::Name {
            return None;
        }
        let second = line.toks.get(k + 1).map(|&i| self.text(i));
        block_owner(self.text(h), second)
    }

    /// The earliest parser error.
    fn parser_error(&self, nodes: &NodeTable) -> Option<ParserError> {
        let root = nodes.node(0);
        let mut found: Vec<Candidate> = Vec::new();
        self.indentation(&mut found);
        // A literal that does not decode is raised when the parser reduces it; on a tie only
        // indentation errors come first.
        if let Some(e) = super::literals::first_error(self.src, self.toks, self.depth) {
            found.push(Candidate {
                pos: e.pos,
                err: PySyntaxError {
                    message: e.message.clone(),
                    range: e.range,
                    line: e.line,
                    class: ErrorClass::Syntax,
                },
                reads_on: false,
            });
        }
        // tree-sitter's ERROR and MISSING nodes (gate for the assignment-target check).
        let errors: Vec<TextRange> = if root.has_error() {
            nodes
                .nodes()
                .iter()
                .copied()
                .filter(|n| n.is_error() || n.is_missing())
                .map(crate::parse::range)
                .collect()
        } else {
            Vec::new()
        };
        for line in &self.lines {
            // Forced tokens first: on a tie their message is CPython's.
            self.forced_tokens(line, &mut found);
            self.line_checks(line, &mut found);
            self.line_checks_2(line, &errors, &mut found);
            self.argument_order_tokens(line, &mut found);
        }
        self.decorators(&mut found);
        self.decorator_indentation(&mut found);
        self.dangling_clauses(&mut found);
        self.tree_checks(nodes, &mut found);
        let best = found.into_iter().min_by_key(|c| c.pos);
        let fallback = self.fallback(nodes).map(|(err, end)| ParserError {
            err,
            end,
            reads_on: false,
            fallback: true,
        });
        // The checks name CPython's failure point; tree-sitter's ERROR node (which often starts
        // at the beginning of the statement) is used only when none of them fires.
        match best {
            Some(b) => Some(ParserError {
                err: b.err,
                end: b.pos,
                reads_on: b.reads_on,
                fallback: false,
            }),
            None => fallback,
        }
    }

    /// `unexpected indent` and `expected an indented block after ...`.
    fn indentation(&self, found: &mut Vec<Candidate>) {
        let mut last_newline: Option<usize> = None;
        for (i, t) in self.toks.iter().enumerate() {
            match t.kind {
                Kind::Newline => last_newline = Some(i),
                Kind::Indent => {
                    let after_colon = last_newline
                        .and_then(|nl| nl.checked_sub(1))
                        .is_some_and(|p| self.is_op(p, ":"));
                    if !after_colon {
                        let first = self.toks.get(i + 1).map(|n| n.range.start);
                        let range = TextRange::new(t.range.start, first.unwrap_or(t.range.end));
                        found.push(Candidate {
                            pos: range.end,
                            err: PySyntaxError {
                                message: "unexpected indent".to_string(),
                                range,
                                line: t.line,
                                class: ErrorClass::Indentation,
                            },
                            reads_on: false,
                        });
                    }
                }
                _ => {}
            }
        }
        for line in &self.lines {
            let (Some(&last), Some(nl)) = (line.toks.last(), line.newline) else {
                continue;
            };
            if !self.is_op(last, ":") {
                continue;
            }
            let Some(owner) = self.owner(line) else {
                continue;
            };
            let next = nl + 1;
            let Some(t) = self.toks.get(next) else {
                continue;
            };
            if t.kind == Kind::Indent {
                continue;
            }
            // The token CPython looks at: the first real token after any DEDENTs.
            let real = self.toks[next..]
                .iter()
                .find(|t| !matches!(t.kind, Kind::Dedent))
                .copied()
                .unwrap_or(*t);
            let (range, line_no) = if real.kind == Kind::EndMarker {
                (TextRange::empty(self.src.len()), self.eof_line)
            } else {
                (real.range, real.line)
            };
            let header_line = self.toks[line.toks[0]].line + 1;
            found.push(Candidate {
                pos: range.start.max(self.toks[nl].range.end),
                err: PySyntaxError {
                    message: format!(
                        "expected an indented block after {owner} on line {header_line}"
                    ),
                    range,
                    line: line_no,
                    class: ErrorClass::Indentation,
                },
                reads_on: false,
            });
        }
    }

    /// Checks within one logical line.
    fn line_checks(&self, line: &Logical, found: &mut Vec<Candidate>) {
        let toks = &line.toks;
        let Some(&first) = toks.first() else {
            return;
        };
        let first_depth = self.toks[first].depth;
        // Error tokens (`$`, `?`, backtick, lone `!`) and `<>`.
        for &i in toks {
            if self.toks[i].kind == Kind::ErrorToken || self.is_op(i, "<>") {
                found.push(self.invalid_at(i));
                break;
            }
        }
        // `x := 1` outside parentheses, except in `if`/`elif`/`while` conditions.
        let cond_head = matches!(
            self.text(first),
            "if" | "elif" | "while" | "match" | "case" | "@"
        );
        if !cond_head {
            if let Some(&w) = toks
                .iter()
                .find(|&&i| self.is_op(i, ":=") && self.toks[i].depth == first_depth)
            {
                found.push(self.invalid_at(w));
            }
        }
        // A line that starts with an operator no statement can start with (`%timeit`, `== x`).
        if self.toks[first].kind == Kind::Op && CANNOT_START.contains(&self.text(first)) {
            found.push(self.invalid_at(first));
        }
        // Two operators where an operand is needed (`x = = 1`, `f(a,, b)`).
        for w in toks.windows(2) {
            let (x, y) = (w[0], w[1]);
            if self.toks[x].kind != Kind::Op || self.toks[y].kind != Kind::Op {
                continue;
            }
            let (xs, ys) = (self.text(x), self.text(y));
            if !NEEDS_OPERAND_AFTER.contains(&xs) || !CANNOT_FOLLOW_OPERATOR.contains(&ys) {
                continue;
            }
            let closes = matches!(ys, ")" | "]" | "}");
            let ok = (matches!(xs, "(" | "[" | "{" | ",") && closes)
                || (xs == "," && ys == "/")
                || (xs == "," && ys == "=" && self.toks[x].depth == 0)
                || (xs == "/" && matches!(ys, "," | ")"))
                || (xs == "*" && matches!(ys, "," | ")"));
            if !ok {
                found.push(self.invalid_at(y));
                break;
            }
        }
        // Juxtaposed expressions (`Here is the code`, `print 'x'`, `foo(a b)`); import statements
        // (`from ..m import x`) are left to tree-sitter.
        let import_line = matches!(self.text(first), "from" | "import");
        let mut name_string: Option<usize> = None;
        let mut juxtaposed = false;
        for (k, w) in toks.windows(2).enumerate().filter(|_| !import_line) {
            let (a, b) = (w[0], w[1]);
            if !self.ends_expression(a) || !self.starts_expression(b, a) {
                continue;
            }
            let a_text = self.text(a);
            if k == 0 && matches!(a_text, "match" | "case" | "type") {
                continue;
            }
            let (ta, tb) = (self.toks[a], self.toks[b]);
            if tb.depth > 0 && ta.kind == Kind::Name && tb.kind == Kind::String {
                // CPython's comma hint skips `NAME STRING` (a would-be string prefix) and names
                // the next juxtaposition; the plain error stands only if there is none.
                if name_string.is_none() {
                    name_string = Some(b);
                }
                continue;
            }
            if ta.kind == Kind::Name && matches!(a_text, "print" | "exec") && k == 0 {
                let end = self.toks[*toks.last().unwrap_or(&b)].range.end;
                let range = TextRange::new(ta.range.start, end);
                found.push(self.err(
                    tb.range.start,
                    format!(
                        "Missing parentheses in call to '{a_text}'. Did you mean {a_text}(...)?"
                    ),
                    range,
                ));
            } else if k > 0 && self.is_word(toks[k - 1], "def") {
                found.push(self.err(tb.range.start, "expected '('", tb.range));
            } else if comma_hint(self, line, ta, tb, a_text) {
                let mut c = self.err(
                    tb.range.start,
                    "invalid syntax. Perhaps you forgot a comma?",
                    TextRange::new(ta.range.start, tb.range.end),
                );
                c.err.line = ta.line;
                c.reads_on = true;
                found.push(c);
            } else {
                let mut c = self.invalid_at(b);
                c.reads_on = true;
                found.push(c);
            }
            juxtaposed = true;
            break;
        }
        if let (Some(b), false) = (name_string, juxtaposed) {
            let mut c = self.invalid_at(b);
            c.reads_on = true;
            found.push(c);
        }
        // `Generator expression must be parenthesized` (`f(1, x for x in y)`).
        self.bare_generator(toks, found);
        let last = *toks.last().unwrap_or(&first);
        let last_text = self.text(last);
        let owner = self.owner(line);
        // A header without its colon.
        if owner.is_some()
            && !matches!(
                self.head(line).map(|(h, _)| self.text(h)),
                Some("match" | "case")
            )
        {
            let has_colon = toks
                .iter()
                .any(|&i| self.is_op(i, ":") && self.toks[i].depth == first_depth);
            if !has_colon && self.header_valid_with_colon(line) {
                let at = self.toks[last].range.end;
                let mut c = self.err(at, "expected ':'", TextRange::empty(at));
                c.err.line = self.toks[last].line;
                found.push(c);
            }
        }
        // A line that ends where an operand or a block must follow.
        let star_import =
            last_text == "*" && toks.len() >= 2 && self.is_word(toks[toks.len() - 2], "import");
        let dangling = match self.toks[last].kind {
            Kind::Op if star_import => false,
            Kind::Op => DANGLING_OPS.contains(&last_text) || (last_text == ":" && owner.is_none()),
            Kind::Name => {
                DANGLING_WORDS.contains(&last_text)
                    || (last != first && matches!(last_text, "else" | "try" | "finally"))
            }
            _ => false,
        };
        if dangling {
            // `else`/`try`/`finally` alone get "expected ':'" from the header check.
            found.extend(self.invalid_at_newline(line));
        }
    }

    fn ends_expression(&self, i: usize) -> bool {
        let t = self.toks[i];
        match t.kind {
            Kind::Name => {
                let s = self.text(i);
                !is_keyword(s) || matches!(s, "None" | "True" | "False")
            }
            Kind::Number | Kind::String => true,
            Kind::Op => matches!(self.text(i), ")" | "]" | "}" | "..."),
            _ => false,
        }
    }

    fn starts_expression(&self, i: usize, prev: usize) -> bool {
        let t = self.toks[i];
        match t.kind {
            Kind::Name => {
                let s = self.text(i);
                !is_keyword(s) || matches!(s, "None" | "True" | "False" | "lambda" | "await")
            }
            Kind::Number => true,
            Kind::String => self.toks[prev].kind != Kind::String,
            _ => false,
        }
    }

    /// For a header line without a colon: true when adding the colon (and a body) makes it
    /// valid, so that the colon is the only thing missing.
    fn header_valid_with_colon(&self, line: &Logical) -> bool {
        let first = self.toks[line.toks[0]].range.start;
        let Some(&last) = line.toks.last() else {
            return false;
        };
        let header = &self.src[first..self.toks[last].range.end];
        let Some((h, _)) = self.head(line) else {
            return false;
        };
        let kw = self.text(h);
        if matches!(kw, "else" | "try" | "finally") {
            return line.toks.len() == 1;
        }
        let header = header.replace(['\n', '\r'], " ");
        let snippet = match kw {
            "elif" => format!("if x:\n pass\n{header}:\n pass\n"),
            "except" => format!("try:\n pass\n{header}:\n pass\n"),
            _ => format!("{header}:\n pass\n"),
        };
        !crate::parse::parse(&snippet, None).root_node().has_error()
    }

    fn bare_generator(&self, toks: &[usize], found: &mut Vec<Candidate>) {
        for (k, &i) in toks.iter().enumerate() {
            if !self.is_word(i, "for") || self.toks[i].depth == 0 {
                continue;
            }
            let depth = self.toks[i].depth;
            // The opening bracket of the enclosing group.
            let Some(open_k) = (0..k)
                .rev()
                .find(|&j| self.toks[toks[j]].depth < depth)
                .filter(|&j| self.is_op(toks[j], "("))
            else {
                continue;
            };
            let is_call = open_k > 0 && {
                let p = toks[open_k - 1];
                self.toks[p].kind == Kind::Name && !is_keyword(self.text(p))
                    || self.is_op(p, ")")
                    || self.is_op(p, "]")
            };
            if !is_call {
                continue;
            }
            let close_k = (k..toks.len())
                .find(|&j| self.toks[toks[j]].depth == depth - 1)
                .unwrap_or(toks.len());
            // Commas of this group, except those of `for` target lists (`for p, q in ...`).
            let mut commas = Vec::new();
            let mut in_target = false;
            for (j, &t) in toks.iter().enumerate().take(close_k).skip(open_k + 1) {
                if self.toks[t].depth != depth {
                    continue;
                }
                if self.is_word(t, "for") {
                    in_target = true;
                } else if self.is_word(t, "in") {
                    in_target = false;
                } else if self.is_op(t, ",") && !in_target {
                    commas.push(j);
                }
            }
            if commas.is_empty() {
                continue;
            }
            let start_k = commas
                .iter()
                .rev()
                .find(|&&c| c < k)
                .map(|c| c + 1)
                .unwrap_or(open_k + 1);
            let end_k = commas.iter().find(|&&c| c > k).copied().unwrap_or(close_k);
            let range = TextRange::new(
                self.toks[toks[start_k]].range.start,
                self.toks[toks[end_k.saturating_sub(1).max(start_k)]]
                    .range
                    .end,
            );
            found.push(self.err(
                range.start,
                "Generator expression must be parenthesized",
                range,
            ));
            return;
        }
    }

    /// Checks that need the parse tree.
    fn tree_checks(&self, nodes: &NodeTable, found: &mut Vec<Candidate>) {
        let newlines: Vec<usize> = self
            .toks
            .iter()
            .filter(|t| t.kind == Kind::Newline)
            .map(|t| t.range.start)
            .collect();
        let tokenized_to = self.toks.last().map(|t| t.range.end).unwrap_or(0);
        for (id, node) in nodes.iter() {
            match nodes.kind(id) {
                "module" | "block" => {
                    let stmts: Vec<Node> = nodes
                        .named_children(id)
                        .filter(|&n| !matches!(nodes.kind(n), "comment" | "ERROR"))
                        .map(|n| nodes.node(n))
                        .collect();
                    for w in stmts.windows(2) {
                        let b = w[1].start_byte();
                        if b > tokenized_to {
                            break;
                        }
                        // The statement must start a logical line (or follow a `;`): the token
                        // before its first one is a NEWLINE (INDENT/DEDENT aside) or `;`.
                        let at = self.toks.partition_point(|t| t.range.start < b);
                        if self.toks.get(at).map(|t| t.range.start) != Some(b) {
                            continue;
                        }
                        let prev = self.toks[..at]
                            .iter()
                            .rposition(|t| !matches!(t.kind, Kind::Indent | Kind::Dedent));
                        let separated = prev.is_none_or(|p| {
                            self.toks[p].kind == Kind::Newline || self.is_op(p, ";")
                        });
                        if !separated {
                            found.push(self.err(b, "invalid syntax", first_token_range(w[1])));
                            break;
                        }
                    }
                }
                k if SIMPLE_STATEMENTS.contains(&k) => {
                    if k == "delete_statement" {
                        self.delete_targets(node, found);
                    }
                    let (a, b) = (node.start_byte(), node.end_byte());
                    let i = newlines.partition_point(|&x| x <= a);
                    if let Some(&nl) = newlines.get(i).filter(|&&x| x < b) {
                        let mut c = self.err(nl, "invalid syntax", TextRange::empty(nl));
                        c.err.line = line_of(self.src, nl);
                        found.push(c);
                    }
                }
                "try_statement" => self.try_handlers(nodes, id, found),
                "parameters" | "lambda_parameters" => self.parameter_order(node, found),
                "identifier" => self.keyword_as_name(node, found),
                _ => {}
            }
        }
    }

    /// `await` or `async` read as a name (tree-sitter-python accepts both as identifiers;
    /// CPython's tokenizer makes them keywords since 3.7). CPython reports `await` at the
    /// token after it (it starts an await expression that has no operand), and `async` there
    /// too when it starts a statement (`async def`/`for`/`with` was expected), else at `async`
    /// itself (`print(async)`): `await = 3` is `1:7`, `x = await` the line end, as
    /// Python 3.11's `ast.parse` says.
    fn keyword_as_name(&self, node: Node, found: &mut Vec<Candidate>) {
        let word = &self.src.as_bytes()[node.byte_range()];
        if word != b"await" && word != b"async" {
            return;
        }
        let at = self
            .toks
            .partition_point(|t| t.range.start < node.start_byte());
        if self
            .toks
            .get(at)
            .is_none_or(|t| t.range != crate::parse::range(node))
        {
            return;
        }
        let starts_statement = self.toks[..at]
            .iter()
            .rposition(|t| !matches!(t.kind, Kind::Indent | Kind::Dedent))
            .is_none_or(|p| self.toks[p].kind == Kind::Newline || self.is_op(p, ";"));
        if word == b"async" && !starts_statement {
            found.push(self.invalid_at(at));
            return;
        }
        match self.toks.get(at + 1) {
            Some(t) if !matches!(t.kind, Kind::Newline | Kind::EndMarker | Kind::Dedent) => {
                found.push(self.invalid_at(at + 1));
            }
            next => {
                let end = next.map_or(self.src.len(), |t| t.range.start);
                let mut c = self.err(end, "invalid syntax", TextRange::empty(end));
                if let Some(t) = next.filter(|t| t.kind == Kind::Newline) {
                    c.err.line = t.line;
                }
                found.push(c);
            }
        }
    }

    fn parameter_order(&self, node: Node, found: &mut Vec<Candidate>) {
        if node.has_error() {
            return;
        }
        let mut cursor = node.walk();
        let mut default = false;
        for child in node.named_children(&mut cursor) {
            // `*args: int` is a typed_parameter holding a splat: keyword-only after it.
            if crate::parse::text(child, self.src).starts_with('*') {
                return;
            }
            match child.kind() {
                "default_parameter" | "typed_default_parameter" => default = true,
                "identifier" | "typed_parameter" if default => {
                    let r = crate::parse::range(child);
                    found.push(self.err(
                        r.start,
                        "non-default argument follows default argument",
                        r,
                    ));
                    return;
                }
                "list_splat_pattern" | "dictionary_splat_pattern" | "keyword_separator" => return,
                _ => {}
            }
        }
    }

    /// tree-sitter's first ERROR or MISSING node as `invalid syntax` (or `expected ':'` for a
    /// missing colon), with the end of the ERROR node.
    fn fallback(&self, nodes: &NodeTable) -> Option<(PySyntaxError, usize)> {
        if !nodes.node(0).has_error() {
            return None;
        }
        let node = nodes
            .iter()
            .filter(|(_, n)| n.is_error() || n.is_missing())
            .find(|&(id, n)| {
                !((n.is_error() && self.innermost_spurious(nodes, id))
                    || (n.is_missing() && self.inside_string(n)))
            })
            .map(|(_, n)| n)?;
        if node.is_missing() {
            let at = node.start_byte();
            let message = if node.kind() == ":" {
                "expected ':'"
            } else {
                "invalid syntax"
            };
            return Some((
                PySyntaxError {
                    message: message.to_string(),
                    range: TextRange::empty(at),
                    line: line_of(self.src, at),
                    class: ErrorClass::Syntax,
                },
                at,
            ));
        }
        let range = first_token_range(node);
        Some((
            PySyntaxError {
                message: "invalid syntax".to_string(),
                range,
                line: line_of(self.src, range.start),
                class: ErrorClass::Syntax,
            },
            node.end_byte(),
        ))
    }
}

impl Cx<'_> {
    /// A decorator must be followed by another decorator, `def`, `class` or `async def`.
    fn decorators(&self, found: &mut Vec<Candidate>) {
        for (n, line) in self.lines.iter().enumerate() {
            let Some(&first) = line.toks.first() else {
                continue;
            };
            if !self.is_op(first, "@") || self.toks[first].depth != 0 {
                continue;
            }
            match self.lines.get(n + 1).and_then(|l| l.toks.first()) {
                Some(&next) => {
                    let t = self.text(next);
                    if !matches!(t, "@" | "def" | "class" | "async") {
                        found.push(self.invalid_at(next));
                        return;
                    }
                }
                None => {
                    let at = self.src.len();
                    let mut c = self.err(at, "invalid syntax", TextRange::empty(at));
                    c.err.line = self.eof_line;
                    found.push(c);
                    return;
                }
            }
        }
    }

    /// Checks of one logical line that need more than adjacent tokens: `if`
    /// expressions without `else`, `=` in conditions, assignment targets.
    fn line_checks_2(&self, line: &Logical, errors: &[TextRange], found: &mut Vec<Candidate>) {
        let toks = &line.toks;
        let Some(&first) = toks.first() else {
            return;
        };
        let base = self.toks[first].depth;
        self.if_without_else(toks, found);
        let head = self.text(first);
        let eqs: Vec<usize> = (0..toks.len())
            .filter(|&k| self.toks[toks[k]].depth == base && self.is_op(toks[k], "="))
            .collect();
        // `if x = 1:` (an `=` in the condition, not in a one-line body after the colon)
        if matches!(head, "if" | "elif" | "while") {
            let colon = (0..toks.len())
                .find(|&k| self.toks[toks[k]].depth == base && self.is_op(toks[k], ":"))
                .unwrap_or(toks.len());
            if let Some(&k) = eqs.first().filter(|&&k| k < colon) {
                if k >= 2 && self.toks[toks[k - 1]].kind == Kind::Name && k + 1 < toks.len() {
                    let end_k = (k + 1..toks.len())
                        .find(|&j| {
                            let t = self.toks[toks[j]];
                            t.depth == base
                                && ((t.kind == Kind::Name && is_keyword(self.text(toks[j])))
                                    || self.is_op(toks[j], ":"))
                        })
                        .unwrap_or(toks.len());
                    let range = TextRange::new(
                        self.toks[toks[k - 1]].range.start,
                        self.toks[toks[end_k.saturating_sub(1).max(k + 1)]]
                            .range
                            .end,
                    );
                    found.push(self.err(
                        self.toks[toks[k]].range.start,
                        "invalid syntax. Maybe you meant '==' or ':=' instead of '='?",
                        range,
                    ));
                }
            }
            return;
        }
        let expression_head = self.toks[first].kind != Kind::Name
            || !is_keyword(head)
            || matches!(
                head,
                "lambda" | "await" | "not" | "None" | "True" | "False" | "yield"
            );
        if !expression_head || self.is_op(first, "@") {
            return;
        }
        // Augmented assignment targets.
        if let Some(k) = (0..toks.len()).find(|&k| {
            self.toks[toks[k]].depth == base
                && self.toks[toks[k]].kind == Kind::Op
                && AUGMENTED.contains(&self.text(toks[k]))
        }) {
            if k > 0 {
                let range = TextRange::new(
                    self.toks[first].range.start,
                    self.toks[toks[k - 1]].range.end,
                );
                if let Some(kind) = augmented_target_kind(&self.src[range.as_range()]) {
                    found.push(self.err(
                        self.toks[toks[k]].range.start,
                        format!("'{kind}' is an illegal expression for augmented assignment"),
                        range,
                    ));
                }
            }
            return;
        }
        // Assignment targets: only where tree-sitter also sees an error (valid targets such as
        // `*a, b` are not expressions on their own).
        if eqs.is_empty()
            || toks[..eqs[0]]
                .iter()
                .any(|&i| self.toks[i].depth == base && self.is_op(i, ":"))
        {
            return;
        }
        let span = TextRange::new(
            self.toks[first].range.start,
            self.toks[*toks.last().unwrap_or(&first)].range.end,
        );
        let has_error = errors
            .iter()
            .any(|e| e.start < span.end.max(span.start + 1) && e.end.max(e.start + 1) > span.start);
        if !has_error {
            return;
        }
        let single = eqs.len() == 1;
        let mut start_k = 0;
        for &eq in &eqs {
            // Elements of this target, split at commas of the base depth.
            let mut elems = Vec::new();
            let mut s = start_k;
            for (j, &t) in toks.iter().enumerate().take(eq + 1).skip(start_k) {
                if j == eq || (self.toks[t].depth == base && self.is_op(t, ",")) {
                    if s < j {
                        elems.push((s, j));
                    }
                    s = j + 1;
                }
            }
            let n = elems.len();
            for (e, &(a, b)) in elems.iter().enumerate() {
                let range = TextRange::new(
                    self.toks[toks[a]].range.start,
                    self.toks[toks[b - 1]].range.end,
                );
                if let Some(t) = target_kind(&self.src[range.as_range()]) {
                    let inner =
                        TextRange::new(range.start + t.inner.start, range.start + t.inner.end);
                    let message = match t.kind {
                        "True" | "False" | "None" => format!("cannot assign to {}", t.kind),
                        k if single && e + 1 == n && t.here => {
                            format!(
                                "cannot assign to {k} here. Maybe you meant '==' instead of '='?"
                            )
                        }
                        k => format!("cannot assign to {k}"),
                    };
                    found.push(self.err(self.toks[toks[eq]].range.start, message, inner));
                    return;
                }
            }
            start_k = eq + 1;
        }
    }

    /// `x if y` without `else` outside a comprehension: "expected 'else' after 'if' expression".
    fn if_without_else(&self, toks: &[usize], found: &mut Vec<Candidate>) {
        let case_line = toks.first().is_some_and(|&f| self.is_word(f, "case"));
        for (k, &i) in toks.iter().enumerate() {
            if k == 0 || !self.is_word(i, "if") || !self.ends_expression(toks[k - 1]) {
                continue;
            }
            let d = self.toks[i].depth;
            if case_line && d == self.toks[toks[0]].depth {
                // `case pattern if guard:`
                continue;
            }
            let at_depth = |j: usize| self.toks[toks[j]].depth == d;
            let group_start = (0..k)
                .rev()
                .find(|&j| self.toks[toks[j]].depth < d)
                .map(|j| j + 1)
                .unwrap_or(0);
            let group_end = (k + 1..toks.len())
                .find(|&j| self.toks[toks[j]].depth < d)
                .unwrap_or(toks.len());
            let comprehension =
                (group_start..k).any(|j| at_depth(j) && self.is_word(toks[j], "for"));
            let stop = (k + 1..group_end)
                .find(|&j| {
                    at_depth(j)
                        && (self.is_op(toks[j], ",")
                            || self.is_op(toks[j], ":")
                            || self.is_op(toks[j], "="))
                })
                .unwrap_or(group_end);
            let has_else = (k + 1..stop).any(|j| at_depth(j) && self.is_word(toks[j], "else"));
            let colon_next = stop < toks.len() && self.is_op(toks[stop], ":");
            if comprehension || has_else || colon_next || stop == k + 1 {
                continue;
            }
            let start = self.toks[toks[k - 1]].range.start;
            let end = self.toks[toks[stop - 1]].range.end;
            found.push(self.err(
                self.toks[i].range.start,
                "expected 'else' after 'if' expression",
                TextRange::new(start, end),
            ));
            return;
        }
    }

    /// `try` without `except` or `finally`: CPython fails at the first token after its body.
    fn try_handlers(&self, nodes: &NodeTable, id: NodeId, found: &mut Vec<Candidate>) {
        let node = nodes.node(id);
        let handled = nodes.children(id).any(|c| {
            matches!(
                nodes.kind(c),
                "except_clause" | "except_group_clause" | "finally_clause"
            )
        });
        if handled || node.has_error() {
            return;
        }
        let end = node.end_byte();
        let from = self.toks.partition_point(|t| t.range.start < end);
        let next = self.toks[from..]
            .iter()
            .find(|t| !matches!(t.kind, Kind::Newline | Kind::Dedent | Kind::Indent));
        let (range, line) = match next {
            Some(t) if t.kind != Kind::EndMarker => (t.range, t.line),
            _ => (TextRange::empty(self.src.len()), self.eof_line),
        };
        // A handler is there but malformed: the other checks name what is wrong with it.
        if matches!(&self.src[range.as_range()], "except" | "finally") {
            return;
        }
        let mut c = self.err(range.start, "expected 'except' or 'finally' block", range);
        c.err.line = line;
        found.push(c);
    }

    /// `del f()`, `del 1`: CPython's "cannot delete ...".
    fn delete_targets(&self, node: Node, found: &mut Vec<Candidate>) {
        let mut cursor = node.walk();
        let mut stack: Vec<Node> = node.named_children(&mut cursor).collect();
        stack.reverse();
        while let Some(n) = stack.pop() {
            match n.kind() {
                "expression_list" | "tuple" | "list" | "parenthesized_expression" => {
                    let mut c = n.walk();
                    let mut kids: Vec<Node> = n.named_children(&mut c).collect();
                    kids.reverse();
                    stack.extend(kids);
                }
                _ => {
                    if let Some(t) = invalid_target(n, self.src, false) {
                        let r = crate::parse::range(n);
                        found.push(self.err(r.start, format!("cannot delete {}", t.kind), r));
                        return;
                    }
                }
            }
        }
    }
}

const AUGMENTED: &[&str] = &[
    "+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=", ">>=", "<<=", "**=", "@=",
];

/// What an invalid assignment target is, in CPython's words.
struct TargetKind {
    kind: &'static str,
    /// CPython adds "here. Maybe you meant '==' instead of '='?" for this kind.
    here: bool,
    /// Range of the offending expression inside the target text (parentheses removed).
    inner: TextRange,
}

/// The expression node of a text parsed on its own, when it parses cleanly.
fn lone_expression(tree: &tree_sitter::Tree) -> Option<Node<'_>> {
    let root = tree.root_node();
    if root.has_error() || root.named_child_count() != 1 {
        return None;
    }
    let stmt = root.named_child(0)?;
    match (stmt.kind(), stmt.named_child_count()) {
        ("expression_statement", 1) => stmt.named_child(0),
        // `a, b` parses as a statement with two expressions: a tuple.
        ("expression_statement", _) => Some(stmt),
        _ => None,
    }
}

/// CPython's name for an expression that cannot be assigned to (`_PyPegen_get_expr_name`), or
/// `None` when it is a valid target (or not understood).
fn target_kind(text: &str) -> Option<TargetKind> {
    let tree = crate::parse::parse(text, None);
    let node = lone_expression(&tree)?;
    invalid_target(node, text, true)
}

fn invalid_target(node: Node, text: &str, here: bool) -> Option<TargetKind> {
    let mk = |kind: &'static str, here_ok: bool| {
        Some(TargetKind {
            kind,
            here: here && here_ok,
            inner: crate::parse::range(node),
        })
    };
    match node.kind() {
        "identifier" | "attribute" | "subscript" => None,
        "parenthesized_expression" => node
            .named_child(0)
            .and_then(|n| invalid_target(n, text, here)),
        "tuple"
        | "list"
        | "expression_list"
        | "pattern_list"
        | "list_splat"
        | "expression_statement" => {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            children
                .into_iter()
                .find_map(|n| invalid_target(n, text, false))
        }
        "integer" | "float" | "concatenated_string" => mk("literal", true),
        "string" => {
            if crate::parse::string_prefix(node, text).contains('f') {
                mk("f-string expression", true)
            } else {
                mk("literal", true)
            }
        }
        "true" => mk("True", false),
        "false" => mk("False", false),
        "none" => mk("None", false),
        "ellipsis" => mk("ellipsis", true),
        "call" => mk("function call", true),
        "binary_operator" | "unary_operator" => mk("expression", true),
        "not_operator" | "boolean_operator" => mk("expression", false),
        "comparison_operator" => mk("comparison", false),
        "conditional_expression" => mk("conditional expression", false),
        "lambda" => mk("lambda", false),
        "await" => mk("await expression", true),
        "yield" => mk("yield expression", true),
        "dictionary" => mk("dict literal", true),
        "set" => mk("set display", true),
        "list_comprehension" => mk("list comprehension", true),
        "dictionary_comprehension" => mk("dict comprehension", true),
        "set_comprehension" => mk("set comprehension", true),
        "generator_expression" => mk("generator expression", true),
        "named_expression" => mk("named expression", true),
        _ => None,
    }
}

/// CPython's name for an illegal augmented-assignment target, `None` when it is legal.
fn augmented_target_kind(text: &str) -> Option<&'static str> {
    let tree = crate::parse::parse(text, None);
    let node = lone_expression(&tree)?;
    let mut n = node;
    while n.kind() == "parenthesized_expression" {
        n = n.named_child(0)?;
    }
    match n.kind() {
        "identifier" | "attribute" | "subscript" => None,
        "tuple" | "expression_list" | "pattern_list" | "expression_statement" => Some("tuple"),
        "list" => Some("list"),
        _ => invalid_target(n, text, false).map(|t| t.kind),
    }
}

/// CPython adds "Perhaps you forgot a comma?" to a juxtaposition inside brackets, except in a
/// `def` parameter list, after a would-be string prefix (`NAME STRING`) or a soft keyword.
fn comma_hint(cx: &Cx, line: &Logical, ta: Token, tb: Token, a_text: &str) -> bool {
    let in_def_params = tb.depth == 1 && cx.head(line).is_some_and(|(h, _)| cx.is_word(h, "def"));
    let name_string = ta.kind == Kind::Name && tb.kind == Kind::String;
    let soft_keyword = matches!(a_text, "match" | "case" | "type" | "_");
    tb.depth > 0 && !in_def_params && !name_string && !soft_keyword
}

impl Cx<'_> {
    /// Indentation level of each logical line (INDENT/DEDENT counted before its first token).
    fn levels(&self) -> Vec<usize> {
        let mut level: usize = 0;
        let mut out = Vec::with_capacity(self.lines.len());
        let mut li = 0;
        for (i, t) in self.toks.iter().enumerate() {
            match t.kind {
                Kind::Indent => level += 1,
                Kind::Dedent => level = level.saturating_sub(1),
                _ => {}
            }
            while li < self.lines.len() && self.lines[li].toks.first() == Some(&i) {
                out.push(level);
                li += 1;
            }
        }
        while out.len() < self.lines.len() {
            out.push(level);
        }
        out
    }

    /// `else`/`elif`/`except`/`finally` that do not continue a matching statement at their
    /// level: CPython fails on the keyword (`invalid syntax`).
    fn dangling_clauses(&self, found: &mut Vec<Candidate>) {
        let levels = self.levels();
        for (n, line) in self.lines.iter().enumerate() {
            let Some(&first) = line.toks.first() else {
                continue;
            };
            let kw = self.text(first);
            if self.toks[first].kind != Kind::Name
                || !matches!(kw, "else" | "elif" | "except" | "finally")
            {
                continue;
            }
            let level = levels[n];
            let prev = (0..n).rev().find(|&m| levels[m] <= level);
            let ok = prev.is_some_and(|m| {
                if levels[m] != level {
                    return false;
                }
                let Some((h, _)) = self.head(&self.lines[m]) else {
                    return false;
                };
                let head = self.text(h);
                match kw {
                    "elif" => matches!(head, "if" | "elif"),
                    "else" => matches!(head, "if" | "elif" | "for" | "while" | "try" | "except"),
                    "except" => matches!(head, "try" | "except"),
                    _ => matches!(head, "try" | "except" | "else"),
                }
            });
            if !ok {
                found.push(self.invalid_at(first));
                return;
            }
        }
    }

    /// Forced tokens of CPython's grammar: `def NAME` must be followed by `(`, the parameters
    /// (and return annotation) by `:`, and `try`/`finally` by `:`; anything else there is
    /// "expected '('" / "expected ':'".
    fn forced_tokens(&self, line: &Logical, found: &mut Vec<Candidate>) {
        let toks = &line.toks;
        let Some((h, k)) = self.head(line) else {
            return;
        };
        let head = self.text(h);
        let expected = |i: usize, what: &str| {
            let r = self.toks[i].range;
            self.err(r.start, format!("expected '{what}'"), r)
        };
        match head {
            "def" => {
                let (Some(&name), Some(&next)) = (toks.get(k + 1), toks.get(k + 2)) else {
                    return;
                };
                if self.toks[name].kind != Kind::Name {
                    return;
                }
                if !self.is_op(next, "(") {
                    found.push(expected(next, "("));
                    return;
                }
                let depth = self.toks[next].depth;
                let Some(close) = (k + 3..toks.len())
                    .find(|&j| self.toks[toks[j]].depth == depth && self.is_op(toks[j], ")"))
                else {
                    return;
                };
                let mut j = close + 1;
                if toks.get(j).is_some_and(|&t| self.is_op(t, "->")) {
                    // The annotation runs to the first top-level `:` or a juxtaposition.
                    j += 1;
                    while let Some(&t) = toks.get(j) {
                        if self.toks[t].depth == depth && self.is_op(t, ":") {
                            break;
                        }
                        if j > close + 2
                            && self.toks[t].depth == depth
                            && self.ends_expression(toks[j - 1])
                            && self.starts_expression(t, toks[j - 1])
                        {
                            found.push(expected(t, ":"));
                            return;
                        }
                        j += 1;
                    }
                    return;
                }
                if let Some(&t) = toks.get(j) {
                    if !self.is_op(t, ":") {
                        found.push(expected(t, ":"));
                    }
                }
            }
            "try" | "finally" if k == 0 => {
                if let Some(&t) = toks.get(1) {
                    if !self.is_op(t, ":") {
                        found.push(expected(t, ":"));
                    }
                }
            }
            _ => {}
        }
    }

    /// Argument order in calls and class bases: positional after keyword, positional or `*`
    /// after `**`.
    fn argument_order_tokens(&self, line: &Logical, found: &mut Vec<Candidate>) {
        let toks = &line.toks;
        // The parameter list of `def NAME(` (or `async def NAME(`) is not a call.
        let def_paren = self
            .head(line)
            .filter(|&(h, _)| self.is_word(h, "def"))
            .map(|(_, skip)| skip + 2);
        for (k, &i) in toks.iter().enumerate() {
            if !self.is_op(i, "(") || k == 0 {
                continue;
            }
            let p = toks[k - 1];
            let callee = (self.toks[p].kind == Kind::Name && !is_keyword(self.text(p)))
                || self.is_op(p, ")")
                || self.is_op(p, "]")
                || self.toks[p].kind == Kind::String;
            if !callee || def_paren == Some(k) {
                continue;
            }
            let depth = self.toks[i].depth + 1;
            let (mut keyword, mut kw_unpack) = (false, false);
            let mut start = k + 1;
            // Commas of `for` target lists and of lambda parameters do not separate arguments.
            let mut in_target = false;
            let mut j = k + 1;
            loop {
                let end_of_arg = j >= toks.len()
                    || (self.toks[toks[j]].depth < depth)
                    || (self.toks[toks[j]].depth == depth
                        && self.is_op(toks[j], ",")
                        && !in_target);
                if j < toks.len() && self.toks[toks[j]].depth == depth {
                    if self.is_word(toks[j], "for") || self.is_word(toks[j], "lambda") {
                        in_target = true;
                    } else if self.is_word(toks[j], "in") || self.is_op(toks[j], ":") {
                        in_target = false;
                    }
                }
                if end_of_arg {
                    if start < j {
                        let a = toks[start];
                        let range = TextRange::new(
                            self.toks[a].range.start,
                            self.toks[toks[j - 1]].range.end,
                        );
                        let is_kw = self.toks[a].kind == Kind::Name
                            && toks.get(start + 1).is_some_and(|&n| self.is_op(n, "="));
                        if self.is_op(a, "**") {
                            kw_unpack = true;
                        } else if self.is_op(a, "*") {
                            if kw_unpack {
                                found.push(self.err(
                                    range.start,
                                    "iterable argument unpacking follows keyword argument unpacking",
                                    range,
                                ));
                                return;
                            }
                        } else if is_kw {
                            keyword = true;
                        } else if kw_unpack {
                            found.push(self.err(
                                range.start,
                                "positional argument follows keyword argument unpacking",
                                range,
                            ));
                            return;
                        } else if keyword {
                            found.push(self.err(
                                range.start,
                                "positional argument follows keyword argument",
                                range,
                            ));
                            return;
                        }
                    }
                    if j >= toks.len() || self.toks[toks[j]].depth < depth {
                        break;
                    }
                    start = j + 1;
                }
                j += 1;
            }
        }
    }

    /// A decorator line followed by a change of indentation: "unexpected indent/unindent".
    fn decorator_indentation(&self, found: &mut Vec<Candidate>) {
        for line in &self.lines {
            let (Some(&first), Some(nl)) = (line.toks.first(), line.newline) else {
                continue;
            };
            if !self.is_op(first, "@") {
                continue;
            }
            if let Some(t) = self.toks.get(nl + 1) {
                let message = match t.kind {
                    Kind::Indent => "unexpected indent",
                    Kind::Dedent => "unexpected unindent",
                    _ => continue,
                };
                let real = self.toks[nl + 1..]
                    .iter()
                    .find(|t| !matches!(t.kind, Kind::Indent | Kind::Dedent))
                    .map(|t| t.range)
                    .unwrap_or(t.range);
                found.push(Candidate {
                    pos: real.start,
                    err: PySyntaxError {
                        message: message.to_string(),
                        range: TextRange::new(t.range.start, real.start.max(t.range.start)),
                        line: t.line,
                        class: ErrorClass::Indentation,
                    },
                    reads_on: false,
                });
                return;
            }
        }
    }

    /// True when the innermost ERROR inside `node` (or `node` itself) is an artefact.
    fn innermost_spurious(&self, nodes: &NodeTable, id: NodeId) -> bool {
        let node = nodes.node(id);
        let inner = nodes.nodes()[nodes.subtree(id)]
            .iter()
            .copied()
            .filter(|n| n.is_error())
            .min_by_key(|n| n.end_byte() - n.start_byte())
            .unwrap_or(node);
        self.spurious_error(inner) || self.inside_string(inner)
    }

    /// True when `node` lies within one string token: CPython's tokenizer accepts the literal
    /// (escapes are checked by [`super::literals`]), so tree-sitter's error there is its own
    /// (its scanner rejects some valid escapes, such as `\\N` in bytes).
    fn inside_string(&self, node: Node) -> bool {
        let (a, b) = (node.start_byte(), node.end_byte());
        self.toks
            .iter()
            .any(|t| t.kind == Kind::String && t.range.start <= a && b <= t.range.end)
    }

    /// True when tree-sitter's ERROR at `node` is an artefact: the logical line holding it
    /// parses cleanly on its own (tree-sitter's indentation scanner is confused by some valid
    /// layouts, such as continuation lines dedented inside brackets).
    fn spurious_error(&self, node: Node) -> bool {
        let at = node.start_byte();
        let Some(line) = self.lines.iter().find(|l| {
            let (Some(&a), Some(&b)) = (l.toks.first(), l.toks.last()) else {
                return false;
            };
            self.toks[a].range.start <= at && at <= self.toks[b].range.end
        }) else {
            return false;
        };
        let (Some(&a), Some(&b)) = (line.toks.first(), line.toks.last()) else {
            return false;
        };
        let text = &self.src[self.toks[a].range.start..self.toks[b].range.end];
        if matches!(
            self.text(a),
            "else" | "elif" | "except" | "finally" | "case" | "@"
        ) {
            return false;
        }
        let snippet = if text.ends_with(':') {
            format!("{text}\n    pass\n")
        } else {
            format!("{text}\n")
        };
        !crate::parse::parse(&snippet, None).root_node().has_error()
    }
}

/// The range of the first leaf of `node` (the node itself when it has no children).
fn first_token_range(node: Node) -> TextRange {
    let mut n = node;
    while let Some(c) = n.child(0) {
        n = c;
    }
    let r = crate::parse::range(n);
    if r.is_empty() {
        crate::parse::range(node)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-based `(line, column)` of the error CPython 3.11's `ast.parse` reports
    /// (`SyntaxError.lineno`, `.offset`), from the diagnosis of `src`.
    fn position(src: &str) -> Option<(usize, usize)> {
        let tree = crate::parse::parse(src, None);
        let e = diagnose(src, tree.root_node())?;
        let line_start = src[..e.range.start].rfind('\n').map_or(0, |i| i + 1);
        Some((
            e.line + 1,
            src[line_start..e.range.start].chars().count() + 1,
        ))
    }

    #[test]
    fn await_and_async_as_names_are_errors_where_cpython_puts_them() {
        // (source, CPython 3.11.7's lineno and offset)
        for (src, at) in [
            ("await = 3\n", (1, 7)),
            ("async = 1\n", (1, 7)),
            ("x = await\n", (1, 10)),
            ("print(async)\n", (1, 7)),
            ("f(await)\n", (1, 8)),
            ("x = async + 1\n", (1, 5)),
            ("x = 1\nif x:\n    await\n", (3, 10)),
        ] {
            assert_eq!(position(src), Some(at), "{src:?}");
        }
        assert_eq!(position("async def f():\n    await g()\n"), None);
        assert_eq!(position("awaited = async_ = 1\n"), None);
    }
}
