use super::*;
use crate::diagnostic::Rule;
use crate::extract::{Cell, CellOrigin, Escape, Segment, SourceMap};
use crate::rules::{imports, syntax};

fn fix_in(path: &str, src: &str, threshold: Applicability) -> FixedFile {
    fix_file(
        &SourceFile::new(path, src),
        &Settings::default(),
        &KnowledgeBase::new(),
        threshold,
    )
}

fn safe(src: &str) -> String {
    fix_in("cell.py", src, Applicability::Safe).text
}

fn unsafe_(src: &str) -> String {
    fix_in("cell.py", src, Applicability::Unsafe).text
}

fn diag(rule: &'static Rule, fix: Fix) -> Diagnostic {
    Diagnostic::new(rule, fix.range(), "test").with_fix(fix)
}

#[test]
fn apply_skips_overlapping_and_display_only_fixes() {
    let text = "abcdef";
    let ds = vec![
        diag(
            &imports::BLOCKED_IMPORT,
            Fix::safe("x", vec![Edit::replace(TextRange::new(1, 3), "X")]),
        ),
        diag(
            &imports::RELATIVE_IMPORT,
            Fix::safe("y", vec![Edit::replace(TextRange::new(2, 4), "Y")]),
        ),
        diag(
            &syntax::SYNTAX_ERROR,
            Fix::display_only("z", vec![Edit::replace(TextRange::new(5, 6), "Z")]),
        ),
        diag(
            &imports::IMPORT_FAILS_AT_RUNTIME,
            Fix::unsafe_edit("w", vec![Edit::insert(0, "W")]),
        ),
    ];
    let pass = apply_fixes(text, &ds, Applicability::Safe).unwrap();
    assert_eq!(pass.text, "aXdef");
    assert_eq!(pass.applied.get("IMP001"), Some(&1));
    assert_eq!(pass.applied.get("IMP002"), None);
    let pass = apply_fixes(text, &ds, Applicability::Unsafe).unwrap();
    assert_eq!(pass.text, "WaXdef");
    // Nothing applicable.
    assert!(apply_fixes(text, &ds[2..3], Applicability::Unsafe).is_none());
}

#[test]
fn apply_merges_identical_fixes_and_orders_insertions() {
    let text = "ab";
    let same = Fix::safe("x", vec![Edit::insert(1, "-")]);
    let ds = vec![
        diag(&imports::BLOCKED_IMPORT, same.clone()),
        diag(&imports::RELATIVE_IMPORT, same),
        diag(
            &imports::IMPORT_FAILS_AT_RUNTIME,
            Fix::safe("y", vec![Edit::insert(1, "+")]),
        ),
    ];
    let pass = apply_fixes(text, &ds, Applicability::Safe).unwrap();
    assert_eq!(pass.text, "a-b");
    assert_eq!(pass.applied.values().sum::<usize>(), 2);
}

#[test]
fn apply_rejects_edits_off_char_boundaries() {
    let text = "é";
    let ds = vec![diag(
        &imports::BLOCKED_IMPORT,
        Fix::safe("x", vec![Edit::replace(TextRange::new(1, 2), "e")]),
    )];
    assert!(apply_fixes(text, &ds, Applicability::Safe).is_none());
    let ds = vec![diag(
        &imports::BLOCKED_IMPORT,
        Fix::safe("x", vec![Edit::replace(TextRange::new(1, 99), "e")]),
    )];
    assert!(apply_fixes(text, &ds, Applicability::Safe).is_none());
}

#[test]
fn blocked_import_removal_is_unsafe() {
    let src = "import os\nx = 1\n";
    assert_eq!(safe(src), src);
    assert_eq!(unsafe_(src), "x = 1\n");
    assert_eq!(unsafe_("from os.path import join\nx = 1\n"), "x = 1\n");
    assert_eq!(
        unsafe_("from os import (\n    path,\n    sep,\n)\nx = 1\n"),
        "x = 1\n"
    );
}

