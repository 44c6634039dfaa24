//! The adversarial fixture set (`fixtures/adversarial/cases.toml`): every input of every one of
//! the 20 pattern classes of guardrail-anchors §2.4 is flagged with its expected rule, each class
//! has at least five distinct inputs, and a property test re-formats every input (renamed
//! variables, other quotes, line breaks inside brackets, extra parentheses, spacing) and still
//! expects the same rule.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::{check_file, parse, KnowledgeBase, SourceFile};
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tree_sitter::Node;

const CASES: &str = include_str!("../../fixtures/adversarial/cases.toml");

#[derive(Deserialize)]
struct Fixture {
    classes: BTreeMap<String, String>,
    presets: BTreeMap<String, String>,
    case: Vec<Case>,
}

#[derive(Deserialize, Clone)]
struct Case {
    class: u32,
    code: String,
    config: Option<String>,
    input: String,
}

fn fixture() -> Fixture {
    toml::from_str(CASES).expect("cases.toml parses")
}

fn settings(fx: &Fixture, case: &Case) -> Settings {
    let preset = case.config.as_deref().unwrap_or("colony");
    let text = fx
        .presets
        .get(preset)
        .unwrap_or_else(|| panic!("unknown preset {preset}"));
    let file: ConfigFile = toml::from_str(text).expect("preset parses");
    Settings::resolve(&file, None, &Overrides::default()).expect("preset resolves")
}

fn codes(src: &str, settings: &Settings) -> Vec<String> {
    check_file(
        &SourceFile::new("cell.py", src),
        settings,
        &KnowledgeBase::new(),
    )
    .into_iter()
    .map(|d| format!("{} {}", d.rule.code, d.message))
    .collect()
}

fn flagged(src: &str, settings: &Settings, code: &str) -> bool {
    codes(src, settings).iter().any(|c| c.starts_with(code))
}

