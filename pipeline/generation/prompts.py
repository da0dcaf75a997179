"""Chat prompts for a problem: one builder shared by rollout, training and model evaluation.

The format instructions are explicit per style (METHOD.md section 1 names the mix of stdin/stdout
and function-completion problems without clear instructions as a defect to fix):
- `stdio`: a complete program that reads standard input and writes standard output;
- `functional`: complete the given starter code (or write the named function), return the value;
- interactive (a `stdio` problem marked interactive, or judged by an interactor): a program that
  talks with the judge through standard input and output and flushes after every line it writes
  (an unflushed query leaves both sides waiting, which the judge reports as a time-out).

The title heads the prompt once: not again where the statement already starts with it.

Thinking is switched by the chat template (`enable_thinking`, as Qwen3's template does); the
messages only change the wording of the answer instructions. Backends that take messages (vLLM's
`LLM.chat`, OpenAI-compatible servers) pass the same flag as a chat-template keyword.
"""

from __future__ import annotations

from typing import Any

from microcoder.pipeline.schema import Problem
from microcoder.pipeline.sources.judging import is_interactive

DEFAULT_SYSTEM_PROMPT = (
    "You are an expert competitive programmer. You write correct, efficient code that passes "
    "hidden tests within the time and memory limits."
)

_LANGUAGE = {
    "python": ("Python 3", "python"),
    "cpp": ("C++17", "cpp"),
}


def _language(language: str) -> tuple[str, str]:
    try:
        return _LANGUAGE[language]
    except KeyError:
        raise ValueError(f"unsupported language {language!r}; supported: {sorted(_LANGUAGE)}") from None


def _method_name(entry_point: str) -> str:
    """`Solution().twoSum` -> `twoSum`; `add` -> `add`."""
    return entry_point.rsplit(".", 1)[-1].strip()


def _limits(problem: Problem) -> str:
    return f"Time limit: {problem.time_limit_s:g} s per test. Memory limit: {problem.memory_limit_mb} MB."


def _stdio_instructions(problem: Problem, name: str, fence: str) -> str:
    return (
        f"Write a complete {name} program that reads the input from standard input and writes the "
        "answer to standard output, exactly in the output format above. Do not print prompts, "
        "debugging text or anything else.\n"
        f"{_limits(problem)}\n"
        f"Put the whole program in a single ```{fence} code block at the end of your answer."
    )


_FLUSH = {"python": "print(..., flush=True) or sys.stdout.flush()",
          "cpp": "std::cout << std::endl (or std::cout.flush() / fflush(stdout))"}


def _interactive_instructions(problem: Problem, name: str, fence: str, language: str) -> str:
    return (
        f"This is an interactive problem. Write a complete {name} program that talks with the judge "
        "program: read what the judge sends from standard input and write your queries and answers to "
        "standard output, exactly in the interaction format above. Flush the output after every line "
        f"you write ({_FLUSH[language]}), or the judge never receives it. Do not print prompts, "
        "debugging text or anything else.\n"
        f"{_limits(problem)}\n"
        f"Put the whole program in a single ```{fence} code block at the end of your answer."
    )


def _title(problem: Problem) -> str:
    """The title heading, unless the statement already starts with it (once is enough)."""
    title = (problem.title or "").strip()
    first = next((line for line in problem.statement.splitlines() if line.strip()), "")
    if not title or first.strip().lstrip("#").strip().casefold() == title.casefold():
        return ""
    return f"# {title}\n\n"


def _functional_instructions(problem: Problem, name: str, fence: str) -> str:
    entry = problem.entry_point or ""
    method = _method_name(entry)
    starter = (problem.starter_code or "").rstrip()
    is_method = entry.startswith("Solution") or "class Solution" in starter
    target = f"the method `{method}` of class `Solution`" if is_method else f"the function `{method}`"
    lines = []
    if starter:
        lines.append(f"Complete the following starter code; keep its signature:\n```{fence}\n{starter}\n```")
    lines.append(
        f"Implement {target}. It is called with the arguments described above and must return the "
        "answer (do not read standard input and do not print the answer). You may add imports and "
        "helper functions."
    )
    lines.append(_limits(problem))
    lines.append(
        f"Put the complete {name} code (imports, helpers and {target}) in a single ```{fence} code "
        "block at the end of your answer."
    )
    return "\n".join(lines)


def build_messages(
    problem: Problem,
    *,
    thinking: bool = False,
    language: str = "python",
    system_prompt: str | None = None,
) -> list[dict[str, str]]:
    """Chat messages asking for a solution of `problem` in `language` (`python` or `cpp`).

    `system_prompt=None` uses `DEFAULT_SYSTEM_PROMPT`; `""` omits the system message.
    Functional problems are Python only (they are judged by calling the entry point).
    """
    name, fence = _language(language)
    if problem.style == "functional":
        if language != "python":
            raise ValueError(f"problem {problem.id}: functional problems are Python only, got {language!r}")
        if not problem.entry_point:
            raise ValueError(f"problem {problem.id}: functional problem without entry_point")
        instructions = _functional_instructions(problem, name, fence)
    elif problem.style == "stdio" and is_interactive(problem):
        instructions = _interactive_instructions(problem, name, fence, language)
    elif problem.style == "stdio":
        instructions = _stdio_instructions(problem, name, fence)
    else:
        raise ValueError(f"problem {problem.id}: unknown style {problem.style!r}")
    how = (
        "Think the problem through before answering."
        if thinking
        else "Answer directly: a short explanation at most, then the code."
    )
    user = f"{_title(problem)}{problem.statement.strip()}\n\n## Format\n{instructions}\n{how}"
    system = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user})
    return messages


def render_prompt(messages: list[dict[str, str]], tokenizer: Any, *, thinking: bool = False) -> str:
    """The model's prompt text for `messages` (generation prompt added, thinking on or off).

    `enable_thinking` is passed to the chat template; templates that do not use it ignore it.
    """
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("the tokenizer has no chat template; set one or use a chat model")
    return tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=thinking
    )
