"""Google Code Jam custom and interactive judges as Kattis-protocol programs.

The Code Jam archive (problemtools layout) ships Google's own judges under
`output_validators/<name>/`, and its problem.yaml notes that they "do not follow problemtools
specifications". Google's protocols:

- custom judge: `judge.py input attempt expected`, the contestant's output in the file `attempt`;
  exit 0 accepted, exit 1 with a message on stderr wrong answer.
- interactive judge: `judge.py <test set index>` (0-based), talking to the contestant over
  stdin/stdout; exit 0 accepted, non-zero wrong answer (it tells the contestant `-1` first).

Google counts any failure of a judge on an attempt (a non-zero exit, an uncaught exception) as a
wrong answer.

`adapt` turns such a judge into a Python 3 program that speaks the Kattis protocol (argv
`[prog, input_file, answer_file, feedback_dir/]`; the contestant's output on stdin for a custom
judge, the contestant on stdin/stdout for an interactive one; exit 42 accepted, 43 wrong answer,
1 only when the wrapper cannot start the judge: bad arguments, an unreadable test). The program
embeds the judge's source and runs it in its own process as `__main__` with Google's argv. A
Python 2 judge (one that does not compile as Python 3, or whose code, not its comments nor what only
one Python runs, uses Python 2 only names: `is_python2`) is converted (fissix fixers plus a fixer
keeping Python 2's integer `/`; not the print fixer where it imports print_function) and run with
Python 2 runtime stand-ins (`file`, latin-1 text I/O so every byte survives, Python 2's `round` and
seeded `random` sequences, `raw_input`, and an `input` that reads a literal only: Python 2's
evaluated the contestant's line as code). A Python 3 judge runs as it is, with none of these. For an interactive problem the tests are one per test set, input `"<index>\\n"`,
output `""` (`interactive_tests`). C++ judges built on Google's internal cocolib headers cannot be
built from the archive: `adapt` raises `Unsupported` with the reason.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Any

from fissix import fixer_base, pygram, pytree
from fissix.fixer_util import Call, Comma, Name
from fissix.pgen2.parse import ParseError
from fissix.pgen2.tokenize import TokenError
from fissix.refactor import RefactoringTool, get_fixers_from_package

from microcoder.pipeline.schema import TestCase

GOOGLE_PROTOCOL_NOTE = "does not follow problemtools specifications"
COCOLIB = "recruiting/arena/problem_dev/cocolib"

# `import` would rewrite `import x` to `from . import x` when a sibling file exists: the judge
# runs as one file. `input` would make Python 2's `input()` `eval(input())`, running the contestant's
# line as code, and `raw_input` would make `raw_input()` that same `input()`: both names stay and the
# runtime gives them Python 2's meaning, safely (PY2_BUILTINS). (The optional fixers only restyle.)
_SKIPPED_FIXERS = {"fix_import", "fix_input", "fix_raw_input"}
# Builtins only Python 2 has: Python 3 code that uses one without defining or importing it is not
# Python 3.
_PY2_ONLY_BUILTINS = frozenset({"apply", "basestring", "buffer", "cmp", "coerce", "execfile", "file", "intern",
                                "long", "raw_input", "reduce", "reload", "unichr", "unicode", "xrange"})
# dict methods only Python 2 has, with how many arguments they take (`six.iteritems(d)` is not one).
_PY2_DICT_METHODS = {"iteritems": 0, "iterkeys": 0, "itervalues": 0, "has_key": 1}
# Google's custom-judge template (`FindError(self, input_file, output_file, attempt)` on argv 1, 3, 2)
# and the cocolib headers of its C++ judges.
_GOOGLE_JUDGE_CODE = re.compile(r"^def\s+FindError\s*\(\s*\w+\s*,\s*\w+\s*,\s*\w+\s*,\s*\w+\s*\)\s*:"
                                rf'|#\s*include\s*"{re.escape(COCOLIB)}/', re.MULTILINE)


class Unsupported(Exception):
    """The judge cannot be run through the Kattis protocol; str() is the specific reason."""


def judge_kind(problem_yaml: dict[str, Any]) -> str | None:
    """"interactive" for `validation: custom interactive`, "custom" for `validation: custom`
    (with or without `score`), None for the default validator."""
    words = str(problem_yaml.get("validation") or "default").split()
    if not words or words[0] != "custom":
        return None
    return "interactive" if "interactive" in words else "custom"


def follows_google_protocol(yaml_text: str) -> bool:
    """Whether a package's problem.yaml (its raw text: the note is a YAML comment) says its custom
    judge is Google's, not a problemtools validator: then `adapt` it instead of running it as is."""
    return GOOGLE_PROTOCOL_NOTE in yaml_text