#[test]
fn blocked_import_removes_only_its_alias() {
    let src = "import os, sys\nx = 1\n";
    let r = fix_in("cell.py", src, Applicability::Unsafe);
    // Both aliases go, one per pass (their edits span the statement).
    assert_eq!(r.text, "x = 1\n");
    assert_eq!(r.fixed.get("IMP001"), Some(&2));
    assert_eq!(r.passes, 2);
    let src = "def f():\n    import os.path as p, math\n    return math.pi\n";
    let out = unsafe_(src);
    assert!(out.starts_with("def f():\n"), "{out}");
    assert!(!out.contains("os"), "{out}");
}

#[test]
fn import_of_a_pre_bound_module_is_removed_safely() {
    assert_eq!(
        safe("import json\nx = json.dumps({})\n"),
        "x = json.dumps({})\n"
    );
    // Not the same name: no fix.
    assert_eq!(
        safe("import json as j\nx = j.dumps({})\n"),
        "import json as j\nx = j.dumps({})\n"
    );
    assert_eq!(safe("from json import dumps\n"), "from json import dumps\n");
    // `collections` is allowed but not pre-bound in Colony's namespace.
    assert_eq!(safe("import collections\n"), "import collections\n");
    let d = lint::check_file(
        &SourceFile::new("a.py", "import json\n"),
        &Settings::default(),
        &KnowledgeBase::new(),
    );
    assert_eq!(d[0].rule.code, "IMP003");
    assert_eq!(
        d[0].fix.as_ref().unwrap().applicability,
        Applicability::Safe
    );
}

#[test]
fn statement_deletion_keeps_blocks_valid() {
    assert_eq!(safe("if True:\n    import json\n"), "if True:\n    pass\n");
    assert_eq!(safe("if True: import json\n"), "if True: pass\n");
    assert_eq!(
        safe("def f():\n    import json\n    return json.dumps(1)\n"),
        "def f():\n    return json.dumps(1)\n"
    );
    assert_eq!(safe("import json; x = 1\n"), "x = 1\n");
    assert_eq!(safe("x = 1; import json\n"), "x = 1\n");
    assert_eq!(safe("x = 1; import json; y = 2\n"), "x = 1; y = 2\n");
    assert_eq!(safe("import json  # comment\nx = 1\n"), "x = 1\n");
}

#[test]
fn crlf_missing_newline_and_non_ascii_are_preserved() {
    assert_eq!(
        safe("x = 1\r\nimport json\r\ny = 2\r\n"),
        "x = 1\r\ny = 2\r\n"
    );
    assert_eq!(safe("import json\r\ny = 2\r\n"), "y = 2\r\n");
    assert_eq!(safe("x = 1\nimport json"), "x = 1");
    assert_eq!(safe("import json"), "");
    assert_eq!(
        safe("s = \"héllo 😀 日本\"\nimport json\nt = 'ü'\n"),
        "s = \"héllo 😀 日本\"\nt = 'ü'\n"
    );
    assert_eq!(
        safe("s = \"😀\"; import json  # noqa: IMP002\n"),
        "s = \"😀\"\n"
    );
}

#[test]
fn markdown_cells_are_fixed_inside_their_fences() {
    let md = "# Title\n\n```python\nimport json\nx = json.dumps(1)\n```\n\nMore 😀 text.\n\n```py\nimport re\n```\n";
    let out = fix_in("doc.md", md, Applicability::Safe);
    assert_eq!(
        out.text,
        "# Title\n\n```python\nx = json.dumps(1)\n```\n\nMore 😀 text.\n\n```py\n```\n"
    );
    assert!(out.diagnostics.is_empty());
}

#[test]
fn indented_markdown_fences_keep_their_indentation() {
    let md = "- step\n\n  ```python\n  x = 1\n  import json\n  ```\n";
    assert_eq!(
        fix_in("doc.md", md, Applicability::Safe).text,
        "- step\n\n  ```python\n  x = 1\n  ```\n"
    );
    let md = "- step\n\n  ```python\n  import json\n  x = 1\n  ```\n";
    assert_eq!(
        fix_in("doc.md", md, Applicability::Safe).text,
        "- step\n\n  ```python\n  x = 1\n  ```\n"
    );
    let md = "- step\n\n  ```python\n  if x:\n      import json\n  ```\n";
    assert_eq!(
        fix_in("doc.md", md, Applicability::Safe).text,
        "- step\n\n  ```python\n  if x:\n      pass\n  ```\n"
    );
}

