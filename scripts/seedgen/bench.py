"""The held-out benchmark split (source seed-bench), plus the planted copy of one of its problems."""
import heapq

from common import func, rng, stdio

B = {"source": "seed-bench"}
T_LINE = "The first line contains a single integer t (1 <= t <= 10^4), the number of test cases."

# --- atcoder easy: stamp card -----------------------------------------------------------------
stdio(
    "stamp-card", "Stamp Card",
    """# Stamp Card

A bakery gives one stamp for every bread bought. K stamps can be exchanged for one free bread, and
a free bread also earns a stamp. You buy N breads. How many breads can you get in total, if you
keep exchanging stamps as long as possible?

## Constraints

- 1 <= N <= 10^18
- 2 <= K <= 10^18
- All input values are integers.

## Input

Input is given from Standard Input in the following format:

```
N K
```

## Output

Print the total number of breads you get.""",
    [(7, 3), (1, 2), (10**18, 2), (5, 10), (100, 7), (999999999999, 1000), (6, 6)],
    lambda c: f"{c[0]} {c[1]}", lambda c: str(c[0] + (c[0] - 1) // (c[1] - 1)),
    """
n, k = map(int, input().split())
total, stamps = n, n
while stamps >= k:
    free = stamps // k
    total += free
    stamps = stamps % k + free
print(total)
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["math", "simulation"], date="2025-02-08", **B,
)

# --- atcoder easy: alternating lamps (the planted copy lives in the seed file) -----------------
LAMPS_BODY = """{head}

## Constraints

- 1 <= N <= 2 * 10^5
- S is a string of length N consisting of `A` and `B`.

## Input

Input is given from Standard Input in the following format:

```
N
S
```

## Output

Print the minimum number of operations."""
LAMPS_HEAD = """# Alternating Lamps

There are N lamps in a row. Their states are given as a string S of length N: the i-th character is
`A` if the i-th lamp is on and `B` if it is off. The caretaker wants the lamps to alternate, so that
no two adjacent lamps are in the same state. In one operation he can toggle a single lamp. Find the
minimum number of operations needed."""
LAMPS_COPY_HEAD = """# Making the Lamps Alternate

N lamps stand in a row. Their states are given as a string S of length N: the i-th character is
`A` if the i-th lamp is on and `B` if it is off. The caretaker wants the lamps to alternate, so that
no two neighbouring lamps are in the same state. With one operation he can toggle one lamp. Print
the minimum number of operations needed."""


def _lamps_brute(s):
    pats = ["".join("AB"[(i + k) % 2] for i in range(len(s))) for k in (0, 1)]
    return str(min(sum(a != b for a, b in zip(s, p)) for p in pats))


def _lamps_cases(slug, first):
    r = rng(slug)
    return [first, "A", "ABABAB", "".join(r.choice("AB") for _ in range(20)),
            "".join(r.choice("AAB") for _ in range(400)), "B" * 301]


LAMPS_FMT = (lambda s: f"{len(s)}\n{s}")
stdio(
    "alternating-lamps", "Alternating Lamps", LAMPS_BODY.format(head=LAMPS_HEAD),
    _lamps_cases("alternating-lamps", "AABBA"), LAMPS_FMT, _lamps_brute,
    """
n = int(input())
s = input().strip()
start_a = sum(1 for i, c in enumerate(s) if c != "AB"[i % 2])
print(min(start_a, n - start_a))
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["strings", "greedy"], date="2025-03-15", **B,
)
stdio(
    "lamps-alternate-copy", "Making the Lamps Alternate", LAMPS_BODY.format(head=LAMPS_COPY_HEAD),
    _lamps_cases("lamps-alternate-copy", "BBBAB"), LAMPS_FMT, _lamps_brute,
    """
n = int(input())
s = input()
flips = [0, 0]
for i, ch in enumerate(s[:n]):
    flips[(ch == "A") ^ (i % 2)] += 1
print(min(flips))
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["strings"], date="2024-10-19",
    meta={"planted": "benchmark_copy", "benchmark_id": "seed-bench/alternating-lamps"},
)


# --- atcoder medium: subarrays with sum K -------------------------------------------------------
def _sk_brute(c):
    k, a = c
    return str(sum(1 for i in range(len(a)) for j in range(i + 1, len(a) + 1) if sum(a[i:j]) == k))


r = rng("subarray-sum-k")
stdio(
    "subarray-sum-k", "Subarrays Summing to K",
    """# Subarrays Summing to K

You are given an integer sequence A = (A_1, ..., A_N) and an integer K. Count the pairs (l, r) with
1 <= l <= r <= N such that A_l + A_(l+1) + ... + A_r = K.

## Constraints

- 1 <= N <= 2 * 10^5
- |A_i| <= 10^9
- |K| <= 10^15
- All input values are integers.

## Input

Input is given from Standard Input in the following format:

```
N K
A_1 A_2 ... A_N
```

## Output

Print the number of such pairs.""",
    [(3, [1, 2, 1, 2, -1]), (0, [0, 0, 0]), (5, [1, 1, 1]), (0, [r.randint(-3, 3) for _ in range(60)]),
     (7, [r.randint(-5, 9) for _ in range(150)]), (10**9, [10**9] * 40)],
    lambda c: f"{len(c[1])} {c[0]}\n" + " ".join(map(str, c[1])), _sk_brute,
    """
from collections import defaultdict

n, k = map(int, input().split())
a = list(map(int, input().split()))
seen = defaultdict(int)
seen[0] = 1
prefix = ans = 0
for x in a:
    prefix += x
    ans += seen[prefix - k]
    seen[prefix] += 1
print(ans)
""",
    platform="atcoder", difficulty="medium", rating=None, tags=["prefix sums", "hashing"], date="2025-04-26", **B,
)


# --- codeforces easy: equal candies -------------------------------------------------------------
def multi(cases, one):
    return f"{len(cases)}\n" + "\n".join(one(c) for c in cases)


r = rng("equal-candies")
stdio(
    "equal-candies", "Equal Candy Boxes",
    f"""# Equal Candy Boxes

There are n boxes, and the i-th box holds a_i candies. You may only eat candies (never add them),
from any boxes you like. What is the minimum number of candies you must eat so that all boxes hold
the same number of candies?

## Input

{T_LINE} Each test case consists of two lines. The first line contains an integer n
(1 <= n <= 50). The second line contains n integers a_1, ..., a_n (1 <= a_i <= 10^7).

## Output

For each test case, print one integer: the minimum number of candies to eat.""",
    [[[1, 2, 3, 4, 5], [1000, 1000]], [[7]], [[r.randint(1, 10) for _ in range(r.randint(1, 8))] for _ in range(10)],
     [[r.randint(1, 10**7) for _ in range(50)] for _ in range(3)], [[10**7] * 49 + [1]]],
    lambda c: multi(c, lambda a: f"{len(a)}\n" + " ".join(map(str, a))),
    lambda c: "\n".join(str(sum(x - min(a) for x in a)) for a in c),
    """
t = int(input())
for _ in range(t):
    n = int(input())
    a = list(map(int, input().split()))
    print(sum(a) - n * min(a))
""",
    platform="codeforces", difficulty="easy", rating=800, tags=["greedy", "math"], date="2025-01-19", **B,
)

# --- codeforces easy: lucky tickets -------------------------------------------------------------
r = rng("lucky-ticket")
tickets = [f"{r.randint(0, 999999):06d}" for _ in range(12)] + ["123600", "000000", "999999", "100001"]
stdio(
    "lucky-ticket", "Lucky Ticket",
    f"""# Lucky Ticket

A bus ticket carries a number of exactly six digits (leading zeros allowed). A ticket is lucky if the
sum of its first three digits equals the sum of its last three digits. Decide for each ticket
whether it is lucky.

## Input

{T_LINE} Each of the next t lines contains a string of six digits.

## Output

For each test case, print YES if the ticket is lucky and NO otherwise.""",
    [["213033", "973894", "045207"], ["000000"], tickets[:8], tickets[8:], ["555555", "123456", "999990"]],
    lambda c: multi(c, str),
    lambda c: "\n".join("YES" if sum(map(int, s[:3])) == sum(map(int, s[3:])) else "NO" for s in c),
    """
t = int(input())
for _ in range(t):
    s = input().strip()
    left = sum(int(ch) for ch in s[:3])
    right = sum(int(ch) for ch in s[3:])
    print("YES" if left == right else "NO")
""",
    platform="codeforces", difficulty="easy", rating=800, tags=["implementation"], date="2025-05-04", **B,
)

# --- codeforces medium: balanced team -----------------------------------------------------------
r = rng("balanced-team")
stdio(
    "balanced-team", "Balanced Team",
    """# Balanced Team

A coach has n students, and the i-th student has skill a_i. She wants to pick as many students as
possible for a team such that the skills of any two picked students differ by at most 5. Print the
largest possible team size.

## Input

The first line contains an integer n (1 <= n <= 2 * 10^5). The second line contains n integers
a_1, ..., a_n (1 <= a_i <= 10^9).

## Output

Print one integer: the maximum number of students in a balanced team.""",
    [[1, 10, 17, 12, 15, 2], [1337] * 10, [1, 1000, 10000, 10**9], [r.randint(1, 40) for _ in range(50)],
     [r.randint(1, 10**9) for _ in range(60)] + [500, 505, 506, 501], [r.randint(1, 300) for _ in range(200)]],
    lambda a: f"{len(a)}\n" + " ".join(map(str, a)),
    lambda a: str(max(sum(1 for y in a if v <= y <= v + 5) for v in a)),
    """
n = int(input())
a = sorted(map(int, input().split()))
best = left = 0
for right in range(n):
    while a[right] - a[left] > 5:
        left += 1
    best = max(best, right - left + 1)
print(best)
""",
    platform="codeforces", difficulty="medium", rating=1200, tags=["sortings", "two pointers"], date="2025-06-14", **B,
)


# --- codeforces hard: one free road -------------------------------------------------------------
def _dist(n, edges, src):
    d = [None] * (n + 1)
    d[src] = 0
    pq = [(0, src)]
    adj = [[] for _ in range(n + 1)]
    for u, v, w in edges:
        adj[u].append((v, w))
        adj[v].append((u, w))
    while pq:
        du, u = heapq.heappop(pq)
        if du > d[u]:
            continue
        for v, w in adj[u]:
            if d[v] is None or du + w < d[v]:
                d[v] = du + w
                heapq.heappush(pq, (d[v], v))
    return d


def _free_brute(c):
    n, edges = c
    options = [_dist(n, edges, 1)[n]]
    for k in range(len(edges)):
        e = list(edges)
        e[k] = (e[k][0], e[k][1], 0)
        options.append(_dist(n, e, 1)[n])
    options = [o for o in options if o is not None]
    return str(min(options)) if options else "-1"


def _rand_graph(r, n, m, wmax):
    return (n, [(r.randint(1, n), r.randint(1, n), r.randint(1, wmax)) for _ in range(m)])


r = rng("one-free-road")
stdio(
    "one-free-road", "One Free Road",
    """# One Free Road

The kingdom has n cities and m two-way roads; the i-th road connects cities u_i and v_i and costs
w_i coins to travel. You hold one voucher that makes a single road free for one trip along it.
Find the minimum cost to travel from city 1 to city n, or print -1 if city n cannot be reached.

## Input

The first line contains two integers n and m (2 <= n <= 2 * 10^5, 1 <= m <= 2 * 10^5). Each of the
next m lines contains three integers u_i, v_i, w_i (1 <= u_i, v_i <= n, 1 <= w_i <= 10^9). Roads may
be loops or repeat other roads.

## Output

Print the minimum total cost, or -1.""",
    [(4, [(1, 2, 5), (2, 4, 7), (1, 3, 2), (3, 4, 9)]), (3, [(1, 2, 4)]), (2, [(1, 2, 10**9), (1, 2, 3)]),
     _rand_graph(r, 8, 12, 20), _rand_graph(r, 30, 60, 10**9), _rand_graph(r, 25, 30, 100),
     (5, [(1, 2, 1), (2, 3, 1), (3, 4, 1), (4, 5, 1), (1, 5, 100)])],
    lambda c: f"{c[0]} {len(c[1])}\n" + "\n".join(f"{u} {v} {w}" for u, v, w in c[1]), _free_brute,
    """
import heapq
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n, m = data[0], data[1]
    adj = [[] for _ in range(n + 1)]
    for k in range(m):
        u, v, w = data[2 + 3 * k:5 + 3 * k]
        adj[u].append((v, w))
        adj[v].append((u, w))
    INF = float("inf")
    dist = [[INF, INF] for _ in range(n + 1)]
    dist[1][0] = 0
    pq = [(0, 1, 0)]
    while pq:
        d, u, used = heapq.heappop(pq)
        if d > dist[u][used]:
            continue
        for v, w in adj[u]:
            if d + w < dist[v][used]:
                dist[v][used] = d + w
                heapq.heappush(pq, (d + w, v, used))
            if not used and d < dist[v][1]:
                dist[v][1] = d
                heapq.heappush(pq, (d, v, 1))
    best = min(dist[n])
    print(-1 if best == INF else best)

main()
""",
    platform="codeforces", difficulty="hard", rating=1900, tags=["graphs", "shortest paths"], date="2025-07-20", **B,
)

# --- leetcode easy: second largest distinct -----------------------------------------------------
r = rng("second-largest")
func(
    "second-largest", "Second Largest Distinct Value",
    """# Second Largest Distinct Value

Given an integer array `nums`, return the second largest distinct value in it. If `nums` holds
fewer than two distinct values, return `-1`.

Constraints: `1 <= len(nums) <= 10^5`, `0 <= nums[i] <= 10^9`.""",
    ["nums"],
    [([3, 5, 1, 5],), ([7, 7, 7],), ([0, 1],), ([r.randint(0, 20) for _ in range(30)],),
     ([r.randint(0, 10**9) for _ in range(100)],), ([4],)],
    lambda nums: sorted(set(nums))[-2] if len(set(nums)) > 1 else -1,
    """
from typing import List

class Solution:
    def secondLargest(self, nums: List[int]) -> int:
        first = second = -1
        for x in nums:
            if x > first:
                first, second = x, first
            elif first > x > second:
                second = x
        return second
""",
    "Solution().secondLargest", "class Solution:\n    def secondLargest(self, nums: List[int]) -> int:\n        ",
    platform="leetcode", difficulty="easy", rating=None, tags=["arrays"], date="2025-02-23", **B,
)


# --- leetcode medium: longest substring without repeats -----------------------------------------
def _uniq_brute(s):
    return max([j - i for i in range(len(s)) for j in range(i + 1, len(s) + 1) if len(set(s[i:j])) == j - i] or [0])


r = rng("longest-distinct-substring")
func(
    "longest-distinct-substring", "Longest Substring With Distinct Characters",
    """# Longest Substring With Distinct Characters

Given a string `s`, return the length of the longest substring of `s` in which no character appears
twice.

Constraints: `0 <= len(s) <= 10^5`; `s` consists of printable ASCII characters.""",
    ["s"],
    [("abcabcbb",), ("",), ("bbbb",), ("pwwkew",), ("".join(r.choice("abcdefgh") for _ in range(200)),),
     ("the quick brown fox",), ("".join(chr(33 + (i * 7) % 90) for i in range(300)),)],
    _uniq_brute,
    """
class Solution:
    def longestDistinctSubstring(self, s: str) -> int:
        last = {}
        start = best = 0
        for i, ch in enumerate(s):
            if last.get(ch, -1) >= start:
                start = last[ch] + 1
            last[ch] = i
            best = max(best, i - start + 1)
        return best
""",
    "Solution().longestDistinctSubstring",
    "class Solution:\n    def longestDistinctSubstring(self, s: str) -> int:\n        ",
    platform="leetcode", difficulty="medium", rating=None, tags=["sliding window", "hashing"], date="2025-05-18", **B,
)

# --- leetcode hard: largest rectangle in histogram ----------------------------------------------
r = rng("largest-rectangle")
func(
    "largest-rectangle", "Largest Rectangle in a Histogram",
    """# Largest Rectangle in a Histogram

A histogram has bars of width 1 whose heights are given by the array `heights`. Return the area of
the largest axis-aligned rectangle that fits entirely inside the histogram.

Constraints: `1 <= len(heights) <= 10^5`, `0 <= heights[i] <= 10^4`.""",
    ["heights"],
    [([2, 1, 5, 6, 2, 3],), ([4],), ([0, 0],), ([r.randint(0, 10) for _ in range(40)],),
     ([r.randint(0, 10**4) for _ in range(120)],), (list(range(1, 80)),), ([5, 5, 1, 5, 5, 5],)],
    lambda h: max(min(h[i:j]) * (j - i) for i in range(len(h)) for j in range(i + 1, len(h) + 1)),
    """
from typing import List

class Solution:
    def largestRectangleArea(self, heights: List[int]) -> int:
        stack = []
        best = 0
        for i, h in enumerate(heights + [0]):
            start = i
            while stack and stack[-1][1] >= h:
                start, top = stack.pop()
                best = max(best, top * (i - start))
            stack.append((start, h))
        return best
""",
    "Solution().largestRectangleArea",
    "class Solution:\n    def largestRectangleArea(self, heights: List[int]) -> int:\n        ",
    platform="leetcode", difficulty="hard", rating=None, tags=["stack", "monotonic stack"], date="2025-08-03", **B,
)