def looks_like_google_judge(judge_source: str) -> bool:
    """Whether a judge's code is Google's by its shape: the custom-judge template's `FindError(self,
    input_file, output_file, attempt)` (called on Google's argv) or an include of Google's cocolib. For
    a package without the problem.yaml note; a competition's name alone is no evidence."""
    return bool(_GOOGLE_JUDGE_CODE.search(judge_source))


def interactive_tests(statement_html: str) -> list[TestCase]:
    """One test per Code Jam test set named in the statement ("Test set 1", "Test Set 2 (Hidden)"),
    input the 0-based index the judge takes, group "secret/test_set_<n>"."""
    numbers = sorted({int(n) for n in re.findall(r"Test [Ss]et (\d+)", statement_html)})
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise Unsupported(f"statement names test sets {numbers}, expected 1..N")
    return [TestCase(input=f"{n - 1}\n", output="", kind="private", group=f"secret/test_set_{n}")
            for n in numbers]


def adapt(judge_path: Path, interactive: bool) -> tuple[str, str]:
    """(language, program) of a Kattis-protocol program running Google's judge at `judge_path`.

    For kattis.py: call it for a package whose problem.yaml `follows_google_protocol`, with the one
    source file under output_validators/<name>/ and `interactive = judge_kind(...) ==
    "interactive"`; put the result in `Checker(kind="program" or "interactor", language=...,
    program=..., protocol="kattis")`. The language is "python" (Python 3; the program needs only the
    standard library). Raises `Unsupported(reason)` for a judge that cannot be adapted (a C++ judge
    on Google's cocolib, another language, Python that does not parse); keep the reason in the
    reject.
    """
    source = judge_path.read_text(encoding="utf-8", errors="replace")
    if judge_path.suffix in (".cc", ".cpp", ".cxx", ".c++", ".h"):
        raise Unsupported(_cpp_reason(judge_path, source, interactive))
    if judge_path.suffix not in (".py", ".py2", ".py3"):
        raise Unsupported(f"judge {judge_path.name}: only Python judges are adapted")
    python2 = judge_path.suffix == ".py2" or (judge_path.suffix == ".py" and is_python2(source))
    origin = "Python 3"
    if python2:
        source, origin = to_python3(source), "converted from Python 2"
    try:
        compile(source, judge_path.name, "exec")
    except (SyntaxError, ValueError) as e:
        raise Unsupported(f"judge {judge_path.name} is not valid Python 3 ({origin}): {e}") from e
    return "python", wrapper_program(source, interactive, f"{judge_path.name}, {origin}", python2)


def _cpp_reason(judge_path: Path, source: str, interactive: bool) -> str:
    cocolib = sorted(set(re.findall(rf'#\s*include\s*"({re.escape(COCOLIB)}/[^"]+)"', source)))
    if not cocolib:
        return (f"C++ judge {judge_path.name}: only Python judges are adapted (a C++ one would need "
                "Google's argv protocol wrapped around a compiled binary)")
    reason = (f"C++ judge {judge_path.name} includes Google's internal cocolib headers "
              f"({', '.join(cocolib)}), which the archive does not ship")
    tools = sorted((judge_path.parents[2] / "problem_statement").glob("local_testing_tool*"))
    if interactive and tools:
        reason += (f"; the statement's {tools[0].name} is not used in its place: Google's local "
                   "testing tools are contestants' aids that need not play the judge's cases")
    return reason


