"""What a statement says about judging: answers accepted in any letter case, results accepted in
any order, any one of several correct answers, interactive protocols.

The relaxation rules (case, order) are deliberately narrow: a relaxed checker on a problem that does
not allow it accepts wrong answers, while a missed relaxation only makes judging stricter. The
any-answer rule leans the other way: a flagged problem without a checker program is rejected by
validate (one problem lost), while a missed one keeps tests that mark correct answers wrong.
"""

from __future__ import annotations

import re

from microcoder.pipeline.schema import PROGRAM_KINDS, Checker

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")

# "You can print each letter in any case (upper or lower)", "output the answer in any case",
# "in any register" (older Codeforces translations). The print verb must come first, so the idiom
# "In any case, print ..." does not count.
_ANY_CASE = re.compile(
    r"\b(?:print|output|write|answer)\w*\b[^.\n]{0,100}?\bin any (?:letter )?(?:case|register)\b", re.IGNORECASE)
_ERROR_TOLERANCE = re.compile(r"\b(?:absolute|relative)\b[^.\n]{0,60}\berror\b", re.IGNORECASE)
_POWER_OF_TEN = re.compile(r"10\s*\^\s*\{?\s*[-−]\s*(\d{1,2})\s*\}?")

# "You may return the answer in any order", "... may be returned in any order". A verb form in
# between ("return the largest number formed by concatenating the digits in any order", "after
# applying the operations in any order") means the order of something else is free: not marked.
_RETURN_ANY_ORDER = re.compile(r"\breturn(?:ed|s)?\b(?P<gap>[^.]{0,80}?)\bin any order\b", re.IGNORECASE)
_VERB_FORM = re.compile(r"\b(?!(?:string|thing|something|anything|everything|nothing|ring|king|ceiling)\b)"
                        r"\w+ing\b|\b(?:formed|applied|performed|chosen|made|done|used)\b", re.IGNORECASE)
# "the integers in the lists may be returned in any order": the order *inside* the items is free,
# not the order of the items (which an unordered checker would relax): not marked.
_INNER_ORDER = re.compile(
    r"\b(?:in|within|inside) (?:each|the) (?:(?:inner |sub-?)?lists|(?:sub)?arrays|groups|pairs|tuples|triplets"
    r"|combinations)\b|\bwithin each\b", re.IGNORECASE)

# "If there are multiple answers, print any of them", "If multiple answers exist, output any",
# "In case the answer is not unique, return any valid array", "return any valid n-bit gray code".
# Such a problem needs a checker program: its fixed expected outputs reject other correct answers.
# "any" of a letter case or an order is another rule (a relaxed comparison, not a checker).
_ANY = r"\bany\b(?! (?:letter )?(?:case|register|order)\b)"
_ANY_ANSWER = re.compile(
    # "If there are multiple answers, print any of them" (not "... print YES if any of them is ...")
    r"\b(?:multiple|several|many|more than one)\b[^.]{0,100}?\b(?:print|output|return|write|give|pick)\w*\b"
    r"(?:(?!\b(?:if|whether)\b)[^.]){0,30}?" + _ANY
    + r"|\b(?:multiple|several|many|more than one)\b[^.]{0,100}?\byou (?:may|can) choose any\b"
    + r"|\bnot unique\b[^.]{0,60}?" + _ANY
    + r"|\b(?:print|output|return|write)\w*\s+any\s+(?:one\s+)?(?:of them|such|valid|possible|correct|suitable)\b"
    + r"|\b(?:print|output|return|construct)\w*\s+any\s+[^.]{0,40}?\b(?:that|which|such that|satisfying)\b"
    # "Find any array such that ...", "Your task is to find any value of d" (not "whether you can find any")
    + r"|(?:(?-i:^\s*Find)|(?:,\s*|\bto\s+)find)\s+any\b"  # capital F: a hard-wrapped "didn't\n find any" is no start
    + r"|\bany (?:of them|such \w+|valid \w+|correct \w+|(?:answer|solution)s?) (?:is|are|will be) accepted\b",
    re.IGNORECASE)

_INTERACTIVE = re.compile(r"(?<!non-)(?<!not an )\binteractive (?:task|problem)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def answers_any_case(statement: str) -> bool:
    """The statement accepts the answer in any letter case (Codeforces' YES/NO problems)."""
    return bool(_ANY_CASE.search(statement))


def stdio_checker(statement: str) -> Checker | None:
    """A checker for what the statement allows beyond the default cascade, or None.

    Any letter case -> tokens, case-insensitive. If the statement also accepts numbers within an
    absolute / relative error, the checker is `float` (case-insensitive) with that tolerance
    (10^{-k} when stated, else 1e-6): a tokens checker would compare those numbers as text.
    """
    if not answers_any_case(statement):
        return None
    tolerance = _error_tolerance(statement)
    if tolerance is None:
        return Checker(kind="tokens", case_sensitive=False)
    return Checker(kind="float", rel_tol=tolerance, abs_tol=tolerance, case_sensitive=False)


def _error_tolerance(statement: str) -> float | None:
    for sentence in sentences(statement):
        if _ERROR_TOLERANCE.search(sentence):
            power = _POWER_OF_TEN.search(sentence)
            return 10.0 ** -int(power.group(1)) if power else 1e-6
    return None


def returns_any_order(statement: str) -> bool:
    """A sentence says the returned items may come in any order (LeetCode's "You may return the
    answer in any order"), and not that only the order inside each item is free."""
    for sentence in sentences(statement):
        m = _RETURN_ANY_ORDER.search(sentence)
        if m and not _VERB_FORM.search(m.group("gap")) and not _INNER_ORDER.search(sentence):
            return True
    return False


def accepts_any_answer(statement: str) -> bool:
    """A sentence says any one of several correct answers is accepted ("If there are multiple
    answers, print any of them"): fixed expected outputs cannot judge such a problem alone."""
    return any(_ANY_ANSWER.search(sentence) for sentence in sentences(statement))


def is_interactive(problem) -> bool:
    """Marked interactive by its source (meta or tag), or judged by an interactor."""
    return (bool(problem.meta.get("interactive")) or "interactive" in (problem.tags or [])
            or (problem.checker is not None and problem.checker.kind == "interactor"))


def has_interactor(problem) -> bool:
    """An interactor program judges it: the evaluator runs the submission against it."""
    ck = problem.checker
    return ck is not None and ck.kind == "interactor" and bool((ck.program or "").strip())


def has_checker_program(problem) -> bool:
    """A checker program or an interactor judges the answers (either accepts any right one)."""
    return problem.checker is not None and problem.checker.kind in PROGRAM_KINDS


def needs_checker_program(problem) -> bool:
    """Any one of several answers is accepted (as marked by scrape or by the source, e.g.
    open-r1/codeforces rows that ship a generated checker, or as the statement says) and no
    checker program judges it."""
    marked = problem.meta.get("multiple_answers") or problem.meta.get("needs_checker")
    return (bool(marked) or accepts_any_answer(problem.statement)) and not has_checker_program(problem)


def says_interactive(statement: str) -> bool:
    """The statement calls itself an interactive task or problem."""
    return bool(_INTERACTIVE.search(statement))
