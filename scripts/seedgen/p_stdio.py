"""Ordinary stdin/stdout problems (some with a C++ reference too)."""
import math
import re
from functools import reduce

from common import rng, stdio


def arr_fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a))


# --- divisible by either ----------------------------------------------------------------------
r = rng("divisible-by-either")
cases = [(10, 2, 3), (1, 5, 7), (100, 4, 6), (37, 37, 37), (1000, 1, 999)]
cases += [(r.randint(1, 5000), r.randint(1, 60), r.randint(1, 60)) for _ in range(2)]
cases += [(10**18, 10**9, 999999937), (987654321987654321, 12, 18)]


def _div_oracle(c):
    n, a, b = c
    if n <= 10**5:
        return str(sum(1 for k in range(1, n + 1) if k % a == 0 or k % b == 0))
    lcm = a * b // math.gcd(a, b)
    return str(n // a + n // b - n // lcm)


stdio(
    "divisible-by-either", "Divisible by Either",
    """# Divisible by Either

Count the integers k with 1 <= k <= n that are divisible by a, by b, or by both.

## Input

One line with three integers n, a and b (1 <= n <= 10^18, 1 <= a, b <= 10^9).

## Output

Print the count.""",
    cases, lambda c: " ".join(map(str, c)), _div_oracle,
    """
from math import gcd

n, a, b = map(int, input().split())
lcm = a // gcd(a, b) * b
print(n // a + n // b - n // lcm)
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["math", "inclusion-exclusion"], date="2023-11-04",
)

# --- array gcd (one wrong expected output planted) ----------------------------------------------
r = rng("array-gcd")
cases = [[12, 18, 30], [7], [1000000000, 500000000], [17, 34, 51, 85]]
cases += [[6 * r.randint(1, 10**8) for _ in range(30)], [r.randint(1, 10**9) for _ in range(40)],
          [2**29, 2**20 * 3, 2**25 * 5], [36 * r.randint(1, 1000) for _ in range(60)]]
stdio(
    "array-gcd", "Greatest Common Divisor of an Array",
    """# Greatest Common Divisor of an Array

Given n positive integers, print their greatest common divisor: the largest integer that divides
every one of them.

## Input

The first line contains an integer n (1 <= n <= 10^5). The second line contains n integers
a_1, ..., a_n (1 <= a_i <= 10^9).

## Output

Print the greatest common divisor of all the numbers.""",
    cases, arr_fmt, lambda a: str(reduce(math.gcd, a)),
    """
def gcd(a, b):
    while b:
        a, b = b, a % b
    return a

n = int(input())
g = 0
for x in map(int, input().split()):
    g = gcd(g, x)
print(g)
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    scanf("%d", &n);
    long long g = 0;
    for (int i = 0; i < n; i++) { long long x; scanf("%lld", &x); g = __gcd(g, x); }
    printf("%lld\\n", g);
}
""",
    platform="codeforces", difficulty="easy", rating=800, tags=["math", "number theory"], date="2024-01-27",
    meta={"planted": "wrong_output", "test_index": 5},
)

# --- coin combinations (one wrong expected output planted) --------------------------------------
MOD = 10**9 + 7


def _coins_oracle(c):
    s, coins = c
    ways = [1] + [0] * s  # ways using the coins seen so far; add one coin type at a time
    for coin in coins:
        new = [0] * (s + 1)
        for v in range(s + 1):
            new[v] = sum(ways[v - k * coin] for k in range(v // coin + 1))
        ways = new
    return str(ways[s] % MOD)


r = rng("coin-combinations")
cases = [(5, [1, 2, 5]), (3, [2]), (10, [10]), (0, [3, 4]), (50, [1, 5, 10, 25]),
         (300, sorted(r.sample(range(2, 40), 6))), (1000, [1, 2, 3]), (2000, [7, 11, 13, 50])]
stdio(
    "coin-combinations", "Counting Coin Combinations",
    """# Counting Coin Combinations

There are k kinds of coins with distinct values c_1, ..., c_k, and an unlimited supply of each
kind. In how many ways can you pay exactly s? Two ways are the same if they use the same number of
coins of every kind (the order of the coins does not matter). Print the answer modulo
1 000 000 007.

## Input

The first line contains two integers s and k (0 <= s <= 10^4, 1 <= k <= 100). The second line
contains k distinct integers c_1, ..., c_k (1 <= c_i <= 10^4).

## Output

Print the number of ways modulo 10^9 + 7.""",
    cases, lambda c: f"{c[0]} {len(c[1])}\n" + " ".join(map(str, c[1])), _coins_oracle,
    """
s, k = map(int, input().split())
coins = list(map(int, input().split()))
MOD = 10**9 + 7
ways = [0] * (s + 1)
ways[0] = 1
for c in coins:
    for v in range(c, s + 1):
        ways[v] = (ways[v] + ways[v - c]) % MOD
print(ways[s])
""",
    platform="atcoder", difficulty="medium", rating=None, tags=["dynamic programming"], date="2024-03-30",
    meta={"planted": "wrong_output", "test_index": 6},
)


# --- grid shortest path -------------------------------------------------------------------------
def _bfs_oracle(g):
    # Relax distances until nothing changes (Bellman-Ford on the grid), independent of BFS order.
    n, m = len(g), len(g[0])
    inf = 10**9
    d = [[inf] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            if g[i][j] == "S":
                d[i][j] = 0
    changed = True
    while changed:
        changed = False
        for i in range(n):
            for j in range(m):
                if g[i][j] == "#" or d[i][j] == inf:
                    continue
                for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                    if 0 <= a < n and 0 <= b < m and g[a][b] != "#" and d[a][b] > d[i][j] + 1:
                        d[a][b] = d[i][j] + 1
                        changed = True
    (ti, tj), = [(i, j) for i in range(n) for j in range(m) if g[i][j] == "T"]
    return str(d[ti][tj] if d[ti][tj] < inf else -1)


def _maze(r, n, m, p):
    cells = [["#" if r.random() < p else "." for _ in range(m)] for _ in range(n)]
    a, b = r.sample(range(n * m), 2)
    cells[a // m][a % m], cells[b // m][b % m] = "S", "T"
    return ["".join(row) for row in cells]


r = rng("grid-shortest-path")
cases = [["S.#", ".##", "..T"], ["S#T"], ["ST"], _maze(r, 5, 7, 0.3), _maze(r, 12, 12, 0.35),
         _maze(r, 20, 30, 0.25), ["S" + "." * 38 + "#", "#" * 39 + ".", "T" + "." * 39]]
stdio(
    "grid-shortest-path", "Shortest Path in a Maze",
    """# Shortest Path in a Maze

A maze is an n x m grid. Cells marked `#` are walls, cells marked `.` are free, and there is exactly
one start cell `S` and one target cell `T` (both free). In one step you may move to a free cell
that shares a side with your cell. Find the minimum number of steps from `S` to `T`, or print -1 if
`T` cannot be reached.

## Input

The first line contains two integers n and m (1 <= n, m <= 1000, n * m >= 2). Each of the next n
lines contains a string of m characters from `.`, `#`, `S`, `T`.

## Output

Print the minimum number of steps, or -1.""",
    cases, lambda g: f"{len(g)} {len(g[0])}\n" + "\n".join(g), _bfs_oracle,
    """
import sys
from collections import deque

def main():
    data = sys.stdin.read().split()
    n, m = int(data[0]), int(data[1])
    g = data[2:2 + n]
    start = next((i, row.index("S")) for i, row in enumerate(g) if "S" in row)
    dist = [[-1] * m for _ in range(n)]
    dist[start[0]][start[1]] = 0
    q = deque([start])
    while q:
        i, j = q.popleft()
        if g[i][j] == "T":
            print(dist[i][j])
            return
        for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
            if 0 <= a < n and 0 <= b < m and g[a][b] != "#" and dist[a][b] < 0:
                dist[a][b] = dist[i][j] + 1
                q.append((a, b))
    print(-1)

main()
""",
    platform="atcoder", difficulty="medium", rating=None, tags=["graphs", "bfs", "grids"], date="2024-04-13",
)


# --- cheapest route (Dijkstra) ------------------------------------------------------------------
def _floyd(c):
    n, edges = c
    inf = float("inf")
    d = [[inf] * (n + 1) for _ in range(n + 1)]
    for v in range(n + 1):
        d[v][v] = 0
    for u, v, w in edges:
        d[u][v] = d[v][u] = min(d[u][v], w)
    for k in range(1, n + 1):
        for i in range(1, n + 1):
            for j in range(1, n + 1):
                if d[i][k] + d[k][j] < d[i][j]:
                    d[i][j] = d[i][k] + d[k][j]
    return str(d[1][n] if d[1][n] < inf else -1)


def _graph(r, n, m, wmax):
    return (n, [(r.randint(1, n), r.randint(1, n), r.randint(1, wmax)) for _ in range(m)])


r = rng("cheapest-route")
cases = [(4, [(1, 2, 4), (2, 4, 1), (1, 3, 1), (3, 4, 5)]), (3, [(1, 2, 7)]), (2, [(1, 2, 10**9)] * 2),
         _graph(r, 10, 15, 50), _graph(r, 30, 45, 10**9), _graph(r, 40, 35, 1000),
         (6, [(1, 2, 1), (2, 3, 1), (3, 6, 1), (1, 6, 4), (4, 5, 1)])]
stdio(
    "cheapest-route", "Cheapest Route",
    """# Cheapest Route

A country has n cities connected by m two-way roads; travelling along road i between cities u_i and
v_i costs w_i. Find the minimum total cost of a trip from city 1 to city n, or print -1 if there is
no such trip.

## Input

The first line contains two integers n and m (2 <= n <= 10^5, 1 <= m <= 2 * 10^5). Each of the next m
lines contains three integers u_i, v_i, w_i (1 <= u_i, v_i <= n, 1 <= w_i <= 10^9).

## Output

Print the minimum cost, or -1.""",
    cases, lambda c: f"{c[0]} {len(c[1])}\n" + "\n".join(f"{u} {v} {w}" for u, v, w in c[1]), _floyd,
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
    dist = [None] * (n + 1)
    pq = [(0, 1)]
    while pq:
        d, u = heapq.heappop(pq)
        if dist[u] is not None:
            continue
        dist[u] = d
        for v, w in adj[u]:
            if dist[v] is None:
                heapq.heappush(pq, (d + w, v))
    print(-1 if dist[n] is None else dist[n])

main()
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    vector<vector<pair<int, long long>>> adj(n + 1);
    for (int i = 0; i < m; i++) {
        int u, v; long long w;
        scanf("%d %d %lld", &u, &v, &w);
        adj[u].push_back({v, w});
        adj[v].push_back({u, w});
    }
    vector<long long> dist(n + 1, LLONG_MAX);
    priority_queue<pair<long long, int>, vector<pair<long long, int>>, greater<>> pq;
    dist[1] = 0;
    pq.push({0, 1});
    while (!pq.empty()) {
        auto [d, u] = pq.top(); pq.pop();
        if (d > dist[u]) continue;
        for (auto [v, w] : adj[u])
            if (d + w < dist[v]) { dist[v] = d + w; pq.push({dist[v], v}); }
    }
    printf("%lld\\n", dist[n] == LLONG_MAX ? -1LL : dist[n]);
}
""",
    platform="codeforces", difficulty="medium", rating=1400, tags=["graphs", "shortest paths"], date="2024-05-25",
)


