//! SBX semantics on small cells: ordinary code stays clean, aliases and folding are followed,
//! flow-sensitive shadowing, configuration (allowlist, deny-members) and config warnings.

use cellguard_lints::config::{ConfigFile, Overrides, Settings};
use cellguard_lints::{check_file, KnowledgeBase, SourceFile};

fn settings(config: &str) -> Settings {
    let file: ConfigFile = toml::from_str(config).expect("config parses");
    Settings::resolve(&file, None, &Overrides::default()).expect("settings")
}

fn sbx(src: &str, config: &str) -> Vec<String> {
    check_file(
        &SourceFile::new("cell.py", src),
        &settings(config),
        &KnowledgeBase::new(),
    )
    .into_iter()
    .filter(|d| d.rule.code.starts_with("SBX"))
    .map(|d| format!("{} {}", d.rule.code, &src[d.range.as_range()]))
    .collect()
}

const SMOL: &str = "dialect = \"functions\"\n";

#[test]
fn ordinary_code_is_clean() {
    let colony = [
        "data = json.loads('{\"a\": 1}')\nprint(json.dumps(data, indent=2, default=str))\n",
        "text = re.sub(r\"\\s+\", \" \", \"a  b\")\nm = re.compile(\"a+\").match(text)\n",
        "print(\"{}: {}\".format(\"k\", 1), \"{name}\".format(name=\"x\"), \"%s=%d\" % (\"a\", 1))\n",
        "label = \"{0[name]} {0[age]}\".format({\"name\": \"a\", \"age\": 1})\n",
        "r = await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_id=\"a\")\nif r.success:\n    results[\"status\"] = r.output\n",
        "try:\n    x = 1 / 0\nexcept Exception as e:\n    log(f\"{type(e).__name__}: {e}\")\n",
        "value = getattr(r, \"output\", None)\nok = hasattr(r, \"success\")\n",
        "for name in [\"output\", \"error\"]:\n    print(getattr(r, name, None))\n",
        "is_iterable = hasattr(x, \"__iter__\")\nn = len(x) if hasattr(x, \"__len__\") else 0\n",
        "xs = sorted(items, key=lambda d: d[\"score\"])\nbest = max(scores, key=scores.get)\n",
        "total = functools.reduce(lambda a, b: a + b, [1, 2, 3])\npairs = list(itertools.combinations([1, 2, 3], 2))\n",
        "root = math.sqrt(2) * math.pi\n",
        "counts = Counter(\"hello\")\ngroups = defaultdict(list)\n",
        "now = datetime.datetime.now().isoformat()\nabc = collections.abc.Mapping\n",
        "err = json.decoder.JSONDecodeError\nenc = json.encoder.JSONEncoder\n",
        "mock = iter([1, 2]).__next__\nprint(mock(), fn.__name__, fn.__doc__, pydantic.__version__)\n",
        "await asyncio.sleep(0)\nresults = await asyncio.gather(run(\"a\"), run(\"b\"))\n",
        "cursor.execute(\"SELECT 1\")\nframe_count = df.eval(\"a + b\")\n",
        "if __name__ == \"__main__\":\n    print(\"main\")\n",
        "template = \"{x}\"\nprint(template.format(x=1))\n",
        // Receivers cellguard cannot resolve: ordinary attributes, private ones included.
        "class Cache:\n    def get(self, k):\n        return self._cache.get(k) or self._store[k]\n",
        "print(resp.code, resp.time, event.path, cfg.random, obj._private, r.output.modules)\n",
        "match point:\n    case Point(x=0, y=yy):\n        print(yy)\n    case {\"kind\": k}:\n        print(k)\n",
        "match r:\n    case Result(success=True, output=out):\n        results[\"x\"] = out\n",
        "label = \"{0.name} {p.x:>4}\".format(item, p=point)\n",
    ];
    for src in colony {
        assert_eq!(sbx(src, ""), Vec::<String>::new(), "{src}");
    }
    let functions = [
        "import random, statistics, time, queue, stat, unicodedata\nprint(random.randint(1, 6), statistics.mean([1, 2]), time.time())\nq = queue.Queue()\nprint(stat.S_ISDIR(0), unicodedata.name(\"a\"))\n",
        "import collections\nfrom collections import OrderedDict, namedtuple\nP = namedtuple(\"P\", \"x y\")\n",
        "class Point:\n    def __init__(self, x):\n        super().__init__()\n        self.x = x\n    def __repr__(self):\n        return f\"Point({self.x})\"\n    def __str__(self):\n        return self.__repr__()\n",
        "from dataclasses import dataclass, field\n@dataclass\nclass Item:\n    name: str = \"\"\n    tags: list = field(default_factory=list)\n",
        "class A:\n    __slots__ = (\"a\",)\n    __hash__ = None\n",
        "web_search(query=\"__init__ files\")\nfinal_answer(\"done\")\n",
        "import math\nfrom math import sqrt as s\nprint(s(4), math.floor(1.5))\n",
        // Class bodies binding ordinary names by every form, and data dunders.
        "class A:\n    __slots__ = (\"a\",)\n    __match_args__ = (\"a\",)\n    x, y = 1, 2\n    for i in range(3):\n        pass\n    if (n := 3):\n        pass\n    from math import floor as fl\n",
        "import functools, operator\ndef deco(f):\n    @functools.wraps(f)\n    def w(*a):\n        return f(*a)\n    return w\nw2 = functools.update_wrapper(lambda: 0, deco, assigned=(\"__name__\", \"__doc__\"))\nkey = operator.attrgetter(\"name\", \"_rank\")\ncall = operator.methodcaller(\"strip\")\n",
        "B = type(\"B\", (), {\"x\": 1})\nns = {}\nns[\"y\"] = 2\nC = type(\"C\", (), ns)\nsetattr(B, \"debug\", True)\n",
    ];
    for src in functions {
        assert_eq!(sbx(src, SMOL), Vec::<String>::new(), "{src}");
    }
    // `os.path` allowed: its path-string API is clean; its probes of the host's file system
    // and working directory are default `deny-members`.
    let ospath = "dialect = \"functions\"\n[lint.imports]\nallow = [\"os.path\"]\n";
    assert_eq!(
        sbx(
            "import os.path\np = os.path.join(\"a\", \"b\")\nq = os.path.splitext(p)\n",
            ospath
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        sbx("import os.path\nq = os.path.exists(\"/root\")\n", ospath),
        vec!["SBX007 exists".to_string()]
    );
}

#[test]
fn aliases_and_folding_are_followed() {
    let cases: &[(&str, &str)] = &[
        (
            "f = getattr\nf(x, \"__class__\")\n",
            "SBX002 f(x, \"__class__\")",
        ),
        (
            "(g := getattr)\ng(x, \"__dict__\")\n",
            "SBX002 g(x, \"__dict__\")",
        ),
        (
            "def h(fn=getattr):\n    return fn(x, \"__globals__\")\n",
            "SBX002 fn(x, \"__globals__\")",
        ),
        (
            "pick = lambda: getattr\npick()(x, \"__class__\")\n",
            "SBX002 pick()(x, \"__class__\")",
        ),
        (
            "def apply(fn, name):\n    return fn(x, name)\napply(getattr, \"__class__\")\n",
            "SBX002 fn(x, name)",
        ),
        ("a, b = getattr, \"__base__\"\na(x, b)\n", "SBX002 a(x, b)"),
        (
            "[getattr(o, n) for n in [\"__class__\"]]\n",
            "SBX002 getattr(o, n)",
        ),
        (
            "n = \"__cla\"\nn += \"ss__\"\ngetattr(x, n)\n",
            "SBX002 getattr(x, n)",
        ),
        (
            "getattr(x, \"_\" \"_class__\")\n",
            "SBX002 getattr(x, \"_\" \"_class__\")",
        ),
        (
            "getattr(x, \"__CLASS__\".lower())\n",
            "SBX002 getattr(x, \"__CLASS__\".lower())",
        ),
        (
            "getattr(x, \"__class__ \".strip())\n",
            "SBX002 getattr(x, \"__class__ \".strip())",
        ),
        (
            "getattr(x, \"{}class{}\".format(\"__\", \"__\"))\n",
            "SBX002 getattr(x, \"{}class{}\".format(\"__\", \"__\"))",
        ),
        (
            "getattr(x, b\"__class__\".decode())\n",
            "SBX002 getattr(x, b\"__class__\".decode())",
        ),
        (
            "getattr(x, \"\".join(reversed(\"__ssalc__\")))\n",
            "SBX002 getattr(x, \"\".join(reversed(\"__ssalc__\")))",
        ),
        (
            "getattr(x, \"__x__\".replace(\"x\", \"class\"))\n",
            "SBX002 getattr(x, \"__x__\".replace(\"x\", \"class\"))",
        ),
        ("b = __builtins__\nb.eval(\"1\")\n", "SBX003 b.eval"),
        ("e = eval\nlist(map(e, [\"1\"]))\n", "SBX003 e"),
    ];
    for (src, want) in cases {
        let got = sbx(src, "");
        assert!(
            got.iter().any(|g| g == want),
            "{src}\nwant {want}\ngot {got:?}"
        );
    }
}

#[test]
fn shadowing_and_flow() {
    // A cell's own `open` is not the builtin.
    assert_eq!(
        sbx("def open(p):\n    return p\nopen(\"x\")\n", ""),
        Vec::<String>::new()
    );
    // Rebinding after use: the earlier call is the builtin.
    assert_eq!(sbx("eval(\"1\")\neval = print\n", ""), vec!["SBX003 eval"]);
    // Rebinding inside a branch keeps the builtin possible afterwards.
    let got = sbx("g = print\nif cond:\n    g = eval\ng(\"1\")\n", "");
    assert!(got.contains(&"SBX003 g".to_string()), "{got:?}");
    // A loop body sees bindings from its own later iterations.
    let got = sbx(
        "f = print\nfor _ in range(2):\n    f(x, \"__class__\")\n    f = getattr\n",
        "",
    );
    assert!(got.iter().any(|g| g.starts_with("SBX002")), "{got:?}");
}

#[test]
fn allowlist_and_deny_members_are_configurable() {
    // `collections` allowed and imported: `collections._sys` escapes; with `sys` allowed too,
    // the private attribute is still reported.
    assert_eq!(
        sbx("import collections\ncollections._sys\n", SMOL),
        vec!["SBX005 _sys"]
    );
    // A module outside the allowlist reached from an allowed one.
    assert_eq!(sbx("re.enum\n", ""), vec!["SBX005 enum"]);
    // Once `enum` is allowed it is not an escape.
    assert_eq!(
        sbx("re.enum\n", "[lint.imports]\nextend-allow = [\"enum\"]\n"),
        Vec::<String>::new()
    );
    // Deny-members: replaced list, globs.
    let cfg = "[lint.imports]\ndeny-members = [\"json.load*\"]\n";
    assert_eq!(sbx("json.loads(\"1\")\n", cfg), vec!["SBX007 loads"]);
    assert_eq!(
        sbx(
            "import asyncio\nasyncio.create_subprocess_shell(\"x\")\n",
            cfg
        ),
        Vec::<String>::new()
    );
    // The default list holds the asyncio subprocess API under all its names.
    assert_eq!(
        sbx(
            "import asyncio\nasyncio.subprocess.create_subprocess_shell(\"x\")\n",
            ""
        ),
        vec!["SBX007 create_subprocess_shell"]
    );
}

#[test]
fn config_warnings_surface_with_locations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cellguard.toml");
    std::fs::write(
        &path,
        "[lint.imports]\nallow = [\"json\", \"*\"]\nextend-allow = [\"ctypes\"]\ndeny-members = [\"nodot\"]\n",
    )
    .unwrap();
    let loaded = cellguard_lints::config::load_file(&path).unwrap().unwrap();
    let s = Settings::resolve(&loaded.file, Some(&loaded), &Overrides::default()).unwrap();
    let w: Vec<String> = s.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w.len(), 4, "{w:?}");
    assert!(w[0].ends_with(":2:19: `*` in the import allowlist allows every module, including `os` and `subprocess`"), "{}", w[0]);
    assert!(
        w[1].contains(
            ":3:18: `ctypes` in the import allowlist lets in a module that reaches the host"
        ),
        "{}",
        w[1]
    );
    assert!(
        w[2].contains(":4:18: deny-members entry `nodot` names no member"),
        "{}",
        w[2]
    );
    // Replacing the deny list drops the defaults of allowed modules (`*` allows them all).
    assert!(
        w[3].contains(":4:16: `deny-members` replaces the default deny list")
            && w[3].contains("`asyncio.open_connection`"),
        "{}",
        w[3]
    );
    // The default configuration has no warnings.
    assert!(Settings::default().warnings.is_empty());
}

