"""problemtools LaTeX statements (Kattis `problem.en.tex`) -> Markdown a model can read.

Handles what problem statements use: `\\problemname`, sections and the `Input`/`Output`/
`Interaction`/`Scoring` environments, `\\emph`/`\\textbf`/`\\texttt` and friends, itemize/enumerate/
description lists, tabular (a Markdown table), verbatim (a fenced block), `\\href`/`\\url`, quotes,
dashes, accents, escapes, `~` and `\\\\`, comments, and argument-free or simple `\\newcommand`
macros. Math is kept as TeX: `$x$` and `\\(x\\)` become `$x$`, `$$x$$`, `\\[x\\]` and equation-like
environments `$$x$$`, with nothing inside math rewritten. Pictures are no text: a figure becomes
`[figure N: caption]` and `Figure~\\ref{...}` "figure N"; `\\includegraphics` elsewhere becomes
`[image]`; an `\\illustration` (eye candy by the problemtools convention) is dropped; all of them
are listed so an adapter can note them. Unknown commands keep their arguments' text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from microcoder.pipeline.sources.normalize import clean_text

_MARK = "\ue000{}\ue001"  # placeholder for protected spans (math, code), restored at the end
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_COMMENT = re.compile(r"(?<!\\)%.*")
_VERBATIM = re.compile(r"\\begin\{(verbatim|Verbatim|lstlisting|minted)\*?\}(?:\[[^\]]*\]|\{[^}]*\})*\n?(.*?)"
                       r"\\end\{\1\*?\}", re.DOTALL)
_VERB = re.compile(r"\\verb\*?([^a-zA-Z\s])(.*?)\1")
_MATH_ENVS = "equation|align|alignat|eqnarray|gather|multline|displaymath|math"
_MATH_ENV = re.compile(rf"\\begin\{{({_MATH_ENVS})(\*?)\}}(.*?)\\end\{{\1\2\}}", re.DOTALL)
_COMMAND = re.compile(r"\\([A-Za-z@]+\*?|.)", re.DOTALL)

_SECTIONS = {"section": "##", "subsection": "###", "subsubsection": "####"}
_IO_ENVS = {"Input": "Input", "Output": "Output", "Interaction": "Interaction", "Scoring": "Scoring"}
_WRAPPERS = {"emph": "*", "textit": "*", "textsl": "*", "textbf": "**"}
_SWITCHES = {"em": "*", "it": "*", "itshape": "*", "sl": "*", "bf": "**", "bfseries": "**",
             "tt": "`", "ttfamily": "`"}
_KEEP_ARG = {"text", "textrm", "textsf", "textnormal", "textup", "textsc", "mbox", "underline", "uline",
             "caption", "centerline", "hbox", "makebox", "fbox", "framebox", "textmd", "MakeUppercase"}
_DROP_WITH_ARGS = {"label": 1, "vspace": 1, "hspace": 1, "vspace*": 1, "hspace*": 1, "setlength": 2,
                   "addtolength": 2, "newpage": 0, "clearpage": 0, "noindent": 0, "centering": 0,
                   "medskip": 0, "bigskip": 0, "smallskip": 0, "raggedright": 0, "raggedleft": 0,
                   "small": 0, "large": 0, "Large": 0, "LARGE": 0, "huge": 0, "Huge": 0, "tiny": 0,
                   "footnotesize": 0, "scriptsize": 0, "normalsize": 0, "normalfont": 0, "rmfamily": 0,
                   "sffamily": 0, "upshape": 0, "mdseries": 0, "nextsample": 0, "remainingsamples": 0,
                   "sampletableheader": 0, "hline": 0, "hfill": 0, "vfill": 0, "protect": 0, "relax": 0,
                   "allowbreak": 0, "linebreak": 0, "pagebreak": 0, "nopagebreak": 0, "sloppy": 0,
                   "fussy": 0, "displaystyle": 0, "color": 1, "pagestyle": 1, "thispagestyle": 1,
                   "graphicspath": 1, "usepackage": 1, "includegraphics": 1, "illustration": 3}
_SYMBOLS = {"ldots": "…", "dots": "…", "textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^",
            "textbar": "|", "textless": "<", "textgreater": ">", "textendash": "–", "textemdash": "—",
            "textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“", "textquotedblright": "”",
            "LaTeX": "LaTeX", "TeX": "TeX", "times": "×", "copyright": "©", "textdegree": "°", "degree": "°",
            "aa": "å", "AA": "Å", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "ss": "ß",
            "l": "ł", "L": "Ł", "i": "ı", "quad": " ", "qquad": " ", "par": "\n\n", "newline": "\n",
            "cr": "\n", "indent": "", "S": "§", "P": "¶", "dag": "†", "ddag": "‡", "pounds": "£", "euro": "€"}
_ESCAPES = {"&": "&", "%": "%", "$": "\\$", "#": "#", "_": "_", "{": "{", "}": "}", " ": " ", ",": " ",
            ";": " ", ":": " ", "!": "", "@": "", "/": "", "-": "", "\\": "\n", "\n": " ", "\t": " "}
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
            "r": "\u030a", "d": "\u0323", "b": "\u0331"}
_LISTS = {"itemize", "enumerate", "description"}
_UNWRAP_ENVS = {"center", "flushleft", "flushright", "quote", "quotation", "minipage", "samepage", "small",
                "footnotesize", "tabularx", "table", "table*", "wrapfigure", "document", "abstract", "proof"}
_CODE_ENVS = {"verbatim", "Verbatim", "lstlisting", "minted"}


@dataclass
class _State:
    protected: list[str] = field(default_factory=list)
    images: list[dict[str, str]] = field(default_factory=list)
    figures: dict[str, int] = field(default_factory=dict)  # \label -> figure number

    def protect(self, text: str) -> str:
        self.protected.append(text)
        return _MARK.format(len(self.protected) - 1)


def tex_statement(tex: str) -> tuple[str | None, str, list[dict[str, str]]]:
    """(title, Markdown, pictures) for a LaTeX statement; pictures are `{"src", "alt"}` dicts
    (alt: the figure caption or illustration credit, "" when none), in order of appearance."""
    state = _State()
    text = _protect_verbatim(tex, state)
    text = "\n".join(_COMMENT.sub("", line).strip() for line in text.split("\n"))
    text = _expand_macros(text)
    title, text = _take_title(text, state)
    state.figures = _figure_numbers(text)
    text = _protect_math(text, state)
    body = _Converter(state).convert(text)
    return title, clean_text(_restore(body, state)), state.images


def _restore(text: str, state: _State) -> str:
    while _PLACEHOLDER.search(text):  # placeholders may nest (code inside a table cell)
        text = _PLACEHOLDER.sub(lambda m: state.protected[int(m.group(1))], text)
    return text


# --- passes before conversion ------------------------------------------------------------------
def _protect_verbatim(tex: str, state: _State) -> str:
    def block(m: re.Match) -> str:
        return "\n\n" + state.protect("```\n" + m.group(2).rstrip() + "\n```") + "\n\n"

    def inline(m: re.Match) -> str:
        return state.protect(_code_span(m.group(2)))

    return _VERB.sub(inline, _VERBATIM.sub(block, tex))


_NEWCOMMAND = re.compile(r"\\(?:re)?newcommand\*?\s*(?:\{\\([A-Za-z@]+)\}|\\([A-Za-z@]+))\s*(?:\[(\d)\])?\s*(?:\[[^\]]*\])?\s*\{")
_DEF = re.compile(r"\\def\s*\\([A-Za-z@]+)\s*((?:#\d)*)\s*\{")


def _expand_macros(text: str) -> str:
    """Expand `\\newcommand`/`\\def` macros the statement defines (problemtools statements name
    their bounds this way: `\\newcommand{\\maxn}{10^5}`); the definitions themselves go."""
    macros: dict[str, tuple[int, str]] = {}
    for pattern in (_NEWCOMMAND, _DEF):
        while m := pattern.search(text):
            body, end = _group(text, m.end() - 1)
            name = m.group(1) or m.group(2) if pattern is _NEWCOMMAND else m.group(1)
            nargs = int(m.group(3) or 0) if pattern is _NEWCOMMAND else m.group(2).count("#")
            macros[name] = (nargs, body)
            text = text[:m.start()] + text[end:]
    for _ in range(5):  # macros may use macros; a bounded number of rounds stops recursion
        changed = False
        for name, (nargs, body) in macros.items():
            pattern = re.compile(rf"\\{re.escape(name)}(?![A-Za-z@])")
            pos = 0
            while m := pattern.search(text, pos):
                args, end = [], m.end()
                for _ in range(nargs):
                    arg, end = _argument(text, end)
                    args.append(arg or "")
                value = body
                for k, arg in enumerate(args, 1):
                    value = value.replace(f"#{k}", arg)
                text = text[:m.start()] + value + text[end:]
                pos = m.start() + len(value)
                changed = True
        if not changed:
            break
    return text


def _take_title(text: str, state: _State) -> tuple[str | None, str]:
    m = re.search(r"\\problemname\s*\{", text)
    if not m:
        return None, text
    title, end = _group(text, m.end() - 1)
    title = clean_text(_restore(_Converter(state).convert(title), state)).replace("\n", " ")
    return title or None, text[:m.start()] + text[end:]


def _figure_numbers(text: str) -> dict[str, int]:
    numbers = {}
    for k, m in enumerate(re.finditer(r"\\begin\{figure\*?\}(.*?)\\end\{figure\*?\}", text, re.DOTALL), 1):
        for label in re.findall(r"\\label\{([^}]*)\}", m.group(1)):
            numbers[label.strip()] = k
    return numbers


def _protect_math(text: str, state: _State) -> str:
    """Replace every math span by a placeholder holding its Markdown (`$x$` / `$$x$$`)."""
    text = _MATH_ENV.sub(lambda m: state.protect(_display(m.group(1), m.group(3))), text)
    out, i = [], 0
    while i < len(text):
        if text.startswith("\\$", i) or text.startswith("\\\\", i):
            out.append(text[i:i + 2])
            i += 2
            continue
        for opener, closer, display in (("$$", "$$", True), ("\\[", "\\]", True), ("$", "$", False),
                                        ("\\(", "\\)", False)):
            if text.startswith(opener, i):
                end = _find_unescaped(text, closer, i + len(opener))
                if end != -1:
                    body = text[i + len(opener):end].strip()
                    out.append(state.protect(f"$${body}$$" if display else f"${body}$"))
                    i = end + len(closer)
                    break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _display(env: str, body: str) -> str:
    if env in ("align", "alignat", "eqnarray"):
        body = f"\\begin{{aligned}}{body.strip()}\\end{{aligned}}"
    elif env == "gather":
        body = f"\\begin{{gathered}}{body.strip()}\\end{{gathered}}"
    elif env == "math":
        return f"${body.strip()}$"
    return f"$${body.strip()}$$"


def _find_unescaped(text: str, needle: str, start: int) -> int:
    while (pos := text.find(needle, start)) != -1:
        backslashes = len(text[:pos]) - len(text[:pos].rstrip("\\"))
        if backslashes % 2 == 0:
            return pos
        start = pos + 1
    return -1


# --- brace-level helpers ---------------------------------------------------------------------------
def _group(text: str, i: int) -> tuple[str, int]:
    """The content of the brace group opening at text[i] and the index after its closing brace."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
        j += 1
    return text[i + 1:], len(text)  # unbalanced: the rest


