"""Functional problems: LeetCode-style `class Solution` methods and plain functions."""
import itertools
import math
import os
from collections import deque
from functools import cache

from common import func, rng

LIST = "from typing import List\n\n"


def sol(method, sig):
    return f"Solution().{method}", f"class Solution:\n    def {method}(self, {sig}:\n        "


def plain(name, sig):
    return name, f"def {name}({sig}:\n    "


# --- longest common prefix ----------------------------------------------------------------------
r = rng("longest-common-prefix")
func(
    "longest-common-prefix", "Longest Common Prefix",
    """# Longest Common Prefix

Given a list of strings `strs`, return the longest string that is a prefix of every string in the
list. Return the empty string if they share no common prefix.

Constraints: `1 <= len(strs) <= 200`, `0 <= len(strs[i]) <= 200`, lowercase English letters only.""",
    ["strs"],
    [(["flower", "flow", "flight"],), (["dog", "racecar", "car"],), (["alone"],), (["", "abc"],),
     (["inter" + "".join(r.choice("ab") for _ in range(5)) for _ in range(20)],),
     (["x" * 150, "x" * 149 + "y", "x" * 160],), (["same", "same", "same"],)],
    lambda strs: os.path.commonprefix(strs),
    LIST + """class Solution:
    def longestCommonPrefix(self, strs: List[str]) -> str:
        shortest = min(strs, key=len)
        for i, ch in enumerate(shortest):
            if any(s[i] != ch for s in strs):
                return shortest[:i]
        return shortest
""",
    *sol("longestCommonPrefix", "strs: List[str]) -> str"), npub=2,
    platform="leetcode", difficulty="easy", rating=None, tags=["strings"], date="2023-10-15",
)


# --- climbing with allowed step sizes -----------------------------------------------------------
def _climb_oracle(n, steps):
    ways_from = {n: 1}
    for x in range(n - 1, -1, -1):
        ways_from[x] = sum(ways_from[x + s] for s in steps if x + s <= n) % (10**9 + 7)
    return ways_from[0]


func(
    "climb-ways", "Climbing With Allowed Steps",
    """# Climbing With Allowed Steps

You stand at the bottom of a staircase with `n` steps. In one move you may climb any number of steps
that appears in the list `steps`. Return the number of different move sequences that end exactly on
step `n`, modulo `10^9 + 7`. Two sequences differ if their lists of moves differ.

Constraints: `1 <= n <= 10^4`, `1 <= len(steps) <= 20`, the values of `steps` are distinct and in
`[1, n]`.""",
    ["n", "steps"],
    [(4, [1, 2]), (3, [2]), (10, [1, 3, 5]), (1, [1]), (50, [1, 2]), (500, [2, 3, 7, 11]), (1000, [1, 2, 3, 4, 5])],
    _climb_oracle,
    LIST + """class Solution:
    def climbWays(self, n: int, steps: List[int]) -> int:
        MOD = 10**9 + 7
        ways = [1] + [0] * n
        for i in range(1, n + 1):
            ways[i] = sum(ways[i - s] for s in steps if s <= i) % MOD
        return ways[n]
""",
    *sol("climbWays", "n: int, steps: List[int]) -> int"),
    platform="leetcode", difficulty="medium", rating=None, tags=["dynamic programming"], date="2023-11-19",
)


