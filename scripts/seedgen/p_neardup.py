"""Four planted near-duplicate pairs: the same problem reworded or reformatted."""
from common import func, rng, stdio


def nd(other):
    return {"planted": "near_duplicate", "pair": f"seed/{other}"}


# --- pair A: longest rising run, markdown+LaTeX vs plain text ---------------------------------
def _run_brute(a):
    best = 0
    for i in range(len(a)):
        j = i
        while j + 1 < len(a) and a[j] < a[j + 1]:
            j += 1
        best = max(best, j - i + 1)
    return best


def _run_cases(slug, first):
    r = rng(slug)
    cases = list(first)
    cases.append([r.randint(-5, 5) for _ in range(15)])
    cases.append([7])
    cases.append(list(range(-50, 50)))
    cases.append([r.randint(-10**9, 10**9) for _ in range(60)])
    cases.append(sorted(r.sample(range(1000), 60)) + [0] + sorted(r.sample(range(1000), 70)))
    cases.append([5] * 40)
    return cases


def _run_fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a))


stdio(
    "longest-rising-run", "Longest Rising Run",
    r"""# Longest Rising Run

You are given an array $a$ of $n$ integers. A *rising run* is a contiguous segment
$a_l, a_{l+1}, \dots, a_r$ such that $a_i < a_{i+1}$ for every $l \le i < r$ (a single element is a
rising run of length $1$). Find the length of the longest rising run.

## Input

The first line contains an integer $n$ ($1 \le n \le 10^5$). The second line contains $n$ integers
$a_1, a_2, \dots, a_n$ ($-10^9 \le a_i \le 10^9$).

## Output

Print one integer: the length of the longest rising run.""",
    _run_cases("longest-rising-run", [[1, 3, 5, 4, 7, 8, 9, 2]]), _run_fmt, lambda a: str(_run_brute(a)),
    """
n = int(input())
a = list(map(int, input().split()))
best = cur = 1
for i in range(1, n):
    cur = cur + 1 if a[i] > a[i - 1] else 1
    best = max(best, cur)
print(best)
""",
    platform="codeforces", difficulty="easy", rating=800, tags=["arrays", "implementation"],
    date="2024-01-14", meta=nd("longest-rising-run-plain"),
)
stdio(
    "longest-rising-run-plain", "Longest Rising Run",
    """Longest Rising Run

You are given an array a of n integers. A rising run is a contiguous segment a_l, a_(l+1), ...,
a_r such that a_i < a_(i+1) for every l <= i < r (a single element is a rising run of length 1).
Find the length of the longest rising run.

Input
The first line contains an integer n (1 <= n <= 100000). The second line contains n integers
a_1, a_2, ..., a_n (-10^9 <= a_i <= 10^9).

Output
Print one integer: the length of the longest rising run.""",
    _run_cases("longest-rising-run-plain", [[4, 4, 1, 2, 3, 0]]), _run_fmt, lambda a: str(_run_brute(a)),
    """
import sys

def main():
    vals = list(map(int, sys.stdin.buffer.read().split()))
    n, a = vals[0], vals[1:]
    ans, start = 1, 0
    for i in range(1, n):
        if a[i] <= a[i - 1]:
            start = i
        ans = max(ans, i - start + 1)
    print(ans)

main()
""",
    plain=True, platform="codeforces", difficulty="easy", rating=800, tags=["arrays"],
    date="2024-06-30", meta=nd("longest-rising-run"),
)


# --- pair B: range sums, sentences reordered ---------------------------------------------------
def _rs_cases(slug, first):
    r = rng(slug)
    cases = [first]
    for n, q, lim in ((6, 8, 10), (1, 3, 10**9), (20, 20, 10**9), (40, 25, 1000)):
        a = [r.randint(-lim, lim) for _ in range(n)]
        qs = [tuple(sorted((r.randint(1, n), r.randint(1, n)))) for _ in range(q)]
        cases.append((a, qs))
    cases.append(([10**9] * 50, [(1, 50), (1, 1), (25, 50)]))
    return cases


def _rs_fmt(c):
    a, qs = c
    return f"{len(a)} {len(qs)}\n" + " ".join(map(str, a)) + "\n" + "\n".join(f"{l} {r}" for l, r in qs)


def _rs_solve(c):
    a, qs = c
    return "\n".join(str(sum(a[l - 1:r])) for l, r in qs)


