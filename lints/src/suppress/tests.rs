use super::*;
use crate::config::{ConfigFile, Overrides};
use crate::diagnostic::Applicability;
use crate::{lint, parse, KnowledgeBase, SourceFile};

/// Settings of a trusted, human-written project: `allow-inline-suppressions = ["ALL"]`. Most
/// tests below exercise the comment mechanics with `IMP001` (`import os`), a security rule that
/// comments cannot silence by default (G25), so they opt in; the default behaviour is tested
/// with [`untrusted`] at the end of the file.
fn trusted() -> Settings {
    settings_with(&["ALL"], &[])
}

/// The default settings: security rules are not suppressible from inside the cell.
fn untrusted() -> Settings {
    Settings::default()
}

fn settings_with(allow_inline: &[&str], ignore: &[&str]) -> Settings {
    let file = ConfigFile {
        lint: Some(crate::config::LintSection {
            allow_inline_suppressions: Some(allow_inline.iter().map(|s| s.to_string()).collect()),
            ignore: Some(ignore.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }),
        ..Default::default()
    };
    Settings::resolve(&file, None, &Overrides::default()).unwrap()
}

fn check_in(path: &str, src: &str) -> Vec<Diagnostic> {
    lint::check_file(
        &SourceFile::new(path, src),
        &trusted(),
        &KnowledgeBase::new(),
    )
}

fn check(src: &str) -> Vec<Diagnostic> {
    check_in("cell.py", src)
}

fn codes(ds: &[Diagnostic]) -> Vec<&'static str> {
    ds.iter().map(|d| d.rule.code).collect()
}

fn fixed(src: &str) -> String {
    crate::fix::fix_file(
        &SourceFile::new("cell.py", src),
        &trusted(),
        &KnowledgeBase::new(),
        Applicability::Safe,
    )
    .text
}

#[test]
fn noqa_with_code_suppresses_that_rule_on_its_line() {
    assert_eq!(codes(&check("import os\n")), vec!["IMP001"]);
    assert!(check("import os  # noqa: IMP001\n").is_empty());
    assert!(check("import os  # noqa:IMP001\n").is_empty());
    assert!(check("import os  #NOQA: imp001\n").is_empty());
    assert!(check("import os  # noqa: IMP001 needed by the fixture\n").is_empty());
    assert!(check("import os  # noqa: E501,IMP001\n").is_empty());
    assert!(check("import os  # noqa: E501 IMP001\n").is_empty());
}

#[test]
fn blanket_noqa_suppresses_everything_on_the_line() {
    assert!(check("import os  # noqa\n").is_empty());
    assert!(check("import os  # noqa # other pragma\n").is_empty());
    // `# noqa` glued to a word is no directive.
    assert_eq!(codes(&check("import os  # noqaxyz\n")), vec!["IMP001"]);
}

#[test]
fn noqa_suppresses_only_its_own_line() {
    let ds = check("import os  # noqa: IMP001\nimport sys\n");
    assert_eq!(codes(&ds), vec!["IMP001"]);
    assert_eq!(
        ds[0].range.start,
        "import os  # noqa: IMP001\nimport ".len()
    );
}

#[test]
fn noqa_text_inside_a_string_is_not_a_suppression() {
    let ds = check("import os; y = \"# noqa: IMP001\"\n");
    assert_eq!(codes(&ds), vec!["IMP001"]);
    let ds = check("y = '''\n# noqa\n'''; import os\n");
    assert_eq!(codes(&ds), vec!["IMP001"]);
}

#[test]
fn cellguard_ignore_at_end_of_line() {
    assert!(check("import os  # cellguard: ignore[IMP001]\n").is_empty());
    assert!(check("import os  # cellguard:ignore[ IMP001 ]\n").is_empty());
    assert!(check("import os  # cellguard: ignore[blocked-import]\n").is_empty());
    assert!(check("import os  # CellGuard: Ignore[IMP001, IMP002]\n")
        .iter()
        .all(|d| d.rule.code == "CG001"));
}

