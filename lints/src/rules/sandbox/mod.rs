//! `SBX`: sandbox escapes, beyond what Colony checks (spec §2). Colony's validators look at
//! `import` statements only (colony-reference §2.7, §3.3); smolagents' executor checks much more
//! and has been bypassed again and again (guardrail-anchors §2.2–2.4). These rules flag every
//! public class of those bypasses statically.
//!
//! The rules share one analysis ([`interp`]): a small abstract interpretation of the cell that
//! folds constant strings (concatenation, `join`, `%`, `format`, f-strings, slicing, `chr`,
//! case methods, bytes decoding), tracks aliases (`f = getattr`, `b = __builtins__`, walrus,
//! default arguments, lambdas, comprehensions, tuple unpacking, function returns and arguments),
//! and resolves module attributes through a reachability table generated on CPython
//! ([`reach`], `tools/gen_sandbox_reach.py`). A name it cannot fold that reaches `getattr`,
//! `__import__` or `importlib` is reported as a computed access. Statements that tree-sitter's
//! error recovery wraps in an `ERROR` node are still run (their bindings weak), and string
//! literals tree-sitter scans differently from CPython (which can hide the rest of the cell)
//! are rewritten first ([`repair`](crate::rules::syntax::repair)).
//!
//! | code | name | class |
//! |---|---|---|
//! | SBX001 | dynamic-import | `__import__`, `importlib.*`, `sys.modules[...]`, computed module names |
//! | SBX002 | dunder-access | dunder attributes in any context, through `getattr`-like builtins, namespace dicts and `str.format` fields |
//! | SBX003 | code-execution-builtin | `eval exec compile open input breakpoint globals locals vars help get_ipython __builtin__ __builtins__` |
//! | SBX004 | dynamic-attribute-access | `getattr`-like builtins with computed names or passed as values |
//! | SBX005 | module-escape | a module outside the allowlist reached through an allowed one; any `_private` module attribute |
//! | SBX006 | unsafe-module-allowed | an allowlist that lets in a host-reaching module (`ctypes`, `os`, `*`) |
//! | SBX007 | dangerous-member | a denied member of an allowed module (`asyncio.create_subprocess_shell`) |
//! | SBX008 | frame-walk | frames and tracebacks (`tb_frame`, `f_globals`, `f_back`, `sys._getframe`) |
//! | SBX009 | dunder-method-definition | dunder methods other than `__init__ __post_init__ __repr__ __str__` |

pub mod check;
pub mod containers;
pub mod field;
pub mod interp;
pub mod reach;
pub mod scan;
pub mod tasks;
pub mod value;

use super::Checker;
use crate::diagnostic::{Diagnostic, FixAvailability, Rule, RuleDoc, Severity};

/// SBX001 dynamic-import.
pub static DYNAMIC_IMPORT: Rule = Rule {
    code: "SBX001",
    name: "dynamic-import",
    severity: Severity::Error,
    summary: "Import by name at runtime, bypassing the import allowlist",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports imports that happen at runtime by name: calls to `__import__` (directly, through an alias, `builtins.__import__`, `__builtins__[\"__import__\"]`, or a frame's `f_builtins`), any use of the `importlib` machinery (`importlib.import_module`, `from importlib import import_module`, `importlib.util`), `sys.modules` (`sys.modules[\"os\"]`), `__loader__` and `__spec__`, and `typing.ForwardRef(s, module=...)`, which evaluates its string in a loaded module's namespace found by name. The module name is folded when it is built from constants (`__import__(\"o\" + \"s\")` reports `os`); a name that cannot be folded is reported as a computed import. A type evaluator given a module name evaluates its strings in that module's namespace, found by name in `sys.modules`: `ForwardRef(s, module=...)`, `TypeAdapter(s, module=...)`, `create_model(..., __module__=...)` (pydantic v2 and `pydantic.v1`), `namedtuple(..., module=...)`, `make_dataclass(..., module=...)` and pydantic v1's `typing.resolve_annotations(raw, module_name)` are reported at the module argument, whatever its value (`json.__name__` names the module as well as `\"json\"`).",
        why: "An import whitelist only sees `import` statements. `__import__('o'+'s')` (smolagents issue #2203), `importlib.import_module(\"os\")` (smolagents PR #861) and `sys.modules['o'+'s']` reach any module while every `import` statement of the cell is allowed; LangChain's PALChain fix was bypassed through `__import__` (CVE-2023-44467).",
        example: "os_module = __import__(\"o\" + \"s\")\n",
        fixed_example: "data = json.loads(\"{}\")\n",
        fix_safety: "No fix: the cell has to do without the module.",
        options: "`[lint.imports] allow` decides which modules `import` may name; a dynamic import is reported whatever the allowlist says.",
        source: "smolagents `LocalPythonExecutor` bypasses (guardrail-anchors §2.4 #4, #5, #20; PRs #848, #861, issue #2203); LangChain CVE-2023-44467; VulnClaw issue #111.",
        ..RuleDoc::EMPTY
    },
};

/// SBX002 dunder-access.
pub static DUNDER_ACCESS: Rule = Rule {
    code: "SBX002",
    name: "dunder-access",
    severity: Severity::Error,
    summary: "Access to a dunder attribute (class, globals, builtins, subclasses...)",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports dunder attributes (`__class__`, `__subclasses__`, `__globals__`, `__dict__`, `__self__`, `__getattribute__`, ...) in every context: reads, assignments, augmented assignments (`f.__dict__ |= {...}`) and deletions; through `getattr`, `setattr`, `hasattr`, `delattr` (also via aliases, `operator.attrgetter`, and names folded from constants such as `\"__cla\" + \"ss__\"`); as keys of namespace dicts (`vars(x)[\"__builtins__\"]`, `globals()[...]`); as keyword patterns in `match` and as positional ones whose class's `__match_args__` names a dunder (`__match_args__ = (\"__class__\",)`); inside `str.format`/`format_map`/`Formatter` fields (`\"{0.__class__}\".format(x)`, also templates decoded from JSON constants, `json.loads('\"{0._\\\\u005fclass__}\"')`) and `Formatter().get_field` paths, and as dunder names passed to callables cellguard cannot resolve. A class built at runtime (`type(name, bases, ns)`, a metaclass reached as `type(x)` such as `type(int)(...)` or `type(ActionResult)(...)`, a metaclass the cell built with `type` among its bases, `dataclasses.make_dataclass(..., namespace=ns)`) whose namespace cellguard cannot fold to constant keys (`dict.fromkeys(...)`, `dict(zip(...))`, `dict(pairs)`, `**` unpacking, a name filled by `ns[k] = ...` with a computed key or by `ns.update(...)`/`setdefault`) is reported here: its keys may set `__match_args__`, `__instancecheck__` or lifecycle dunders. `type(self)(a, b, c)` (no constant class name and no bases tuple) is not a class build. Templates of `str.format`/`format_map` used as values (`f = tmpl.format`, `map(tmpl.format, xs)`, `functools.partial(str.format, tmpl)`, `map(str.format, tmpls, xs)`) are checked like direct calls, with arguments cellguard cannot see. `functools.WRAPPER_ASSIGNMENTS`/`WRAPPER_UPDATES` fold to their CPython 3.11 values, so `assigned=WRAPPER_ASSIGNMENTS + (\"__code__\",)` is reported; an `assigned=`/`updated=` value that does not fold to names is SBX004. Reading `__name__`, `__qualname__`, `__module__`, `__doc__`, `__version__`, the iteration protocol (`__iter__`, `__next__`, `__len__`, `__contains__`, `__aiter__`, `__anext__`), exception chaining (`err.__cause__`, `err.__context__`) and an enum's `__members__` is ordinary code and is not reported (round 8 S8-8, S8-9: what they hold is already the cell's, and `__traceback__` on them is reported); writing them is. `x.__class__` is not reported when its only use is an immediately following read of `__name__`, `__qualname__` or `__module__` (`e.__class__.__name__` is the string `type(e).__name__`; also in a format field, `\"{0.__class__.__name__}\"`); every other use of `__class__` is: a further dunder (`e.__class__.__mro__`), storing it (`c = e.__class__`), calling or passing it, or assigning the name (`e.__class__.__name__ = ...`). `object.__setattr__(self, \"field\", value)` in a method of a sealed cell class (see SBX005), with a constant non-dunder name the class declares, is `self.field = value` (the way a frozen dataclass's `__post_init__` sets a field) and is not reported (round 6 S6-25); so is a name folded to such constants, as from a loop over a constant dict or tuple (`for k, v in {\"a\": 1}.items(): object.__setattr__(self, k, v)`, round 8 S8-5). In a class body, binding `__module__` (`typing.get_type_hints` and pydantic resolve the class's string annotations in `sys.modules[__module__]`: `__module__ = \"os\"` with `x: \"system\"` hands out `os.system`; round 6 S6-27) and any use of the namespace's `__annotations__` dict by name (`dataclasses.dataclass` pastes its keys into the `__init__` source it `exec`s; round 6 S6-26) are reported. A module-level binding of the cell's `__name__` (or `__package__`, `__spec__`, `__loader__`, `__file__`) by any binder (`=`, `for`, walrus, `match` capture, unpacking, `global` in a function) is reported: classes, `typing.NamedTuple`/`TypedDict` and pydantic models take their `__module__` from `__name__`, and `typing.get_type_hints` then resolves their string annotations in that module (`__name__ = \"os\"` makes `x: \"system\"` `os.system`; round 9 S9-1). A dotted path handed to a callable cellguard cannot resolve is split at its dots (`attrgetter(\"__class__.__base__\")` under another name; round 9 S9-10).",
        why: "Class-hierarchy walks (`().__class__.__base__.__subclasses__()`) reach `subprocess.Popen` without importing anything (CVE-2025-9959); smolagents' fix checked attribute reads only, and stores, augmented assignments and `setattr`/`hasattr` kept passing (CVE-2026-4963). Format fields walk attributes in C, where no AST check sees them.",
        example: "base = ().__class__.__base__\n",
        fixed_example: "kind = type(()).__name__\n",
        fix_safety: "No fix.",
        options: "",
        source: "CVE-2025-9959 (smolagents PR #1551), CVE-2026-4963 / GHSA-54fq-v6x8-244g (PR #2281), smolagents PR #979; LangChain CVE-2024-27444; guardrail-anchors §2.4 #8, #9, #11, #12.",
        ..RuleDoc::EMPTY
    },
};