def _argument(text: str, i: int) -> tuple[str | None, int]:
    """A mandatory argument at i (after spaces): a brace group or one token; None if none."""
    j = i
    while j < len(text) and text[j] in " \t\n":
        j += 1
    if j >= len(text) or text[j] in "}]":
        return None, i
    if text[j] == "{":
        return _group(text, j)
    if text[j] == "\\":
        m = _COMMAND.match(text, j)
        return m.group(), m.end()
    return text[j], j + 1


def _optional(text: str, i: int) -> tuple[str | None, int]:
    j = i
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] == "[":
        depth, k = 0, j
        while k < len(text):
            depth += {"[": 1, "]": -1}.get(text[k], 0)
            if depth == 0:
                return text[j + 1:k], k + 1
            k += 1
    return None, i


def _environment(text: str, i: int, name: str) -> tuple[str, int]:
    """Body of environment `name` whose `\\begin{name}` ends at i, and the index after `\\end{name}`."""
    begin, end = f"\\begin{{{name}}}", f"\\end{{{name}}}"
    depth, j = 1, i
    while True:
        next_begin, next_end = text.find(begin, j), text.find(end, j)
        if next_end == -1:
            return text[i:], len(text)
        if next_begin != -1 and next_begin < next_end:
            depth, j = depth + 1, next_begin + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return text[i:next_end], next_end + len(end)
        j = next_end + len(end)