#[test]
fn identifiers_are_read_as_python_reads_them() {
    // PEP 3131: identifiers are NFKC-normalised, so these are `eval` and `__class__`.
    assert_eq!(sbx("ｅｖａｌ(\"1\")\n", ""), vec!["SBX003 ｅｖａｌ"]);
    assert_eq!(
        sbx("k = x.__ｃｌａｓｓ__\n", ""),
        vec!["SBX002 __ｃｌａｓｓ__"]
    );
    // Escapes in folded strings.
    let got = sbx(
        "getattr(x, \"\\N{LOW LINE}\\N{LOW LINE}class\\N{LOW LINE}\\N{LOW LINE}\")\n",
        "",
    );
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with("SBX002"), "{got:?}");
    assert!(sbx("getattr(x, \"\\x5f\\x5fclass\\x5f\\x5f\")\n", "")[0].starts_with("SBX002"));
    // An escape the folding cannot decode makes the name computed, not wrong.
    assert!(sbx("getattr(x, \"\\N{BLACK STAR}\")\n", "")[0].starts_with("SBX004"));
}

#[test]
fn code_strings_are_analysed_where_they_go() {
    // Findings inside a plain literal point at their own position in the string.
    let got = sbx("exec(\"__import__('o' + 's').system('id')\")\n", "");
    assert_eq!(
        got,
        vec!["SBX003 exec".to_string(), "SBX001 __import__".to_string()]
    );
    // A literal with escapes cannot be mapped character by character: the whole string.
    let got = sbx("exec(\"__import__('o' + 's')\\n\")\n", "");
    assert_eq!(
        got,
        vec![
            "SBX003 exec".to_string(),
            "SBX001 \"__import__('o' + 's')\\n\"".to_string()
        ]
    );
    let got = sbx(
        "src = \"().__class__\"\neval(compile(src, \"<s>\", \"eval\"))\n",
        "",
    );
    assert!(got.contains(&"SBX002 src".to_string()), "{got:?}");
    // A tool's `code=` argument is code too; harmless code stays clean.
    let got = sbx(
        "python_interpreter(code=\"getattr(x, '__dict__')\")\n",
        SMOL,
    );
    assert_eq!(got, vec!["SBX002 getattr(x, '__dict__')".to_string()]);
    assert_eq!(
        sbx("python_interpreter(code=\"2*3.6452\")\n", SMOL),
        Vec::<String>::new()
    );
    // Import machinery reached without importing anything.
    let got = sbx(
        "imp = ().__class__.__base__.__subclasses__()[84]\nimp().load_module(\"os\")\n",
        "",
    );
    assert!(got.contains(&"SBX001 load_module".to_string()), "{got:?}");
}

#[test]
fn blocked_modules_still_leak_private_attributes() {
    // `random` is outside Colony's allowlist: the import is IMP001, and the private attribute is
    // still an escape (also when an earlier cell imported it).
    assert_eq!(sbx("import random\nrandom._os\n", ""), vec!["SBX005 _os"]);
    assert_eq!(sbx("random._os\n", ""), vec!["SBX005 _os"]);
    // A harmless blocked module that hands out a host module.
    assert_eq!(
        sbx("import dataclasses\ndataclasses.inspect\n", SMOL),
        vec!["SBX005 inspect"]
    );
    // A name bound to the builtins module by a dynamic import is still the builtins module.
    assert_eq!(
        sbx("b = __import__(\"builtins\")\nf = b\n", SMOL),
        vec!["SBX001 __import__", "SBX003 b"]
    );
    // A blocked host module is IMP001's business: its own API adds nothing.
    assert_eq!(
        sbx("import os\nos.path.join(\"a\", \"b\")\n", SMOL),
        Vec::<String>::new()
    );
}