/// A cell decoded from the JSON string `"import json\nx = 1\n"` at `file_start`.
fn json_cell(file_start: usize) -> Cell {
    let mut map = SourceMap {
        segments: vec![],
        escape: Escape::JsonString,
    };
    let pieces: [(usize, usize); 4] = [(11, 11), (1, 2), (5, 5), (1, 2)];
    let (mut c, mut f) = (0, file_start);
    for (len, file_len) in pieces {
        map.push(Segment {
            cell_start: c,
            len,
            file_start: f,
            file_len,
        });
        c += len;
        f += file_len;
    }
    Cell {
        lone_cr: Vec::new(),
        index: 0,
        text: "import json\nx = 1\n".into(),
        map,
        origin: CellOrigin::Response,
    }
}

#[test]
fn json_envelope_edits_map_across_escapes() {
    let file = "{\"code\": \"import json\\nx = 1\\n\"}";
    let cell = json_cell(10);
    let tree = crate::parse::parse(&cell.text, None);
    let ds = lint::check_parsed_cell(&cell, &tree, &Settings::default(), &KnowledgeBase::new());
    assert_eq!(ds[0].rule.code, "IMP003");
    let mapped = lint::map_to_file(&cell, false, ds);
    let fix = mapped[0]
        .fix
        .as_ref()
        .expect("the fix maps back into the JSON string");
    let pass = apply_fixes(file, &mapped, Applicability::Safe).unwrap();
    assert_eq!(pass.text, "{\"code\": \"x = 1\\n\"}", "{fix:?}");
    // An insertion before an escape, with content that needs escaping.
    let e = cell
        .map
        .edit_to_file(&Edit::insert(11, "  # \"q\""))
        .unwrap();
    assert_eq!(e.range, TextRange::empty(21));
    assert_eq!(e.content, "  # \\\"q\\\"");
    // Edits that start or end inside an escape sequence cannot be written back.
    let half = SourceMap {
        segments: vec![Segment {
            cell_start: 0,
            len: 2,
            file_start: 0,
            file_len: 6,
        }],
        escape: Escape::JsonString,
    };
    assert!(half
        .edit_to_file(&Edit::delete(TextRange::new(1, 2)))
        .is_none());
    assert!(half
        .edit_to_file(&Edit::delete(TextRange::new(0, 2)))
        .is_some());
}

#[test]
fn fixing_twice_changes_nothing_the_second_time() {
    for src in [
        "import json\nimport re\nx = json.dumps(re.escape('a'))  # noqa: IMP002\n",
        "if True:\n    import json\n",
        "x = 1  # noqa: IMP001, IMP001, API999\n",
    ] {
        let once = unsafe_(src);
        let twice = fix_in("cell.py", &once, Applicability::Unsafe);
        assert_eq!(twice.text, once, "{src}");
        assert_eq!(twice.passes, 0);
        assert_eq!(twice.status, FixStatus::Converged);
    }
}

#[test]
fn a_fix_cycle_is_reported_as_not_converging() {
    // A rule that flips `a` and `b` forever.
    let relint = |t: &str| -> Vec<Diagnostic> {
        let to = if t == "a" { "b" } else { "a" };
        vec![diag(
            &imports::BLOCKED_IMPORT,
            Fix::safe("flip", vec![Edit::replace(TextRange::new(0, 1), to)]),
        )]
    };
    let r = fix_with("a", Applicability::Safe, &relint);
    assert_eq!(
        r.status,
        FixStatus::NotConverged {
            rules: vec!["IMP001"]
        }
    );
    assert_eq!(r.passes, 2);
}

#[test]
fn the_iteration_cap_stops_a_fix_that_never_settles() {
    let relint = |t: &str| -> Vec<Diagnostic> {
        vec![diag(
            &imports::RELATIVE_IMPORT,
            Fix::safe("grow", vec![Edit::insert(t.len(), "x")]),
        )]
    };
    let r = fix_with("", Applicability::Safe, &relint);
    assert_eq!(r.passes, MAX_ITERATIONS);
    assert_eq!(r.text.len(), MAX_ITERATIONS);
    assert_eq!(
        r.status,
        FixStatus::NotConverged {
            rules: vec!["IMP002"]
        }
    );
}

