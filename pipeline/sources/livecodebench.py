"""LiveCodeBench `code_generation_lite` rows (local jsonl files or Hub rows via `hub.py`).

`private_test_cases` is either a JSON string or base64(zlib(pickle(JSON string))). The pickle is
read by an unpickler that refuses every global, so only plain values (a str) can come out; any
other result is rejected. Decompression is bounded, so a zip bomb is a reject, not an outage.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources.base import (
    FieldError,
    Item,
    Reject,
    SourceContext,
    expand_paths,
    guarded,
    iter_json_lines,
    need,
    unstated_limits,
)
from microcoder.pipeline.sources.normalize import entry_point_for, iso_date, stable_id

MAX_DECOMPRESSED_BYTES = 512 * 2**20
TEST_TYPES = {"stdin": "stdio", "functional": "functional"}


@dataclass
class Options:
    path: str = field(default="", metadata={"help": "A LiveCodeBench jsonl(.gz) file or a folder of them."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    for path in expand_paths(opts.path, ("*.jsonl", "*.jsonl.gz")):
        for _, rec, reject in iter_json_lines(path):
            yield reject if reject is not None else guarded(convert, rec, ctx.name)


class BadTests(ValueError):
    pass


class _NoGlobalsUnpickler(pickle.Unpickler):
    """Refuses every class/function lookup: only plain pickled values can be loaded."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused persistent id")


def decode_test_cases(value: Any) -> list[dict[str, Any]]:
    """LiveCodeBench test cases from a JSON string, a decoded list, or base64(zlib(pickle(str)))."""
    if isinstance(value, list):
        data = value
    elif isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError:
            data = json.loads(_unpack_compressed(value))
    else:
        raise BadTests(f"expected a string or list of test cases, got {type(value).__name__}")
    if not isinstance(data, list):
        raise BadTests(f"test cases decode to {type(data).__name__}, not a list")
    return data


def _unpack_compressed(text: str) -> str:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as e:
        raise BadTests(f"neither JSON nor base64: {e}") from e
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(raw, MAX_DECOMPRESSED_BYTES)
    except zlib.error as e:
        raise BadTests(f"base64 payload is not zlib data: {e}") from e
    if inflater.unconsumed_tail:
        raise BadTests(f"decompressed tests exceed {MAX_DECOMPRESSED_BYTES} bytes")
    try:
        obj = _NoGlobalsUnpickler(io.BytesIO(data)).load()
    except Exception as e:  # noqa: BLE001 - any unpickling failure is a bad record
        raise BadTests(f"payload is not a pickled string: {e}") from e
    if not isinstance(obj, str):
        raise BadTests(f"pickled payload is a {type(obj).__name__}, only a str is accepted")
    return obj


def _tests(cases: list[Any], kind: str, style: str) -> list[TestCase]:
    out = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise BadTests(f"{kind} test {i} is a {type(case).__name__}, not an object")
        inp, outp, ttype = case.get("input"), case.get("output"), case.get("testtype")
        if not isinstance(inp, str) or not isinstance(outp, str):
            raise BadTests(f"{kind} test {i}: input/output must be strings")
        if ttype not in TEST_TYPES:
            raise BadTests(f"{kind} test {i}: unknown testtype {ttype!r}")
        if TEST_TYPES[ttype] != style:
            raise BadTests(f"{kind} test {i} is {ttype!r} but the problem is {style}")
        out.append(TestCase(inp, outp, kind))
    return out


def convert(rec: dict[str, Any], source: str) -> Item:
    rid = None
    try:
        qid = str(need(rec, "question_id", (str, int)))
        rid = stable_id(source, qid)
        content = need(rec, "question_content")
        starter = rec.get("starter_code") or ""
        if not isinstance(starter, str):
            raise FieldError(f"starter_code: expected str, got {type(starter).__name__}")
        metadata = rec.get("metadata") or {}
        if isinstance(metadata, str):
            metadata = json.loads(metadata) if metadata.strip() else {}
        if not isinstance(metadata, dict):
            raise FieldError(f"metadata: expected an object, got {type(metadata).__name__}")
        date = iso_date(rec.get("contest_date"))
    except (FieldError, ValueError) as e:
        return Reject("bad_record", str(e), rec, rid)
    func = metadata.get("func_name")
    style = "functional" if starter.strip() or func else "stdio"
    if style == "functional" and not func:
        return Reject("no_signature", "starter code but no metadata.func_name", rec, rid)
    try:
        public = _tests(decode_test_cases(rec.get("public_test_cases") or "[]"), "public", style)
        private = _tests(decode_test_cases(rec.get("private_test_cases") or "[]"), "private", style)
    except (BadTests, ValueError, RecursionError) as e:
        return Reject("bad_tests", str(e), rec, rid)
    if not public and not private:
        return Reject("no_tests", "no public or private test cases", rec, rid)
    difficulty = rec.get("difficulty")
    return Problem(
        id=rid,
        source=source,
        source_id=qid,
        title=str(rec.get("question_title") or qid),
        statement=content,
        platform=str(rec["platform"]) if rec.get("platform") else None,
        style=style,
        starter_code=starter or None,
        entry_point=entry_point_for(func, starter) if style == "functional" else None,
        tests=public + private,
        difficulty=str(difficulty).lower() if difficulty else None,
        contest_date=date,
        meta={"contest_id": rec.get("contest_id"), "lcb_metadata": metadata, **unstated_limits()},
    )
