"""Statements a model can read (issue 26): HTML pages (Code Jam / Kick Start archive, Codeforces)
and problemtools LaTeX to Markdown, MathJax delimiters to `$x$`/`$$x$$`, pictures listed, and the
limits a statement states in its text. Unit tests on handwritten snippets; the archive tests read
the real 135 pages in ../shared/bench-data/codejam-archive and skip without it."""

from __future__ import annotations

import re

import pytest

from microcoder.pipeline.sources.latex import tex_statement
from microcoder.pipeline.sources.normalize import fix_math_delimiters, html_statement, html_to_markdown
from microcoder.pipeline.sources.stated_limits import named_test_set, stated_limits

MATHJAX_PAGE = """<html><head>
<link href="https://fonts.googleapis.com/icon?family=Material+Icons" rel="stylesheet">
<script src="https://www.gstatic.com/external_hosted/mathjax/latest/MathJax.js"></script>
<script>MathJax.Hub.Config({tex2jax: {inlineMath: [ ['$$$','$$$'] ], displayMath: [ ['$$$$','$$$$'] ],
processEscapes: true}});</script><style>.sample-header { display: flex; }</style></head>
<body><div><h1>Pay Up</h1><h3>Problem</h3>
<p>Each coin costs $1 and there are $$$\\mathbf{N}$$$ coins, $$$a \\lt b$$$ and $$$a < b$$$.</p>
<p>$$$$\\sum_i x_i$$$$</p>
<img src="img/coins.png" alt="Three coins"><img src="plain.png">
<h3>Limits</h3><p>Time limit: 20 seconds.<br/>Memory limit: 1 GB.<br/></p>
<h4>Test Set 1 (Visible Verdict)</h4><p>$$$1 \\le \\mathbf{N} \\le 10$$$.</p>
<h3>Sample</h3><div class="sample-header"><div class="sample-header-text">Sample Input</div>
<div class="sample-header-download-button"><a href="x_input.txt"><i class="material-icons grey">save_alt</i></a>
</div><div class="sample-header-copy-button" onclick="copy()"><i class="material-icons grey">content_copy</i>
<span class="sample-header-copy-popup">Copied!</span></div></div>
<pre class="sample-content-text">2
$5 3
  </pre></div></body></html>"""


def test_code_jam_page_becomes_clean_markdown_with_math_samples_and_images():
    md, images = html_statement(MATHJAX_PAGE)
    assert "# Pay Up" in md and "Time limit: 20 seconds." in md and "Memory limit: 1 GB." in md
    assert r"$\mathbf{N}$" in md and r"$a \lt b$" in md and "$a < b$" in md and r"$$\sum_i x_i$$" in md
    assert r"costs \$1 and" in md  # a lone dollar on a `$$$` page is money, not math
    assert "```\n2\n$5 3\n```" in md  # the sample as a code block, byte for byte ($ untouched)
    assert "[image: Three coins]" in md and "[image]" in md
    assert images == [{"src": "img/coins.png", "alt": "Three coins"}, {"src": "plain.png", "alt": ""}]
    for gone in ("<", "MathJax", "googleapis", "display: flex", "save_alt", "content_copy", "Copied!", "$$$"):
        assert gone not in md.replace("$a < b$", ""), gone


def test_math_delimiters_for_both_judges_and_existing_callers():
    assert fix_math_delimiters("$$$x$$$ and $$$$$$y$$$$$$") == "$x$ and $$y$$"  # Codeforces
    assert fix_math_delimiters("$$$x$$$ and $$$$y$$$$") == "$x$ and $$y$$"  # Code Jam
    assert fix_math_delimiters("$$$a$$$$$$b$$$") == "$a$$b$"  # two inline spans, back to back
    assert fix_math_delimiters("$N$ and $$$x$$$") == "$N$ and $x$"  # AtCoder's <var> math survives
    assert fix_math_delimiters("cost $5, $$$x$$$") == "cost $5, $x$"  # no page config: left alone
    assert fix_math_delimiters("```\n$$$\n```\n$$$x$$$") == "```\n$$$\n```\n$x$"  # code untouched
    assert fix_math_delimiters("an open $$$ only") == "an open $$$ only"
    code_jam = (("$$$$", "$$$$", True), ("$$$", "$$$", False))
    assert fix_math_delimiters("$3 for $$$x$$$; $$$ alone", code_jam) == r"\$3 for $x$; \$\$\$ alone"
    assert html_to_markdown("<p>$$$x_1$$$ and <var>N</var></p>") == "$x_1$ and $N$"


