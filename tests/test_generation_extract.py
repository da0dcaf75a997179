"""Code extraction from a model's answer (pipeline/generation/extract.py)."""

from __future__ import annotations

import pytest

from microcoder.pipeline.generation.extract import answer_part, extract_code, fenced_blocks


def test_no_code():
    assert extract_code("I cannot solve this.") is None
    assert extract_code("") is None
    assert extract_code("```python\n\n```") is None  # empty block


def test_last_block_wins():
    text = "Draft:\n```python\nprint(1)\n```\nFixed:\n```python\nprint(2)\n```\nDone."
    assert extract_code(text) == "print(2)"


def test_think_blocks_are_ignored():
    text = "<think>maybe\n```python\nprint('thought')\n```\n</think>\nAnswer:\n```python\nprint('answer')\n```"
    assert extract_code(text) == "print('answer')"
    # Only code inside the thinking: the answer has none.
    assert extract_code("<think>\n```python\nx=1\n```\n</think>\nNo idea.") is None
    # A template that opened <think> in the prompt: the completion holds only the closing tag.
    assert extract_code("reasoning...\n```python\nx=0\n```</think>\n```python\nx=1\n```") == "x=1"


def test_unclosed_think_means_no_code():
    assert extract_code("<think>\n```python\nprint(1)\n```\nstill thinking") is None
    assert answer_part("<think>abc") is None


def test_unclosed_fence_is_unfinished():
    assert extract_code("```python\nprint(1)\n```\nand now\n```python\nprint(2") is None
    assert extract_code("```python\nprint(1)") is None


def test_language_aware_selection():
    text = "```cpp\nint main(){}\n```\n```python\nprint(1)\n```\n```text\n3\n```"
    assert extract_code(text, "python") == "print(1)"
    assert extract_code(text, "cpp") == "int main(){}"
    assert extract_code("```c++\nint main(){}\n```", "cpp") == "int main(){}"
    assert extract_code("```py\nx=1\n```") == "x=1"
    # Only another language's block: nothing for python.
    assert extract_code("```cpp\nint main(){}\n```", "python") is None
    assert extract_code("Output:\n```text\n42\n```") is None


def test_untagged_block_is_a_fallback():
    assert extract_code("```\nprint(1)\n```") == "print(1)"
    # A tagged block beats a later untagged one (that is usually sample output).
    assert extract_code("```python\nprint(1)\n```\nOutput:\n```\n1\n```") == "print(1)"


def test_fence_details():
    assert extract_code("````python\nx = '```'\n````") == "x = '```'"  # longer fence holds backticks
    assert extract_code("~~~python\nx=1\n~~~") == "x=1"
    assert extract_code("```python\nprint(1)```") == "print(1)"  # closing fence glued to the code
    assert extract_code("```python\n    indented = True\n```") == "    indented = True"
    blocks = fenced_blocks("```Python extra\na\n```")
    assert blocks[0].info == "python" and blocks[0].closed


def test_unknown_language():
    with pytest.raises(ValueError, match="unsupported language"):
        extract_code("```x\n```", "rust")


# --- text as trainers hand it over (issue 38): special tokens kept by the decode ---------------------
@pytest.mark.parametrize("end", ["<|im_end|>", "<|im_end|><|endoftext|>", "</s>", "<|eot_id|>", " <|end|>",
                                 "<｜end▁of▁sentence｜>", "<end_of_turn><eos>"])
def test_a_special_token_after_the_closing_fence_still_closes_it(end):
    # OpenRLHF decodes prompt + response with skip_special_tokens=False: the EOS follows the fence
    assert extract_code(f"Here.\n```python\nprint(1)\n```{end}") == "print(1)"
    assert extract_code(f"```python\nprint(1)```{end}") == "print(1)"  # glued to the code, then the EOS
    assert extract_code(f"```python\nprint(1)\n```\n{end}") == "print(1)"


def test_the_last_block_wins_wherever_it_ends():
    text = "```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```<|im_end|>"
    assert extract_code(text) == "print(2)"
    assert extract_code("<think>\n\n</think>\n\n```python\nprint(3)\n```<|im_end|>") == "print(3)"


def test_special_tokens_never_make_an_extractor_lenient():
    # no fence: no code, however the text ends
    assert extract_code("print(1)<|im_end|>") is None
    # a block the EOS cut before its closing fence is unfinished
    assert extract_code("```python\nprint(1)<|im_end|>") is None
    assert extract_code("```python\nprint(1)\n<|im_end|>") is None
    # a special token on the opening line is not a language tag
    assert extract_code("```python<|im_end|>\nprint(1)\n```") is None
    # inside the code, a special-token-shaped string is code, kept as written
    assert extract_code("```python\nprint('<|im_end|>')\nx = 1  # </s>\n```") == "print('<|im_end|>')\nx = 1  # </s>"


def test_a_tokenizers_own_special_tokens_are_stripped_at_line_ends():
    from microcoder.pipeline.generation.extract import strip_trailing_special_tokens

    text = "```python\nprint(1)\n```[EOS][PAD]"
    assert extract_code(text) is None  # not a shape the extractor knows
    assert extract_code(strip_trailing_special_tokens(text, ("[EOS]", "[PAD]"))) == "print(1)"
    assert strip_trailing_special_tokens("a # </s>\nb</s>\n<|endoftext|><|endoftext|>") == "a # </s>\nb"
    assert strip_trailing_special_tokens("x = '<|im_end|>' + y") == "x = '<|im_end|>' + y"