# --- merge intervals ----------------------------------------------------------------------------
def _merge_oracle(intervals):
    covered = set()
    for a, b in intervals:
        covered.update(range(2 * a, 2 * b + 1))  # doubled, so [1, 2] and [3, 4] leave a gap at 5
    runs = []
    for p in sorted(covered):
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return [[a // 2, b // 2] for a, b in runs]


r = rng("merge-intervals")
func(
    "merge-intervals", "Merge Overlapping Intervals",
    """# Merge Overlapping Intervals

`intervals` is a list of closed intervals `[start, end]` with `start <= end`. Merge every group of
intervals that overlap (intervals that share even one point, such as `[1, 3]` and `[3, 5]`,
overlap) and return the resulting disjoint intervals sorted by their start.

Constraints: `1 <= len(intervals) <= 10^4`, `0 <= start <= end <= 10^4`.""",
    ["intervals"],
    [([[1, 3], [2, 6], [8, 10], [15, 18]],), ([[1, 4], [4, 5]],), ([[5, 5]],), ([[1, 2], [3, 4]],),
     ([sorted([r.randint(0, 50), r.randint(0, 50)]) for _ in range(12)],),
     ([sorted([r.randint(0, 1000), r.randint(0, 1000)]) for _ in range(40)],),
     ([[i, i] for i in range(0, 60, 2)],)],
    _merge_oracle,
    LIST + """class Solution:
    def mergeIntervals(self, intervals: List[List[int]]) -> List[List[int]]:
        merged = []
        for start, end in sorted(intervals):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return merged
""",
    *sol("mergeIntervals", "intervals: List[List[int]]) -> List[List[int]]"), npub=2,
    platform="leetcode", difficulty="medium", rating=None, tags=["sorting", "intervals"], date="2023-12-03",
)


# --- rotate left --------------------------------------------------------------------------------
def _rot_oracle(nums, k):
    d = deque(nums)
    d.rotate(-k)
    return list(d)


r = rng("rotate-left")
func(
    "rotate-left", "Rotate an Array Left",
    """# Rotate an Array Left

Return the array obtained from `nums` by rotating it `k` positions to the left: each rotation moves
the first element to the end.

Constraints: `1 <= len(nums) <= 10^5`, `-10^9 <= nums[i] <= 10^9`, `0 <= k <= 10^9`.""",
    ["nums", "k"],
    [([1, 2, 3, 4, 5], 2), ([7], 1000), ([1, 2], 0), ([1, 2, 3], 3), ([r.randint(-99, 99) for _ in range(30)], 17),
     ([r.randint(-10**9, 10**9) for _ in range(25)], 10**9), (list(range(40)), 41)],
    _rot_oracle,
    LIST + """class Solution:
    def rotateLeft(self, nums: List[int], k: int) -> List[int]:
        k %= len(nums)
        return nums[k:] + nums[:k]
""",
    *sol("rotateLeft", "nums: List[int], k: int) -> List[int]"),
    platform="leetcode", difficulty="easy", rating=None, tags=["arrays"], date="2024-01-07",
)


# --- edit distance ------------------------------------------------------------------------------
def _edit_oracle(a, b):
    @cache
    def go(i, j):
        if i == len(a) or j == len(b):
            return len(a) - i + len(b) - j
        if a[i] == b[j]:
            return go(i + 1, j + 1)
        return 1 + min(go(i + 1, j), go(i, j + 1), go(i + 1, j + 1))

    return go(0, 0)


r = rng("edit-distance")
word = lambda n, al="abcd": "".join(r.choice(al) for _ in range(n))  # noqa: E731
func(
    "edit-distance", "Edit Distance",
    """# Edit Distance

Return the minimum number of single-character edits that turn string `a` into string `b`. An edit
inserts one character, deletes one character, or replaces one character by another.

Constraints: `0 <= len(a), len(b) <= 2000`, lowercase English letters only.""",
    ["a", "b"],
    [("horse", "ros"), ("", "abc"), ("same", "same"), ("intention", "execution"), (word(15), word(12)),
     (word(120), word(110)), (word(200, "ab"), word(190, "ab"))],
    _edit_oracle,
    """class Solution:
    def editDistance(self, a: str, b: str) -> int:
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i] + [0] * len(b)
            for j, cb in enumerate(b, 1):
                cur[j] = prev[j - 1] if ca == cb else 1 + min(prev[j], cur[j - 1], prev[j - 1])
            prev = cur
        return prev[-1]
""",
    *sol("editDistance", "a: str, b: str) -> int"),
    platform="leetcode", difficulty="medium", rating=None, tags=["dynamic programming", "strings"], date="2024-02-04",
)


# --- count islands ------------------------------------------------------------------------------
def _islands_oracle(grid):
    n, m = len(grid), len(grid[0])
    parent = {(i, j): (i, j) for i in range(n) for j in range(m) if grid[i][j] == "1"}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j in list(parent):
        for a, b in ((i + 1, j), (i, j + 1)):
            if (a, b) in parent:
                parent[find((i, j))] = find((a, b))
    return len({find(c) for c in parent})


def _island_grid(r, n, m, p):
    return ["".join("1" if r.random() < p else "0" for _ in range(m)) for _ in range(n)]


r = rng("count-islands")
func(
    "count-islands", "Number of Islands",
    """# Number of Islands

`grid` is a map given as a list of equal-length strings of `'1'` (land) and `'0'` (water). An island
is a maximal group of land cells connected horizontally or vertically. Return the number of
islands.

Constraints: `1 <= len(grid), len(grid[0]) <= 300`.""",
    ["grid"],
    [(["11000", "11000", "00100", "00011"],), (["0"],), (["1"],), (["101", "010", "101"],),
     (_island_grid(r, 10, 12, 0.45),), (_island_grid(r, 16, 24, 0.4),), (["1" * 30] * 20,)],
    _islands_oracle,
    LIST + """class Solution:
    def countIslands(self, grid: List[str]) -> int:
        n, m = len(grid), len(grid[0])
        seen = [[False] * m for _ in range(n)]
        islands = 0
        for i in range(n):
            for j in range(m):
                if grid[i][j] != "1" or seen[i][j]:
                    continue
                islands += 1
                seen[i][j] = True
                stack = [(i, j)]
                while stack:
                    x, y = stack.pop()
                    for a, b in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                        if 0 <= a < n and 0 <= b < m and grid[a][b] == "1" and not seen[a][b]:
                            seen[a][b] = True
                            stack.append((a, b))
        return islands
""",
    *sol("countIslands", "grid: List[str]) -> int"),
    platform="leetcode", difficulty="medium", rating=None, tags=["graphs", "dfs", "grids"], date="2024-03-03",
)

# --- trapping rain water ------------------------------------------------------------------------
r = rng("trap-rain-water")
func(
    "trap-rain-water", "Trapping Rain Water",
    """# Trapping Rain Water

`heights` describes an elevation map of bars of width 1. After a heavy rain, water collects in the
dips between bars. Return the total amount of trapped water (in unit squares).

Constraints: `1 <= len(heights) <= 2 * 10^4`, `0 <= heights[i] <= 10^5`.""",
    ["heights"],
    [([0, 1, 0, 2, 1, 0, 1, 3, 2, 1, 2, 1],), ([4, 2, 0, 3, 2, 5],), ([5],), ([1, 2, 3, 4],),
     ([r.randint(0, 10) for _ in range(40)],), ([r.randint(0, 10**5) for _ in range(100)],),
     ([50] + [0] * 80 + [50],)],
    lambda h: sum(min(max(h[:i + 1]), max(h[i:])) - h[i] for i in range(len(h))),
    LIST + """class Solution:
    def trapRainWater(self, heights: List[int]) -> int:
        i, j = 0, len(heights) - 1
        left_max = right_max = water = 0
        while i < j:
            if heights[i] < heights[j]:
                left_max = max(left_max, heights[i])
                water += left_max - heights[i]
                i += 1
            else:
                right_max = max(right_max, heights[j])
                water += right_max - heights[j]
                j -= 1
        return water
""",
    *sol("trapRainWater", "heights: List[int]) -> int"), npub=2,
    platform="leetcode", difficulty="hard", rating=None, tags=["two pointers", "arrays"], date="2024-04-07",
)

# --- top k frequent -----------------------------------------------------------------------------
r = rng("top-k-frequent")
func(
    "top-k-frequent", "Top K Frequent Values",
    """# Top K Frequent Values

Return the `k` values that occur most often in `nums`, ordered by number of occurrences (most
frequent first); values with equal counts are ordered from smallest to largest.

Constraints: `1 <= len(nums) <= 10^5`, `-10^4 <= nums[i] <= 10^4`, `1 <= k <=` the number of distinct
values in `nums`.""",
    ["nums", "k"],
    [([1, 1, 1, 2, 2, 3], 2), ([4], 1), ([5, 3, 5, 3, 1], 3), ([r.randint(1, 8) for _ in range(40)], 4),
     ([r.randint(-100, 100) for _ in range(120)], 10), ([r.randint(-10**4, 10**4) for _ in range(100)], 5),
     ([3, 3, 2, 2, 1, 1, 0], 2)],
    lambda nums, k: sorted(set(nums), key=lambda v: (-nums.count(v), v))[:k],
    LIST + """from collections import Counter

class Solution:
    def topKFrequent(self, nums: List[int], k: int) -> List[int]:
        counts = Counter(nums)
        return sorted(counts, key=lambda v: (-counts[v], v))[:k]
""",
    *sol("topKFrequent", "nums: List[int], k: int) -> List[int]"),
    platform="leetcode", difficulty="medium", rating=None, tags=["hashing", "sorting"], date="2024-05-05",
)


# --- spiral order -------------------------------------------------------------------------------
def _spiral_oracle(matrix):
    out, rows = [], [list(row) for row in matrix]
    while rows:
        out += rows.pop(0)
        rows = [list(col) for col in zip(*rows)][::-1]  # rotate the rest counter-clockwise
    return out


r = rng("spiral-order")
func(
    "spiral-order", "Spiral Order",
    """# Spiral Order

Return all elements of the `m x n` matrix `matrix` in spiral order: start at the top-left corner,
go right along the top row, then down the right column, then left along the bottom row, then up the
left column, and continue inwards until every element has been visited.

Constraints: `1 <= m, n <= 100`, `-100 <= matrix[i][j] <= 100`.""",
    ["matrix"],
    [([[1, 2, 3], [4, 5, 6], [7, 8, 9]],), ([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],), ([[7]],),
     ([[1], [2], [3]],), ([[r.randint(-100, 100) for _ in range(6)] for _ in range(5)],),
     ([[r.randint(-100, 100) for _ in range(10)] for _ in range(9)],), ([[1, 2, 3, 4, 5]],)],
    _spiral_oracle,
    LIST + """class Solution:
    def spiralOrder(self, matrix: List[List[int]]) -> List[int]:
        top, bottom, left, right = 0, len(matrix) - 1, 0, len(matrix[0]) - 1
        out = []
        while top <= bottom and left <= right:
            out += matrix[top][left:right + 1]
            out += [matrix[i][right] for i in range(top + 1, bottom + 1)]
            if top < bottom:
                out += matrix[bottom][left:right][::-1]
            if left < right:
                out += [matrix[i][left] for i in range(bottom - 1, top, -1)]
            top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
        return out
""",
    *sol("spiralOrder", "matrix: List[List[int]]) -> List[int]"), npub=2,
    platform="leetcode", difficulty="medium", rating=None, tags=["matrix", "simulation"], date="2024-06-02",
)


# --- distinct subsequence occurrences -----------------------------------------------------------
def _subseq_oracle(s, t):
    @cache
    def go(i, j):
        if j == len(t):
            return 1
        if len(s) - i < len(t) - j:
            return 0
        return go(i + 1, j) + (go(i + 1, j + 1) if s[i] == t[j] else 0)

    return go(0, 0) % (10**9 + 7)


r = rng("count-subsequences")
func(
    "count-subsequences", "Counting Subsequence Occurrences",
    """# Counting Subsequence Occurrences

Return the number of ways to choose positions `i_1 < i_2 < ... < i_k` in string `s` (where
`k = len(t)`) such that `s[i_1] s[i_2] ... s[i_k]` equals `t`, modulo `10^9 + 7`.

Constraints: `1 <= len(s), len(t) <= 1000`, lowercase English letters only.""",
    ["s", "t"],
    [("rabbbit", "rabbit"), ("babgbag", "bag"), ("abc", "abcd"), ("aaaa", "aa"),
     ("".join(r.choice("ab") for _ in range(60)), "abab"),
     ("".join(r.choice("abc") for _ in range(300)), "abcabc"), ("a" * 200, "a" * 20)],
    _subseq_oracle,
    """class Solution:
    def countSubsequences(self, s: str, t: str) -> int:
        MOD = 10**9 + 7
        ways = [1] + [0] * len(t)  # ways[j]: ways to form t[:j] so far
        for ch in s:
            for j in range(len(t), 0, -1):
                if t[j - 1] == ch:
                    ways[j] = (ways[j] + ways[j - 1]) % MOD
        return ways[len(t)]
""",
    *sol("countSubsequences", "s: str, t: str) -> int"),
    platform="leetcode", difficulty="hard", rating=None, tags=["dynamic programming", "strings"], date="2024-07-07",
)

# --- count vowels (one wrong expected output planted) -------------------------------------------
r = rng("count-vowels")
func(
    "count-vowels", "Count the Vowels",
    """# Count the Vowels

Write a function `count_vowels(s)` that returns how many characters of the string `s` are vowels.
The vowels are `a`, `e`, `i`, `o`, `u`, in lower or upper case; every other character (including
`y`, digits, spaces and punctuation) is not a vowel.

Constraints: `0 <= len(s) <= 10^5`, printable ASCII characters.""",
    ["s"],
    [("Hello World",), ("",), ("rhythm",), ("AEIOU aeiou",), ("Programming is fun!",),
     ("".join(r.choice("abcdeiouxyzAEU !") for _ in range(300)),), ("y" * 50 + "E",), ("Queueing 123",)],
    lambda s: sum(ch in "aeiouAEIOU" for ch in s),
    """def count_vowels(s: str) -> int:
    return sum(1 for ch in s.lower() if ch in "aeiou")
""",
    *plain("count_vowels", "s: str) -> int"),
    platform="humaneval", difficulty="easy", rating=None, tags=["strings"], date="2023-09-10",
    meta={"planted": "wrong_output", "test_index": 4},
)


# --- primality ----------------------------------------------------------------------------------
def _miller_rabin(n):
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


func(
    "is-prime", "Is It Prime?",
    """# Is It Prime?

Write a function `is_prime(n)` that returns `True` if the integer `n` is a prime number and `False`
otherwise. A prime is an integer greater than 1 whose only positive divisors are 1 and itself.

Constraints: `-10^12 <= n <= 10^12`.""",
    ["n"],
    [(7,), (1,), (0,), (-7,), (2,), (561,), (999999000001,), (999999999989,), (1000000007 * 3,)],
    _miller_rabin,
    """def is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True
""",
    *plain("is_prime", "n: int) -> bool"),
    platform="humaneval", difficulty="easy", rating=None, tags=["math", "number theory"], date="2023-09-24",
)

# --- run-length encoding ------------------------------------------------------------------------
r = rng("run-length-encode")
func(
    "run-length-encode", "Run-Length Encoding",
    """# Run-Length Encoding

Write a function `run_length_encode(s)` that replaces every maximal block of equal consecutive
characters of `s` by the character followed by the length of the block, and returns the result.
For example `"aaabcc"` becomes `"a3b1c2"`. The empty string encodes to the empty string.

Constraints: `0 <= len(s) <= 10^5`, lowercase English letters only.""",
    ["s"],
    [("aaabcc",), ("",), ("z",), ("abcd",), ("a" * 120,),
     ("".join(r.choice("ab") * r.randint(1, 12) for _ in range(40)),), ("xxyyxx" * 20,)],
    lambda s: "".join(f"{k}{len(list(g))}" for k, g in itertools.groupby(s)),
    """def run_length_encode(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(s[i] + str(j - i))
        i = j
    return "".join(out)
""",
    *plain("run_length_encode", "s: str) -> str"),
    platform="humaneval", difficulty="easy", rating=None, tags=["strings"], date="2023-10-01",
)


# --- roman numerals -----------------------------------------------------------------------------
def _to_roman(n):
    out = ""
    for v, sym in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                   (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out += sym
            n -= v
    return out


ROMAN = {_to_roman(n): n for n in range(1, 4000)}
func(
    "roman-to-int", "Roman Numerals",
    """# Roman Numerals

Write a function `roman_to_int(s)` that returns the value of the Roman numeral `s`. The symbols are
`I`=1, `V`=5, `X`=10, `L`=50, `C`=100, `D`=500, `M`=1000; a symbol placed before a larger one is
subtracted (`IV`=4, `IX`=9, `XL`=40, `XC`=90, `CD`=400, `CM`=900), otherwise values add up.

Constraints: `s` is a valid numeral for a value between 1 and 3999.""",
    ["s"],
    [("MCMXCIV",), ("III",), ("LVIII",), ("MMMCMXCIX",), ("CDXLIV",), ("I",), ("MMXXIV",)],
    lambda s: ROMAN[s],
    """def roman_to_int(s: str) -> int:
    value = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, ch in enumerate(s):
        v = value[ch]
        total += -v if i + 1 < len(s) and value[s[i + 1]] > v else v
    return total
""",
    *plain("roman_to_int", "s: str) -> int"),
    platform="humaneval", difficulty="easy", rating=None, tags=["strings", "math"], date="2023-10-22",
)

# --- pascal row ---------------------------------------------------------------------------------
func(
    "pascal-row", "Row of Pascal's Triangle",
    """# Row of Pascal's Triangle

Write a function `pascal_row(n)` that returns row `n` of Pascal's triangle as a list, counting rows
from 0: row 0 is `[1]`, row 1 is `[1, 1]`, row 2 is `[1, 2, 1]`. Entry `k` of row `n` is the
binomial coefficient C(n, k).

Constraints: `0 <= n <= 60`.""",
    ["n"],
    [(4,), (0,), (1,), (10,), (33,), (50,)],
    lambda n: [math.comb(n, k) for k in range(n + 1)],
    """from typing import List

def pascal_row(n: int) -> List[int]:
    row = [1]
    for k in range(n):
        row.append(row[-1] * (n - k) // (k + 1))
    return row
""",
    *plain("pascal_row", "n: int) -> List[int]"),
    platform="humaneval", difficulty="easy", rating=None, tags=["math", "combinatorics"], date="2023-11-12",
)


# --- equal-sum partition ------------------------------------------------------------------------
def _partition_oracle(nums):
    total = sum(nums)
    if total % 2:
        return False
    sums = {0}
    for x in nums:
        sums |= {s + x for s in sums if s + x <= total // 2}
    return total // 2 in sums


r = rng("can-partition")
func(
    "can-partition", "Equal-Sum Partition",
    """# Equal-Sum Partition

Write a function `can_partition(nums)` that returns `True` if the list of positive integers `nums`
can be divided into two groups with equal sums (every element goes to exactly one group), and
`False` otherwise.

Constraints: `1 <= len(nums) <= 200`, `1 <= nums[i] <= 100`.""",
    ["nums"],
    [([1, 5, 11, 5],), ([1, 2, 3, 5],), ([7],), ([4, 4],), ([r.randint(1, 100) for _ in range(9)],),
     ([2 * r.randint(1, 50) for _ in range(60)] + [1],), ([r.randint(1, 100) for _ in range(150)],),
     ([100] * 99 + [98, 2],)],
    _partition_oracle,
    """from typing import List

def can_partition(nums: List[int]) -> bool:
    total = sum(nums)
    if total % 2:
        return False
    reachable = 1  # bit s is set when some subset sums to s
    for x in nums:
        reachable |= reachable << x
    return bool(reachable >> (total // 2) & 1)
""",
    *plain("can_partition", "nums: List[int]) -> bool"), npub=2,
    platform="humaneval", difficulty="medium", rating=None, tags=["dynamic programming", "subset sum"],
    date="2024-08-11",
)


# --- next permutation ---------------------------------------------------------------------------
def _nextperm_oracle(nums):
    perms = sorted(set(itertools.permutations(nums)))
    k = perms.index(tuple(nums))
    return list(perms[(k + 1) % len(perms)])


r = rng("next-permutation")
func(
    "next-permutation", "Next Permutation",
    """# Next Permutation

Write a function `next_permutation(nums)` that returns the next arrangement of `nums` in
lexicographic order among all arrangements of its elements. If `nums` is already the largest
arrangement, return the smallest one (the elements in ascending order). Elements may repeat.

Constraints: `1 <= len(nums) <= 10^5`, `0 <= nums[i] <= 100`.""",
    ["nums"],
    [([1, 2, 3],), ([3, 2, 1],), ([1, 1, 5],), ([5],), ([1, 5, 1],), (r.sample(range(8), 8),),
     ([r.randint(0, 3) for _ in range(8)],), ([2, 3, 1, 3, 3],)],
    _nextperm_oracle,
    """from typing import List

def next_permutation(nums: List[int]) -> List[int]:
    a = list(nums)
    i = len(a) - 2
    while i >= 0 and a[i] >= a[i + 1]:
        i -= 1
    if i >= 0:
        j = len(a) - 1
        while a[j] <= a[i]:
            j -= 1
        a[i], a[j] = a[j], a[i]
    a[i + 1:] = reversed(a[i + 1:])
    return a
""",
    *plain("next_permutation", "nums: List[int]) -> List[int]"), npub=2,
    platform="humaneval", difficulty="medium", rating=None, tags=["arrays", "combinatorics"], date="2024-09-01",
)