/// SBX003 code-execution-builtin.
pub static CODE_EXECUTION_BUILTIN: Rule = Rule {
    code: "SBX003",
    name: "code-execution-builtin",
    severity: Severity::Error,
    summary: "Builtin that executes code, touches the host or exposes namespaces",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports every reference to `eval`, `exec`, `compile`, `open`, `breakpoint`, `globals`, `locals`, `vars`, `help`, `get_ipython`, `__builtin__` and `__builtins__` that resolves to the builtin, whether called, aliased (`g = eval`), passed as a value (`map(eval, xs)`), used as a decorator (`@exec`) or reached as an attribute (`__builtins__.open`, `callable.__self__.exec`, `getattr(__builtins__, \"open\")`). `input` is reported only where the builtin is called (directly or through an alias): saving and restoring it around a mock, as MINT's APPS few-shot does, is ordinary code. A name the cell rebinds (`def open(...)`) is not the builtin. In a namespace that holds IPython's names (Colony's, colony-reference §2.1), reads of `_dh` (the host's working directories), `In`/`_ih` and `Out`/`_oh` (every cell's source and results) and `exit`/`quit` (shuts the host's shell down; `exit._ip` is IPython's shell) that the cell does not bind itself are reported too, NFKC-normalised like Python's identifiers (`rules/ipython.rs`); so are site's `license` (every use), `credits` and `copyright` (every use but a bare no-argument call: `type(credits)(name, text, files, dirs)` reads any host file) in every dialect, and site's `exit`/`quit` under the `functions` dialect (calling one closes the host's stdin and raises `SystemExit` in the host). The builtin exceptions that are not `Exception`s (`SystemExit`, `KeyboardInterrupt`, `GeneratorExit`, `BaseException`, `BaseExceptionGroup`) are reported on every use that resolves to the builtin except as the type of an `except` clause and the class argument of `isinstance`/`issubclass`: `raise SystemExit(0)`, a subclass (`class Stop(KeyboardInterrupt)`) or an alias raised in the cell passes the executor's `except Exception` handlers and ends (or interrupts) the host interpreter, as `exit()` does (round 8 S8-12). Code held in strings is analysed as a cell of its own where it would run (the source of `exec`/`eval`/`compile`, a tool's `code=` argument, string annotations, also forward references nested in them (`Optional[\"...\"]`; `Literal[...]` values and `Annotated` metadata are left alone), which `typing.get_type_hints`, pydantic and `functools.singledispatch` evaluate, and the strings that `typing.ForwardRef`, `pydantic.TypeAdapter`, `typing._eval_type` and the functional `TypedDict`/`NamedTuple`/`dataclasses.make_dataclass`/`pydantic.create_model` forms evaluate as types, and the `bound=`, constraint and `default=` strings of `TypeVar`/`ParamSpec`/`TypeVarTuple`, which typing turns into forward references (`TypeVar(\"T\", bound=\"os.system\")`, round 8 S8-13)): its findings are reported at the string (at their own position inside a plain literal), with their own codes. An annotation that is a name holding a string (`T = \"\".join(parts)`, then `x: T`) is that string. A string built at runtime that reaches one of these type evaluators (an annotation such as `\"\".join(parts)`, `TypeAdapter(\"pydantic.\" + name)`, a type decoded with `json.loads`) is reported itself, as `eval` of such a string is. Strings reach annotation and type evaluators through names too: a name in a type position that holds a string is that code, a dict lookup in an annotation (`x: anns[\"t\"]` with `anns = {\"t\": \"...\"}`) is checked as the selected string, a type alias (`T = Optional[p]; TypeAdapter(T)`) is checked as its expression, and a string built at runtime anywhere in it (`p = json.loads(...)`) is reported. `Model.model_rebuild(_types_namespace=...)` and pydantic v1's `update_forward_refs(**ns)` are reported: they evaluate the model's string annotations in a namespace the cell supplies, with the host's builtins. `functools.wraps(f)` / `update_wrapper(w, f)` where `f` is not a function or class of the cell (pre-bound `run`, `log`, `json.dumps`, or a value cellguard cannot resolve) is reported when the wrapper has string annotations (or the cell has `from __future__ import annotations`): the `__wrapped__` it sets makes `typing.get_type_hints`, `functools.singledispatch` and pydantic evaluate those annotations in the globals of `f`'s module, with the host's builtins, so bare names such as `os` or host globals in them reach the host. Parametrizing a class evaluates its parameters as types at once when it is `pydantic.RootModel` or a generic class of the cell (`Generic[...]` or `RootModel` among its bases, as a generic pydantic model has): `RootModel[s]`, `RootModel[Union[int, s]]` and `Box[s]` are checked like `TypeAdapter(s)`; so are the string values of pydantic v1's `typing.resolve_annotations(raw, ...)`. Deleting `__builtins__` is reported: `exec` puts the host's full builtins module back into globals that lack it, so the next cell runs unrestricted; so is `del` of a name whose value before the cell is a dangerous builtin (`eval`, `exec`, `open`, `getattr`, `__import__`, ...) or one the namespace binds over a builtin (`del open` in Colony's namespace): later uses, in this cell and the next, reach the builtin, and cellguard treats the name as the builtin again after the `del` (round 7 S7-22, round 9 S9-6, S9-25). A handler that swallows the cancellation which stops a cell (`except asyncio.CancelledError`, `except BaseException`, bare `except:`, aliases and tuples included, or `contextlib.suppress(...)` of those) around an `await`, without a `raise` in the handler, is reported: Colony stops a cell only by cancelling it, and `asyncio.wait_for` waits for a cancelled cell to finish (`rules/cancel.rs`, round 7 S7-8); `except Exception` does not catch it. `asyncio.CancelledError` (any module or alias, subclasses) used other than as an `except` type, a `suppress` argument or an `isinstance`/`issubclass` class is reported like `SystemExit` (round 9 S9-21). A PEP 263 encoding declaration (line 1, or line 2 after a comment or blank line 1) naming a codec other than UTF-8, ASCII, Latin-1/ISO-8859-* or Windows-125x (`# coding: utf-7`, `unicode_escape`) is reported: CPython decodes the cell's bytes with it, so the code that runs is not the code cellguard reads (`rules/encoding.rs`, round 7 S7-13, round 9 S9-4). The fields of a functional `typing.NamedTuple`/`TypedDict`/`make_dataclass` held by a name are checked as the displays bound to it; a name whose contents cellguard cannot read in full (changed through an unpacking store, appended from a computed string, a parameter) is reported (round 9 S9-15).",
        why: "Colony's REPL rejects only direct calls of the bare names `eval`, `exec`, `compile`, `open` and `__import__`; aliases and attribute forms pass, and IPython puts the real `open`, `get_ipython` and `__builtin__` in the namespace (colony-reference §2.7). Under smolagents, registering `eval`/`exec` as tools re-enables everything (PR #274).",
        example: "result = eval(\"1 + 1\")\n",
        fixed_example: "result = 1 + 1\n",
        fix_safety: "No fix.",
        options: "",
        source: "Colony `PolicyPythonREPL._validate_code` and IPython namespace (colony-reference §2.7); smolagents `DANGEROUS_FUNCTIONS`, PR #274; LangChain issue #21592 (`@exec`); pytaskforce issue #276.",
        ..RuleDoc::EMPTY
    },
};

/// SBX004 dynamic-attribute-access.
pub static DYNAMIC_ATTRIBUTE_ACCESS: Rule = Rule {
    code: "SBX004",
    name: "dynamic-attribute-access",
    severity: Severity::Warning,
    summary: "getattr-like access with a computed name, or getattr passed as a value",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `getattr`, `setattr`, `hasattr` and `delattr` (or aliases of them) called with an attribute name cellguard cannot fold to a constant, namespace dicts (`vars(m)[key]`, `m.__dict__[key]`) subscripted with a computed key, and these builtins passed as values: to `map`, `filter`, `functools.partial` or any other call, stored in containers or attributes, or returned from a function (`def deco(f): return getattr`). Also `Formatter().get_field(path, args, kwargs)` with a path it cannot fold, and `.format`/`.format_map`/`Formatter().format`/`vformat` on a template whose text is hidden (decoded at runtime with `json.loads`, `.decode()`, `bytes.fromhex`, `base64`, `unquote`, `chr`, or joined from values it cannot fold, and anything sliced, concatenated or case-mapped from those) when some argument is not a plain literal: the template's fields walk attributes of the arguments (`{0.__init__.__globals__}`). The same holds for a template cellguard cannot see at all, whatever the source: taken out of a container or host data (`results[\"t\"]`, `sorted(ts)[0]`), returned by a call (`max(ts)`, `next(iter(ts))`, `params.get(\"fmt\", default)`), an attribute, a parameter or loop variable, anything case-mapped or stripped from those, and a template unpacked into `str.format(*parts)`. Templates with visible text (`(header + \": {}\").format(x)`, f-strings, a JSON config's template formatted with literals) are not reported. Names from `.items()`, `.keys()` or `.values()` of a dict display, and items of a list display, fold to its constants (`for k, v in {\"debug\": True}.items(): setattr(s, k, v)` is not a computed name) together with the literals the cell stores into it later (`d[\"k\"] = \"v\"`, `append`, `extend`, `insert`, `update`, `setdefault`, `|=`); a container the cell changes in any other way (a stored value that is not a literal, `names.append(\"\".join(map(chr, codes)))`, an alias, a mutating method taken as a value, handed to a cell function or to a call that is not a known read-only builtin, a store inside a function) holds names cellguard cannot fold (round 5 H32, H33). pydantic reads every field with `getattr(obj, alias)` when a model validates from attributes, so in a cell that mentions `from_attributes`, an `alias` or `validation_alias` (keyword or dict key) whose value cellguard cannot fold to constant strings, and an `alias_generator` that is a cell function, a lambda or a value cellguard cannot resolve, are reported: `alias_generator=lambda n: u + n + u` makes `G.model_validate(G, from_attributes=True)` hand out `object.__getattribute__`. Constant aliases and library generators (`pydantic.alias_generators.to_camel`) are not reported. A `getattr`-like builtin (or an alias of one) standing loose in a part of the cell that tree-sitter could not parse (an `ERROR` node: `mod = ga(re, \"_x\")` after a broken line can be read as a call of `mod`) is reported too: what it is applied to cannot be seen. Validation from attributes (a cell that mentions `from_attributes`, or pydantic v1's `orm_mode`/`from_orm`) reads every field of every model with `getattr(obj, name)` by its constant alias (`Field(alias=\"_sys\")`, `validation_alias`, `AliasChoices` items) and by its field name (`sys: Any`, read back through `model_dump()`): those reads are checked like the attribute written out on the objects the cell validates the model from (`M.model_validate(collections, from_attributes=True)` reads `collections._sys`, SBX005; a dunder alias is SBX002, a frame attribute alias SBX008), and for a model the cell does not visibly validate (nested models, `create_model` results) on an object cellguard cannot resolve (round 6 S6-1, S6-3, S6-11). `getattr(obj, f.name)` for `f` over `dataclasses.fields(x)`, and `getattr(obj, name)` for `name` over `C.model_fields`, `C.__fields__`, `C.__dataclass_fields__` or `P._fields`, where `x`/`C`/`P` is a class of the cell (or an instance of one, also `type(s)` and an annotated parameter `s: C` as SBX005 reads them), fold to the names the class declares and are checked as those reads, not as a computed name (round 6 S6-29, round 8 S8-4, S8-7); so does `getattr(self, n)` for `n` over a class attribute that the class body binds once to a tuple of constant strings (`_FIELDS = (\"a\", \"b\")`, or a list only ever iterated) and the cell never stores or changes (round 8 S8-6). `dataclasses.replace(x, ...)` of an instance of a cell class is an instance of that class (round 9 S9-13).",
        why: "The attribute such an access reaches is decided at runtime, so no static check (cellguard's or an executor's) can tell whether it is `_os` or `__class__`. CVE-2025-5120 was exactly this: `list(map(getattr, [warnings], ['sys']))` and `filter(functools.partial(getattr, m), ...)` pulled `sys` out of an allowed module.",
        example: "field = params[\"field\"]\nvalue = getattr(results, field)\n",
        fixed_example: "value = results.get(\"field\")\n",
        fix_safety: "No fix.",
        options: "",
        source: "CVE-2025-5120 / GHSA-6v92-r5mx-h5fx (smolagents PR #1375); guardrail-anchors §2.4 #9, #10.",
        ..RuleDoc::EMPTY
    },
};

/// SBX005 module-escape.
pub static MODULE_ESCAPE: Rule = Rule {
    code: "SBX005",
    name: "module-escape",
    severity: Severity::Error,
    summary: "A module outside the allowlist reached through an attribute of an allowed one",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Follows attribute chains from allowed or pre-bound modules (also through aliases such as `import collections as c`, `from dataclasses import inspect`, `getattr(m, \"_\" + \"os\")`, `vars(m)[\"_os\"]`) and reports the first step that lands on a module outside the allowlist or on a host-reaching module (`collections._sys`, `typing.contextlib`, `dataclasses.inspect`, `asyncio.base_events.subprocess`), any `_private` attribute of a module, and any attribute of a parent module that only a submodule of was allowed (`import os.path` binds `os`). Module attributes come from a table generated on CPython (`tools/gen_sandbox_reach.py`); for modules outside the table (third-party allowlisted packages) attributes named after host modules (`numpy.ma.core.inspect`) and private ones are reported. A receiver cellguard cannot resolve (a module passed through a container, `*`-unpacking, `next(iter(...))`, `functools.reduce`, a parameter, `await`, a generator, an instance attribute or a `match` capture) may be any module the cell reaches: an attribute of it is reported when its name is a host-reaching module attribute of some module of the table (`x.os`, `x.sys`, `x._os`, `x.contextlib.os`, `x.decoder.re.enum.sys`); ordinary private attributes (`self._cache`) are not, and neither is a field that a cell class declares read on an instance of it (`d.os` after `@dataclass class Device: os: str` and `d = Device(...)`, also through lists and loops): class-body assignments and annotations, method names and `self.x = ...` targets count as declared, inherited from cell base classes. What a name holds is also read from its nearest binder when the merged bindings cannot tell (round 8 S8-1..S8-3): a comprehension or `for` variable over a collection of instances of such classes (a display, a comprehension building them, `sorted`/`list`/`filter` of one, a name bound once to one that the cell only reads, iterates, sorts, hands to read-only builtins or to a cell function that does the same, and adds only instances to), a lambda parameter of `sorted`/`min`/`max`/`list.sort` (`key=`), `map` or `filter` over one, and a parameter annotated with such a class (`def f(r: Rec)`, `Optional[Rec]`, `\"Rec\"`, `list[Rec]` for collections) of an undecorated function that is not a method and that the cell only calls directly, never passing it a module (every argument is an instance, plain data, or a value no module flows into); a binder rebound in its scope proves nothing. A pydantic model validated from attributes whose class name the cell uses only to define it, call it, annotate parameters or return types of undecorated functions and in `isinstance`, in a cell without `TypeAdapter`, `validate_call`, `parse_obj_as`, `create_model` or a validator on a model it cannot resolve, is never validated from an object: its field names (`os: str`) are not reported as reads. The instance is trusted only when the class has no metaclass keyword, no decorator other than `dataclass`, no `__new__`/`__getattr__`/`__getattribute__`/`__init_subclass__`, and only cell classes or plain library bases (`object`, `NamedTuple`, `BaseModel`, `Exception`, `Enum`, builtin containers, ...); `self.os` inside a method of such a class is not reported either when the method can only run bound to an instance: it is undecorated, defined directly in the class body, and the cell reads the class's name only to call it or as the base of a class that is sealed the same way, and never reads the name `type` nor calls `typing.get_origin` (which returns `type` for `typing.Type[int]`; round 6 S6-21) (`Device.describe(json)` or `type(d).describe(m)` would hand the method any object, and then `self.os` is reported). Keywords of `match` class patterns (`case object(contextlib=c)`), positional sub-patterns of classes whose `__match_args__` cellguard can see (an explicit `__match_args__` tuple, the fields of a cell's `@dataclass` or `NamedTuple` class that `__init__` takes positionally (class variables, fields after `_: KW_ONLY`, `field(kw_only=True)`, `field(init=False)` and `kw_only=True` classes left out), base classes' first, or of a class built by `dataclasses.make_dataclass`, `collections.namedtuple`, `typing.NamedTuple` or `type(name, bases, {\"__match_args__\": ...})`: `case P(Q(o))` with fields `base_events` and `os` reads `subject.base_events.os`), dotted value patterns and `str.format` fields are attribute reads and are checked the same way; `ABC.register(type(module))` (or `types.ModuleType`, also through a name assigned one), which lets class patterns match modules, is reported itself. `from m import *` binds every public global of a module without `__all__`, the modules it imported included (`from asyncio.base_subprocess import *` binds `subprocess`): every name the cell reads that the table records as a module attribute of `m` is checked as `m.name` and reported where it is read; for a module outside the table (a third-party package, whose exports cellguard cannot know) every read name that is a host-reaching module attribute of some module (`os`, `sys`, `inspect`, ...) is reported. Code strings the cell runs after the star import (string annotations, `exec`) are checked the same way. The table records each walked module's `__all__`: a star import binds only the names in it (`from typing import *` does not bind `sys`), and for a module without `__all__` only public names (no leading `_`); cells without star imports are not affected, and a name the cell binds itself after the star import is still reported where it is read. Writing or deleting an attribute of a host object is reported here too: an attribute of a module (`json.dumps = spy`, `del json.loads`, `setattr(re, \"compile\", hook)`, also through aliases), and, when the stored value is a function, lambda or builtin (or on deletion), an attribute of a module member (`json.JSONEncoder.default = f`) or of an object the namespace pre-binds that the cell does not rebind (`Counter.most_common = f`, `ActionResult.model_dump = f`; also through an alias, an attribute of it or its class: `B = type(bb); B.write = f`): the host shares these objects and would run the cell's replacement. A data setting on a class of a module (`json.JSONEncoder.key_separator = ...`, a CamelCase member) is reported too: every instance the host makes sees it. Calls that rewrite their argument in place are the same write without store syntax: `functools.update_wrapper(W, f)` and `functools.wraps(f)(W)` (they copy `f.__dict__` into `W` and set `assigned` names), `dataclasses.dataclass(W)`/`dataclass(...)(W)` (also Colony's pre-bound `dataclass`) and `functools.total_ordering(W)` are reported when `W` is a module, a module member or a pre-bound object (`update_wrapper(json, f)`, `dataclass(ActionResult)`, `dataclass(type(bb))`). The names in their `assigned`/`updated` arguments are read from the wrapped object with `getattr` and checked as that read (`update_wrapper(h, random, assigned=(\"_os\",))` reads `random._os`). Host classes count as host objects for every store, data settings included: a pre-bound class (`ActionResult`, `ActionType`), the class of a value that is not the cell's own (`type(r)` of an action result, `type(json.JSONDecoder())`, `type(Counter())`, `type(queue.Queue().not_empty)`, which is `threading.Condition`), and anything taken out of a pre-bound object by attribute or item (`ActionResult.model_config`, `ActionResult.model_fields[\"x\"]`, `fi = ...; fi.default = None`). State changed without store syntax is reported the same way: an item written or deleted (`ActionResult.model_config[\"json_schema_extra\"] = f`, `copy.dispatch_table[T] = reducer`, which is `copyreg`'s table), a container method (`update`, `setdefault`, `pop`, `clear`, `append`, `extend`, `insert`, `remove`, `add`, `discard`, `sort`, ...) or an ABC's `register` called on a module member or on a part of a pre-bound object (`ActionType._member_map_.clear()`, `collections.abc.Mapping.register(str)`, `Action.register(str)`), and `model_rebuild()` of a pre-bound model. A `_private` attribute of a pre-bound object or class (`ActionType._value2member_map_`, `bb._store`) is reported like a module's. The cell's own data names (`results`, `params`, `goals`, `pages`) and what the cell takes out of them are not host objects: `results[\"k\"] = v` and `results[\"rows\"].append(x)` are ordinary. Receivers are followed through containers and iterators (`next(iter([json]))`, `min`/`max` of a sequence, `next(it, default)`) and through `match` captures (`match [json, 0]: case [m, _]: m.dumps = f`). Colony's `_run_call_trace` (the policy's own list of dispatched actions, copied into each action result's metadata) is host state: any use of it other than `len(_run_call_trace)` (with the builtin `len`: a `len` the cell defines can clear the list) is reported, since the cell could erase or forge the record (`.clear()`, `del t[:]`, `t[0][\"key\"] = ...`, aliases). Data settings on other members (`pd.options.display.max_rows = 50`), on instances (`enc = json.JSONEncoder(); enc.item_separator = \", \"`), and writes to or decorators on the cell's own objects are not reported. The parent of an allowed submodule (`os` after `import os.path` with only `os.path` allowed) used as a value other than an attribute's object or a plain alias (`[os]`, `f(os)`, `next(iter((os,)))`) is reported where it is used, since its attributes are no longer seen once it is inside a container or a call. `codecs` (whose `open` opens host files) is one of the names reported on receivers cellguard cannot resolve. Inside a type string (an annotation, a string given to a type evaluator), a free name of a host-reaching module that the cell does not bind (`os`, `sys`, `subprocess`, `codecs`, `io`, `builtins`, ...) is reported: evaluators resolve a class's or function's annotations in the globals of the module it belongs to (the host's `__main__` when an executor runs the cell as `__main__`, the wrapped function's module after `functools.wraps`, any module named by `module=`), where those names are the host's modules. `io` and `pathlib` attributes of standard-library modules the table does not record are reported like the host module names (`pickletools.io`). On a receiver cellguard cannot resolve, the names of modules that hand out host state or run cell code in the host without being in the table's target families are reported too: `threading`, `_thread`, `logging`, `traceback`, `linecache`, `weakref`, `copyreg`, `gc`, `tokenize` and the C modules behind `os`, `signal`, `socket`, `ssl`, `pickle`, `ctypes` and the import system (`m.traceback.linecache.getlines(path)` with `m` = `asyncio.base_events` out of a generator; round 6 S6-7). `functools.update_wrapper(w, m)` / `functools.wraps(m)` with the default `updated=(\"__dict__\",)` on a module or a host object the namespace pre-binds is reported at `m`: its whole namespace is copied onto the wrapper (`w.operator`, `w.enum.sys`, `w._agent`; round 7 S7-1, round 9 S9-10). A cell pydantic model validated from constant data (`M.model_validate({...})`, `M.model_validate_json(text)`) or copied (`m.model_copy()`) is an instance of the model, whose declared fields (`w.sys`) are data, unless the cell validates from attributes or passes `update=` (round 9 S9-8).",
        why: "Allowing a module allows everything it imported for itself: `random._os`, `statistics.random._os`, `queue.threading._sys.modules['os']` and `numpy.ma.core.inspect` all reach `os` while every `import` statement of the cell is allowed (smolagents PRs #238, #877, #935; CVE-2026-27952).",
        example: "sys_module = re.enum.sys\n",
        fixed_example: "pattern = re.compile(\"a+\")\n",
        fix_safety: "No fix.",
        options: "`[lint.imports] allow`: a module that is itself allowed is not an escape (except host-reaching ones and private attributes).",
        source: "smolagents PRs #238, #877, #935, #1103; CVE-2026-27952 (Agenta, `numpy.ma.core.inspect`); modelscan issue #89; guardrail-anchors §2.4 #1, #2, #3, #10, #13, #19.",
        ..RuleDoc::EMPTY
    },
};

