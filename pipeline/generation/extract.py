"""Code extraction from a model completion: the last fenced block of the answer, language-aware.

Rules (shared by rollout scoring, training rewards and model evaluation):
- Only the answer counts: text after the last `</think>`. A `<think>` that is never closed means
  the model was still thinking (usually truncated): no code.
- Fenced blocks are Markdown fences (three or more backticks, or tildes) with an optional info
  string. A block tagged with the wanted language wins; an untagged block is accepted when no
  tagged one exists; blocks tagged with another language (`text`, `bash`, `cpp` when Python is
  wanted...) never count.
- The last qualifying block wins (models often draft, then correct).
- A fence still open at the end of the text is an unfinished answer: no code (a truncated sample
  is unfinished, not wrong; METHOD.md section 3).
- A trainer that decodes with special tokens kept (OpenRLHF) leaves the end-of-sequence token right
  after the closing fence (```` ```<|im_end|> ````): special-token markers at the end of a fence line
  are not part of it. Only the closing line is read that way: code is never taken from outside a
  fence, and a block whose fence never closes stays unfinished.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LANGUAGE_TAGS = {
    "python": {"python", "python3", "py", "py3"},
    "cpp": {"cpp", "c++", "cxx", "cc", "c", "hpp", "cpp17", "cpp20", "c++17", "c++20"},
}

_OPEN = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
# Special-token shapes of the common chat tokenizers: `<|im_end|>`, `<|endoftext|>`, `<|eot_id|>`
# (ChatML, Qwen, Llama 3, Phi), DeepSeek's full-width `<｜end▁of▁sentence｜>`, `</s>` (Llama 2,
# Mistral), Gemma's `<eos>` and `<end_of_turn>`.
SPECIAL_TOKEN = r"<\|[^|\s<>]{1,40}\|>|<｜[^｜\s]{1,40}｜>|</s>|<eos>|<end_of_turn>"


_SHAPE = re.compile(SPECIAL_TOKEN)
_LONGEST_SHAPE = 44  # "<|" + 40 + "|>"


def _strip_end(text: str, extra: tuple[str, ...] = ()) -> str:
    """`text` without the whitespace and special-token markers that end it. Peeled from the end one
    marker at a time, by index (linear: a regex anchored at the end backtracks quadratically)."""
    end = len(text)
    while True:
        while end and text[end - 1].isspace():
            end -= 1
        size = next((len(t) for t in extra if t and text.endswith(t, 0, end)), 0)
        if not size and end and text[end - 1] == ">":
            start = text.rfind("<", max(0, end - _LONGEST_SHAPE), end)
            size = end - start if start >= 0 and _SHAPE.fullmatch(text, start, end) else 0
        if not size:
            return text[:end]
        end -= size


@dataclass
class CodeBlock:
    info: str  # the info string's first word, lower-cased ("" when untagged)
    code: str
    closed: bool


def answer_part(text: str) -> str | None:
    """The text after the last `</think>`; None when a `<think>` is never closed."""
    end = text.rfind("</think>")
    if end >= 0:
        return text[end + len("</think>"):]
    if "<think>" in text:
        return None
    return text


def strip_trailing_special_tokens(text: str, special_tokens: tuple[str, ...] = ()) -> str:
    """`text` without the special-token markers that end it (the EOS, a pad run), and nothing else:
    a line of code is never changed. `special_tokens`: a tokenizer's own, beyond the common shapes."""
    return _strip_end(text, tuple(special_tokens))


def fenced_blocks(text: str) -> list[CodeBlock]:
    """All fenced blocks in order; the last one may be unclosed (`closed=False`)."""
    blocks: list[CodeBlock] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        tag = info.split()[0].lower() if info else ""
        body: list[str] = []
        closed = False
        i += 1
        while i < len(lines):
            line = lines[i]
            bare = _strip_end(line)  # "```<|im_end|>" closes like "```"
            stripped = bare.strip()
            if stripped and stripped[0] == fence[0] and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                closed = True
                i += 1
                break
            if fence[0] == "`" and bare.rstrip().endswith(fence) and stripped != fence:
                # "print(x)```": the closing fence glued to the last code line.
                body.append(bare.rstrip()[: -len(fence)])
                closed = True
                i += 1
                break
            body.append(line)
            i += 1
        blocks.append(CodeBlock(info=tag, code="\n".join(body), closed=closed))
    return blocks


def extract_code(text: str, language: str = "python") -> str | None:
    """The code of the last fenced `language` block of the answer, or None (see module docs)."""
    if language not in LANGUAGE_TAGS:
        raise ValueError(f"unsupported language {language!r}; supported: {sorted(LANGUAGE_TAGS)}")
    answer = answer_part(text or "")
    if answer is None:
        return None
    blocks = fenced_blocks(answer)
    if not blocks or not blocks[-1].closed:
        return None
    tags = LANGUAGE_TAGS[language]
    tagged = [b for b in blocks if b.info in tags]
    untagged = [b for b in blocks if b.info == ""]
    chosen = (tagged or untagged or [None])[-1]
    if chosen is None:
        return None
    code = chosen.code.strip("\n")
    return code if code.strip() else None