#[test]
fn a_fix_that_breaks_the_syntax_is_rolled_back() {
    // Real lint plus a rogue fix that deletes a closing parenthesis.
    let relint = |t: &str| -> Vec<Diagnostic> {
        let mut ds = lint::check_file(
            &SourceFile::new("a.py", t),
            &Settings::default(),
            &KnowledgeBase::new(),
        );
        if let Some(i) = t.find(')') {
            ds.push(diag(
                &imports::RELATIVE_IMPORT,
                Fix::safe("break", vec![Edit::delete(TextRange::new(i, i + 1))]),
            ));
        }
        ds
    };
    let r = fix_with("import json\nx = f(1)\n", Applicability::Safe, &relint);
    assert_eq!(r.text, "x = f(1)\n");
    assert_eq!(r.reverted, vec!["IMP002"]);
    assert_eq!(r.fixed.get("IMP003"), Some(&1));
    assert_eq!(r.status, FixStatus::Converged);
}

#[test]
fn json_envelope_responses_are_fixed_inside_the_string() {
    let src = "{\"code\": \"import json\\nx = json.dumps({\\\"a\\\": 1})\\n\"}";
    let out = fix_in("reply.json", src, Applicability::Safe);
    assert_eq!(
        out.text,
        "{\"code\": \"x = json.dumps({\\\"a\\\": 1})\\n\"}"
    );
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    // Idempotent.
    let again = fix_in("reply.json", &out.text, Applicability::Safe);
    assert_eq!(again.text, out.text);
    assert_eq!(again.passes, 0);
}

#[test]
fn fenced_responses_are_fixed_inside_their_fence() {
    let src =
        "Thought: I will call it.\n```python\nimport json\nr = await run(\"A.b.c\")\n```\nDone.\n";
    let out = fix_in("reply.txt", src, Applicability::Safe);
    assert_eq!(
        out.text,
        "Thought: I will call it.\n```python\nr = await run(\"A.b.c\")\n```\nDone.\n"
    );
}

fn string_edit(src: &str, new_value: &str) -> Option<String> {
    let tree = crate::parse::parse(src, None);
    let expr = tree
        .root_node()
        .named_child(0)
        .and_then(|s| s.named_child(0))
        .unwrap();
    let e = replace_string_value(expr, src, new_value)?;
    let mut out = src.to_string();
    out.replace_range(e.range.as_range(), &e.content);
    Some(out)
}

#[test]
fn string_values_are_edited_where_they_differ() {
    assert_eq!(
        string_edit("\"A.b.c_usr\"", "A.b.c_user").as_deref(),
        Some("\"A.b.c_user\"")
    );
    assert_eq!(string_edit("'A.b.x'", "A.b.y").as_deref(), Some("'A.b.y'"));
    assert_eq!(
        string_edit("r'''A.b.x'''", "A.b.yz").as_deref(),
        Some("r'''A.b.yz'''")
    );
    // Implicit concatenation over two rows: only the part with the typo changes.
    assert_eq!(
        string_edit("(\"A.Cap.\"\n \"respond_to_usr\")", "A.Cap.respond_to_user").as_deref(),
        Some("(\"A.Cap.\"\n \"respond_to_user\")")
    );
    assert_eq!(
        string_edit("(\"A.Kap.\"\n 'respond')", "A.Cap.respond").as_deref(),
        Some("(\"A.Cap.\"\n 'respond')")
    );
    // A difference across the split: one literal.
    assert_eq!(
        string_edit("\"A.b\" \"c\"", "X.y.z").as_deref(),
        Some("\"X.y.z\"")
    );
    // Not representable, or not a plain literal: no edit.
    assert_eq!(string_edit("'a'", "it's"), None);
    assert_eq!(string_edit("'a\\n'", "b"), None);
    assert_eq!(string_edit("f'{x}'", "b"), None);
    assert_eq!(string_edit("b'a'", "b"), None);
    assert_eq!(string_edit("'a'", "a"), None);
    assert_eq!(string_edit("'😀a'", "😀b").as_deref(), Some("'😀b'"));
    assert_eq!(string_edit("'é'", "è").as_deref(), Some("'è'"));
}