/// SBX006 unsafe-module-allowed.
pub static UNSAFE_MODULE_ALLOWED: Rule = Rule {
    code: "SBX006",
    name: "unsafe-module-allowed",
    severity: Severity::Error,
    summary: "Import of a host-reaching module that the allowlist lets through",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `import m` and `from m import x` when the allowlist allows `m` (through an explicit entry, `m.*`, a parent entry or `*`) but `m` reaches the host: the issue's host modules (`os`, `sys`, `subprocess`, `socket`, `builtins`, `importlib`, `inspect`, `ctypes`, `shutil`, `pathlib`, `io`, `pty`, `multiprocessing`) and every standard-library module whose public API, within three calls, runs code from strings (`timeit`, `cProfile`, `doctest`, `bdb`, `code`), imports by name (`pydoc.locate`, `unittest.mock.patch`, `logging.config`), builds code objects (`types.CodeType`, `marshal`, `pickle`), starts processes or threads or schedules code for later (`platform`, `concurrent.futures`, `threading`, `atexit`, `signal`, `weakref.finalize`), or reads and writes files or the network (`linecache`, `tarfile`, `sqlite3`, `logging`, `warnings`, `ssl`, `xmlrpc.client`, `http.client`, `urllib.request`), plus host-reaching third-party packages (`requests`, `httpx`, `aiohttp`, `urllib3`, `cffi`). The list is generated from the standard library's sources by `tools/gen_sandbox_reach.py` (see `tools/README.md`); the modules of the default allowlists are left to SBX005 and SBX007. A host-reaching submodule reached as a name of its allowed parent is reported the same way: `from lib2to3.pgen2 import driver`, `from email import utils`, `email.utils` after `import email`, `pgen2.driver` after `from lib2to3 import pgen2` (round 6 S6-18).",
        why: "A denylist is never complete and an allowlist entry is easy to over-grant: `ctypes` lets a cell call `libc.system` (smolagents issue #2094), `\"*\"` turns the whitelist off (PR #129), and `requests` gives server-side request forgery (CVE-2026-2654).",
        example: "import ctypes\n",
        fixed_example: "import json\n",
        fix_safety: "No fix.",
        options: "`[lint.imports] allow`, `extend-allow`. `*`, a host-reaching entry and a `pkg.*` entry whose submodules include a host-reaching one (listed) are also configuration warnings.",
        source: "smolagents issue #2094, PRs #129, #929, #935; CVE-2026-2654; guardrail-anchors §2.4 #14, #16.",
        example_config: "dialect = \"functions\"\n[lint.imports]\nallow = [\"json\", \"ctypes\"]\n",
        ..RuleDoc::EMPTY
    },
};