#[test]
fn every_adversarial_input_is_flagged_with_its_rule() {
    let fx = fixture();
    let mut per_class: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut seen_inputs = BTreeSet::new();
    for case in &fx.case {
        assert!(
            seen_inputs.insert(case.input.trim().to_string()),
            "duplicate input:\n{}",
            case.input
        );
        let s = settings(&fx, case);
        let hit = flagged(&case.input, &s, &case.code);
        let e = per_class.entry(case.class).or_default();
        e.0 += 1;
        if hit {
            e.1 += 1;
        } else {
            failures.push(format!(
                "class {} expected {}:\n{}\ngot: {:?}",
                case.class,
                case.code,
                case.input,
                codes(&case.input, &s)
            ));
        }
    }
    println!("class | inputs | flagged | title");
    for (class, (n, ok)) in &per_class {
        println!(
            "{class:>5} | {n:>6} | {ok:>7} | {}",
            fx.classes
                .get(&class.to_string())
                .map(String::as_str)
                .unwrap_or("")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(
        per_class.len(),
        20,
        "every class of guardrail-anchors §2.4 has inputs"
    );
    for (class, (n, _)) in &per_class {
        assert!(*n >= 5, "class {class} has only {n} inputs");
    }
}

/// The cases of `fixtures/adversarial/open.toml` (same format as cases.toml).
fn open_cases() -> Vec<Case> {
    #[derive(Deserialize)]
    struct Open {
        case: Vec<Case>,
    }
    let open: Open = toml::from_str(include_str!("../../fixtures/adversarial/open.toml"))
        .expect("open.toml parses");
    open.case
}

/// The known-open escapes (`fixtures/adversarial/open.toml`): inputs that really escape and
/// are not flagged yet. Ignored by default (it fails until they are fixed); run it with
/// `-- --ignored` to see which still pass unflagged. Each uses a preset of cases.toml.
#[test]
#[ignore = "known-open escapes: fails until each is flagged (see fixtures/adversarial/open.toml)"]
fn known_open_escapes() {
    let fx = fixture();
    let open = open_cases();
    let unflagged: Vec<String> = open
        .iter()
        .filter(|c| !flagged(&c.input, &settings(&fx, c), &c.code))
        .map(|c| format!("class {} expected {}:\n{}", c.class, c.code, c.input))
        .collect();
    assert!(unflagged.is_empty(), "{}", unflagged.join("\n\n"));
}

/// open.toml parses with the fixture's presets and holds no input cases.toml already has.
#[test]
fn known_open_escapes_are_well_formed_and_not_duplicated() {
    let fx = fixture();
    let open = open_cases();
    let known: BTreeSet<&str> = fx.case.iter().map(|c| c.input.trim()).collect();
    for c in &open {
        let _ = settings(&fx, c);
        assert!(
            !known.contains(c.input.trim()),
            "also in cases.toml:\n{}",
            c.input
        );
        assert!((1..=20).contains(&c.class), "class {}", c.class);
    }
}

// ---- re-formatting -------------------------------------------------------------------------

/// SplitMix64: a tiny deterministic generator for the re-formatting choices.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

fn walk(root: Node) -> Vec<Node> {
    parse::walk(root).collect()
}

fn apply(src: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|e| (e.0, e.1));
    edits.dedup_by_key(|e| (e.0, e.1));
    let mut out = String::new();
    let mut last = 0;
    for (s, e, text) in edits {
        if s < last {
            continue;
        }
        out.push_str(&src[last..s]);
        out.push_str(&text);
        last = e;
    }
    out.push_str(&src[last..]);
    out
}

fn parses(src: &str) -> bool {
    !parse::parse(src, None).root_node().has_error()
}

/// Keeps `new` when it still parses, else `old`.
fn keep(old: String, new: String) -> String {
    if parses(&new) {
        new
    } else {
        old
    }
}

const RESERVED: &[&str] = &[
    "getattr",
    "setattr",
    "hasattr",
    "delattr",
    "vars",
    "eval",
    "exec",
    "compile",
    "open",
    "input",
    "globals",
    "locals",
    "print",
    "type",
    "object",
    "chr",
    "len",
    "abs",
    "max",
    "map",
    "filter",
    "list",
    "sorted",
    "str",
    "callable",
    "help",
    "breakpoint",
    "range",
    "int",
];

/// Renames every variable the cell binds (assignment, `for`, walrus, parameters, functions,
/// classes, `as` aliases) to a fresh name, consistently.
fn rename_variables(src: &str, rng: &mut Rng) -> String {
    let tree = parse::parse(src, None);
    let nodes = walk(tree.root_node());
    let text = |n: Node| parse::text(n, src).to_string();
    let mut bound = BTreeSet::new();
    let mut keyword_names = BTreeSet::new();
    let mut imported = BTreeSet::new();
    for n in &nodes {
        let targets: Vec<Node> = match n.kind() {
            // An annotated name in a class body is a field (`@dataclass`, `NamedTuple`), and a
            // plain name assigned there a class attribute (`split = forged` overrides
            // `str.split`): attribute names, not variables.
            "assignment"
                if (n.child_by_field_name("type").is_some()
                    || n.child_by_field_name("left")
                        .is_some_and(|l| l.kind() == "identifier"))
                    && n.parent()
                        .and_then(|s| s.parent())
                        .and_then(|b| b.parent())
                        .is_some_and(|c| c.kind() == "class_definition") =>
            {
                if let Some(l) = n.child_by_field_name("left") {
                    keyword_names.insert(text(l));
                }
                Vec::new()
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                n.child_by_field_name("left").into_iter().collect()
            }
            // A method's name is an attribute name (`def items(self)` overrides `dict.items`).
            // Decorated methods too (`@property def label(self)`): the parent of a decorated
            // definition is the `decorated_definition`, whose parent is the class body.
            "function_definition"
                if n.parent()
                    .and_then(|b| b.parent())
                    .is_some_and(|c| c.kind() == "class_definition")
                    || n.parent()
                        .filter(|d| d.kind() == "decorated_definition")
                        .and_then(|d| d.parent())
                        .and_then(|b| b.parent())
                        .is_some_and(|c| c.kind() == "class_definition") =>
            {
                if let Some(l) = n.child_by_field_name("name") {
                    keyword_names.insert(text(l));
                }
                Vec::new()
            }
            "named_expression"
            | "function_definition"
            | "class_definition"
            | "default_parameter"
            | "typed_default_parameter" => n.child_by_field_name("name").into_iter().collect(),
            "as_pattern" => n.child_by_field_name("alias").into_iter().collect(),
            "parameters" | "lambda_parameters" => {
                let mut c = n.walk();
                n.named_children(&mut c)
                    .filter(|p| p.kind() == "identifier")
                    .collect()
            }
            "keyword_argument" => {
                if let Some(k) = n.child_by_field_name("name") {
                    keyword_names.insert(text(k));
                }
                Vec::new()
            }
            "import_statement" | "import_from_statement" => {
                for id in parse::walk(*n) {
                    if id.kind() == "identifier" {
                        imported.insert(text(id));
                    }
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        for t in targets {
            if t.kind() == "attribute" || t.kind() == "subscript" {
                continue;
            }
            for id in parse::walk(t) {
                if id.kind() == "identifier" {
                    bound.insert(text(id));
                }
            }
        }
    }
    // A name Colony's namespace pre-binds (`json`, `ActionResult`, `bb`) is not a variable
    // of the cell even where the cell rebinds it on some paths only: renaming it would change
    // which object the other paths use (`if False: json = {}` then `json.dumps = f`, H27).
    let prebound = cellguard_lints::config::Namespace::colony().names;
    let mut renames: HashMap<String, String> = HashMap::new();
    for (i, name) in bound.into_iter().enumerate() {
        if name.starts_with("__")
            || RESERVED.contains(&name.as_str())
            || prebound.contains(&name)
            || keyword_names.contains(&name)
            || imported.contains(&name)
        {
            continue;
        }
        let fresh = format!("v{}_{i}", rng.next() % 1000);
        renames.insert(name, fresh);
    }
    let mut edits = Vec::new();
    for n in &nodes {
        if n.kind() != "identifier" {
            continue;
        }
        if let Some(p) = n.parent() {
            if p.kind() == "attribute"
                && p.child_by_field_name("attribute").map(|a| a.id()) == Some(n.id())
            {
                continue;
            }
            if p.kind() == "keyword_argument"
                && p.child_by_field_name("name").map(|a| a.id()) == Some(n.id())
            {
                continue;
            }
        }
        if let Some(new) = renames.get(&text(*n)) {
            edits.push((n.start_byte(), n.end_byte(), new.clone()));
        }
    }
    keep(src.to_string(), apply(src, edits))
}

/// Switches string quotes (`'x'` <-> `"x"`, or triple quotes) where the content allows it.
fn requote(src: &str, rng: &mut Rng) -> String {
    let tree = parse::parse(src, None);
    let mut edits = Vec::new();
    for n in walk(tree.root_node()) {
        if n.kind() != "string" || !rng.chance(70) {
            continue;
        }
        let mut c = n.walk();
        if n.children(&mut c).any(|k| k.kind() == "interpolation") {
            continue;
        }
        let t = parse::text(n, src);
        let prefix: String = t.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        let body = &t[prefix.len()..];
        let (q, inner) = if body.starts_with("'''") || body.starts_with("\"\"\"") {
            continue;
        } else if let Some(i) = body.strip_prefix('\'').and_then(|b| b.strip_suffix('\'')) {
            ('\'', i)
        } else if let Some(i) = body.strip_prefix('"').and_then(|b| b.strip_suffix('"')) {
            ('"', i)
        } else {
            continue;
        };
        if inner.contains('\'') || inner.contains('"') || inner.ends_with('\\') {
            continue;
        }
        let other = if q == '\'' { "\"" } else { "'" };
        let new_q = rng.pick(&[other, "\"\"\"", "'''"]);
        edits.push((
            n.start_byte(),
            n.end_byte(),
            format!("{prefix}{new_q}{inner}{new_q}"),
        ));
    }
    keep(src.to_string(), apply(src, edits))
}

fn inside_string(n: Node) -> bool {
    let mut cur = n.parent();
    while let Some(p) = cur {
        if p.kind() == "string" {
            return true;
        }
        cur = p.parent();
    }
    false
}

/// Breaks lines after `(`, `[`, `{` and `,` inside brackets.
fn break_lines(src: &str, rng: &mut Rng) -> String {
    let tree = parse::parse(src, None);
    let mut edits = Vec::new();
    for n in walk(tree.root_node()) {
        if n.is_named() || !matches!(n.kind(), "(" | "[" | "{" | ",") || inside_string(n) {
            continue;
        }
        let in_brackets = n.parent().is_some_and(|p| {
            matches!(
                p.kind(),
                "argument_list"
                    | "list"
                    | "tuple"
                    | "dictionary"
                    | "set"
                    | "parameters"
                    | "parenthesized_expression"
                    | "subscript"
                    | "generator_expression"
                    | "list_comprehension"
            )
        });
        if in_brackets && rng.chance(60) {
            let indent = " ".repeat((rng.next() % 9) as usize);
            edits.push((n.end_byte(), n.end_byte(), format!("\n{indent}")));
        }
    }
    keep(src.to_string(), apply(src, edits))
}

/// Wraps expressions in redundant parentheses: arguments, right-hand sides, callees and the
/// objects of attribute accesses.
fn add_parens(src: &str, rng: &mut Rng) -> String {
    add_parens_with(src, &mut || rng.chance(40))
}

/// [`add_parens`] at every eligible place (the outermost of nested ones).
fn add_parens_always(src: &str) -> String {
    add_parens_with(src, &mut || true)
}

fn add_parens_with(src: &str, pick: &mut dyn FnMut() -> bool) -> String {
    let tree = parse::parse(src, None);
    let mut edits = Vec::new();
    for n in walk(tree.root_node()) {
        if !n.is_named() || inside_string(n) || !pick() {
            continue;
        }
        if !matches!(
            n.kind(),
            "identifier"
                | "attribute"
                | "call"
                | "string"
                | "subscript"
                | "binary_operator"
                | "integer"
                | "list"
                | "tuple"
        ) {
            continue;
        }
        let Some(p) = n.parent() else { continue };
        let is = |f: &str| p.child_by_field_name(f).map(|x| x.id()) == Some(n.id());
        let ok = match p.kind() {
            "argument_list" => true,
            "assignment" => is("right"),
            "call" => is("function"),
            "attribute" => is("object") && n.kind() != "integer",
            "subscript" => is("value"),
            "return_statement" => true,
            _ => false,
        };
        if ok {
            let t = parse::text(n, src);
            edits.push((n.start_byte(), n.end_byte(), format!("({t})")));
        }
    }
    keep(src.to_string(), apply(src, edits))
}

/// Adds spaces around operators, after commas, inside brackets and around attribute dots.
fn respace(src: &str, rng: &mut Rng) -> String {
    let tree = parse::parse(src, None);
    let mut edits = Vec::new();
    for n in walk(tree.root_node()) {
        if n.is_named() || inside_string(n) || !rng.chance(50) {
            continue;
        }
        let spaced = match n.kind() {
            "=" | "+" | "*" | "%" | "," | ":=" | "|=" | "(" | "[" | ")" | "]" => true,
            "." => n.parent().is_some_and(|p| p.kind() == "attribute"),
            _ => false,
        };
        if spaced {
            let t = parse::text(n, src);
            edits.push((n.start_byte(), n.end_byte(), format!(" {t} ")));
        }
    }
    keep(src.to_string(), apply(src, edits))
}

fn reformat(src: &str, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = src.to_string();
    if rng.chance(80) {
        out = rename_variables(&out, &mut rng);
    }
    if rng.chance(80) {
        out = requote(&out, &mut rng);
    }
    if rng.chance(60) {
        out = add_parens(&out, &mut rng);
    }
    if rng.chance(60) {
        out = break_lines(&out, &mut rng);
    }
    if rng.chance(60) {
        out = respace(&out, &mut rng);
    }
    out
}

#[test]
fn reformatting_changes_inputs() {
    let fx = fixture();
    let changed = fx
        .case
        .iter()
        .filter(|c| (0..8).any(|seed| reformat(&c.input, seed) != c.input))
        .count();
    assert!(
        changed * 10 >= fx.case.len() * 9,
        "the re-formatter changes only {changed} of {} inputs",
        fx.case.len()
    );
    // Each transformation on its own, on a known input.
    let src = "g = getattr\ng(x, \"__cla\" + \"ss__\")\n";
    let mut rng = Rng(7);
    let renamed = rename_variables(src, &mut rng);
    assert!(
        !renamed.contains("g = ") && renamed.contains("getattr"),
        "{renamed}"
    );
    let requoted = requote(src, &mut Rng(1));
    assert_ne!(requoted, src);
    assert!(parses(&add_parens(src, &mut Rng(3))));
    assert!(parses(&break_lines(src, &mut Rng(4))));
    assert!(parses(&respace(src, &mut Rng(5))));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn reformatted_inputs_keep_their_finding(seed in any::<u64>()) {
        let fx = fixture();
        for (i, case) in fx.case.iter().enumerate() {
            let s = settings(&fx, case);
            let variant = reformat(&case.input, seed.wrapping_add(i as u64));
            // Inputs that hide an escape next to a syntax error (round 6 H18) do not parse to
            // begin with; the re-formatter keeps only variants that parse, so they stay as
            // written.
            prop_assert!(
                parses(&variant) || !parses(&case.input),
                "re-formatting broke the input:\n{}",
                variant
            );
            prop_assert!(
                flagged(&variant, &s, &case.code),
                "class {} expected {} on the re-formatted input:\n{}\noriginal:\n{}\ngot: {:?}",
                case.class, case.code, variant, case.input, codes(&variant, &s)
            );
        }
    }
}

/// The per-class counts table of `fixtures/adversarial/README.md` (the fixture index) matches
/// the cases: one row per class with its number of inputs, and the total.
#[test]
fn readme_counts_match_the_cases() {
    let readme = include_str!("../../fixtures/adversarial/README.md");
    let fx = fixture();
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for case in &fx.case {
        *counts.entry(case.class).or_default() += 1;
    }
    let section = readme
        .split("## Per-class counts")
        .nth(1)
        .expect("README has a per-class counts section");
    let mut listed: BTreeMap<u32, usize> = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 5 {
            continue;
        }
        if let (Ok(class), Ok(n)) = (cells[1].parse::<u32>(), cells[3].parse::<usize>()) {
            listed.insert(class, n);
        }
    }
    assert_eq!(listed, counts, "README per-class counts are stale");
    let total = format!("{} inputs in all", fx.case.len());
    assert!(section.contains(&total), "README total is not `{total}`");
}

/// Every adversarial input with redundant parentheses around every argument, right-hand side,
/// callee, attribute object, subscript value and returned value, nested up to three levels
/// deep (`(next)(((itertools).chain)([(pydantic)]))`), keeps its finding: the deterministic
/// worst case of the re-formatter's `add_parens`.
#[test]
fn fully_parenthesized_inputs_keep_their_finding() {
    let fx = fixture();
    let mut missed = Vec::new();
    for case in &fx.case {
        let s = settings(&fx, case);
        let mut variant = case.input.clone();
        for level in 0..3 {
            variant = add_parens(&variant, &mut Rng(level));
        }
        let mut all = case.input.clone();
        for _ in 0..3 {
            all = add_parens_always(&all);
        }
        for v in [variant, all] {
            if !flagged(&v, &s, &case.code) {
                missed.push(format!(
                    "class {} expected {}:\n{}\ngot {:?}",
                    case.class,
                    case.code,
                    v,
                    codes(&v, &s)
                ));
            }
        }
    }
    assert!(
        missed.is_empty(),
        "{} parenthesized inputs lost their finding:\n{}",
        missed.len(),
        missed.join("\n---\n")
    );
}
