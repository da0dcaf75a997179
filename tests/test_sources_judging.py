"""Statement rules for judging: any letter case, any order, interactive (real statement sentences)."""

from __future__ import annotations

import pytest

from microcoder.pipeline.sources.judging import (
    accepts_any_answer,
    answers_any_case,
    needs_checker_program,
    returns_any_order,
    says_interactive,
    stdio_checker,
)


@pytest.mark.parametrize("text", [
    "You can output each letter in any case (lowercase or uppercase).",
    "You can print each letter in any case (upper or lower).",
    'You may print each letter in any case (for example, "YES", "Yes", "yes", "yEs" will all be recognized).',
    "You can output the answer in any case.",
    "You can print the answer in any register (upper or lower).",
])
def test_any_case_sentences(text):
    assert answers_any_case(text)
    checker = stdio_checker("Print YES or NO.\n\n" + text)
    assert (checker.kind, checker.case_sensitive, checker.unordered) == ("tokens", False, False)


@pytest.mark.parametrize("text", [
    "In any case, print the answer modulo $998244353$.",  # the idiom, not a letter-case rule
    'Print "Yes" if it is possible, and "No" otherwise.',
    "The string consists of letters in any case.",
])
def test_not_any_case(text):
    assert not answers_any_case(text) and stdio_checker(text) is None


def test_any_case_with_an_error_tolerance_compares_numbers_too():
    text = ("If a point exists, print YES and its coordinates. You can print each letter in any case.\n"
            "Your answer is considered correct if its absolute or relative error does not exceed $10^{-9}$.")
    checker = stdio_checker(text)
    assert (checker.kind, checker.case_sensitive, checker.rel_tol, checker.abs_tol) == ("float", False, 1e-9, 1e-9)
    vague = stdio_checker("Print yes or no in any case. Answers within a small absolute error are accepted.")
    assert (vague.kind, vague.rel_tol) == ("float", 1e-6)


@pytest.mark.parametrize("text", [
    "You may return the answer in any order.",
    "Each element in the result must be unique and you may return the result in any order.",
    "The list must not contain the same combination twice, and the combinations may be returned in any order.",
    "Note that the returned array may be in any order.",
    "Given the root of a binary tree, return all root-to-leaf paths in any order.",
])
def test_any_order_sentences(text):
    assert returns_any_order("Some context. " + text + " More text.")


@pytest.mark.parametrize("text", [
    "Note that the integers in the lists may be returned in any order.",  # inner order only
    "Return the largest multiple of three that can be formed by concatenating some of the digits in any order.",
    "You can apply either of the following two operations any number of times and in any order on s.",
    "Tasks can be completed in any order. Return the least number of units of time.",  # another sentence
    "Rearrange the elements of arr to be in any order.",
])
def test_not_any_order(text):
    assert not returns_any_order(text)


@pytest.mark.parametrize(("text", "interactive"), [
    ("This is an interactive problem.", True),
    ("This is an interactive task: your program talks to the judge.", True),
    ("Unlike the easy version, this is a non-interactive problem.", False),
    ("This is not an interactive problem.", False),
    ("Interactive problems are listed elsewhere? No: read the input.", False),
])
def test_interactive_statements(text, interactive):
    assert says_interactive(text) is interactive


# Sentences as Codeforces, AtCoder and LeetCode statements phrase them.
@pytest.mark.parametrize("text", [
    "If there are multiple answers, print any of them.",
    "If there are several possible answers, you may print any of them.",
    "If multiple answers exist, output any.",
    "If there exist multiple such permutations, you can pick any of them.",
    "If there are several correct answers, you may choose any of them.",
    "In case the answer is not unique, return any valid array.",
    "Given an integer n, return any valid n-bit gray code sequence.",
    "For each test case, output any string of length $n$ that satisfies the above conditions.",
    "If there are multiple ways for Bob to earn the maximum total points, return any one of them.",
    "Any correct answer will be accepted.",
    "Find any array of integers $a_0, a_1, \\ldots, a_{n-1}$ for which the following holds:",
    "Given n, find any array a_1, a_2, ..., a_n of integers such that all of the following conditions hold:",
])
def test_any_answer_sentences(text):
    assert accepts_any_answer("Some context. " + text + " More text.")


@pytest.mark.parametrize("text", [
    "You can output the answer in any case (upper or lower).",  # letter case: a relaxed comparison
    "You may return the answer in any order.",  # order: an unordered checker
    "Return the maximum distance of any valid pair (i, j).",
    "If there are several identical minima, Yelisey can choose any of them.",  # a step of the story
    "If there is more than one pile with the maximum number of gifts, choose any.",  # the answer is unique
    "In any case, print the answer modulo $998244353$.",
    "Print the number of pairs. It is guaranteed that any valid input has an answer.",
    "Given several strings, print YES if any of them is a palindrome.",  # a yes/no question
    "Determine whether you can find any subsequence which sums to k.",
    "Return empty string if you didn't\n    find any vowel met the above condition.",  # hard-wrapped, not a start
])
def test_not_any_answer(text):
    assert not accepts_any_answer(text)


def test_a_checker_program_is_what_multiple_answers_need():
    from microcoder.pipeline.schema import Checker, Problem, TestCase

    base = Problem(id="t/any", source="t", statement="Print a pair. If there are multiple answers, print any of them.",
                   style="stdio", tests=[TestCase("1\n", "1 2\n")])
    assert needs_checker_program(base)
    assert not needs_checker_program(Problem(**{**base.__dict__, "checker": Checker(kind="program", program="x")}))
    assert needs_checker_program(Problem(**{**base.__dict__, "checker": Checker(kind="tokens")}))
    marked = Problem(**{**base.__dict__, "statement": "Print a pair.", "meta": {"multiple_answers": True}})
    assert needs_checker_program(marked) and not needs_checker_program(Problem(**{**marked.__dict__, "meta": {}}))
    shipped = Problem(**{**marked.__dict__, "meta": {"needs_checker": True}})  # open-r1/codeforces rows
    assert needs_checker_program(shipped)