/// SBX007 dangerous-member.
pub static DANGEROUS_MEMBER: Rule = Rule {
    code: "SBX007",
    name: "dangerous-member",
    severity: Severity::Error,
    summary: "A denied member of an allowed module (subprocess, network, file I/O)",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports uses of members of allowed modules listed in `[lint.imports] deny-members` (globs allowed: `requests.*`), whether reached as `m.name`, imported with `from m import name`, read as a bare name after `from m import *`, through another module that re-exports the same object (`asyncio.subprocess.create_subprocess_exec`), through `getattr` with a folded name, or on an event loop (`asyncio.get_running_loop().subprocess_shell`). The defaults deny `asyncio`'s subprocess, connection and server functions and the event-loop methods that start processes, open connections or use sockets (`sock_recv`, `sock_sendall`, `start_tls`, `getaddrinfo`, `getnameinfo`, ...), send files or schedule code to run later in the host (`call_later`, `run_in_executor`, `set_task_factory`, ...), the calls that change the host loop's state (`stop`, `close`, `set_debug`, `run_forever`, `set_exception_handler`, `set_default_executor`, `shutdown_asyncgens`, `shutdown_default_executor`, `call_exception_handler`, `remove_reader`, `remove_writer`, `remove_signal_handler`, `asyncio.set_event_loop_policy`, `asyncio.set_event_loop`, a policy's `set_event_loop`) and asyncio's child watchers (`get_child_watcher`, `set_child_watcher`, `add_child_handler`: the watcher calls the cell's callback from a host thread), `asyncio.run_coroutine_threadsafe` and `asyncio.all_tasks` (the host's own tasks), a task's `get_context` (`asyncio.current_task().get_context()` is the host task's `contextvars.Context`, whose items are the host's context variables; reported on task values, which `current_task`, `create_task`, `ensure_future`, `asyncio.Task(...)` and a loop's `create_task` return, and, named literally as `asyncio.Task.<name>` in the deny list, on receivers cellguard cannot resolve unless a class of the cell declares the name; round 8 S8-14), also under the submodule that defines them (`asyncio.threads.to_thread`); `random.getstate` with `random.seed`/`setstate` (the host's global RNG). Attribute writes to host objects are `SBX005`; the loop's and policy's state-changing methods are in this deny list so that a configuration can drop them, on a loop value and through a loop class (`asyncio.BaseEventLoop.subprocess_shell(loop, ...)`). A loop value is what `asyncio.get_running_loop()`/`get_event_loop()`/`new_event_loop()` return, and what `.get_loop()`, `.get_event_loop()`, `.get_running_loop()` return on any receiver (a task, a future, the host's dispatch future, a loop policy); a loop method named literally in the deny list (`subprocess_shell`, `call_later`, ...; not the `_*` glob) is also reported on any receiver cellguard cannot resolve, since a loop passes through futures, queues, task results and `gather` unseen, except the names ordinary objects also have (`close`, `stop`, `set_debug`, `sendfile`, `getaddrinfo`, `getnameinfo`, `add_reader`, `add_writer`, `remove_reader`, `remove_writer`: `conn.close()` on an unresolved value is not guessed to be a loop; on a resolved loop they are reported); `pydantic.ImportString` (an import by name) and pydantic's file readers; `atexit.register`, `threading.Timer` and `weakref.finalize`, and the private standard-library modules' other names for `weakref.ref` and the host's threads (`_weakrefset.ref`, `_threading_local.ref`, `_threading_local.current_thread`; allowing a private standard-library module also gets a configuration warning); and `numpy`'s file I/O. pydantic's deprecated deserialisers are methods of every model (Colony's pre-bound `ActionResult`, `Action`, `Ref`), so they are reported on any receiver (`rules/deserialize.rs`): an `allow_pickle=` keyword not literally off, a `content_type=` ending in `pickle`, the string `\"allow_pickle\"`, a v1 loader (`parse_raw`, `parse_raw_as`, `parse_file`, `parse_file_as`, `load_str_bytes`, `load_file`) called with `**mapping` (its keys may be built at runtime) or taken as a value instead of called on the spot (`functools.partial(ActionResult.parse_raw, ...)`, `[M.parse_raw][0]`), and `.parse_file` (reads a host file); `Model.parse_raw(json_text)` stays clean. pydantic v1's `GetterDict` (`getattr` by any key), the `getattr_migration` shim re-exported by pydantic's modules (`sys.modules[name].__dict__[attr]`), `types` internals re-exported by pydantic v1 and `dataclasses` (`CodeType`, `FunctionType`, `new_class`, `prepare_class`, `resolve_bases`, `ModuleType`), `json.tool.main` (`python -m json.tool` on the host's command line), `typing.clear_overloads`, asyncio's `logger` (the host's `logging` tree) and `genericpath`'s file probes are default entries (round 6 S6-6, S6-11, S6-13, S6-17, S6-19, S6-28, S6-31). On a receiver cellguard cannot resolve (a module passed through a generator, a future, `map`, a partial), an attribute named like a denied module member (`m.create_subprocess_exec`, `m.to_thread`, a user-denied `m.loads`) is reported when the entry's module is one the cell may reach (allowed or pre-bound), unless the name is one ordinary objects commonly have (`close`, `seed`, `exists`, `register`, `logger`, ...) or a field a class of the cell declares (round 6 S6-30). The private state of the host's policy, tasks and futures is denied like the loop's (`asyncio.AbstractEventLoopPolicy._*`, `asyncio.Task._*`, `asyncio.Future._*`: `asyncio.get_event_loop_policy()._local._loop` is the host's loop; round 7 S7-15); a loop is also what `._loop` and `._get_loop()` give on any receiver but constants and the cell's own instances (`asyncio.Event()._get_loop()`, `asyncio.Runner()._loop`) and what asyncio's loop classes build (`asyncio.SelectorEventLoop()`), a future what `loop.create_future()` and `asyncio.Future()` give, and a policy what asyncio's policy classes build (round 9 S9-2, S9-3).",
        why: "Allowlisting works per module, but the danger is per function: `asyncio` is in Colony's default allowlist and offers `create_subprocess_shell` and `open_connection`; `numpy.load(..., allow_pickle=True)` runs pickles and `numpy.genfromtxt` reads any file.",
        example: "import asyncio\nproc = asyncio.create_subprocess_shell(\"ls\")\n",
        fixed_example: "import asyncio\npause = asyncio.sleep(0)\n",
        fix_safety: "No fix.",
        options: "`[lint.imports] extend-deny-members` adds entries to the default list; `deny-members` replaces it (a list that drops default entries of allowed modules is a configuration warning).",
        source: "guardrail-anchors §2.4 #15 (Colony's `asyncio` allowlist entry; Cogtrix issue #1246 for `numpy` I/O); CVE-2026-2654.",
        example_config: "dialect = \"functions\"\n[lint.imports]\nallow = [\"asyncio\"]\n",
        ..RuleDoc::EMPTY
    },
};