def is_python2(source: str) -> bool:
    """Python 2 when it does not compile as Python 3, or when its code (not its comments or strings)
    shows Python 2: a Python 2 only builtin (`xrange`, `file`, `reduce`, ...) it neither defines nor
    imports, `print >> f, ...`, or a Python 2 dict method (`d.iteritems()`, `d.has_key(k)`). A Python 3
    judge must not be converted: the conversion changes what `/` and the Python 2 names do.
    Code under a version guard does not count (`_guarded`): a judge written for both Pythons
    (`try: input = raw_input` / `except NameError: pass`, `if sys.version_info[0] < 3:`) is Python 3."""
    try:
        compile(source, "judge", "exec")
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True
    nodes = list(ast.walk(tree))
    guarded = _guarded(tree)
    unguarded = [n for n in nodes if id(n) not in guarded]
    return _uses_python2_builtins(nodes, unguarded) or any(_is_python2_node(node) for node in unguarded)


def _uses_python2_builtins(nodes: list[ast.AST], unguarded: list[ast.AST]) -> bool:
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in nodes):
        return False  # `from m import *` may define any of them
    used = {n.id for n in unguarded if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return bool((used & _PY2_ONLY_BUILTINS) - _bound_names(nodes))


# What a version guard's test names: `sys.version_info` (or `sys.version`, `sys.hexversion`), a
# `version_info` imported from sys, a flag such as `six.PY2` or `PY3 = sys.version_info[0] == 3`.
_SYS_VERSION_ATTRS = frozenset({"version_info", "version", "hexversion"})
_PY_FLAG = re.compile(r"(IS_)?PY(THON)?_?[23]", re.IGNORECASE)


def _guarded(tree: ast.AST) -> set[int]:
    """ids of the nodes only one of the two Pythons runs: the body of a `try` that catches
    NameError by name (a broad `except:` or `except Exception` is no sign: it wraps a Python 2
    judge's own logic as well), and both branches of an `if` (or `x if c else y`) on the version."""
    roots: list[ast.AST] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Try) and any(_catches_name_error(h.type) for h in n.handlers):
            roots.extend(n.body)
        elif isinstance(n, (ast.If, ast.IfExp)) and _tests_version(n.test):
            roots.extend([n.body] if isinstance(n, ast.IfExp) else n.body)
            roots.extend([n.orelse] if isinstance(n, ast.IfExp) else n.orelse)
    return {id(inner) for root in roots for inner in ast.walk(root)}


def _catches_name_error(handler_type: ast.expr | None) -> bool:
    kinds = handler_type.elts if isinstance(handler_type, ast.Tuple) else [handler_type]
    return any(isinstance(k, ast.Name) and k.id == "NameError" for k in kinds)


def _tests_version(test: ast.expr) -> bool:
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and (_PY_FLAG.fullmatch(n.attr) or (
                n.attr in _SYS_VERSION_ATTRS and isinstance(n.value, ast.Name) and n.value.id == "sys")):
            return True
        if isinstance(n, ast.Name) and (n.id == "version_info" or _PY_FLAG.fullmatch(n.id)):
            return True
    return False


def _bound_names(nodes: list[ast.AST]) -> set[str]:
    """Every name the module binds anywhere (assigned, defined, imported, a parameter)."""
    bound = set()
    for n in nodes:
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return bound


def _is_python2_node(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift):  # print >> sys.stderr, x
        return isinstance(node.left, ast.Name) and node.left.id == "print"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        arity = _PY2_DICT_METHODS.get(node.func.attr)
        return arity is not None and len(node.args) == arity and not node.keywords
    return False