# --- connected components -----------------------------------------------------------------------
def _components(c):
    n, edges = c
    adj = {v: set() for v in range(1, n + 1)}
    for u, v in edges:
        adj[u].add(v)
        adj[v].add(u)
    seen, count = set(), 0
    for s in adj:
        if s not in seen:
            count += 1
            stack = [s]
            while stack:
                u = stack.pop()
                if u not in seen:
                    seen.add(u)
                    stack.extend(adj[u] - seen)
    return str(count)


r = rng("count-components")
cases = [(5, [(1, 2), (3, 4)]), (1, []), (4, [(1, 1), (2, 3), (3, 2)]),
         (20, [(r.randint(1, 20), r.randint(1, 20)) for _ in range(12)]),
         (80, [(r.randint(1, 80), r.randint(1, 80)) for _ in range(60)]),
         (120, [(i, i + 1) for i in range(1, 120, 2)]), (60, [(r.randint(1, 60), r.randint(1, 60)) for _ in range(90)])]
stdio(
    "count-components", "Islands of Friendship",
    """# Islands of Friendship

A school has n pupils numbered 1 to n and a list of m friendships; friendship is mutual. A friend
group is a maximal set of pupils in which any two are linked by a chain of friendships. Count the
friend groups (a pupil without friends forms a group alone).

## Input

The first line contains two integers n and m (1 <= n <= 10^5, 0 <= m <= 2 * 10^5). Each of the next
m lines contains two integers u and v (1 <= u, v <= n), meaning u and v are friends.

## Output

Print the number of friend groups.""",
    cases, lambda c: f"{c[0]} {len(c[1])}" + "".join(f"\n{u} {v}" for u, v in c[1]), _components,
    """
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n, m = data[0], data[1]
    parent = list(range(n + 1))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    groups = n
    for k in range(m):
        a, b = find(data[2 + 2 * k]), find(data[3 + 2 * k])
        if a != b:
            parent[a] = b
            groups -= 1
    print(groups)

main()
""",
    """
#include <bits/stdc++.h>
using namespace std;
vector<int> parent_;
int find(int x) { while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]]; return x; }
int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    parent_.resize(n + 1);
    iota(parent_.begin(), parent_.end(), 0);
    int groups = n;
    for (int i = 0; i < m; i++) {
        int u, v;
        scanf("%d %d", &u, &v);
        int a = find(u), b = find(v);
        if (a != b) { parent_[a] = b; groups--; }
    }
    printf("%d\\n", groups);
}
""",
    platform="codeforces", difficulty="easy", rating=1000, tags=["graphs", "dsu"], date="2024-06-08",
)