/// SBX008 frame-walk.
pub static FRAME_WALK: Rule = Rule {
    code: "SBX008",
    name: "frame-walk",
    severity: Severity::Error,
    summary: "Walk of execution frames or tracebacks",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports frame, traceback, generator and coroutine attributes that lead to frames (`tb_frame`, `tb_next`, `f_back`, `f_globals`, `f_locals`, `f_builtins`, `gi_frame`, `cr_frame`, `ag_frame`, ...), and the methods that hand out or print a task's frames (`get_stack`, `print_stack`: `asyncio.current_task().get_stack()`, `task.print_stack()`), on any receiver, whether written out, read with `getattr` (`getattr(t, \"get_\" + \"stack\")`), named in a `match` keyword pattern or walked inside a format field; and the functions that hand out frames or summaries of them (`sys._getframe`, `inspect.currentframe`, `inspect.stack`, `traceback.walk_stack`, `traceback.extract_stack`, `asyncio.format_helpers.extract_stack`, `sys.settrace`). pydantic's `_parent_depth=`/`_parent_namespace_depth=` (`TypeAdapter`, `model_rebuild`) with a value other than the default are reported: pydantic takes `sys._getframe(n)` and evaluates type strings in that frame's globals and locals (round 6 S6-15).",
        why: "A frame's `f_globals` and `f_builtins` belong to the code that runs the cell, not to the sandbox: `e.__traceback__.tb_frame.f_back.f_globals[\"__builtins__\"][\"__import__\"](\"os\")` escapes from any `except` block (smolagents PR #848), and `sys._getframe().f_builtins` does the same (PR #869).",
        example: "gen = (x for x in [1])\nframe = gen.gi_frame\n",
        fixed_example: "gen = (x for x in [1])\nfirst = next(gen)\n",
        fix_safety: "No fix.",
        options: "",
        source: "smolagents PRs #848, #869; guardrail-anchors §2.4 #4, #7.",
        ..RuleDoc::EMPTY
    },
};