def to_python3(source: str) -> str:
    """Python 2 source as Python 3 with the same behaviour (fissix's 2to3 fixers, Python 2's
    integer division kept as `_py2_div`); the runtime names it needs come from `RUNTIME`."""
    if not source.endswith("\n"):
        source += "\n"
    features = future_features(source)
    # With print_function, `print(x, file=f)` is a call: the print statement's grammar cannot parse
    # it, and the print fixer has nothing to do (fissix's own check misses a list over several lines).
    skipped = _SKIPPED_FIXERS | ({"fix_print"} if "print_function" in features else set())
    fixers = [f for f in get_fixers_from_package("fissix.fixes") if f.rsplit(".", 1)[-1] not in skipped]
    tool = _Py2Tool(fixers, keep_int_division="division" not in features,
                    print_function="print_function" in features)
    try:
        return str(tool.refactor_string(source, "judge.py"))
    except (ParseError, TokenError, IndentationError) as e:
        raise Unsupported(f"judge does not parse as Python 2: {e}") from e


def future_features(source: str) -> frozenset[str]:
    """The names a module's `from __future__ import ...` statements import (they come first, after
    the docstring). Read from tokens: Python 2 source need not parse as Python 3, and a
    parenthesised list may span lines."""
    tokens = (t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.NL, tokenize.COMMENT))
    features: set[str] = set()
    try:
        tok = next(tokens)
        if tok.type == tokenize.STRING:  # the docstring
            while tok.type != tokenize.NEWLINE:
                tok = next(tokens)
            tok = next(tokens)
        while (tok.string, next(tokens).string, next(tokens).string) == ("from", "__future__", "import"):
            tok, alias = next(tokens), False
            while tok.type not in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if tok.type == tokenize.NAME and not alias and tok.string != "as":
                    features.add(tok.string)
                alias = tok.string == "as"
                tok = next(tokens)
            tok = next(tokens)
    except (StopIteration, tokenize.TokenError, SyntaxError):  # the end, or Python 2 only tokens
        pass
    return frozenset(features)


class _Py2Tool(RefactoringTool):
    def __init__(self, fixer_names: list[str], keep_int_division: bool, print_function: bool):
        self._keep_int_division = keep_int_division
        super().__init__(fixer_names, {"print_function": print_function})

    def log_message(self, msg, *args):  # fissix logs every file it refactors: not scrape's business
        pass

    def log_debug(self, msg, *args):
        pass

    def get_fixers(self):
        pre, post = super().get_fixers()
        if self._keep_int_division:
            post.append(FixPy2Division(self.options, self.fixer_log))
        return pre, post


class FixPy2Division(fixer_base.BaseFix):
    """`a / b` -> `_py2_div(a, b)` and `x /= y` -> `x = _py2_div(x, y)` (`x` is evaluated twice):
    Python 2 floors `/` on two ints."""

    BM_compatible = False
    PATTERN = "term< any+ > | expr_stmt< any '/=' any >"

    def match(self, node):
        if node.type == pygram.python_symbols.term:
            divides = any(leaf.type == pygram.token.SLASH for leaf in node.children)
            return {"node": node} if divides else False
        return super().match(node)

    def transform(self, node, results):
        if node.type == pygram.python_symbols.expr_stmt:
            target, _, value = node.children
            call = _div_call(target.clone(), value.clone())
            call.prefix = " "
            return pytree.Node(pygram.python_symbols.expr_stmt,
                               [target.clone(), pytree.Leaf(pygram.token.EQUAL, "=", prefix=" "), call],
                               prefix=node.prefix)
        children = node.children
        left = children[0].clone()
        for op, right in zip(children[1::2], children[2::2], strict=True):
            if op.type == pygram.token.SLASH:
                left = _div_call(left, right.clone())
            else:
                left = pytree.Node(pygram.python_symbols.term, [left, op.clone(), right.clone()])
        left.prefix = node.prefix
        return left


def _div_call(left, right):
    left.prefix = ""
    right.prefix = " "
    return Call(Name("_py2_div"), [left, Comma(), right])