# --- longest increasing subsequence -------------------------------------------------------------
def _lis_quadratic(a):
    best = [1] * len(a)
    for i in range(len(a)):
        for j in range(i):
            if a[j] < a[i]:
                best[i] = max(best[i], best[j] + 1)
    return str(max(best))


r = rng("lis-length")
cases = [[10, 9, 2, 5, 3, 7, 101, 18], [5, 5, 5], [1], list(range(30, 0, -1)),
         [r.randint(-100, 100) for _ in range(60)], [r.randint(-10**9, 10**9) for _ in range(70)],
         [(i * 37) % 101 for i in range(110)]]
stdio(
    "lis-length", "Longest Increasing Subsequence",
    """# Longest Increasing Subsequence

A subsequence is obtained by deleting some (possibly zero) elements without changing the order of the
rest. Given an array of n integers, find the length of its longest strictly increasing subsequence.

## Input

The first line contains an integer n (1 <= n <= 2 * 10^5). The second line contains n integers
a_1, ..., a_n (-10^9 <= a_i <= 10^9).

## Output

Print the length of the longest strictly increasing subsequence.""",
    cases, arr_fmt, _lis_quadratic,
    """
from bisect import bisect_left

n = int(input())
tails = []
for x in map(int, input().split()):
    k = bisect_left(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
print(len(tails))
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    scanf("%d", &n);
    vector<long long> tails;
    for (int i = 0; i < n; i++) {
        long long x;
        scanf("%lld", &x);
        auto it = lower_bound(tails.begin(), tails.end(), x);
        if (it == tails.end()) tails.push_back(x); else *it = x;
    }
    printf("%zu\\n", tails.size());
}
""",
    platform="codeforces", difficulty="medium", rating=1500, tags=["dynamic programming", "binary search"],
    date="2024-06-22",
)