/// SBX009 dunder-method-definition.
pub static DUNDER_METHOD_DEFINITION: Rule = Rule {
    code: "SBX009",
    name: "dunder-method-definition",
    severity: Severity::Error,
    summary: "Definition of a dunder method other than __init__, __post_init__, __repr__ and __str__",
    fix: FixAvailability::None,
    doc: RuleDoc {
        what: "Reports `def __x__` for every dunder name except `__init__`, `__repr__`, `__str__` and `__post_init__` (a dataclass's generated `__init__` calls it, in the cell, when the cell creates an instance: the same trigger as `__init__`), class attributes bound to a dunder name that are not plain constants (`__eq__ = lambda s, o: True`), and dunder keys in the namespace dict of a three-argument `type(...)` call. Also generator and async-generator functions whose `yield` sits inside a `try` with a `finally` clause (or an `except` that catches `GeneratorExit`: bare, `BaseException`, `GeneratorExit`) or inside a `with`/`async with` block: that code runs when the generator is closed, and a generator left suspended (stored, or abandoned by a `break` in `async for`) is closed by the host's garbage collector or event loop after the cell has finished. The finding is at the `finally`/`except`/`with`; functions decorated as context managers (`contextlib.contextmanager`, `asynccontextmanager`), whose generator the `with` closes inside the cell, are exempt, unless the cell defines the decorator's name itself (`contextmanager = lambda f: f`, a `contextlib` class of its own). An `except` whose type is a name is resolved through every binding the cell makes of it (`E = GeneratorExit` outside the generator, `E = (ValueError, GeneratorExit)`, chains of aliases); a type cellguard cannot resolve (a parameter, a `for` target, a subscript, a call) counts as catching `GeneratorExit`, while builtin exception names, module members (`json.JSONDecodeError`) and classes the cell defines do not. Whether the generator object escapes is not analysed: any such generator is reported. A class the cell builds on a builtin base (`dict`, `list`, `set`, `tuple`, `str`, `bytes`, `int`, `float`, and `OrderedDict`/`defaultdict`/`Counter`/`deque`), by a `class` statement or `type(name, (dict,), ns)`, that overrides one of the base's own methods (`items`, `keys`, `get`, `append`, `extend`, `split`, ...) is reported like a dunder method: the host calls them on a value it treats as the base type (`json.dumps` and `pickle` call `items()` of a `dict` subclass, `copy.deepcopy` calls `append`/`extend` of a `list` subclass); new method names are not reported. The same holds for a base method written onto such a class, or onto an instance of one, after it was made, by any route: `R.items = f`, `setattr(R, \"items\", f)`, `r.items = f` (an instance attribute shadows the method for the host too), `vars(r)[\"items\"] = f`, `r.__dict__[\"items\"] = f` and `.update(items=f)`/`.setdefault(...)`/`.__setitem__(...)` on those namespaces, `type.__setattr__(R, \"items\", f)`, `object.__setattr__(r, ...)` and `r.__setattr__(...)`, for `class` statements (also through cell base classes, `class S(R)`, and aliases, `S = R`) and `type(...)` classes alike; storing a constant (`r.items = None`) is data, not a method. A dunder method written onto any object by these routes (`C.__del__ = f`, `setattr(C, \"__eq__\", f)`, `vars(C)[\"__hash__\"] = f`) is reported like `def __del__`. Other code the host's event loop runs after the cell's step is reported here too (Colony runs every cell on the host's loop): `.add_done_callback` on any receiver (also through `getattr` or a `match` keyword), like the denied `call_soon`; and a fire-and-forget task: `asyncio.create_task`, `ensure_future`, `gather`, `shield`, the `asyncio.Task` constructor or `as_completed` (which wraps its coroutines in tasks when called; also through aliases and `getattr`), or `.create_task` on a loop or an unknown receiver, whose task the cell never awaits, hands to `gather`/`wait`/`wait_for`/`shield`/`as_completed`, or cancels, directly or through the names, lists and dicts (literals, comprehensions, `dict(...)`, `.append`, `.update`, `d[k] = t`) and `for` loops it is stored in, their `.values()`/`.items()` and their items (`d[k]`) (ruff's `RUF006` shape, widened to names: `keep = loop.create_task(f())` and `tasks.add(asyncio.ensure_future(f()))` are reported, `await asyncio.gather(*tasks)` and `await asyncio.gather(*tasks_by_id.values())` are not). Handing a task to something that returns while it still runs does not count: `asyncio.wait` with a `timeout` or a `return_when` other than `ALL_COMPLETED` (reported itself when given coroutines) consumes its tasks only when the pending set it returns is consumed (`while pending: done, pending = await asyncio.wait(pending, ...)` does), and `wait_for(shield(t), timeout)` cancels the shield, never `t`. `tg.create_task(...)` inside `async with asyncio.TaskGroup() as tg:` is not reported: the group awaits it. A task returned from a function or stored in an attribute counts as dangling. A class-body binding of a dunder through `match` (a capture, a star capture `case [*__del__]`, or an as-pattern `case object() as __del__`) is a dunder method definition like an assignment. A coroutine driven by hand is reported at its `.send`/`.throw` (called or taken as a value, `map(c.send, [None])`): a coroutine object the cell made by calling one of its `async def` functions, or Colony's `run(...)` called without `await`. Driving it hands out what its innermost `await` suspended on (under `run(...)` the host's own future, whose `get_loop()` is the host's event loop), and a coroutine left suspended runs its `finally`/`except` clauses when the host's garbage collector closes it. `await` on the coroutine is ordinary code; a generator's `.send` is not reported. `__repr__` and `__str__` stay exempt (smolagents' `ALLOWED_DUNDER_METHODS`; ordinary cells define them), but they are not confined to the cell: the host calls them whenever a cell object crosses into it (an exception the cell raises is formatted by the host's error handler, `log(obj)` formats it inside the host, `results[k] = obj` is formatted when the host renders the results). So a `__repr__`/`__str__` (a `def`, a class attribute, or a key of a `type(...)` namespace: a lambda or a cell function) whose body does more than build and return a string is reported: a call of anything but conversions, formatting, string and read-only container methods (`str`, `repr`, `format`, `len`, `sorted`, `map`, `join`, `upper`, `get`, `items`, `super().__repr__()`, ...), a store into an attribute or item, `global`/`nonlocal`, `del`, `await` or `yield`. Methods the host runs to format or serialise a cell object get the same body restriction as `__repr__`/`__str__`: pydantic `@computed_field` getters (the model's `repr` calls them), `@model_serializer`/`@field_serializer` methods, and `utcoffset`/`tzname`/`dst` of a cell `tzinfo` class; a `while` loop in such a body, a read of a `@property` of the same class (`self.label` runs its getter), and a cell function or method handed to `map`/`sorted(key=...)` by name (`key=spin`, `map(self.fmt, xs)`) are reported as running cell code (round 6 S6-12, S6-16). So is any other callable such a body hands to `map`/`filter`/`reduce` or as `key=` that is not a string builder (`map(print, xs)`, `sorted(xs, key=exit)`, `filter(self.fns[0], xs)`; `map(str, xs)`, `key=len` and `filter(None, xs)` stay clean): the builtin calls it while the host formats the object, and an escape hidden in a generator inside such a body is reported like any other code there (round 8 S8-11). A library metaclass called with three arguments (`typing.ABCMeta`, `typing.NamedTupleMeta`, `enum.EnumMeta`) builds a class like `type(name, bases, ns)` and its namespace is checked the same way (round 6 S6-20). `asyncio.shield(...)` is reported on every call: what it shields keeps running on the host's loop when the cell is aborted or timed out, however the shield is awaited (round 7 S7-8). `pydantic.create_model(...)` is checked like `type(...)`: the keys of its `__validators__` dict (and of `**fields`) are pasted into the model's class namespace, and a dunder-named field (`__del__=(object, f)`) is left on the class (round 7 S7-9, round 9 S9-5). A module-level `__getattr__` or `__dir__` bound by anything but `def` (`__getattr__ = lambda n: ...`, a `for` target, a `match` capture, a walrus) is reported like the `def`: PEP 562 calls it in the host on every failed lookup on the cell's module (round 9 S9-22). An async generator's step (`agen.asend(None)`, `agen.__anext__()`, `athrow(...)`) is driven by hand like a coroutine: `.send(None)` on it is reported (round 9 S9-23). In the bodies the host runs (`__repr__`, `__str__`, serializers, `tzinfo` methods), unbounded work with read-only builtins is reported too: a power (`**`), a repetition by a constant above 10,000, and a `range` whose bounds are not constants up to 100,000 or `len(...)` (round 9 S9-17); a name on the string-building list that the cell binds itself (`def timedelta(...)`) runs cell code. `datetime`'s pure conversions (`timedelta`, `astimezone`, `date`, `timestamp`, `total_seconds`, ...) are string-building calls (round 9 S9-11, S9-12). Serializers handed to pydantic by value (`PlainSerializer(f)`, `WrapSerializer(f)`, `ConfigDict(json_encoders={T: f})`: a lambda, or the body of the cell function named) get the same body restriction as `@field_serializer` (round 9 S9-18). In those bodies a call through `self`/`cls` of a method the class defines itself is cell code even when its name is on the string-building list (`self.items()`, round 9 S9-26); the same restriction applies to `isoformat`/`strftime`/`ctime` of a cell `datetime`/`date`/`time` subclass (the host's `str()`/`format()` call them by name, round 9 S9-28) and to the `@property` getters `text`, `filename`, `lineno`, `offset`, `msg`, `end_lineno`, `end_offset`, `print_file_and_line` of a cell exception class (the host's traceback formatter reads them from a `SyntaxError`, round 9 S9-27).",
        why: "The interpreter calls dunder methods later and on its own: `__del__` runs during garbage collection, `__eq__` during a comparison in the host, `__enter__` in a `with`, all outside the executor's operation and time limits (smolagents issue #2395). Hooks a class installs for what others do to it stay reported too: `__init_subclass__` and `__set_name__` run when any code (the host, a later cell) subclasses it or builds a class with it, `__class_getitem__` when any code subscripts it.",
        example: "class Tracker:\n    def __del__(self):\n        print(\"gone\")\n",
        fixed_example: "class Tracker:\n    def close(self):\n        print(\"gone\")\n",
        fix_safety: "No fix.",
        options: "",
        source: "smolagents issue #2395 and `ALLOWED_DUNDER_METHODS` (PR #1551); CVE-2026-4963 write-ups (`__enter__`); guardrail-anchors §2.4 #18.",
        example_config: "dialect = \"functions\"\n",
        ..RuleDoc::EMPTY
    },
};

