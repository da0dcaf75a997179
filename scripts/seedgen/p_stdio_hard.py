"""More stdin/stdout problems: the harder ones."""
from collections import deque

from common import rng, stdio


def arr_fmt(a):
    return f"{len(a)}\n" + " ".join(map(str, a))


# --- inversions ---------------------------------------------------------------------------------
r = rng("count-inversions")
cases = [[3, 1, 2, 5, 4], [1], [2, 2, 2], list(range(60, 0, -1)), [r.randint(1, 10) for _ in range(80)],
         [r.randint(1, 10**9) for _ in range(70)], [(i * 53) % 127 for i in range(127)]]
stdio(
    "count-inversions", "Counting Inversions",
    """# Counting Inversions

An inversion in an array a is a pair of positions i < j with a_i > a_j. Count the inversions of the
given array.

## Input

The first line contains an integer n (1 <= n <= 2 * 10^5). The second line contains n integers
a_1, ..., a_n (1 <= a_i <= 10^9).

## Output

Print the number of inversions.""",
    cases, arr_fmt,
    lambda a: str(sum(1 for i in range(len(a)) for j in range(i + 1, len(a)) if a[i] > a[j])),
    """
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n, a = data[0], data[1:]
    rank = {v: k + 1 for k, v in enumerate(sorted(set(a)))}
    size = len(rank)
    tree = [0] * (size + 1)
    inversions = 0
    for seen, x in enumerate(a):
        r = rank[x]
        not_greater = 0
        i = r
        while i:
            not_greater += tree[i]
            i -= i & -i
        inversions += seen - not_greater
        i = r
        while i <= size:
            tree[i] += 1
            i += i & -i
    print(inversions)

main()
""",
    """
#include <bits/stdc++.h>
using namespace std;
long long sortCount(vector<int> &a, vector<int> &buf, int lo, int hi) {
    if (hi - lo < 2) return 0;
    int mid = (lo + hi) / 2;
    long long cnt = sortCount(a, buf, lo, mid) + sortCount(a, buf, mid, hi);
    int i = lo, j = mid, k = lo;
    while (i < mid || j < hi) {
        if (j == hi || (i < mid && a[i] <= a[j])) buf[k++] = a[i++];
        else { cnt += mid - i; buf[k++] = a[j++]; }
    }
    for (int t = lo; t < hi; t++) a[t] = buf[t];
    return cnt;
}
int main() {
    int n;
    scanf("%d", &n);
    vector<int> a(n), buf(n);
    for (auto &x : a) scanf("%d", &x);
    printf("%lld\\n", sortCount(a, buf, 0, n));
}
""",
    platform="codeforces", difficulty="medium", rating=1600, tags=["data structures", "divide and conquer"],
    date="2024-09-14",
)


# --- lexicographically smallest topological order ----------------------------------------------
def _topo_oracle(c):
    n, edges = c
    left, order = set(range(1, n + 1)), []
    while left:
        free = [v for v in sorted(left) if not any(a in left and b == v for a, b in edges)]
        if not free:
            return "-1"
        order.append(free[0])
        left.remove(free[0])
    return " ".join(map(str, order))