# --- 0/1 knapsack -------------------------------------------------------------------------------
def _knap_oracle(c):
    cap, items = c
    best = {0: 0}  # weight -> best value, only undominated states
    for w, v in items:
        for used, val in list(best.items()):
            if used + w <= cap and best.get(used + w, -1) < val + v:
                best[used + w] = val + v
    return str(max(best.values()))


r = rng("knapsack")
cases = [(10, [(5, 10), (4, 40), (6, 30), (3, 50)]), (1, [(2, 100)]), (7, [(7, 7), (1, 1), (6, 7)]),
         (50, [(r.randint(1, 20), r.randint(1, 100)) for _ in range(12)]),
         (1000, [(r.randint(1, 300), r.randint(1, 10**9)) for _ in range(40)]),
         (100000, [(r.randint(1, 10**5), r.randint(1, 10**9)) for _ in range(20)]),
         (60, [(3, 5)] * 25)]
stdio(
    "knapsack", "Packing a Backpack",
    """# Packing a Backpack

There are n items; item i weighs w_i and is worth v_i. Choose a set of items with total weight at
most W and the largest possible total worth. Each item can be taken at most once.

## Input

The first line contains two integers n and W (1 <= n <= 100, 1 <= W <= 10^5). Each of the next n
lines contains two integers w_i and v_i (1 <= w_i <= 10^5, 1 <= v_i <= 10^9).

## Output

Print the largest possible total worth.""",
    cases, lambda c: f"{len(c[1])} {c[0]}\n" + "\n".join(f"{w} {v}" for w, v in c[1]), _knap_oracle,
    """
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n, cap = data[0], data[1]
    best = [0] * (cap + 1)
    for i in range(n):
        w, v = data[2 + 2 * i], data[3 + 2 * i]
        for c in range(cap, w - 1, -1):
            if best[c - w] + v > best[c]:
                best[c] = best[c - w] + v
    print(best[cap])

main()
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, W;
    scanf("%d %d", &n, &W);
    vector<long long> best(W + 1, 0);
    for (int i = 0; i < n; i++) {
        int w; long long v;
        scanf("%d %lld", &w, &v);
        for (int c = W; c >= w; c--) best[c] = max(best[c], best[c - w] + v);
    }
    printf("%lld\\n", best[W]);
}
""",
    tl=3.0, platform="atcoder", difficulty="medium", rating=None, tags=["dynamic programming", "knapsack"],
    date="2024-07-13",
)


