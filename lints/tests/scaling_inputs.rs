//! Generated inputs that once exhausted the stack or memory, or took quadratic time: their
//! diagnostics must come out right (how fast is measured by `bench/`, never here). The small
//! versions of these shapes are fixtures in `fixtures/cases/scaling/`.

use cellguard_lints::{check_file, Diagnostic, KnowledgeBase, Settings, SourceFile};

fn lint(src: &str) -> Vec<Diagnostic> {
    // A pool of threads with small stacks: recursion proportional to the input would overflow
    // them. `install` keeps the rules' own `rayon::join` on this pool, not on the global one
    // with its 64 MiB stacks (`cellguard_lints::workers`).
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(1 << 20)
        .build()
        .unwrap();
    pool.install(|| {
        let settings = Settings::default();
        check_file(
            &SourceFile::new("cell.py", src),
            &settings,
            &KnowledgeBase::new(),
        )
    })
}

fn message<'d>(ds: &'d [Diagnostic], code: &str) -> &'d str {
    ds.iter()
        .find(|d| d.rule.code == code)
        .map(|d| d.message.as_str())
        .unwrap_or_else(|| {
            panic!(
                "no {code} in {:?}",
                ds.iter().map(|d| d.rule.code).collect::<Vec<_>>()
            )
        })
}

/// A 20,000-branch `elif` chain whose conditions dispatch: the longest path evaluates every
/// condition and the last body. The chain was counted by recursion, one level per `elif`, which
/// overflowed the stack.
#[test]
fn long_elif_chain() {
    let n = 20_000;
    let mut src = String::from("if await run(\"A.b.c\"):\n    x = 0\n");
    for i in 1..n {
        src.push_str(&format!("elif await run(\"A.b.c\"):\n    x = {i}\n"));
    }
    src.push_str("else:\n    await run(\"A.b.c\")\n");
    let ds = lint(&src);
    assert_eq!(
        message(&ds, "SHP001"),
        format!(
            "Too many actions in one iteration: {} run() calls, maximum is 3 (on the longest execution path)",
            n + 1
        )
    );
}

/// Helpers calling the previous helper eight times, 23 deep: 8^23 = 2^69 actions on the longest
/// path. One list entry per action exhausted memory; the count now saturates.
#[test]
fn helper_fan_out_saturates() {
    let mut src = String::from("async def h0():\n");
    src.push_str(&"    await run(\"A.b.c\")\n".repeat(8));
    for k in 1..23 {
        src.push_str(&format!("async def h{k}():\n"));
        src.push_str(&format!("    await h{}()\n", k - 1).repeat(8));
    }
    src.push_str("await h22()\n");
    let ds = lint(&src);
    assert_eq!(
        message(&ds, "SHP001"),
        format!(
            "Too many actions in one iteration: {} run() calls, maximum is 3 (on the longest execution path)",
            usize::MAX
        )
    );
    let d = ds.iter().find(|d| d.rule.code == "SHP001").unwrap();
    assert_eq!(&src[d.range.as_range()], "h22()");
}

/// Thousands of stacked own-line suppressions: each looked at every comment row below it.
#[test]
fn stacked_own_line_suppressions() {
    let n = 3_000;
    let mut src = String::new();
    for _ in 0..n {
        src.push_str("# cellguard: ignore[IMP003]\n");
    }
    src.push_str("import json\n");
    let ds = lint(&src);
    // The statement's import is suppressed (by the last comment, and by every one above it,
    // since only comment rows stand between them and the statement): no IMP001 and no unused
    // suppression.
    assert!(ds.iter().all(|d| d.rule.code != "IMP003"), "{ds:?}");
    assert!(ds.iter().all(|d| d.rule.code != "CG001"), "{ds:?}");
}

/// A thousand helpers whose annotated parameter `r: Rec` (a name every helper reuses) is read
/// as `r.os` and handed on to the previous helper: deciding that `r` holds instances of the
/// cell's class looked at every binding of `r` in the cell once per helper (quadratic, round 8).
/// The fields stay clean; only the length limit is reported.
#[test]
fn annotated_parameter_chains_stay_linear_and_clean() {
    let mut src = String::from(
        "from dataclasses import dataclass\n@dataclass\nclass Rec:\n    os: str\ndef f0(r: Rec):\n    return r.os\n",
    );
    let n = 1_000;
    for i in 1..n {
        src.push_str(&format!(
            "def f{i}(r: Rec):\n    x = [f{}(q) for q in [r, r]]\n    return r.os + f0(r) + str(sorted([r], key=lambda z: z.os))\n",
            i - 1
        ));
    }
    src.push_str(&format!("print(f{}(Rec(\"a\")))\n", n - 1));
    let codes: Vec<&str> = lint(&src).iter().map(|d| d.rule.code).collect();
    assert!(!codes.iter().any(|c| c.starts_with("SBX")), "{codes:?}");
}

/// A thousand named tasks, each awaited at the end, and one more never awaited (round 7
/// S7-17): each task looked through the whole cell for the uses of its name (quadratic; the
/// work is counted in `rules::sandbox::tasks`'s unit test). Only the dangling one is reported.
#[test]
fn many_tasks_find_only_the_dangling_one() {
    let n = 1_000;
    let mut src = String::from("import asyncio\nasync def w(x):\n    return x\n");
    for i in 0..n {
        src.push_str(&format!("t{i} = asyncio.create_task(w({i}))\n"));
    }
    src.push_str("lost = asyncio.create_task(w(0))\n");
    for i in 0..n {
        src.push_str(&format!("v{i} = await t{i}\n"));
    }
    let ds = lint(&src);
    let sbx: Vec<_> = ds
        .iter()
        .filter(|d| d.rule.code.starts_with("SBX"))
        .collect();
    assert_eq!(sbx.len(), 1, "{sbx:?}");
    assert_eq!(sbx[0].rule.code, "SBX009");
    let at = sbx[0].range.start;
    assert!(
        src[at..].starts_with("asyncio.create_task(w(0))\nv0"),
        "{:?}",
        sbx[0]
    );
}

/// Thirty thousand bindings of one name in a cell that mentions `CancelledError`: the search
/// for raised `CancelledError`s resolved every identifier through every binding of its name
/// (quadratic; a 30,000-line cell took minutes). Verdicts are kept per scope and name now.
#[test]
fn many_bindings_of_one_name_beside_a_cancel_handler() {
    let src = String::from("import asyncio\n")
        + &"x = [1, 2, 3]\n".repeat(30_000)
        + "try:\n    await asyncio.sleep(1)\nexcept asyncio.CancelledError:\n    pass\n";
    let ds = lint(&src);
    let sbx: Vec<_> = ds.iter().filter(|d| d.rule.code == "SBX003").collect();
    assert_eq!(sbx.len(), 1, "{sbx:?}");
    assert!(
        sbx[0].message.contains("swallows the cancellation"),
        "{sbx:?}"
    );
}
