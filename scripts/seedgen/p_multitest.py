"""Three genuinely different problems sharing the multi-test-case boilerplate (dedup must keep all)."""
from common import rng, stdio

T_LINE = "The first line contains a single integer t (1 <= t <= 100), the number of test cases."


def multi(cases, one):
    return f"{len(cases)}\n" + "\n".join(one(c) for c in cases)


# --- bracket insertions -----------------------------------------------------------------------
def _ins_brute(s):
    prev = None
    while prev != s:
        prev, s = s, s.replace("()", "")
    return len(s)


r = rng("bracket-insertions")
cases = [["())", "((("], ["()", ")(", "(()())"], [")))((("]]
cases.append(["".join(r.choice("()") for _ in range(r.randint(1, 12))) for _ in range(8)])
cases.append(["".join(r.choice("(()") for _ in range(r.randint(20, 60))) for _ in range(10)])
cases.append(["".join(r.choice("())") for _ in range(200)) for _ in range(3)])
cases.append(["(" * 300 + ")" * 299, ")"])
stdio(
    "bracket-insertions", "Fixing a Bracket Sequence",
    f"""# Fixing a Bracket Sequence

You are given a string s made of the characters `(` and `)`. In one move you may insert a single
bracket, `(` or `)`, at any position of the string. Find the minimum number of moves that turn s
into a balanced bracket sequence: the total numbers of `(` and `)` are equal, and no prefix
contains more `)` than `(`.

## Input

{T_LINE} Each of the next t lines contains one test case: a non-empty string s of length at
most 1000.

## Output

For each test case, print a single integer on its own line: the minimum number of insertions.""",
    cases, lambda c: multi(c, str), lambda c: "\n".join(str(_ins_brute(s)) for s in c),
    """
import sys

def main():
    data = sys.stdin.read().split()
    t = int(data[0])
    out = []
    for s in data[1:1 + t]:
        open_, added = 0, 0
        for ch in s:
            if ch == "(":
                open_ += 1
            elif open_:
                open_ -= 1
            else:
                added += 1
        out.append(added + open_)
    print("\\n".join(map(str, out)))

main()
""",
    platform="codeforces", difficulty="easy", rating=900, tags=["strings", "greedy"], date="2024-02-11",
)


# --- same parity removal ----------------------------------------------------------------------
def _parity_brute(a):
    best = len(a)
    for keep in (0, 1):
        best = min(best, sum(1 for x in a if x % 2 != keep))
    return best


r = rng("same-parity-removal")
cases = [[[1, 2, 3, 4, 5], [2, 4, 6], [7]], [[10, 3, 8, 5, 6, 9]]]
cases.append([[r.randint(1, 20) for _ in range(r.randint(1, 10))] for _ in range(12)])
cases.append([[r.choice([r.randint(1, 10**9) | 1, r.randint(1, 5 * 10**8) * 2]) for _ in range(45)]])
cases.append([[2 * r.randint(1, 10**8) for _ in range(40)] + [1], [1] * 50])
cases.append([[r.randint(1, 10**9) for _ in range(r.randint(1, 40))] for _ in range(3)])
stdio(
    "same-parity-removal", "All Even or All Odd",
    f"""# All Even or All Odd

You are given n positive integers. Remove as few of them as possible so that all the remaining
numbers have the same parity (all of them even, or all of them odd). Print the minimum number of
removals. Removing nothing is allowed when the numbers already share a parity.

## Input

{T_LINE} Each test case consists of two lines. The first line contains a single integer
n (1 <= n <= 100). The second line contains n integers a_1, ..., a_n (1 <= a_i <= 10^9).

## Output

For each test case, print a single integer on its own line: the minimum number of removals.""",
    cases, lambda c: multi(c, lambda a: f"{len(a)}\n" + " ".join(map(str, a))),
    lambda c: "\n".join(str(_parity_brute(a)) for a in c),
    """
t = int(input())
for _ in range(t):
    n = int(input())
    a = list(map(int, input().split()))
    odd = sum(x & 1 for x in a)
    print(min(odd, n - odd))
""",
    platform="codeforces", difficulty="easy", rating=800, tags=["math", "greedy"], date="2024-03-02",
)


# --- almost palindrome ------------------------------------------------------------------------
def _pal_brute(s):
    if s == s[::-1]:
        return "YES"
    return "YES" if any((t := s[:i] + s[i + 1:]) == t[::-1] for i in range(len(s))) else "NO"


def _near_pal(r, n, breaks):
    half = "".join(r.choice("abc") for _ in range(n // 2))
    s = list(half + r.choice("abc") * (n % 2) + half[::-1])
    for _ in range(breaks):
        s.insert(r.randint(0, len(s)), r.choice("abc"))
    return "".join(s)


r = rng("almost-palindrome")
cases = [["abca", "abc", "racecar"], ["ab", "z", "abcdba"]]
cases.append([_near_pal(r, r.randint(1, 12), r.randint(0, 2)) for _ in range(15)])
cases.append([_near_pal(r, r.randint(30, 80), r.choice([0, 1, 1, 2])) for _ in range(10)])
cases.append([_near_pal(r, 190, 1), _near_pal(r, 190, 2), _near_pal(r, 200, 0)])
cases.append(["ab" * 100 + "a", "abcd" * 50])
stdio(
    "almost-palindrome", "Palindrome After One Deletion",
    f"""# Palindrome After One Deletion

A string is a palindrome if it reads the same from left to right and from right to left. You are
given a string s. Decide whether s can be turned into a palindrome by deleting at most one of its
characters (a string that already is a palindrome qualifies).

## Input

{T_LINE} Each of the next t lines contains one test case: a string s of lowercase English
letters (1 <= |s| <= 10^5). The total length of all strings does not exceed 2 * 10^5.

## Output

For each test case, print YES if s can be made a palindrome, and NO otherwise.""",
    cases, lambda c: multi(c, str), lambda c: "\n".join(_pal_brute(s) for s in c),
    """
import sys

def is_pal(s, i, j):
    while i < j:
        if s[i] != s[j]:
            return False
        i += 1
        j -= 1
    return True

def ok(s):
    i, j = 0, len(s) - 1
    while i < j and s[i] == s[j]:
        i += 1
        j -= 1
    return i >= j or is_pal(s, i + 1, j) or is_pal(s, i, j - 1)

data = sys.stdin.read().split()
print("\\n".join("YES" if ok(s) else "NO" for s in data[1:1 + int(data[0])]))
""",
    platform="codeforces", difficulty="medium", rating=1200, tags=["strings", "two pointers"], date="2024-04-20",
)