# --- prime counting -----------------------------------------------------------------------------
def _pi_oracle(n):
    if n > 10**5:  # known values of the prime-counting function
        return str({10**6: 78498, 5 * 10**6: 348513, 999983: 78498}[n])
    return str(sum(1 for k in range(2, n + 1) if all(k % d for d in range(2, math.isqrt(k) + 1))))


stdio(
    "prime-count", "Counting Primes",
    """# Counting Primes

Print how many prime numbers are less than or equal to n. A prime is an integer greater than 1 whose
only positive divisors are 1 and itself.

## Input

One line with an integer n (1 <= n <= 5 * 10^6).

## Output

Print the number of primes p with p <= n.""",
    [10, 1, 2, 100, 7919, 99991, 10**6, 999983, 5 * 10**6], str, _pi_oracle,
    """
n = int(input())
sieve = bytearray([1]) * (n + 1)
sieve[0] = sieve[1] = 0
for p in range(2, int(n ** 0.5) + 1):
    if sieve[p]:
        sieve[p * p::p] = bytearray(len(range(p * p, n + 1, p)))
print(sum(sieve))
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    scanf("%d", &n);
    vector<bool> composite(n + 1, false);
    int count = 0;
    for (long long p = 2; p <= n; p++) {
        if (composite[p]) continue;
        count++;
        for (long long q = p * p; q <= n; q += p) composite[q] = true;
    }
    printf("%d\\n", count);
}
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["math", "sieve"], date="2023-12-09",
)


# --- nesting depth ------------------------------------------------------------------------------
def _depth_oracle(s):
    # Each pass deletes every innermost pair at once; the number of passes is the depth.
    rounds = 0
    while s:
        s = re.sub(r"\(\)|\[\]|\{\}", "", s)
        rounds += 1
    return str(rounds)


def _nest(r, n):
    out, stack = [], []
    while len(out) + len(stack) < n or stack:
        if stack and (len(out) + len(stack) >= n or r.random() < 0.45):
            out.append(stack.pop())
        else:
            o, c = r.choice(["()", "[]", "{}"])
            out.append(o)
            stack.append(c)
    return "".join(out)


r = rng("nesting-depth")
cases = ["([]{()})[]", "()", "(((([[[{}]]]))))", _nest(r, 30), _nest(r, 300), _nest(r, 400), "()" * 250]
stdio(
    "nesting-depth", "Deepest Bracket Nesting",
    """# Deepest Bracket Nesting

You are given a balanced string of the brackets `()`, `[]` and `{}` (every opening bracket is closed
by a matching bracket of the same type, properly nested). Its nesting depth is the largest number
of brackets that are open at the same moment while reading it from left to right. Print the
nesting depth.

## Input

One line with a non-empty balanced bracket string of length at most 10^6.

## Output

Print the nesting depth.""",
    cases, str, _depth_oracle,
    """
s = input().strip()
depth = best = 0
for ch in s:
    if ch in "([{":
        depth += 1
        best = max(best, depth)
    else:
        depth -= 1
print(best)
""",
    platform="codeforces", difficulty="easy", rating=800, tags=["strings", "stack"], date="2024-08-03",
)

# --- most frequent word -------------------------------------------------------------------------
r = rng("most-frequent-word")
words = ["apple", "pear", "fig", "kiwi", "plum", "lime", "date", "grape"]
cases = ["the cat and the hat".split(), ["solo"], "b a b a c".split(),
         [r.choice(words) for _ in range(40)], [r.choice(words[:3]) for _ in range(100)],
         [r.choice(words) + r.choice("xyz") for _ in range(80)], "zz yy zz yy xx".split()]


def _freq_oracle(ws):
    top = max(ws.count(w) for w in ws)
    return f"{sorted(w for w in set(ws) if ws.count(w) == top)[0]} {top}"


stdio(
    "most-frequent-word", "Most Frequent Word",
    """# Most Frequent Word

Given a list of n words, print the word that occurs most often and how many times it occurs. If
several words are equally frequent, print the one that comes first in alphabetical order.

## Input

The first line contains an integer n (1 <= n <= 10^5). The second line contains n words separated by
single spaces; each word consists of 1 to 10 lowercase English letters.

## Output

Print the word and its number of occurrences, separated by a space.""",
    cases, lambda ws: f"{len(ws)}\n" + " ".join(ws), _freq_oracle,
    """
from collections import Counter

input()
counts = Counter(input().split())
word, count = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
print(word, count)
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["strings", "hashing"], date="2024-08-31",
)
