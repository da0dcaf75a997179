"""Statement normalisation shared by exact hashing, shingling and decontamination.

The same problem arrives as markdown, plain text, HTML-ish text or LaTeX-heavy text. We reduce a
statement to a sequence of lowercase word tokens so that formatting never decides whether two
statements match:

1. HTML entities are decoded, tags dropped; markdown images and links keep their visible text;
   code-fence markers, emphasis, headings, list bullets and blockquote marks disappear with the
   punctuation in step 5.
2. LaTeX: `\\text{..}`-style wrappers keep their argument; relation and operator commands
   (`\\le`, `\\leq`, `\\ge`, `\\neq`, `\\cdot`, `\\times`, ...) and their Unicode twins
   (`≤ ≥ ≠ × ·`) become the same words as their ASCII spellings (`<=` -> `le`); other commands
   lose the backslash (`\\max` -> `max`); `$`, braces and `^`/`_` vanish as punctuation;
   super- and subscript characters (`10⁵`, `aᵢ`) become tokens of their own, like `10^{5}`.
3. Unicode NFKC and lowercase.
4. Optional digit masking: every run of digits becomes `0`, so statements that differ only in
   sample values or constants match.
5. Tokens are maximal runs of letters and digits (underscores split tokens, so `a_i` and `a_{i}`
   both give `a i`).
6. Optional variable masking: every single-letter token (the variables of competitive-programming
   statements: `n`, `m`, `a_i`; also the article "a") becomes one placeholder, so statements whose
   sources renamed `n` to `k` match. Multi-letter names (`nums`) are left alone.
"""

from __future__ import annotations

import html
import re
import unicodedata

# Only real HTML tag names: `a<b and c>d` in maths must survive.
_HTML_TAG = re.compile(
    r"</?(?:p|div|span|br|hr|b|i|u|s|em|strong|code|pre|tt|sup|sub|ul|ol|li|dl|dt|dd|img|a|h[1-6]|"
    r"table|thead|tbody|tr|td|th|blockquote|font|center|small|big|section|article|var|kbd|samp)"
    r"""(?:\s+[\w:-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))*\s*/?>""",
    re.IGNORECASE,
)
_BLOCKQUOTE = re.compile(r"^[ \t]*>+", re.MULTILINE)
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
# Wrappers whose argument is ordinary text.
_LATEX_WRAPPER = re.compile(
    r"\\(?:text|textbf|textit|texttt|textrm|mathrm|mathbf|mathit|mathtt|mathsf|mathcal|operatorname|"
    r"emph|mbox|bf|it|rm|tt)\s*\{([^{}]*)\}"
)
# Relations and operators: LaTeX, Unicode and ASCII spellings map to one word each.
_RELATION_WORDS = {
    "leqslant": "le", "leq": "le", "le": "le", "≤": "le", "⩽": "le", "<=": "le",
    "geqslant": "ge", "geq": "ge", "ge": "ge", "≥": "ge", "⩾": "ge", ">=": "ge",
    "neq": "ne", "ne": "ne", "≠": "ne", "!=": "ne",
    "lt": "lt", "<": "lt", "gt": "gt", ">": "gt",
    "times": "*", "cdot": "*", "×": "*", "·": "*", "⋅": "*",
    "ldots": "...", "cdots": "...", "dots": "...", "…": "...",
}
_LATEX_RELATION = re.compile(
    r"\\(leqslant|leq|le|geqslant|geq|ge|neq|ne|lt|gt|times|cdot|ldots|cdots|dots)(?![a-zA-Z])")
_UNICODE_RELATION = re.compile("[≤⩽≥⩾≠×·⋅…]")
# Longest first: "<=" must become "le" before "<" becomes "lt".
_ASCII_RELATIONS = [(a, f" {_RELATION_WORDS[a]} ") for a in ("<=", ">=", "!=", "<", ">")]
# Layout-only commands vanish; every other command keeps its name as a word (\\max -> max).
_LATEX_LAYOUT = re.compile(
    r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg|displaystyle|textstyle|limits|"
    r"qquad|quad|hfill|noindent|newline|par)(?![a-zA-Z])"
)
_LATEX_COMMAND = re.compile(r"\\([a-zA-Z]+)")
# Super- and subscripts (10⁵, aᵢ, a₁) read like 10^{5}, a_{i}, a_1: separate tokens, where NFKC
# alone would glue them onto the previous character.
_SCRIPTS = re.compile("[\u00b2\u00b3\u00b9\u1d2c-\u1d6a\u2070-\u209c\u2c7c]+")
_DIGITS = re.compile(r"\d+")
_TOKEN = re.compile(r"[^\W_]+")
VARIABLE = "_"  # what masked single-letter tokens become (never a token itself)


def clean_markup(text: str) -> str:
    """Statement text with HTML, markdown links/images and LaTeX commands reduced to plain words."""
    # Each step runs only when its trigger character is present: most statements skip most steps.
    if "<" in text or "&" in text:
        text = html.unescape(_HTML_TAG.sub(" ", text))
    if ">" in text:
        text = _BLOCKQUOTE.sub(" ", text)
    if "](" in text:
        text = _MD_LINK.sub(r" \1 ", _MD_IMAGE.sub(r" \1 ", text))
    if "\\" in text:
        # Nested wrappers (\textbf{\textit{x}}) need one pass per level; three is plenty.
        for _ in range(3):
            text, n = _LATEX_WRAPPER.subn(r" \1 ", text)
            if not n:
                break
        text = _LATEX_RELATION.sub(_relation_word, text)
        text = _LATEX_COMMAND.sub(r" \1 ", _LATEX_LAYOUT.sub(" ", text))
    for ascii_form, word in _ASCII_RELATIONS:
        if ascii_form in text:
            text = text.replace(ascii_form, word)
    if not text.isascii():
        text = _SCRIPTS.sub(_script_token, _UNICODE_RELATION.sub(_relation_word, text))
    return text


def _relation_word(m: re.Match) -> str:
    return f" {_RELATION_WORDS[m.group(m.lastindex or 0)]} "


def _script_token(m: re.Match) -> str:
    return f" {unicodedata.normalize('NFKC', m.group(0))} "


def tokenize(text: str, *, mask_digits: bool = False, mask_variables: bool = False) -> list[str]:
    """Normalised word tokens of a statement (see the module docstring for the rules)."""
    text = clean_markup(text or "")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    if mask_digits:
        text = _DIGITS.sub("0", text)
    tokens = _TOKEN.findall(text)
    if mask_variables:
        tokens = [VARIABLE if len(t) == 1 and t.isalpha() else t for t in tokens]
    return tokens