/// The family's rules, in code order.
pub static RULES: &[&Rule] = &[
    &DYNAMIC_IMPORT,
    &DUNDER_ACCESS,
    &CODE_EXECUTION_BUILTIN,
    &DYNAMIC_ATTRIBUTE_ACCESS,
    &MODULE_ESCAPE,
    &UNSAFE_MODULE_ALLOWED,
    &DANGEROUS_MEMBER,
    &FRAME_WALK,
    &DUNDER_METHOD_DEFINITION,
];

/// Runs the sandbox analysis on one cell and reports its findings.
pub fn check(checker: &mut Checker) {
    if !RULES.iter().any(|r| checker.enabled(r)) {
        return;
    }
    for f in analyse_with_table(
        checker.tree,
        Some(checker.nodes),
        checker.src,
        checker.settings,
        true,
    ) {
        let mut d = Diagnostic::new(f.rule, f.range, f.message);
        if let Some(h) = f.help {
            d = d.with_help(h);
        }
        checker.report(d);
    }
}

/// The sandbox findings of one parsed cell (`tree` parsed from `src`), in discovery order.
///
/// With `gate` true (what [`check`] uses) a relevance pre-pass ([`scan`]) restricts the
/// analysis to the parts of the cell that can produce a finding; with `gate` false every node is
/// checked and every binding followed. Both give the same findings (the gated run is tested
/// against the ungated one); the ungated run exists for those tests.
pub fn analyse(
    tree: &tree_sitter::Tree,
    src: &str,
    settings: &crate::config::Settings,
    gate: bool,
) -> Vec<check::Finding> {
    analyse_with_table(tree, None, src, settings, gate)
}

/// As [`analyse`], reading the cell's node table (`nodes`, the [`NodeTable`](crate::nodes::NodeTable)
/// of `tree`) instead of walking the tree where it can. Same findings.
pub fn analyse_with_table<'t>(
    tree: &'t tree_sitter::Tree,
    nodes: Option<&crate::nodes::NodeTable<'t>>,
    src: &str,
    settings: &crate::config::Settings,
    gate: bool,
) -> Vec<check::Finding> {
    // A string literal tree-sitter scans differently from CPython can hide the rest of the
    // cell from the analysis (`f(b"""\N""")`): analyse a same-length rewrite that both read
    // alike instead (see `repair`), with its own node table.
    if let Some((fixed, tree)) =
        crate::rules::syntax::repair::rewrite_mis_scanned_strings(tree.root_node(), src)
    {
        let table = crate::nodes::NodeTable::new(&tree);
        return analyse_tree(&tree, Some(&table), &fixed, settings, gate);
    }
    analyse_tree(tree, nodes, src, settings, gate)
}