def _split_top(text: str, separator: re.Pattern) -> list[str]:
    """Split at `separator` matches that sit outside braces and nested environments."""
    parts, depth, env_depth, last, j = [], 0, 0, 0, 0
    while j < len(text):
        if depth == 0 and env_depth == 0 and (m := separator.match(text, j)):
            parts.append(text[last:j])
            last = j = m.end()
            continue
        if text.startswith("\\begin{", j):
            env_depth += 1
        elif text.startswith("\\end{", j):
            env_depth -= 1
        c = text[j]
        if c == "\\":
            j += 2
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        j += 1
    parts.append(text[last:])
    return parts


def _code_span(text: str) -> str:
    text = " ".join(text.split("\n"))
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# --- the converter ---------------------------------------------------------------------------------
_ITEM = re.compile(r"\\item(?![A-Za-z])")
_ROW = re.compile(r"\\\\(?:\[[^\]]*\])?")
_CELL = re.compile(r"&")
_RULES = re.compile(r"\\(?:hline|toprule|midrule|bottomrule|cline\{[^}]*\}|cmidrule(?:\([^)]*\))?\{[^}]*\})")


_FIGURE_REF = re.compile(r"\b(?:[Ff]igure|[Ff]ig\.)s?\s*~?\s*\\ref\s*\{([^}]*)\}")