RS_PY = """
import sys

def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    pre = [0] * (n + 1)
    for i in range(n):
        pre[i + 1] = pre[i] + int(data[2 + i])
    out = []
    pos = 2 + n
    for _ in range(q):
        l, r = int(data[pos]), int(data[pos + 1])
        pos += 2
        out.append(pre[r] - pre[l - 1])
    sys.stdout.write("\\n".join(map(str, out)) + "\\n")

main()
"""
stdio(
    "range-sum-queries", "Range Sum Queries",
    """# Range Sum Queries

You are given an array of n integers and q queries. Each query is a pair l, r (1-based, inclusive)
and asks for the sum a_l + a_(l+1) + ... + a_r. Answer all the queries.

## Input

The first line contains two integers n and q (1 <= n, q <= 2 * 10^5). The second line contains n
integers a_1, ..., a_n (|a_i| <= 10^9). Each of the next q lines contains two integers l and r
(1 <= l <= r <= n).

## Output

For each query, print the sum on its own line.""",
    _rs_cases("range-sum-queries", ([3, -1, 4, 1, 5], [(1, 3), (2, 5), (4, 4)])), _rs_fmt, _rs_solve, RS_PY,
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, q;
    scanf("%d %d", &n, &q);
    vector<long long> pre(n + 1, 0);
    for (int i = 0; i < n; i++) { long long x; scanf("%lld", &x); pre[i + 1] = pre[i] + x; }
    while (q--) { int l, r; scanf("%d %d", &l, &r); printf("%lld\\n", pre[r] - pre[l - 1]); }
}
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["prefix sums"], date="2024-02-25",
    meta=nd("range-sum-queries-reordered"),
)
stdio(
    "range-sum-queries-reordered", "Range Sum Queries",
    """# Range Sum Queries

Each query is a pair l, r (1-based, inclusive) and asks for the sum a_l + a_(l+1) + ... + a_r. You
are given an array of n integers and q queries. Answer all the queries.

## Input

The first line contains two integers n and q (1 <= n, q <= 2 * 10^5). The second line contains n
integers a_1, ..., a_n (|a_i| <= 10^9). Each of the next q lines contains two integers l and r
(1 <= l <= r <= n).

## Output

For each query, print the sum on its own line.""",
    _rs_cases("range-sum-queries-reordered", ([3, -1, 4, 1, 5], [(1, 3), (2, 5), (4, 4)])), _rs_fmt, _rs_solve,
    """
from itertools import accumulate
import sys

it = iter(sys.stdin.read().split())
n, q = int(next(it)), int(next(it))
pre = [0] + list(accumulate(int(next(it)) for _ in range(n)))
res = []
for _ in range(q):
    l, r = int(next(it)), int(next(it))
    res.append(str(pre[r] - pre[l - 1]))
print("\\n".join(res))
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["prefix sums", "queries"], date="2024-09-08",
    meta=nd("range-sum-queries"),
)


# --- pair C: maximum subarray, identifiers renamed ---------------------------------------------
def _kad_brute(a):
    return max(sum(a[i:j]) for i in range(len(a)) for j in range(i + 1, len(a) + 1))


def _kad_cases(slug, first):
    r = rng(slug)
    cases = [(first,), ([-3],), ([-2, -5, -1, -8],)]
    cases += [([r.randint(-10, 10) for _ in range(r.randint(1, 12))],) for _ in range(2)]
    cases.append(([r.randint(-10**4, 10**4) for _ in range(100)],))
    cases.append(([10**4] * 30 + [-1] + [10**4] * 30,))
    return cases


KAD_BODY = """# Maximum Subarray Sum

Given an integer array `{v}`, return the largest possible sum of a non-empty contiguous subarray. A
subarray is a sequence of consecutive elements of the array. It must contain at least one element,
so the answer is negative when every element of the array is negative.

Constraints: the array has between 1 and 10^5 elements, and each element lies between -10^4 and
10^4."""
func(
    "max-subarray-sum", "Maximum Subarray Sum",
    KAD_BODY.format(v="nums"), ["nums"],
    _kad_cases("max-subarray-sum", [-2, 1, -3, 4, -1, 2, 1, -5, 4]), _kad_brute,
    """
from typing import List

class Solution:
    def maxSubarraySum(self, nums: List[int]) -> int:
        best = cur = nums[0]
        for x in nums[1:]:
            cur = max(x, cur + x)
            best = max(best, cur)
        return best
""",
    "Solution().maxSubarraySum",
    "class Solution:\n    def maxSubarraySum(self, nums: List[int]) -> int:\n        ",
    platform="leetcode", difficulty="easy", rating=None, tags=["dynamic programming", "arrays"],
    date="2024-03-17", meta=nd("best-segment-sum"),
)
func(
    "best-segment-sum", "Maximum Subarray Sum",
    KAD_BODY.format(v="arr"), ["arr"],
    _kad_cases("best-segment-sum", [-2, 1, -3, 4, -1, 2, 1, -5, 4]), _kad_brute,
    """
from typing import List

class Solution:
    def bestSegment(self, arr: List[int]) -> int:
        prefix, lowest, ans = 0, 0, arr[0]
        for x in arr:
            prefix += x
            ans = max(ans, prefix - lowest)
            lowest = min(lowest, prefix)
        return ans
""",
    "Solution().bestSegment",
    "class Solution:\n    def bestSegment(self, arr: List[int]) -> int:\n        ",
    platform="leetcode", difficulty="easy", rating=None, tags=["dynamic programming"],
    date="2024-10-05", meta=nd("max-subarray-sum"),
)


# --- pair D: grid paths, other wording and other samples ---------------------------------------
MOD = 10**9 + 7


def _paths_brute(g):
    n, m = len(g), len(g[0])
    memo = {}

    def go(i, j):
        if i >= n or j >= m or g[i][j] == "#":
            return 0
        if (i, j) == (n - 1, m - 1):
            return 1
        if (i, j) not in memo:
            memo[i, j] = go(i + 1, j) + go(i, j + 1)
        return memo[i, j]

    return go(0, 0) % MOD


def _grid(r, n, m, p):
    g = [["#" if r.random() < p else "." for _ in range(m)] for _ in range(n)]
    g[0][0] = g[n - 1][m - 1] = "."
    return ["".join(row) for row in g]


def _grid_cases(slug, first):
    r = rng(slug)
    return [first, ["."], _grid(r, 4, 5, 0.2), _grid(r, 6, 6, 0.3), ["." * 20] * 20,
            _grid(r, 20, 30, 0.1), [".#", "#."]]


def _grid_fmt(g):
    return f"{len(g)} {len(g[0])}\n" + "\n".join(g)


GRID_PY = """
import sys

def main():
    data = sys.stdin.read().split()
    n, m = int(data[0]), int(data[1])
    rows = data[2:2 + n]
    MOD = 10**9 + 7
    dp = [0] * m
    dp[0] = 1
    for i in range(n):
        row = rows[i]
        for j in range(m):
            if row[j] == "#":
                dp[j] = 0
            elif j:
                dp[j] = (dp[j] + dp[j - 1]) % MOD
    print(dp[m - 1])

main()
"""
stdio(
    "grid-paths-obstacles", "Robot Paths in a Grid",
    """# Robot Paths in a Grid

A robot stands in the top-left cell of an n x m grid and wants to reach the bottom-right cell. It
can move only one cell right or one cell down at a time, and it cannot enter cells marked `#`;
free cells are marked `.`. Count the number of different paths, modulo 1 000 000 007.

## Input

The first line contains two integers n and m (1 <= n, m <= 1000). Each of the next n lines contains
a string of m characters, each `.` or `#`. The top-left and bottom-right cells are free.

## Output

Print the number of paths modulo 10^9 + 7.""",
    _grid_cases("grid-paths-obstacles", ["...", ".#.", "..."]), _grid_fmt, lambda g: str(_paths_brute(g)), GRID_PY,
    platform="atcoder", difficulty="medium", rating=None, tags=["dynamic programming", "grids"],
    date="2024-05-12", meta=nd("grid-paths-blocked"),
)
stdio(
    "grid-paths-blocked", "Robot Paths in a Grid",
    """# Robot Paths in a Grid

A robot is placed in the top-left cell of an n x m grid and wants to reach the bottom-right cell. It
can move only one cell right or one cell down at a time, and it cannot enter cells marked `#`; free
cells are marked `.`. Count the number of different paths, modulo 1 000 000 007.

## Input

The first line contains two integers n and m (1 <= n, m <= 1000). Each of the next n lines contains
a string of m characters, each `.` or `#`. The top-left and bottom-right cells are always free.

## Output

Print the number of paths modulo 10^9 + 7.""",
    _grid_cases("grid-paths-blocked", ["..#", "...", "#.."]), _grid_fmt, lambda g: str(_paths_brute(g)),
    """
import sys

data = sys.stdin.read().split()
n, m = int(data[0]), int(data[1])
grid = data[2:]
MOD = 1_000_000_007
ways = [[0] * m for _ in range(n)]
for i in range(n):
    for j in range(m):
        if grid[i][j] == "#":
            continue
        if i == 0 and j == 0:
            ways[i][j] = 1
            continue
        up = ways[i - 1][j] if i else 0
        left = ways[i][j - 1] if j else 0
        ways[i][j] = (up + left) % MOD
print(ways[n - 1][m - 1])
""",
    platform="atcoder", difficulty="medium", rating=None, tags=["dynamic programming"], date="2024-11-23",
    meta=nd("grid-paths-obstacles"),
)
