//! `SYN001` reproduces the `SyntaxError` CPython 3.11 raises (message and line) for every case of
//! `fixtures/syntax/cpython311_messages.json`, whose expected strings come from CPython 3.11.7.

use cellguard_lints::parse;
use cellguard_lints::rules::syntax::syntax_error;
use serde_json::Value;

#[test]
fn messages_match_cpython_3_11() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/syntax/cpython311_messages.json"
    );
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() > 250);
    let mut failures = Vec::new();
    for case in &cases {
        let src = case["source"].as_str().unwrap();
        let want = case["cpython"].as_str();
        let tree = parse::parse(src, None);
        let got = syntax_error(src, tree.root_node());
        if let Some(e) = &got {
            assert!(e.range.end <= src.len(), "{src:?}: {e:?}");
            assert!(src.is_char_boundary(e.range.start) && src.is_char_boundary(e.range.end));
        }
        let got = got.map(|e| e.cpython_str());
        if got.as_deref() != want {
            failures.push(format!("{src:?}\n  cpython: {want:?}\n  ours:    {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