def _dag(r, n, m, cyclic=False):
    perm = r.sample(range(1, n + 1), n)
    edges = []
    for _ in range(m):
        i, j = sorted(r.sample(range(n), 2))
        edges.append((perm[i], perm[j]))
    if cyclic:
        edges += [(perm[0], perm[n // 2]), (perm[n // 2], perm[-1]), (perm[-1], perm[0])]
    return (n, edges)


r = rng("lexicographic-topological-order")
cases = [(4, [(3, 1), (2, 1), (4, 2)]), (3, [(1, 2), (2, 3), (3, 1)]), (1, []), (5, []),
         _dag(r, 12, 15), _dag(r, 40, 60), _dag(r, 30, 40, cyclic=True), _dag(r, 60, 70)]
stdio(
    "lexicographic-topological-order", "Ordering the Tasks",
    """# Ordering the Tasks

There are n tasks numbered 1 to n and m requirements; requirement i says that task a_i must be done
before task b_i. Print an order of all n tasks that respects every requirement. If there are several,
print the lexicographically smallest one (the one with the smallest first task, then the smallest
second task, and so on). If no valid order exists, print -1.

## Input

The first line contains two integers n and m (1 <= n <= 2 * 10^5, 0 <= m <= 2 * 10^5). Each of the next
m lines contains two integers a_i and b_i (1 <= a_i, b_i <= n, a_i != b_i).

## Output

Print n integers separated by spaces, the order of the tasks, or -1.""",
    cases, lambda c: f"{c[0]} {len(c[1])}" + "".join(f"\n{a} {b}" for a, b in c[1]), _topo_oracle,
    """
import heapq
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n, m = data[0], data[1]
    out = [[] for _ in range(n + 1)]
    indeg = [0] * (n + 1)
    for k in range(m):
        a, b = data[2 + 2 * k], data[3 + 2 * k]
        out[a].append(b)
        indeg[b] += 1
    heap = [v for v in range(1, n + 1) if indeg[v] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        v = heapq.heappop(heap)
        order.append(v)
        for w in out[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, w)
    print(" ".join(map(str, order)) if len(order) == n else -1)

main()
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    vector<vector<int>> out(n + 1);
    vector<int> indeg(n + 1, 0);
    for (int i = 0; i < m; i++) {
        int a, b;
        scanf("%d %d", &a, &b);
        out[a].push_back(b);
        indeg[b]++;
    }
    priority_queue<int, vector<int>, greater<int>> pq;
    for (int v = 1; v <= n; v++) if (!indeg[v]) pq.push(v);
    vector<int> order;
    while (!pq.empty()) {
        int v = pq.top(); pq.pop();
        order.push_back(v);
        for (int w : out[v]) if (--indeg[w] == 0) pq.push(w);
    }
    if ((int)order.size() != n) { puts("-1"); return 0; }
    for (int i = 0; i < n; i++) printf("%d%c", order[i], i + 1 == n ? '\\n' : ' ');
}
""",
    platform="codeforces", difficulty="hard", rating=1800, tags=["graphs", "topological sort", "heaps"],
    date="2024-10-12",
)


# --- split into k parts minimising the largest sum ---------------------------------------------
def _split_dp(c):
    k, a = c
    n = len(a)
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(k + 1)]  # best[p][i]: first i elements in p parts
    best[0][0] = 0
    for p in range(1, k + 1):
        for i in range(1, n + 1):
            for j in range(p - 1, i):
                best[p][i] = min(best[p][i], max(best[p - 1][j], sum(a[j:i])))
    return str(best[k][n])


r = rng("split-array-min-max")
cases = [(2, [7, 2, 5, 10, 8]), (3, [1, 2, 3, 4, 5]), (1, [9, 9]), (4, [5, 5, 5, 5]),
         (3, [r.randint(1, 100) for _ in range(15)]), (5, [r.randint(1, 10**9) for _ in range(40)]),
         (7, [r.randint(1, 1000) for _ in range(35)])]
stdio(
    "split-array-min-max", "Fair Split",
    """# Fair Split

Split an array of n positive integers into exactly k non-empty contiguous parts so that the largest
sum of a part is as small as possible. Print that smallest possible largest sum.

## Input

The first line contains two integers n and k (1 <= k <= n <= 10^5). The second line contains n
integers a_1, ..., a_n (1 <= a_i <= 10^9).

## Output

Print the minimum possible value of the largest part sum.""",
    cases, lambda c: f"{len(c[1])} {c[0]}\n" + " ".join(map(str, c[1])), _split_dp,
    """
n, k = map(int, input().split())
a = list(map(int, input().split()))

def parts_needed(limit):
    parts, cur = 1, 0
    for x in a:
        if cur + x > limit:
            parts += 1
            cur = 0
        cur += x
    return parts

lo, hi = max(a), sum(a)
while lo < hi:
    mid = (lo + hi) // 2
    if parts_needed(mid) <= k:
        hi = mid
    else:
        lo = mid + 1
print(lo)
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<long long> a(n);
    for (auto &x : a) scanf("%lld", &x);
    long long lo = *max_element(a.begin(), a.end()), hi = accumulate(a.begin(), a.end(), 0LL);
    while (lo < hi) {
        long long mid = (lo + hi) / 2, cur = 0;
        int parts = 1;
        for (long long x : a) {
            if (cur + x > mid) { parts++; cur = 0; }
            cur += x;
        }
        if (parts <= k) hi = mid; else lo = mid + 1;
    }
    printf("%lld\\n", lo);
}
""",
    platform="codeforces", difficulty="medium", rating=1500, tags=["binary search", "greedy"], date="2024-11-02",
)

# --- sum of subarray minimums -------------------------------------------------------------------
MOD = 10**9 + 7


def _summin_oracle(a):
    total = 0
    for i in range(len(a)):
        low = a[i]
        for j in range(i, len(a)):
            low = min(low, a[j])
            total += low
    return str(total % MOD)


r = rng("subarray-minimum-sum")
cases = [[3, 1, 2, 4], [5], [2, 2, 2], [r.randint(1, 10) for _ in range(30)],
         [r.randint(1, 10**9) for _ in range(70)], list(range(1, 90)), [10**9] * 60]
stdio(
    "subarray-minimum-sum", "Sum of Subarray Minimums",
    """# Sum of Subarray Minimums

For an array a of n integers, consider all n(n+1)/2 non-empty contiguous subarrays and take the
minimum of each. Print the sum of these minimums modulo 1 000 000 007.

## Input

The first line contains an integer n (1 <= n <= 3 * 10^5). The second line contains n integers
a_1, ..., a_n (1 <= a_i <= 10^9).

## Output

Print the sum of the minimums of all subarrays, modulo 10^9 + 7.""",
    cases, arr_fmt, _summin_oracle,
    """
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n, a = data[0], data[1:]
    left = [0] * n   # elements to the left (inclusive) where a[i] is the strict minimum
    stack = []
    for i in range(n):
        while stack and a[stack[-1]] > a[i]:
            stack.pop()
        left[i] = i - (stack[-1] if stack else -1)
        stack.append(i)
    right = [0] * n  # elements to the right (inclusive) up to the next value <= a[i]
    stack = []
    for i in range(n - 1, -1, -1):
        while stack and a[stack[-1]] >= a[i]:
            stack.pop()
        right[i] = (stack[-1] if stack else n) - i
        stack.append(i)
    print(sum(a[i] * left[i] * right[i] for i in range(n)) % (10**9 + 7))

main()
""",
    platform="codeforces", difficulty="hard", rating=1900, tags=["monotonic stack", "combinatorics"],
    date="2024-11-16",
)


# --- sum of distances in a tree -----------------------------------------------------------------
def _tree_oracle(c):
    n, edges = c
    adj = [[] for _ in range(n + 1)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    res = []
    for s in range(1, n + 1):
        d = [-1] * (n + 1)
        d[s] = 0
        q = deque([s])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if d[v] < 0:
                    d[v] = d[u] + 1
                    q.append(v)
        res.append(sum(d[1:]))
    return " ".join(map(str, res))


def _tree(r, n, chain_bias=0.0):
    return (n, [(v, v - 1 if r.random() < chain_bias else r.randint(1, v - 1)) for v in range(2, n + 1)])


r = rng("tree-distance-sums")
cases = [(5, [(1, 2), (1, 3), (3, 4), (3, 5)]), (1, []), (2, [(2, 1)]), _tree(r, 10), _tree(r, 60, 0.5),
         _tree(r, 70), (50, [(1, v) for v in range(2, 51)])]
stdio(
    "tree-distance-sums", "Distance Sums in a Tree",
    """# Distance Sums in a Tree

You are given a tree with n vertices numbered 1 to n. The distance between two vertices is the
number of edges on the path between them. For every vertex v, print the sum of the distances from
v to all the other vertices.

## Input

The first line contains an integer n (1 <= n <= 2 * 10^5). Each of the next n - 1 lines contains two
integers u and v (1 <= u, v <= n), an edge of the tree.

## Output

Print n integers separated by spaces: the i-th is the sum of distances from vertex i.""",
    cases, lambda c: f"{c[0]}" + "".join(f"\n{u} {v}" for u, v in c[1]), _tree_oracle,
    """
import sys

def main():
    data = list(map(int, sys.stdin.buffer.read().split()))
    n = data[0]
    adj = [[] for _ in range(n + 1)]
    for k in range(n - 1):
        u, v = data[1 + 2 * k], data[2 + 2 * k]
        adj[u].append(v)
        adj[v].append(u)
    parent = [0] * (n + 1)
    order = [1]
    parent[1] = -1
    for u in order:  # BFS order: parents before children
        for v in adj[u]:
            if v != parent[u]:
                parent[v] = u
                order.append(v)
    size = [1] * (n + 1)
    down = [0] * (n + 1)  # sum of distances into the subtree
    for u in reversed(order):
        p = parent[u]
        if p > 0:
            size[p] += size[u]
            down[p] += down[u] + size[u]
    ans = [0] * (n + 1)
    ans[1] = down[1]
    for u in order[1:]:
        ans[u] = ans[parent[u]] - size[u] + (n - size[u])
    print(" ".join(map(str, ans[1:])))

main()
""",
    platform="codeforces", difficulty="hard", rating=2000, tags=["trees", "dp", "rerooting"], date="2024-12-07",
)
