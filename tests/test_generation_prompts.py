"""Prompts built from problems (pipeline/generation/prompts.py)."""

from __future__ import annotations

import pytest

from microcoder.pipeline.generation.prompts import DEFAULT_SYSTEM_PROMPT, build_messages, render_prompt
from microcoder.pipeline.schema import Checker, Problem


def stdio() -> Problem:
    return Problem(id="p1", source="seed", title="Sum", statement="Read a and b, print a+b.", style="stdio",
                   time_limit_s=1.5, memory_limit_mb=128)


def functional(starter: str | None = "class Solution:\n    def twoSum(self, nums, target):\n        ") -> Problem:
    return Problem(id="p2", source="seed", statement="Find two indices.", style="functional",
                   entry_point="Solution().twoSum", starter_code=starter)


def test_stdio_messages_ask_for_a_program_reading_stdin():
    msgs = build_messages(stdio())
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == DEFAULT_SYSTEM_PROMPT
    user = msgs[1]["content"]
    assert user.startswith("# Sum\n\nRead a and b, print a+b.")
    assert "standard input" in user and "standard output" in user
    assert "```python" in user and "Time limit: 1.5 s" in user and "128 MB" in user


def test_functional_messages_carry_the_starter_code_and_method():
    user = build_messages(functional())[1]["content"]
    assert "class Solution:\n    def twoSum(self, nums, target):" in user
    assert "the method `twoSum` of class `Solution`" in user
    assert "do not read standard input" in user


def test_functional_without_starter_names_the_function():
    p = Problem(id="p3", source="s", statement="Add.", style="functional", entry_point="add")
    user = build_messages(p)[1]["content"]
    assert "the function `add`" in user and "starter code" not in user


def test_cpp_and_system_prompt_options():
    msgs = build_messages(stdio(), language="cpp", system_prompt="")
    assert [m["role"] for m in msgs] == ["user"]
    assert "C++17" in msgs[0]["content"] and "```cpp" in msgs[0]["content"]
    assert build_messages(stdio(), system_prompt="Be brief.")[0]["content"] == "Be brief."
    with pytest.raises(ValueError, match="Python only"):
        build_messages(functional(), language="cpp")
    with pytest.raises(ValueError, match="unsupported language"):
        build_messages(stdio(), language="rust")


def test_thinking_changes_wording_only():
    off, on = build_messages(stdio())[1]["content"], build_messages(stdio(), thinking=True)[1]["content"]
    assert off != on and "Think" in on


def test_render_prompt_switches_thinking_in_the_template():
    from microcoder.pipeline.models import build_tokenizer

    tok = build_tokenizer()
    msgs = build_messages(stdio())
    off = render_prompt(msgs, tok)
    on = render_prompt(msgs, tok, thinking=True)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert on.endswith("<|im_start|>assistant\n")
    assert "Read a and b" in on


def test_render_prompt_needs_a_chat_template():
    class NoTemplate:
        chat_template = None

    with pytest.raises(ValueError, match="chat template"):
        render_prompt([{"role": "user", "content": "x"}], NoTemplate())


def interactive(**kw) -> Problem:
    kw.setdefault("meta", {"interactive": True})
    return Problem(id="p4", source="seed", title="Guess", statement="Guess the hidden number x.", style="stdio", **kw)


@pytest.mark.parametrize("problem", [
    interactive(),
    interactive(meta={}, tags=["interactive"]),
    interactive(meta={}, checker=Checker(kind="interactor", language="cpp", protocol="testlib", program="int main(){}")),
], ids=["meta", "tag", "interactor"])
def test_interactive_problems_say_so_and_ask_for_a_flush_after_every_line(problem):
    py = build_messages(problem)[1]["content"]
    assert "This is an interactive problem." in py and "Flush the output after every line" in py
    assert "flush=True" in py and "```python" in py
    assert "std::endl" in build_messages(problem, language="cpp")[1]["content"]
    assert py.count("Guess") == 2 and py.startswith("# Guess\n\n")  # the title once (and "Guess the hidden...")


def test_a_plain_stdio_prompt_says_nothing_of_interaction():
    user = build_messages(stdio())[1]["content"]
    assert "interactive" not in user and "Flush" not in user


def test_the_title_is_not_repeated_where_the_statement_starts_with_it():
    p = Problem(id="p5", source="kattis", title="Hello World", statement="# Hello World\n\nPrint it.", style="stdio")
    user = build_messages(p)[1]["content"]
    assert user.startswith("# Hello World\n\nPrint it.") and user.count("Hello World") == 1