#[test]
fn trailing_suppression_on_last_row_covers_the_logical_line() {
    // The finding is on row 0 (`os`), the comment on row 1 ends the logical line.
    let ds = check("import os, \\\n    json  # noqa: IMP001\n");
    assert_eq!(codes(&ds), vec!["IMP003"]);
    let ds = check("from os import (\n    path,\n)  # cellguard: ignore[IMP001]\n");
    assert!(ds.is_empty(), "{ds:?}");
    // A comment on a middle row covers only that row.
    let ds = check("from os import (  \n    path,  # noqa: IMP001\n)\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG001"]);
}

#[test]
fn own_line_ignore_covers_the_next_statement() {
    assert!(check("# cellguard: ignore[IMP001]\nimport os\n").is_empty());
    // The whole statement, over several rows.
    let src = "# cellguard: ignore[IMP001, IMP003]\nimport json, \\\n    os\nimport sys\n";
    let ds = check(src);
    assert_eq!(codes(&ds), vec!["IMP001"]);
    assert_eq!(&src[ds[0].range.as_range()], "sys");
    // Stacked comments are fine; a blank line detaches the suppression.
    assert!(check("# cellguard: ignore[IMP001]\n# because\nimport os\n").is_empty());
    let ds = check("# cellguard: ignore[IMP001]\n\nimport os\n");
    assert_eq!(codes(&ds), vec!["CG001", "IMP001"]);
    // A compound statement is covered with its body.
    let src =
        "# cellguard: ignore[IMP001]\nif True:\n    import os\n    import sys\nimport socket\n";
    let ds = check(src);
    assert_eq!(codes(&ds), vec!["IMP001"]);
    assert_eq!(&src[ds[0].range.as_range()], "socket");
}

#[test]
fn own_line_noqa_covers_only_its_row() {
    let ds = check("# noqa: IMP001\nimport os\n");
    assert_eq!(codes(&ds), vec!["CG001", "IMP001"]);
}

#[test]
fn ignore_file_covers_every_row_and_every_markdown_cell() {
    assert!(check("import os\n# cellguard: ignore-file[IMP001]\nimport sys\n").is_empty());
    let md =
        "```python\n# cellguard: ignore-file[IMP001]\nimport os\n```\n\n```py\nimport sys\n```\n";
    assert!(check_in("doc.md", md).is_empty());
    // Trailing `ignore-file` is malformed and suppresses nothing.
    let ds = check("import os  # cellguard: ignore-file[IMP001]\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG004"]);
}

#[test]
fn codes_are_exact_not_prefixes() {
    let ds = check("import os  # cellguard: ignore[IMP]\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG002"]);
    assert!(ds[1].message.contains("exact codes"), "{}", ds[1].message);
    let ds = check("import os  # noqa: IMP00\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG002"]);
}

#[test]
fn blanket_cellguard_ignore_is_invalid() {
    let ds = check("import os  # cellguard: ignore\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG004"]);
    assert!(ds[1].fix.is_none());
    let ds = check("x = 1  # cellguard: ignore[]\n");
    assert_eq!(codes(&ds), vec!["CG004"]);
    let ds = check("x = 1  # cellguard: disable[IMP001]\n");
    assert_eq!(codes(&ds), vec!["CG004"]);
    let ds = check("x = 1  # noqa:\n");
    assert_eq!(codes(&ds), vec!["CG004"]);
    assert!(
        ds[0].message.contains("followed by no rule code"),
        "{}",
        ds[0].message
    );
    // A family prefix after `# noqa:` is named as such, with an exact code to write instead
    // (new-user N-16).
    let ds = check("import os  # noqa: SBX\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG004"]);
    assert!(
        ds[1].message.contains("`# noqa: SBX` names a rule family")
            && ds[1].message.contains("`# noqa: SBX001`"),
        "{}",
        ds[1].message
    );
    let ds = check("x = 1  # noqa: all\n");
    assert_eq!(codes(&ds), vec!["CG004"]);
    assert!(
        ds[0].message.contains("`# noqa: all` is not a rule code"),
        "{}",
        ds[0].message
    );
    // Prose mentioning cellguard is no directive.
    assert!(check("x = 1  # cellguard checks this cell\n").is_empty());
}