class _Converter:
    """Text-mode LaTeX -> Markdown; `code` for the inside of `\\texttt` (no quote or dash ligatures)."""

    def __init__(self, state: _State, code: bool = False):
        self.state = state
        self.code = code

    def convert(self, text: str) -> str:
        text = _FIGURE_REF.sub(self._figure_ref, text)
        out, i = [], 0
        while i < len(text):
            c = text[i]
            if self.code and c in "`'-":
                out.append(c)
                i += 1
            elif c == "\\":
                piece, i = self._command(text, i)
                out.append(piece)
            elif c == "{":
                body, i = _group(text, i)
                out.append(self._group(body))
            elif c == "}":
                i += 1
            elif c == "~":
                out.append(" ")
                i += 1
            elif c in "`'" and text.startswith(c * 2, i):
                out.append('"')
                i += 2
            elif c == "`":
                out.append("'")
                i += 1
            elif c == "-" and text.startswith("---", i):
                out.append("—")
                i += 3
            elif c == "-" and text.startswith("--", i):
                out.append("–")
                i += 2
            else:
                out.append(c)
                i += 1
        return "".join(out)

    def _figure_ref(self, m: re.Match) -> str:
        number = self.state.figures.get(m.group(1).strip())
        return f"figure {number}" if number else "the figure"

    def _group(self, body: str) -> str:
        """`{\\bf x}`-style switches apply to the rest of the group."""
        m = re.match(r"\s*\\([A-Za-z]+)(?![A-Za-z])\s*", body)
        if m and m.group(1) in _SWITCHES:
            return self._styled(_SWITCHES[m.group(1)], body[m.end():])
        return self.convert(body)

    def _styled(self, mark: str, body: str) -> str:
        if mark == "`":
            code = _Converter(self.state, code=True).convert(body)
            return self.state.protect(_code_span(_plain_code(_restore(code, self.state))))
        inner = self.convert(body).strip()
        return f"{mark}{inner}{mark}" if inner else ""

    def _command(self, text: str, i: int) -> tuple[str, int]:
        m = _COMMAND.match(text, i)
        name, j = m.group(1), m.end()
        if len(name) == 1 and not name.isalpha():
            if name in _ACCENTS:
                return self._accent(name, text, j)
            if name == "\\":  # a line break, maybe with extra space (\\[2pt]); the source's own goes
                _, j = _optional(text, j)
                j = _skip_space(text, j)
            return _ESCAPES.get(name, name), j
        if name in _ACCENTS and len(name) == 1:
            return self._accent(name, text, j)
        if name == "begin":
            env, j = _argument(text, j)
            return self._environment((env or "").strip(), text, j)
        if name == "end":
            _, j = _argument(text, j)
            return "", j
        bare = name.rstrip("*")
        if bare in _SECTIONS:
            _, j = _optional(text, j)
            heading, j = _argument(text, j)
            return f"\n\n{_SECTIONS[bare]} {self.convert(heading or '').strip()}\n\n", j
        if bare in ("paragraph", "subparagraph"):
            heading, j = _argument(text, j)
            return f"\n\n**{self.convert(heading or '').strip()}** ", j
        if name in _WRAPPERS:
            arg, j = _argument(text, j)
            return self._styled(_WRAPPERS[name], arg or ""), j
        if name == "texttt":
            arg, j = _argument(text, j)
            return self._styled("`", arg or ""), j
        if name in _SWITCHES:  # a switch outside a group: applies to the rest, which is unknowable
            return "", j
        if name == "href":
            url, j = _argument(text, j)
            label, j = _argument(text, j)
            return f"[{self.convert(label or '').strip()}]({(url or '').strip()})", j
        if name == "url":
            url, j = _argument(text, j)
            return (url or "").strip(), j
        if name == "footnote":
            note, j = _argument(text, j)
            return f" ({self.convert(note or '').strip()})", j
        if name == "ref":
            label, j = _argument(text, j)
            number = self.state.figures.get((label or "").strip())
            return (str(number) if number else "?"), j
        if name == "includegraphics":
            _, j = _optional(text, j)
            src, j = _argument(text, j)
            self.state.images.append({"src": (src or "").strip(), "alt": ""})
            return "[image]", j
        if name == "illustration":
            _, j = _argument(text, j)
            src, j = _argument(text, j)
            credit, j = _argument(text, j)
            alt = clean_text(_restore(self.convert(credit or ""), self.state)).replace("\n", " ")
            self.state.images.append({"src": (src or "").strip(), "alt": alt})
            return "", j
        if name in _DROP_WITH_ARGS:
            for _ in range(_DROP_WITH_ARGS[name]):
                _, j = _optional(text, j)
                _, j = _argument(text, j)
            return "", _skip_space(text, j) if not _DROP_WITH_ARGS[name] else j
        if name in _SYMBOLS:
            if text.startswith("{}", j):
                return _SYMBOLS[name], j + 2
            return _SYMBOLS[name], j if name in ("par", "newline", "cr") else _skip_space(text, j)
        if name == "item":  # outside a list: a bullet anyway
            _, j = _optional(text, j)
            return "\n- ", j
        if name in _KEEP_ARG:
            arg, j = _argument(text, j)
            return self.convert(arg or ""), j
        return self._unknown(text, j)

    def _unknown(self, text: str, j: int) -> tuple[str, int]:
        """An unknown command: its name goes, the text of its brace arguments stays."""
        parts = []
        while True:
            _, k = _optional(text, j)
            if k < len(text) and text[k] == "{":
                arg, j = _group(text, k)
                parts.append(self.convert(arg))
            else:
                return "".join(parts), j

    def _accent(self, mark: str, text: str, j: int) -> tuple[str, int]:
        arg, j = _argument(text, j)
        base = self.convert(arg or "")
        if not base:
            return "", j
        return unicodedata.normalize("NFC", base[0] + _ACCENTS[mark]) + base[1:], j

    def _environment(self, env: str, text: str, j: int) -> tuple[str, int]:
        name = env.rstrip("*")
        body, end = _environment(text, j, env)
        if env in _IO_ENVS:
            return f"\n\n## {_IO_ENVS[env]}\n\n{self.convert(body)}\n\n", end
        if name in _LISTS:
            return self._list(name, body), end
        if name in ("tabular", "array", "longtable", "tabu"):
            _, k = _optional(body, 0)
            _, k = _argument(body, k)  # column spec
            if name == "tabularx":
                _, k = _argument(body, k)
            return self._table(body[k:]), end
        if name == "figure":
            return self._figure(body), end
        if name in _UNWRAP_ENVS or name in _CODE_ENVS:
            _, k = _optional(body, 0)
            return f"\n\n{self.convert(body[k:])}\n\n", end
        return f"\n\n{self.convert(body)}\n\n", end

    def _list(self, kind: str, body: str) -> str:
        items = _split_top(body, _ITEM)[1:]
        lines = []
        for n, item in enumerate(items, 1):
            label, k = _optional(item, 0)
            text = self.convert(item[k:]).strip()
            text = re.sub(r"\n{3,}", "\n\n", text)
            if kind == "description" and label is not None:
                text = f"**{self.convert(label).strip()}** {text}"
            elif label is not None:
                text = f"{self.convert(label).strip()} {text}"
            bullet = f"{n}. " if kind == "enumerate" else "- "
            first, *rest = text.split("\n")
            lines.append(bullet + first)
            lines += [("  " + line) if line else "" for line in rest]
        return "\n\n" + "\n".join(lines) + "\n\n"

    def _table(self, body: str) -> str:
        rows = []
        for row in _split_top(_RULES.sub("", body), _ROW):
            if not row.strip():
                continue
            cells = []
            for cell in _split_top(row, _CELL):
                m = re.match(r"\s*\\multicolumn\s*\{(\d+)\}\s*\{[^}]*\}\s*\{", cell)
                span = 1
                if m:
                    span = int(m.group(1))
                    cell, _ = _group(cell, m.end() - 1)
                text = " ".join(self.convert(cell).split()).replace("|", "\\|")
                cells += [text] + [""] * (span - 1)
            rows.append(cells)
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n\n" + "\n".join(lines) + "\n\n"

    def _figure(self, body: str) -> str:
        labels = re.findall(r"\\label\{([^}]*)\}", body)
        number = next((self.state.figures[label.strip()] for label in labels
                       if label.strip() in self.state.figures), None)
        caption = ""
        if m := re.search(r"\\caption\s*(?:\[[^\]]*\])?\s*\{", body):
            caption, _ = _group(body, m.end() - 1)
            caption = " ".join(_restore(self.convert(caption), self.state).split())
        sources = [src.strip() for src in re.findall(r"\\includegraphics\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}", body)]
        for src in sources or [""]:
            self.state.images.append({"src": src, "alt": caption})
        name = f"figure {number}" if number else "figure"
        return f"\n\n[{name}: {caption}]\n\n" if caption else f"\n\n[{name}]\n\n"


def _skip_space(text: str, j: int) -> int:
    """TeX eats the spaces after a control word, and one line end (a blank line stays a break)."""
    m = re.compile(r"[ \t]*(?:\n(?![ \t]*\n)[ \t]*)?").match(text, j)
    return m.end()


def _plain_code(text: str) -> str:
    """Code text: Markdown escapes made by conversion undone (`\\$` is a dollar inside code)."""
    return text.replace("\\$", "$").strip()
