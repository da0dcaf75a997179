"""Builders for seed records. Expected outputs come from oracles written here (brute force or a
different method), never from the reference solutions, so the verifier checks something real."""
import copy
import json
import random

from microcoder.pipeline.schema import Checker, Problem, ReferenceSolution, TestCase

RECORDS = []


def rng(slug):
    return random.Random("seed:" + slug)


def fence(s):
    return "```\n" + s.rstrip("\n") + "\n```"


def stdio_examples(pairs, plain=False):
    out = []
    for k, (i, o) in enumerate(pairs, 1):
        title = "Example" if len(pairs) == 1 else f"Example {k}"
        if plain:
            out.append(f"{title}\nInput:\n{i.rstrip()}\nOutput:\n{o.rstrip()}")
        else:
            out.append(f"## {title}\n\nInput:\n\n{fence(i)}\n\nOutput:\n\n{fence(o)}")
    return "\n\n".join(out)


def _record(slug, title, statement, style, tests, py, cpp, *, platform, difficulty, rating, tags, date,
            starter=None, entry=None, checker=None, meta=None, source="seed", tl=2.0):
    refs = [ReferenceSolution("python", py.strip("\n") + "\n")]
    if cpp:
        refs.append(ReferenceSolution("cpp", cpp.strip("\n") + "\n"))
    p = Problem(
        id=f"{source}/{slug}", source=source, source_id=slug, url=None, title=title,
        statement=statement.strip() + "\n", platform=platform, style=style, starter_code=starter,
        entry_point=entry, tests=[TestCase(i, o, k) for i, o, k in tests], checker=checker,
        time_limit_s=tl, memory_limit_mb=256, reference_solutions=refs, difficulty=difficulty,
        rating=rating, tags=tags, contest_date=date,
        license="Apache-2.0", meta=meta or {},
    )
    RECORDS.append(p)
    return p


def stdio(slug, title, body, cases, fmt, solve, py, cpp=None, npub=1, plain=False, **kw):
    tests = []
    for n, c in enumerate(cases):
        tests.append((fmt(c).rstrip("\n") + "\n", solve(c).rstrip("\n") + "\n", "public" if n < npub else "private"))
    statement = body.strip() + "\n\n" + stdio_examples([(i, o) for i, o, _ in tests[:npub]], plain)
    return _record(slug, title, statement, "stdio", tests, py, cpp, **kw)


def jd(v):
    return json.dumps(v, separators=(",", ":"))


def func(slug, title, body, params, cases, solve, py, entry, starter, npub=1, **kw):
    tests = []
    for n, args in enumerate(cases):
        out = solve(*copy.deepcopy(args))
        tests.append(("\n".join(jd(a) for a in args), jd(out), "public" if n < npub else "private"))
    ex = []
    for k, args in enumerate(cases[:npub], 1):
        title_ = "Example" if npub == 1 else f"Example {k}"
        shown = ", ".join(f"{p} = {jd(a)}" for p, a in zip(params, args))
        ex.append(f"## {title_}\n\nInput: `{shown}`\n\nOutput: `{tests[k - 1][1]}`")
    statement = body.strip() + "\n\n" + "\n\n".join(ex)
    return _record(slug, title, statement, "functional", tests, py, None, entry=entry, starter=starter, **kw)


def float_checker():
    return Checker(kind="float", rel_tol=1e-6, abs_tol=1e-6)


def program_checker(src):
    return Checker(kind="program", program=src.strip("\n") + "\n", language="python", protocol="kattis")