#[test]
fn unused_code_is_reported_with_a_safe_fix() {
    let src = "x = 1  # noqa: IMP001\n";
    let ds = check(src);
    assert_eq!(codes(&ds), vec!["CG001"]);
    assert_eq!(ds[0].message, "Unused `noqa` directive (unused: `IMP001`)");
    assert_eq!(&src[ds[0].range.as_range()], "IMP001");
    let fix = ds[0].fix.as_ref().unwrap();
    assert_eq!(fix.applicability, Applicability::Safe);
    assert_eq!(fixed(src), "x = 1\n");
    assert_eq!(fixed("x = 1  # noqa: IMP001 reason\n"), "x = 1\n");
    assert_eq!(fixed("x = 1  # noqa\n"), "x = 1\n");
}

#[test]
fn partly_unused_comment_keeps_the_used_codes() {
    let src = "import os  # noqa: IMP001, IMP002\n";
    let ds = check(src);
    assert_eq!(codes(&ds), vec!["CG001"]);
    assert_eq!(fixed(src), "import os  # noqa: IMP001\n");
    assert_eq!(
        fixed("import os  # cellguard: ignore[IMP002,IMP001]\n"),
        "import os  # cellguard: ignore[IMP001]\n"
    );
    // Foreign codes are kept.
    assert_eq!(
        fixed("import os  # noqa: E501, IMP002, IMP001\n"),
        "import os  # noqa: E501, IMP001\n"
    );
}

#[test]
fn own_line_comment_is_removed_with_its_row() {
    assert_eq!(fixed("# noqa: IMP001\nx = 1\n"), "x = 1\n");
    assert_eq!(
        fixed("x = 1\n    # cellguard: ignore[IMP001]\ny = 2\n"),
        "x = 1\ny = 2\n"
    );
    assert_eq!(
        fixed("x = 1\r\n# cellguard: ignore-file[API001]\r\ny = 2\r\n"),
        "x = 1\r\ny = 2\r\n"
    );
    assert_eq!(fixed("x = 1\n# noqa: IMP001"), "x = 1");
}

#[test]
fn other_pragmas_in_the_comment_are_kept() {
    assert_eq!(
        fixed("x = 1  # type: ignore  # noqa: IMP001\n"),
        "x = 1  # type: ignore\n"
    );
    assert_eq!(
        fixed("x = 1  # noqa: IMP001  # type: ignore\n"),
        "x = 1  # type: ignore\n"
    );
    assert_eq!(
        fixed("x = 1  # noqa: IMP001 # type: ignore\n"),
        "x = 1  # type: ignore\n"
    );
}

#[test]
fn unknown_and_foreign_codes() {
    let src = "import os  # noqa: IMP001, API999\n";
    let ds = check(src);
    assert_eq!(codes(&ds), vec!["CG002"]);
    assert_eq!(fixed(src), "import os  # noqa: IMP001\n");
    // Another linter's codes are left alone.
    assert!(check("import os  # noqa: IMP001, E501, F401\n").is_empty());
    // Every entry of a cellguard comment must be a rule.
    let ds = check("import os  # cellguard: ignore[IMP001, E501]\n");
    assert_eq!(codes(&ds), vec!["CG002"]);
    let ds = check("x = 1  # cellguard: ignore[IMP01]\n");
    assert_eq!(ds[0].help.as_deref(), Some("Did you mean `IMP001`?"));
}

#[test]
fn duplicated_codes() {
    let src = "import os  # noqa: IMP001, IMP001\n";
    let ds = check(src);
    assert_eq!(codes(&ds), vec!["CG003"]);
    assert_eq!(fixed(src), "import os  # noqa: IMP001\n");
    let ds = check("import os  # cellguard: ignore[IMP001, blocked-import]\n");
    assert_eq!(codes(&ds), vec!["CG003"]);
}

#[test]
fn several_problems_in_one_comment_converge() {
    let src = "import os  # noqa: IMP001, IMP001, API999, IMP002\n";
    assert_eq!(codes(&check(src)), vec!["CG003", "CG002", "CG001"]);
    let out = fixed(src);
    assert_eq!(out, "import os  # noqa: IMP001\n");
    assert_eq!(fixed(&out), out);
}

#[test]
fn meta_codes_in_a_comment_silence_findings_about_it() {
    assert!(check("x = 1  # noqa: IMP001, CG001\n").is_empty());
    assert!(check("# cellguard: ignore-file[CG001]\nx = 1  # noqa: IMP001\n").is_empty());
}

