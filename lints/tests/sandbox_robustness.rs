//! The SBX analysis never panics and stays bounded on pathological cells: deep nesting, long
//! attribute chains, huge repetitions, malformed format strings, odd identifiers, random text.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::{check_file, KnowledgeBase, SourceFile};
use proptest::prelude::*;

fn run(src: &str) -> Vec<&'static str> {
    let file: ConfigFile = toml::from_str("dialect = \"functions\"\n").unwrap();
    let settings = Settings::resolve(&file, None, &Overrides::default()).unwrap();
    check_file(
        &SourceFile::new("cell.py", src),
        &settings,
        &KnowledgeBase::new(),
    )
    .into_iter()
    .map(|d| d.rule.code)
    .filter(|c| c.starts_with("SBX"))
    .collect()
}

#[test]
fn pathological_cells_complete() {
    let n = 1500;
    let cases = vec![
        format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n)),
        format!("x = {}\"a\"{}\n", "[".repeat(n), "]".repeat(n)),
        format!("x = {}\n", vec!["\"a\""; n].join(" + ")),
        format!(
            "x = {}\n",
            (0..n)
                .map(|i| format!("({i}, \"v\")"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "x = {}x{}\n",
            "getattr(".repeat(300),
            ", \"a\")".repeat(300)
        ),
        format!("x = json{}\n", ".a".repeat(n)),
        format!("x = collections{}\n", "._sys".repeat(200)),
        format!("x = f{}\n", "()".repeat(n)),
        format!("x = d{}\n", "[\"k\"]".repeat(n)),
        format!(
            "{} = 1\n",
            (0..n)
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!("({}) = 1\n", "(".repeat(200) + "a" + &")".repeat(200)),
        "s = \"a\" * 10 ** 12\ngetattr(x, s)\n".into(),
        "s = \"__\" * 99999999999\n".into(),
        "n = 9223372036854775807 + 1\ns = chr(n)\nt = chr(-1)\nu = \"x\"[10**20]\n".into(),
        "s = \"abc\"[::0]\nt = \"abc\"[::-9223372036854775807]\n".into(),
        format!("\"{}\".format(x)\n", "{".repeat(n)),
        format!("\"{}\".format(x)\n", "{0:{1:{2:{3:{4}}}}}".repeat(50)),
        format!("\"{{0{}}}\".format(x)\n", "[".repeat(n)),
        format!("\"{}{}\".format(x)\n", "{0:".repeat(3000), "}".repeat(3000)),
        format!("{} = 1\n", "[".repeat(2000) + "a" + &"]".repeat(2000)),
        "\"{0!}\".format(x)\n\"{:}\".format(x)\n\"{0.}\".format(x)\n\"{0[}\".format(x)\n".into(),
        "名前 = getattr\n名前(x, \"__class__\")\n".into(),
        "x = b'\\xff\\xfe'.decode()\ny = bytes([256, -1]).decode()\nz = bytes.fromhex('zz')\n"
            .into(),
        format!(
            "def f():\n{}\n",
            (0..60)
                .map(|i| format!("{}if x:", " ".repeat(4 * (i + 1))))
                .collect::<Vec<_>>()
                .join("\n")
                + &format!("\n{}pass", " ".repeat(4 * 61))
        ),
        format!(
            "{}\n",
            (0..n)
                .map(|i| format!("v{i} = v{} + 1", i.saturating_sub(1)))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        format!("i = 0\nwhile i < 10:\n    i += 1\n    s = s + \"_\"\n    getattr(x, s)\n"),
        "def f(*a, **k): return f(*a, **k)\nf(f, f)\n".into(),
        "lambda: (yield)\nasync def g():\n    await g()\n    yield\n".into(),
        "match x:\n    case {\"__class__\": k, **rest}: pass\n    case [*_, __dunder__]: pass\n"
            .into(),
        "class A(metaclass=type):\n    __slots__ = ()\n    def __init_subclass__(cls): pass\n"
            .into(),
        "x: getattr = 1\ndel (a, b)[0]\nglobal q\nnonlocal r\n".into(),
        "exec \"print 1\"\nprint >> f, 1\n".into(),
    ];
    for src in &cases {
        let _ = run(src);
    }
    // Folding still works under these limits.
    assert_eq!(
        run("getattr(x, \"_\" * 2 + \"class\" + \"_\" * 2)\n"),
        vec!["SBX002"]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random sequences of Python-ish tokens (many of them sandbox-relevant) never panic.
    #[test]
    fn random_token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(vec![
        "getattr", "(", ")", "[", "]", "{", "}", ",", ".", "=", "+", "*", "%", ":", "\n", " ",
        "\"__class__\"", "'_os'", "__builtins__", "eval", "vars", "x", "1", "-1", "lambda", "for",
        "in", "if", "else", "def", "class", "return", "import", "from", "collections", "_sys",
        "json", "\"{0.__globals__}\"", "format", "join", "\"\"", ":=", "yield", "await", "**",
        "__import__", "sys", "modules", "tb_frame", "async", "with", "as", "try", "except",
    ]), 0..80)) {
        let src: String = tokens.concat();
        let _ = run(&src);
    }

    /// Arbitrary text (including invalid Python) never panics.
    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,400}") {
        let _ = run(&src);
    }
}