def test_old_sample_tables_and_interactions_read_in_order():
    table = ("<table><tr><td><span>Input</span></td><td><span>Output</span></td></tr>"
             "<tr><td><pre>1\n-1 1\n\n  </pre></td><td><pre>Case #1: 4\n</pre></td></tr></table>")
    assert html_to_markdown(table) == "Input\n\n```\n1\n-1 1\n```\n\nOutput\n\n```\nCase #1: 4\n```"
    talk = ('<div class="sample-interaction-judge-output-box"><pre>2</pre></div>'
            '<div class="sample-interaction-solution-output-box"><pre>1 2</pre></div>')
    assert html_to_markdown(talk) == "Judge:\n\n```\n2\n```\n\nSolution:\n\n```\n1 2\n```"
    orphans = "<p>Rules:<li>one<pre>x</pre>after<li>two</p><h3>Input</h3>"
    assert html_to_markdown(orphans) == "Rules:\n\n- one\n\n```\nx\n```\n\nafter\n\n- two\n\n### Input"


def test_inline_svg_is_a_picture():
    md, images = html_statement("<p>See:</p><svg><g><text>7</text></g></svg>")
    assert md == "See:\n\n[image]" and images == [{"src": "", "alt": ""}]


# --- LaTeX --------------------------------------------------------------------------------------
PROBLEMTOOLS_TEX = r"""\problemname{Odd \emph{Echo}}
% a comment line, and a macro for the bound
\newcommand{\maxn}{10^5}
\illustration{.2}{finland}{Photo by \href{https://example.com}{someone}}
Write ``\texttt{impossible}'' --- or `\texttt{a--b\_c}' --- for $n \le \maxn$ and \(k \ge 1\);
it costs \$5 and 50\%.~See Figure~\ref{fig:snarks}.\\
Next line, Jos\'e.
\begin{figure}[!h]
\centering
\includegraphics[width=0.5\textwidth]{snarks}
\caption{The seven \emph{snarks}}
\label{fig:snarks}
\end{figure}
\[\sum_{i=1}^{n} a_i\]
\begin{Input}
    The input consists of:
    \begin{itemize}
        \item One line with an integer $n$ ($1 \le n \le 10$).
        \item $n$ lines, each with:
        \begin{enumerate}
            \item an integer $e$, and
            \item a real $p$ ($0 < p < 1$).
        \end{enumerate}
    \end{itemize}
\end{Input}
\section*{Output}
Output \textbf{one} line, like {\tt Case \#1: 3}.
\begin{verbatim}
  raw % text $x$ --
\end{verbatim}
\section*{Scoring}
\begin{tabular}{| l | l |}
  \hline
  Group & Constraints \\ \hline
  $1$ & $n = 5$ \& more \\ \hline
\end{tabular}
"""


def test_problemtools_latex_to_markdown():
    title, md, pictures = tex_statement(PROBLEMTOOLS_TEX)
    assert title == "Odd *Echo*"
    assert ('Write "`impossible`" — or \'`a--b_c`\' — for $n \\le 10^5$ and $k \\ge 1$;\n'
            "it costs \\$5 and 50%. See figure 1.\nNext line, José.") in md
    assert "[figure 1: The seven *snarks*]" in md and "$$\\sum_{i=1}^{n} a_i$$" in md
    assert ("## Input\n\nThe input consists of:\n\n- One line with an integer $n$ ($1 \\le n \\le 10$).\n"
            "- $n$ lines, each with:\n\n  1. an integer $e$, and\n  2. a real $p$ ($0 < p < 1$).") in md
    assert "## Output\n\nOutput **one** line, like `Case #1: 3`." in md
    assert "```\n  raw % text $x$ --\n```" in md
    assert "| Group | Constraints |\n| --- | --- |\n| $1$ | $n = 5$ & more |" in md
    assert "\\" not in md.replace("\\le", "").replace("\\ge", "").replace("\\$", "").replace("\\sum", "")
    assert "comment" not in md and "illustration" not in md and "Photo" not in md
    assert pictures == [{"src": "finland", "alt": "Photo by [someone](https://example.com)"},
                        {"src": "snarks", "alt": "The seven *snarks*"}]


def test_a_short_statement_title_and_sections():
    assert tex_statement(r"\problemname{Half It}Print $x/2$.\section*{Input}A real $x$.")[:2] == (
        "Half It", "Print $x/2$.\n\n## Input\n\nA real $x$.")
    assert tex_statement("No title, $a_i$ here.")[:2] == (None, "No title, $a_i$ here.")
    assert tex_statement(r"\problemname{}x")[0] is None