fn analyse_tree<'t>(
    tree: &'t tree_sitter::Tree,
    nodes: Option<&crate::nodes::NodeTable<'t>>,
    src: &str,
    settings: &crate::config::Settings,
    gate: bool,
) -> Vec<check::Finding> {
    let root = tree.root_node();
    let cfg = interp::Config {
        allow: &settings.allowed_imports,
        prebound: &settings.namespace.modules,
        table: reach::table(),
        deny: &settings.deny_members,
    };
    let run = || {
        let it = interp::Interp::with_table(root, nodes, src, cfg, gate);
        check::Sbx::new(it, &settings.deny_members, &settings.namespace.names).run(root)
    };
    match nodes {
        Some(table) => field::with_table(table, run),
        None => run(),
    }
}

/// Dunder methods a cell may define without SBX009: smolagents' `ALLOWED_DUNDER_METHODS`
/// (`__init__ __repr__ __str__`) and `__post_init__`, which a dataclass's generated `__init__`
/// calls synchronously inside the cell (never the garbage collector, a comparison or a `with`
/// in the host). Lifecycle and protocol dunders that run later on their own (`__del__`,
/// `__eq__`, `__hash__`, `__enter__`, `__getattribute__`, `__init_subclass__`, `__set_name__`,
/// `__class_getitem__`, ...) stay reported.
pub const ALLOWED_DUNDER_METHODS: &[&str] = &["__init__", "__repr__", "__str__", "__post_init__"];

/// The host-reaching modules of the generated table (`host_modules` in `reach.json`, derived
/// by `tools/gen_sandbox_reach.py` from the standard library's sources): real module name ->
/// capability kinds (`"timeit"` -> `["exec"]`), and kind -> the text a diagnostic shows.
#[derive(Debug, Default, serde::Deserialize)]
struct HostTable {
    #[serde(default)]
    host_kinds: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    host_modules: std::collections::BTreeMap<String, Vec<String>>,
    #[serde(skip)]
    reasons: std::collections::BTreeMap<String, String>,
}

fn host_table() -> &'static HostTable {
    static TABLE: std::sync::OnceLock<HostTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        // An unparsable table (a broken regeneration, caught by the tests) degrades to empty.
        let mut t: HostTable = serde_json::from_str(include_str!("reach.json")).unwrap_or_default();
        let reasons = t
            .host_modules
            .iter()
            .map(|(m, kinds)| {
                let texts: Vec<&str> = kinds
                    .iter()
                    .map(|k| t.host_kinds.get(k).map_or(k.as_str(), String::as_str))
                    .collect();
                (m.clone(), texts.join("; "))
            })
            .collect();
        t.reasons = reasons;
        t
    })
}

/// What host-reaching module `module` gives (`"runs code from strings"` for `timeit`), when it
/// or a parent package is in the generated table (`xmlrpc.client`, `test.support` through
/// `test`). SBX006 and the allowlist configuration warning use it.
pub fn host_module(module: &str) -> Option<&'static str> {
    let t = host_table();
    let mut name = module;
    loop {
        if let Some(r) = t.reasons.get(name) {
            return Some(r.as_str());
        }
        name = name.rsplit_once('.')?.0;
    }
}

/// True when `name` is the last segment of a host-reaching submodule of the generated table
/// (`utils` of `email.utils`, `driver` of `lib2to3.pgen2.driver`): an attribute so named may
/// reach such a submodule from its allowed parent (SBX006, round 6 S6-18), so the relevance
/// pre-pass keeps it.
pub fn host_submodule_name(name: &str) -> bool {
    static NAMES: std::sync::OnceLock<std::collections::BTreeSet<String>> =
        std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            host_table()
                .host_modules
                .keys()
                .filter_map(|m| m.rsplit_once('.').map(|(_, last)| last.to_string()))
                .collect()
        })
        .contains(name)
}

/// [`host_module`] for an allowlist entry's module: an alias of a harmless module is judged by
/// its real name (`os.path` is `posixpath`).
pub fn host_module_entry(module: &str) -> Option<&'static str> {
    let real = reach::table().real_name(module);
    if real != module {
        return host_module(&real);
    }
    host_module(module)
}

/// The host-reaching modules a `pkg.*` allowlist entry lets in: `pkg` itself when it is one,
/// and every host-reaching submodule, sorted (`concurrent.*` -> `concurrent.futures`,
/// `concurrent.futures.process`, ...).
pub fn host_modules_under(pkg: &str) -> Vec<&'static str> {
    let t = host_table();
    let prefix = format!("{pkg}.");
    let mut out: Vec<&'static str> = Vec::new();
    if let Some((m, _)) = t.host_modules.get_key_value(pkg) {
        out.push(m.as_str());
    }
    out.extend(
        t.host_modules
            .range(prefix.clone()..)
            .take_while(|(m, _)| m.starts_with(&prefix))
            .map(|(m, _)| m.as_str()),
    );
    if out.is_empty() {
        // A parent package that is itself host-reaching (`test.support.*` under `test`).
        let mut name = pkg;
        while let Some((parent, _)) = name.rsplit_once('.') {
            if let Some((m, _)) = t.host_modules.get_key_value(parent) {
                out.push(m.as_str());
                break;
            }
            name = parent;
        }
    }
    out
}

#[cfg(test)]
mod host_tests {
    use super::*;

    #[test]
    fn generated_host_modules_cover_the_issue_classes() {
        // F10: string execution, import by name, code objects, file/network I/O, deferred code.
        for m in [
            "timeit",
            "cProfile",
            "profile",
            "trace",
            "bdb",
            "pdb",
            "doctest",
            "code",
            "codeop",
            "pydoc",
            "runpy",
            "unittest.mock",
            "logging.config",
            "logging.handlers",
            "types",
            "xmlrpc.client",
            "xmlrpc.server",
            "http.client",
            "urllib.request",
            "ftplib",
            "smtplib",
            "webbrowser",
            "tempfile",
            "glob",
            "fileinput",
            "zipfile",
            "tarfile",
            "sqlite3",
            "shelve",
            "dbm",
            "pickle",
            "marshal",
            "signal",
            "threading",
            "_thread",
            "atexit",
            "gc",
            "sysconfig",
            "site",
            "platform",
            "linecache",
            "ssl",
            "os",
            "sys",
            "subprocess",
            "socket",
            "importlib",
            "importlib.util",
            "builtins",
            "ctypes",
            "ctypes.util",
            "multiprocessing",
            "concurrent.futures",
            "wsgiref.simple_server",
            "ensurepip",
            "test.support.script_helper",
            "requests",
        ] {
            assert!(host_module(m).is_some(), "{m} is host-reaching");
        }
        assert!(host_module("timeit").is_some_and(|r| r.starts_with("runs code from strings")));
        assert_eq!(host_module("socket"), Some("opens network connections"));
        // The issue's 13 host modules and their C twins, and every module of the hand-written
        // list this table replaced, are still in.
        for m in [
            "os",
            "posix",
            "sys",
            "subprocess",
            "_posixsubprocess",
            "socket",
            "_socket",
            "builtins",
            "importlib",
            "_imp",
            "_frozen_importlib",
            "inspect",
            "ctypes",
            "_ctypes",
            "shutil",
            "pathlib",
            "io",
            "_io",
            "pty",
            "multiprocessing",
            "imp",
            "pkgutil",
            "zipimport",
            "cffi",
            "mmap",
            "codecs",
            "_pickle",
            "distutils",
            "distutils.spawn",
            "venv",
            "telnetlib",
            "httpx",
            "aiohttp",
            "urllib3",
        ] {
            assert!(host_module(m).is_some(), "{m} is host-reaching");
        }
        // Parsing-only parts of network packages are not (the old list flagged all of `urllib`).
        assert!(host_module("urllib.parse").is_none());
        assert!(host_module("http").is_none());
        // Ordinary modules and the default allowlists' modules (SBX005/SBX007 cover those).
        for m in [
            "json",
            "re",
            "math",
            "asyncio",
            "pydantic",
            "typing",
            "collections",
            "string",
            "textwrap",
            "heapq",
            "copy",
            "decimal",
            "fractions",
            "csv",
            "html",
            "enum",
            "hashlib",
            "base64",
            "uuid",
            "difflib",
            "pprint",
            "os.path",
            "email",
        ] {
            assert!(host_module_entry(m).is_none(), "{m} is not host-reaching");
        }
        let under = host_modules_under("concurrent");
        assert!(under.contains(&"concurrent.futures.process"), "{under:?}");
        assert!(host_modules_under("xmlrpc").contains(&"xmlrpc.server"));
        assert!(host_modules_under("json").is_empty());
        assert!(host_modules_under("asyncio").is_empty());
        assert_eq!(host_modules_under("test.support"), vec!["test"]);
    }
}