#[test]
fn non_enabled_codes_are_unused() {
    let file = ConfigFile {
        lint: Some(crate::config::LintSection {
            allow_inline_suppressions: Some(vec!["IMP001".into()]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let ov = Overrides {
        ignore: vec!["IMP001".into()],
        ..Overrides::default()
    };
    let settings = Settings::resolve(&file, None, &ov).unwrap();
    let ds = lint::check_file(
        &SourceFile::new("a.py", "import os  # noqa: IMP001\n"),
        &settings,
        &KnowledgeBase::new(),
    );
    assert_eq!(codes(&ds), vec!["CG001"]);
    assert_eq!(
        ds[0].message,
        "Unused `noqa` directive (non-enabled: `IMP001`)"
    );
}

#[test]
fn meta_rules_can_be_ignored() {
    let ov = Overrides {
        ignore: vec!["CG".into()],
        ..Overrides::default()
    };
    let file = ConfigFile {
        lint: Some(crate::config::LintSection {
            allow_inline_suppressions: Some(vec!["IMP".into()]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let settings = Settings::resolve(&file, None, &ov).unwrap();
    let ds = lint::check_file(
        &SourceFile::new("a.py", "x = 1  # noqa: IMP001\n"),
        &settings,
        &KnowledgeBase::new(),
    );
    assert!(ds.is_empty());
}

#[test]
fn markdown_suppressions_and_fixes_stay_in_their_fence() {
    let md = "Text\n\n```python\nimport os  # noqa: IMP001\nx = 1  # noqa: IMP002\n```\n";
    let ds = check_in("doc.md", md);
    assert_eq!(codes(&ds), vec!["CG001"]);
    assert_eq!(ds[0].cell, Some(0));
    let out = crate::fix::fix_file(
        &SourceFile::new("doc.md", md),
        &trusted(),
        &KnowledgeBase::new(),
        Applicability::Safe,
    );
    assert_eq!(
        out.text,
        "Text\n\n```python\nimport os  # noqa: IMP001\nx = 1\n```\n"
    );
}

fn coverage_of(src: &str) -> Vec<Coverage> {
    let tree = parse::parse(src, None);
    CellSuppressions::new(src, &tree)
        .directives
        .into_iter()
        .map(|(_, c)| c)
        .collect()
}

#[test]
fn coverage_rows_of_multi_line_strings_and_continuations() {
    // After the closing quotes: the whole string.
    assert_eq!(
        coverage_of("x = 1\ny = \"\"\"\na\n\"\"\"  # noqa: API001\n"),
        vec![Coverage::Rows(1, 3)]
    );
    // A string closing on a row that does not end the logical line.
    assert_eq!(
        coverage_of("f(\"\"\"\na\n\"\"\",  # noqa: API001\n  2)\n"),
        vec![Coverage::Rows(0, 2)]
    );
    // Backslash continuation.
    assert_eq!(
        coverage_of("x = 1 + \\\n    2  # noqa\n"),
        vec![Coverage::Rows(0, 1)]
    );
    // Implicit concatenation inside brackets.
    assert_eq!(
        coverage_of("x = run(\n    \"A.b\"\n    \"c\"\n)  # noqa\n"),
        vec![Coverage::Rows(0, 3)]
    );
    // A compound statement header over two rows; the body is not covered.
    assert_eq!(
        coverage_of("if (a and\n        b):  # noqa\n    pass\n"),
        vec![Coverage::Rows(0, 1)]
    );
    // Own-line comment inside brackets covers the next row.
    assert_eq!(
        coverage_of("x = f(\n    # cellguard: ignore[API001]\n    run('a'),\n)\n"),
        vec![Coverage::Rows(2, 2)]
    );
    // Own-line comment at the end of the cell covers nothing.
    assert_eq!(
        coverage_of("x = 1\n# cellguard: ignore[API001]\n"),
        vec![Coverage::Nothing]
    );
}

#[test]
fn parse_comment_finds_every_directive() {
    let ds = parse_comment(
        "# type: ignore  # noqa: A001, B002 why # cellguard: ignore[IMP001]",
        10,
        false,
    );
    assert_eq!(ds.len(), 2);
    assert_eq!(ds[0].kind, DirectiveKind::Noqa);
    let texts: Vec<_> = ds[0].codes.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, vec!["A001", "B002"]);
    assert!(ds[0].codes.iter().all(|c| c.foreign));
    assert_eq!(ds[0].range, TextRange::new(10 + 16, 10 + 34));
    assert_eq!(ds[1].kind, DirectiveKind::Ignore);
    assert_eq!(ds[1].codes[0].rule.map(|r| r.code), Some("IMP001"));
}

fn add_noqa(src: &str) -> String {
    let tree = parse::parse(src, None);
    let ds = check(src);
    let edits = add_noqa_edits(src, &tree, &ds);
    let fix = Fix::safe("noqa", edits);
    let d = Diagnostic::new(&meta::UNUSED_SUPPRESSION, TextRange::default(), "").with_fix(fix);
    match crate::fix::apply_fixes(src, &[d], Applicability::Safe) {
        Some(p) => p.text,
        None => src.to_string(),
    }
}

#[test]
fn add_noqa_places_comments_at_the_end_of_the_logical_line() {
    assert_eq!(add_noqa("import os\n"), "import os  # noqa: IMP001\n");
    assert_eq!(
        add_noqa("import os\r\nx = 1\r\n"),
        "import os  # noqa: IMP001\r\nx = 1\r\n"
    );
    assert_eq!(add_noqa("import os"), "import os  # noqa: IMP001");
    assert_eq!(
        add_noqa("import os, \\\n    json\n"),
        "import os, \\\n    json  # noqa: IMP001, IMP003\n"
    );
    assert_eq!(
        add_noqa("from os import (\n    path,\n)\n"),
        "from os import (\n    path,\n)  # noqa: IMP001\n"
    );
    assert_eq!(
        add_noqa("import os  # keep me\n"),
        "import os  # noqa: IMP001  # keep me\n"
    );
    assert_eq!(
        add_noqa("import os, sys  # noqa: E501\n"),
        "import os, sys  # noqa: E501, IMP001\n"
    );
    assert_eq!(
        add_noqa("x = '''\n# not a comment\n'''; import os\n"),
        "x = '''\n# not a comment\n'''; import os  # noqa: IMP001\n"
    );
}

#[test]
fn add_noqa_is_idempotent_and_suppresses() {
    for src in [
        "import os\nimport json\n",
        "from os import (\n    path,\n)\nimport sys  # why\n",
        "s = 'é😀'; import os\n",
    ] {
        let once = add_noqa(src);
        assert!(check(&once).is_empty(), "{once}: {:?}", check(&once));
        assert_eq!(add_noqa(&once), once);
    }
}

#[test]
fn add_noqa_skips_cells_with_syntax_errors() {
    assert_eq!(add_noqa("import os\nx = (\n"), "import os\nx = (\n");
}

#[test]
fn add_noqa_on_a_file_handles_markdown_cells() {
    let md = "Intro\n\n```python\nimport os\nx = 1\n```\n\n```py\nimport json  # noqa: IMP003\nimport sys\n```\n";
    let out = super::add_noqa(
        &SourceFile::new("doc.md", md),
        &trusted(),
        &KnowledgeBase::new(),
    );
    assert_eq!(
        out.text,
        "Intro\n\n```python\nimport os  # noqa: IMP001\nx = 1\n```\n\n```py\nimport json  # noqa: IMP003\nimport sys  # noqa: IMP001\n```\n"
    );
    assert_eq!(out.added, 2);
    assert_eq!(out.skipped, 0);
    assert!(check_in("doc.md", &out.text).is_empty());
    let again = super::add_noqa(
        &SourceFile::new("doc.md", &out.text),
        &trusted(),
        &KnowledgeBase::new(),
    );
    assert_eq!(again.text, out.text);
    assert_eq!(again.added, 0);
}

#[test]
fn add_noqa_reports_cells_it_cannot_touch() {
    let out = super::add_noqa(
        &SourceFile::new("a.py", "import os\nx = (\n"),
        &trusted(),
        &KnowledgeBase::new(),
    );
    assert_eq!(out.text, "import os\nx = (\n");
    assert_eq!(out.added, 0);
    assert_eq!(out.skipped, 2);
}

#[test]
fn add_noqa_inside_a_json_envelope() {
    let src = "{\"code\": \"import os\\nx = 1\\n\"}";
    let out = super::add_noqa(
        &SourceFile::new("r.json", src),
        &trusted(),
        &KnowledgeBase::new(),
    );
    assert_eq!(
        out.text,
        "{\"code\": \"import os  # noqa: IMP001\\nx = 1\\n\"}"
    );
    assert!(check_in("r.json", &out.text).is_empty());
}

#[test]
fn noqa_edit_for_one_diagnostic_in_file_coordinates() {
    let md = "Intro\n\n```python\nimport os, sys\n```\n";
    let file = SourceFile::new("doc.md", md);
    let ds = check_in("doc.md", md);
    assert_eq!(codes(&ds), vec!["IMP001", "IMP001"]);
    let e = noqa_edit(&file, &trusted(), &ds[1]).unwrap();
    let end = md.find("sys").unwrap() + 3;
    assert_eq!(e, Edit::insert(end, "  # noqa: IMP001"));
    let py = "import os  # noqa: E501\n";
    let ds = check(py);
    let e = noqa_edit(&SourceFile::new("a.py", py), &trusted(), &ds[0]).unwrap();
    assert_eq!(e, Edit::replace(TextRange::new(19, 23), "E501, IMP001"));
}

// ---- security rules are not suppressible from inside the cell (issue 4, G25) --------------

fn check_with(settings: &Settings, src: &str) -> Vec<Diagnostic> {
    lint::check_file(
        &SourceFile::new("cell.py", src),
        settings,
        &KnowledgeBase::new(),
    )
}

#[test]
fn security_findings_survive_every_comment_form_by_default() {
    let s = untrusted();
    for src in [
        "x = json.codecs  # noqa\n",
        "x = json.codecs  # noqa: SBX005\n",
        "x = json.codecs  # noqa: SBX005, CG005\n",
        "x = json.codecs  # cellguard: ignore[SBX005]\n",
        "x = json.codecs  # cellguard: ignore[SBX005, CG005, CG001]\n",
        "# cellguard: ignore[SBX005]\nx = json.codecs\n",
        "# cellguard: ignore-file[SBX005]\nx = json.codecs\n",
        "# cellguard: ignore-file[SBX005, CG005]\nx = json.codecs\n",
        "# cellguard: ignore-file[CG005]\nx = json.codecs  # noqa: SBX005\n",
    ] {
        let ds = check_with(&s, src);
        let c = codes(&ds);
        assert!(c.contains(&"SBX005"), "{src}: {c:?}");
        assert!(c.contains(&"CG005"), "{src}: {c:?}");
        assert!(
            ds.iter()
                .all(|d| d.rule.code != "CG005" || d.severity == crate::Severity::Error),
            "{src}"
        );
    }
    // The import allowlist's security findings too.
    let ds = check_with(&s, "import os  # noqa: IMP001\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG005"]);
    assert_eq!(
        ds[1].message,
        "A `noqa` directive in the cell cannot suppress security rule `IMP001`: the cell's author is the party these rules guard against, so the finding stays reported"
    );
    let ds = check_with(
        &s,
        "from . import secrets  # cellguard: ignore[relative-import]\n",
    );
    assert!(
        codes(&ds).contains(&"IMP002") && codes(&ds).contains(&"CG005"),
        "{ds:?}"
    );
}

#[test]
fn a_security_code_in_a_comment_is_reported_even_without_a_finding() {
    let ds = check_with(&untrusted(), "x = 1  # noqa: SBX001\n");
    assert_eq!(codes(&ds), vec!["CG005"]);
    // Its fix removes the code (the comment when nothing else is left).
    let out = crate::fix::fix_file(
        &SourceFile::new("cell.py", "x = json.codecs  # noqa: SBX005, E501\n"),
        &untrusted(),
        &KnowledgeBase::new(),
        Applicability::Safe,
    );
    assert_eq!(out.text, "x = json.codecs  # noqa: E501\n");
}

#[test]
fn other_rules_stay_suppressible_next_to_security_codes() {
    // IMP003 (import fails at runtime) is no security rule.
    let ds = check_with(&untrusted(), "import json  # noqa: IMP003\n");
    assert!(ds.is_empty(), "{ds:?}");
    let ds = check_with(&untrusted(), "import os, json  # noqa: IMP001, IMP003\n");
    assert_eq!(codes(&ds), vec!["IMP001", "CG005"]);
}

#[test]
fn allow_inline_suppressions_opts_trusted_files_in() {
    for allow in [&["SBX005"][..], &["SBX"], &["ALL"], &["module-escape"]] {
        let s = settings_with(allow, &[]);
        assert!(
            check_with(&s, "x = json.codecs  # noqa: SBX005\n").is_empty(),
            "{allow:?}"
        );
        assert!(
            check_with(&s, "x = json.codecs  # noqa\n").is_empty(),
            "{allow:?}"
        );
    }
    // Opting in one code leaves the others protected.
    let s = settings_with(&["SBX005"], &[]);
    assert_eq!(
        codes(&check_with(&s, "import os  # noqa: IMP001\n")),
        vec!["IMP001", "CG005"]
    );
}

#[test]
fn the_configuration_still_turns_security_rules_off() {
    let s = settings_with(&[], &["SBX005"]);
    assert!(check_with(&s, "x = json.codecs\n").is_empty());
    let s = settings_with(&[], &["CG005"]);
    assert_eq!(
        codes(&check_with(&s, "x = json.codecs  # noqa\n")),
        vec!["SBX005"]
    );
}

#[test]
fn add_noqa_and_noqa_edit_leave_security_findings_alone() {
    let out = super::add_noqa(
        &SourceFile::new("a.py", "import os\nimport json\n"),
        &untrusted(),
        &KnowledgeBase::new(),
    );
    assert_eq!(out.text, "import os\nimport json  # noqa: IMP003\n");
    assert_eq!(out.added, 1);
    assert_eq!(out.skipped, 1);
    let file = SourceFile::new("a.py", "import os\n");
    let ds = check_with(&untrusted(), "import os\n");
    assert_eq!(codes(&ds), vec!["IMP001"]);
    assert_eq!(noqa_edit(&file, &untrusted(), &ds[0]), None);
    assert!(noqa_edit(&file, &trusted(), &ds[0]).is_some());
}

// ---- syntax errors are never suppressible by a comment (N2-2) -------------------------------

/// (code, row) of every finding of `src` under `settings`.
fn found_rows(src: &str, settings: &Settings) -> Vec<(&'static str, usize)> {
    let file = SourceFile::new("cell.py", src);
    lint::check_file(&file, settings, &KnowledgeBase::new())
        .into_iter()
        .map(|d| (d.rule.code, file.location(d.range.start).row))
        .collect()
}

#[test]
fn a_syntax_error_survives_every_comment_form_even_in_trusted_files() {
    for settings in [untrusted(), trusted()] {
        // Blanket `noqa`: the syntax error stays, and the comment suppressed nothing.
        let f = found_rows("r = await run(\"get_x\"  # noqa\n", &settings);
        assert!(f.contains(&("SYN001", 1)), "{f:?}");
        assert!(!f.iter().any(|c| c.0 == "CG005"), "{f:?}");
        // Named on the line, and file-wide: reported as unused (CG001), never as CG005.
        for src in [
            "def f(:  # noqa: SYN001\n    pass\n",
            "def f(:  # cellguard: ignore[SYN001]\n    pass\n",
            "# cellguard: ignore-file[SYN001]\nr = await run(\"get_x\"\n",
        ] {
            let f = found_rows(src, &settings);
            let codes: Vec<&str> = f.iter().map(|c| c.0).collect();
            assert!(codes.contains(&"SYN001"), "{src}: {f:?}");
            assert!(codes.contains(&"CG001"), "{src}: {f:?}");
            assert!(!codes.contains(&"CG005"), "{src}: {f:?}");
        }
    }
    // The configuration still turns it off.
    let ignored = settings_with(&[], &["SYN001"]);
    let f = found_rows("def f(:  # noqa\n    pass\n", &ignored);
    assert!(!f.iter().any(|c| c.0 == "SYN001"), "{f:?}");
    // Nothing offers a comment for it.
    let src = "def f(:\n    pass\n";
    let file = SourceFile::new("cell.py", src);
    let settings = trusted();
    let d = lint::check_file(&file, &settings, &KnowledgeBase::new())
        .into_iter()
        .find(|d| d.rule.code == "SYN001")
        .expect("SYN001");
    assert!(noqa_edit(&file, &settings, &d).is_none());
}