def test_latex_odds_and_ends():
    _, md, pictures = tex_statement(r"\begin{center}\includegraphics[height=8cm]{k.png}\end{center}"
                                    r"$$x$$ and \begin{description}\item[Sample 1] explains \textit{why}."
                                    r"\end{description} \unknowncmd[opt]{kept} \def\two{2}\two{} \Huge big")
    assert "[image]" in md and pictures == [{"src": "k.png", "alt": ""}]
    assert "$$x$$ and" in md and "- **Sample 1** explains *why*." in md
    assert "kept" in md and "2" in md and "big" in md and "unknowncmd" not in md and "Huge" not in md
    _, md, _ = tex_statement("Figure~\\ref{nowhere} shows it; $a$ % hidden\n$b$")
    assert md == "the figure shows it; $a$\n$b$"


# --- stated limits --------------------------------------------------------------------------------
def test_stated_limits_single_and_per_test_set():
    assert stated_limits(MATHJAX_PAGE) == {"time_limit_s": 20.0, "memory_limit_mb": 1024}
    per_set = """### Limits\n\nMemory limit: 1GB.\n\n#### Small dataset (Test set 1 - Visible)\n\n
Time limit: 20 seconds.\n\n#### Large dataset (Test set 2 - Hidden)\n\nTime limit: 200 seconds.\n
### Additional Sample - Test Set 2\n\nTime limit: 999 seconds."""
    assert stated_limits(per_set) == {"time_limit_s": {"Test Set 1": 20.0, "Test Set 2": 200.0},
                                      "memory_limit_mb": 1024}
    same = "Time limit: 30 seconds per test set.\n#### Test Set 1\nx\n#### Test Set 2\nTime limit: 30 seconds."
    assert stated_limits(same) == {"time_limit_s": 30.0}
    run = "Time limit: 20 seconds per test set. (10 seconds per test run.)\nMemory limit: 512 MB."
    assert stated_limits(run) == {"time_limit_s": 20.0, "time_limit_per_run_s": 10.0, "memory_limit_mb": 512}


def test_stated_limits_leave_out_what_they_cannot_read():
    assert stated_limits("You got Time Limit Exceeded. Mind the memory limit, do not overflow it.") == {}
    assert stated_limits("Time limit: 2 seconds.\nTime limit: 3 seconds.") == {}  # contradiction
    assert stated_limits("#### Test set 1\nTime limit: 5 s.\n#### Test set 2\nN = 10.") == {}  # set 2 unknown
    assert stated_limits("Time limit: 1500 ms.\nMemory limit: 2 GiB.") == {"time_limit_s": 1.5,
                                                                          "memory_limit_mb": 2048}
    assert named_test_set("Test Set 3 (Hidden Verdict)") == "Test Set 3"
    assert named_test_set("Small dataset") == "Small dataset" and named_test_set("Limits") is None


# --- the real archive ---------------------------------------------------------------------------
_TAG = re.compile(r"<[A-Za-z/!][^>]*>")
_MATH_OR_CODE = re.compile(r"(?s)```.*?```|`[^`\n]*`|\$\$.*?\$\$|(?<!\\)\$[^$]*?(?<!\\)\$")


def _archive_pages(bench_data):
    root = bench_data / "codejam-archive"
    if not root.is_dir():
        pytest.skip("codejam-archive is not in bench-data")
    pages = sorted(root.rglob("problem_statement/problem.html"))
    assert len(pages) == 135
    return pages


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines() if line.strip()]


def test_every_archive_statement_converts_cleanly(bench_data):
    pictures = 0
    for page in _archive_pages(bench_data):
        md, images = html_statement(page.read_text(encoding="utf-8"))
        prose = _MATH_OR_CODE.sub("", md)
        assert not _TAG.search(prose), (page, _TAG.findall(prose)[:3])
        assert "$$$" not in md and "MathJax" not in md and "material-icons" not in md, page
        assert "Limits" in md and "```" in md, page
        for sample in page.parent.glob("*_sample_ts*_input.txt"):  # blank lines and trailing spaces aside
            assert "\n".join(_lines(sample.read_text())) in "\n".join(_lines(md)), sample
        pictures += bool(images)
        assert all(image["src"] or image["alt"] == "" for image in images)
    assert pictures >= 15  # 17 pages carry an <img> or inline <svg> when this was written


def test_every_archive_statement_states_its_limits(bench_data):
    per_set = 0
    for page in _archive_pages(bench_data):
        html = page.read_text(encoding="utf-8")
        limits = stated_limits(html)
        assert set(limits) >= {"time_limit_s", "memory_limit_mb"}, page
        stated = {float(n) for n in re.findall(r"Time limit: (\d+) seconds", html)}
        times = limits["time_limit_s"]
        assert set(times.values() if isinstance(times, dict) else [times]) == stated, page
        assert limits["memory_limit_mb"] in (1024, 2048), page
        assert stated_limits(html_to_markdown(html)) == limits, page  # the Markdown reads the same
        per_set += isinstance(times, dict)
    assert per_set == 18