def wrapper_program(source: str, interactive: bool, origin: str, python2: bool) -> str:
    """The Kattis-protocol program: the runtime, the judge's (Python 3) source and `main`;
    `python2` when the source was converted from Python 2 (it then runs with Python 2's builtins)."""
    kind = "interactive" if interactive else "custom"
    return (f"# Google Code Jam {kind} judge ({origin}) wrapped for the Kattis protocol\n"
            f"# (generated by pipeline/sources/codejam_judge.py).\n"
            f"{RUNTIME}\n"
            f"JUDGE_SOURCE = {source!r}\n"
            f"INTERACTIVE = {interactive!r}\n"
            f"PYTHON2 = {python2!r}\n\n"
            "if __name__ == '__main__':\n"
            "    sys.exit(kattis_main(sys.argv, JUDGE_SOURCE, INTERACTIVE, PYTHON2))\n")


# The generated program's runtime: Python 2 stand-ins the converted judge calls, and the
# protocol mapping. Standard library only (it runs in the evaluator's sandbox).
RUNTIME = r'''
import ast, builtins, decimal, functools, io, linecache, math, os, random as _py3_random, sys, tempfile, traceback, types


def _py2_div(a, b):
    """Python 2's `/`: floor division on two ints, true division otherwise."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if hasattr(type(a), "__div__"):
        return a.__div__(b)
    return a / b


def _py2_round(x, n=0):
    """Python 2's round: half away from zero on the exact value, a float."""
    x = float(x)
    if math.isinf(x) or math.isnan(x) or x == 0:
        return x
    context = decimal.Context(prec=400)
    q = decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-n), decimal.ROUND_HALF_UP, context)
    return float(q)


def _py2_open(name, mode="r", buffering=-1):
    """Python 2's file()/open(): text whose characters are the bytes (latin-1), no newline translation."""
    universal = "U" in mode
    mode = mode.replace("b", "").replace("U", "") or "r"
    return open(name, mode, buffering, encoding="latin-1", newline=None if universal else "")


def _py2_cmp(a, b):
    return (a > b) - (a < b)


def _py2_str_hash(s):
    """Python 2's (64-bit, unrandomized) hash of a str: what random.seed(str) seeded with."""
    if not s:
        return 0
    x = ord(s[0]) << 7
    for c in s:
        x = ((1000003 * x) ^ ord(c)) & 0xFFFFFFFFFFFFFFFF
    x ^= len(s)
    x = x - (1 << 64) if x >= (1 << 63) else x
    return -2 if x == -1 else x


class _Py2Random(_py3_random.Random):
    """Python 2.7's Random: same Mersenne Twister and seeding, and Python 2's randrange, randint,
    choice, shuffle and sample (Python 3 draws them differently), so seeded judges replay."""

    def seed(self, a=None, version=2):
        if isinstance(a, (str, bytes)):
            a = _py2_str_hash(a.decode("latin-1") if isinstance(a, bytes) else a)
        elif a is not None and not isinstance(a, int):
            a = hash(a)
        super().seed(a)

    def _py2_randbelow(self, n):
        k = int(1.00001 + math.log(n - 1, 2.0))
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r

    def randrange(self, start, stop=None, step=1):
        maxwidth = 1 << 53
        istart = int(start)
        if istart != start:
            raise ValueError("non-integer arg 1 for randrange()")
        if stop is None:
            if istart > 0:
                return self._py2_randbelow(istart) if istart >= maxwidth else int(self.random() * istart)
            raise ValueError("empty range for randrange()")
        istop = int(stop)
        if istop != stop:
            raise ValueError("non-integer stop for randrange()")
        width = istop - istart
        if step == 1 and width > 0:
            if width >= maxwidth:
                return istart + self._py2_randbelow(width)
            return int(istart + int(self.random() * width))
        if step == 1:
            raise ValueError("empty range for randrange() (%d,%d, %d)" % (istart, istop, width))
        istep = int(step)
        if istep != step:
            raise ValueError("non-integer step for randrange()")
        if istep > 0:
            n = (width + istep - 1) // istep
        elif istep < 0:
            n = (width + istep + 1) // istep
        else:
            raise ValueError("zero step for randrange()")
        if n <= 0:
            raise ValueError("empty range for randrange()")
        if n >= maxwidth:
            return istart + istep * self._py2_randbelow(n)
        return istart + istep * int(self.random() * n)

    def randint(self, a, b):
        return self.randrange(a, b + 1)

    def choice(self, seq):
        return seq[int(self.random() * len(seq))]

    def shuffle(self, x, random=None):
        random = random or self.random
        for i in reversed(range(1, len(x))):
            j = int(random() * (i + 1))
            x[i], x[j] = x[j], x[i]

    def sample(self, population, k):
        n = len(population)
        if not 0 <= k <= n:
            raise ValueError("sample larger than population")
        result = [None] * k
        setsize = 21
        if k > 5:
            setsize += 4 ** math.ceil(math.log(k * 3, 4))
        if n <= setsize or hasattr(population, "keys"):
            pool = list(population)
            for i in range(k):
                j = int(self.random() * (n - i))
                result[i] = pool[j]
                pool[j] = pool[n - i - 1]
        else:
            selected = set()
            for i in range(k):
                j = int(self.random() * n)
                while j in selected:
                    j = int(self.random() * n)
                selected.add(j)
                result[i] = population[j]
        return result


def _py2_random_module():
    """A `random` module whose functions are one _Py2Random's, as Python 2's were."""
    module = types.ModuleType("random")
    module.__dict__.update({k: v for k, v in vars(_py3_random).items() if not k.startswith("__")})
    inst = _Py2Random()
    for name, value in vars(_py3_random).items():
        if getattr(value, "__self__", None) is _py3_random._inst:  # random.shuffle etc.
            setattr(module, name, getattr(inst, name))
    module.Random, module._inst = _Py2Random, inst
    return module


def _py2_input(prompt=""):
    """Python 2's input() evaluated the line as code; a literal (a number, a string, a list) is all it
    reads here: the line is the contestant's. Anything else raises, a wrong answer."""
    return ast.literal_eval(input(prompt).strip())


PY2_BUILTINS = {"_py2_div": _py2_div, "file": _py2_open, "open": _py2_open, "round": _py2_round,
                "cmp": _py2_cmp, "reduce": functools.reduce, "unichr": chr, "intern": sys.intern,
                "raw_input": input, "input": _py2_input}


def run_judge(code, argv, python2):
    """Runs the judge's compiled `code` as __main__ with `argv`: its exit status (0 when it returns).
    A judge converted from Python 2 gets Python 2's builtins and `random`; a Python 3 one nothing.
    An exception the judge raises propagates (a judge crash)."""
    namespace = {"__name__": "__main__", "__file__": argv[0], "__builtins__": builtins}
    if python2:
        namespace.update(PY2_BUILTINS)
        sys.modules["random"] = _py2_random_module()
    saved_argv, sys.argv = sys.argv, list(argv)
    try:
        exec(code, namespace)
    except SystemExit as e:
        return _exit_status(e.code)
    finally:
        sys.argv = saved_argv
        sys.modules["random"] = _py3_random
    return 0


def _exit_status(code):
    if code is None or code is False:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): Python prints it and exits 1
    return 1


class _Tee(io.TextIOBase):
    """The judge's stderr: kept for judgemessage.txt and passed on."""

    def __init__(self, stream):
        self.kept, self.stream = io.StringIO(), stream

    def write(self, text):
        self.kept.write(text)
        try:
            self.stream.write(text)
        except (OSError, ValueError):
            pass
        return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass


def _stage_attempt(feedback_dir):
    """The contestant's output (stdin) as a file, for Google's argv."""
    data = sys.stdin.buffer.read()
    try:
        fd, path = tempfile.mkstemp(prefix="attempt_", dir=feedback_dir)
    except OSError:
        fd, path = tempfile.mkstemp(prefix="attempt_")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def _test_set_index(input_file):
    with open(input_file, encoding="latin-1") as f:
        words = f.read().split()
    if len(words) != 1 or not words[0].isdigit():
        raise ValueError(f"test input must be the test set index, got {words[:3]!r}")
    return words[0]


def _talk(python2):
    """The contestant's pipes: flushed per line; for a Python 2 judge, bytes as characters (latin-1)
    without newline translation, as Python 2's were."""
    if python2:
        sys.stdin.reconfigure(encoding="latin-1", newline="")
        sys.stdout.reconfigure(encoding="latin-1", line_buffering=True)
    else:
        sys.stdout.reconfigure(line_buffering=True)


def _detach_stdout():
    """Flush what is left for the contestant; one that has gone must not fail this process."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


JUDGE_FILE = "judge.py"  # the judge's file name in its argv and tracebacks
CRASH_FRAMES = 3  # of the judge's own code, in judgemessage.txt


def _judge_status(code, argv, python2):
    """The judge's exit status on this attempt. Google counts a judge that fails on an attempt as
    a wrong answer, so an exception raised while the judge runs is a non-zero status (where in the
    judge and what, on stderr, for judgemessage.txt), never this program's failure."""
    try:
        return run_judge(code, argv, python2)
    except BrokenPipeError:
        print("the submission stopped reading the judge's output", file=sys.stderr)
    except BaseException:  # any (SystemExit is its exit status, in run_judge)
        print("the judge failed on this attempt:\n" + _crash_report(), file=sys.stderr, end="")
    return 1


def _crash_report():
    """The exception being handled: the judge's last frames and the error (not this program's)."""
    kind, error, tb = sys.exc_info()
    frames = [f for f in traceback.extract_tb(tb) if f.filename == JUDGE_FILE][-CRASH_FRAMES:]
    return "".join(traceback.format_list(frames) + traceback.format_exception_only(kind, error))


def _compile_judge(source):
    """The judge's code, its lines known to tracebacks (not read from whatever judge.py is on disk)."""
    linecache.cache[JUDGE_FILE] = (len(source), None, source.splitlines(True), JUDGE_FILE)
    return compile(source, JUDGE_FILE, "exec")


def _judge_argv(input_file, feedback_dir, answer_file, interactive):
    """Google's argv for this test (the custom judge's attempt staged as a file)."""
    if interactive:
        return [JUDGE_FILE, _test_set_index(input_file)]
    _readable(input_file)
    _readable(answer_file)
    return [JUDGE_FILE, input_file, _stage_attempt(feedback_dir), answer_file]


def _readable(path):
    with open(path, "rb"):
        pass


def _remove(path):
    try:
        os.remove(path)
    except OSError:  # the judge's business what it did with its attempt file
        pass


def kattis_main(argv, source, interactive, python2):
    """Kattis protocol around Google's judge: 42 accepted, 43 wrong answer (the judge exited non-zero
    or raised), 1 when this program cannot start the judge (bad arguments, unreadable files)."""
    if len(argv) < 4:
        print("usage: judge input_file answer_file feedback_dir", file=sys.stderr)
        return 1
    input_file, answer_file, feedback_dir = argv[1:4]
    try:
        code = _compile_judge(source)
        judge_argv = _judge_argv(input_file, feedback_dir, answer_file, interactive)
    except Exception:
        traceback.print_exc()
        return 1
    real_stderr = sys.stderr
    sys.stderr = tee = _Tee(real_stderr)
    try:
        if interactive:
            _talk(python2)
            try:
                status = _judge_status(code, judge_argv, python2)
            finally:
                _detach_stdout()
        else:
            status = _judge_status(code, judge_argv, python2)
    finally:
        sys.stderr = real_stderr
        if not interactive:
            _remove(judge_argv[2])
    if status == 0:
        return 42
    message = tee.kept.getvalue().strip() or f"judge exited with status {status}"
    with open(os.path.join(feedback_dir, "judgemessage.txt"), "a", encoding="utf-8") as f:
        f.write(message + "\n")
    return 43
'''
