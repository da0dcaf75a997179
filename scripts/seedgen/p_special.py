"""Float-output problems, the several-answers problem with its checker, the benchmark copy."""
import math
from fractions import Fraction

from common import float_checker, program_checker, rng, stdio

TOL_NOTE = "Your answer is accepted if its absolute or relative error does not exceed 10^-6."


# --- closest pair (float) ---------------------------------------------------------------------
def _cp_brute(pts):
    best = min((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 for i, a in enumerate(pts) for b in pts[i + 1:])
    return f"{math.sqrt(best):.9f}"


r = rng("closest-pair-distance")
cases = [[(0, 0), (3, 4), (1, 1), (7, 7)]]
cases.append([(1, 2), (1, 2)])
cases.append([(-10000, -10000), (10000, 10000)])
cases.append([(r.randint(-50, 50), r.randint(-50, 50)) for _ in range(20)])
cases.append([(r.randint(-10**4, 10**4), r.randint(-10**4, 10**4)) for _ in range(55)])
cases.append([(i, i * i % 97) for i in range(80)])
cases.append([(0, 3 * k) for k in range(50)] + [(2, 1)])
stdio(
    "closest-pair-distance", "Closest Pair of Points",
    f"""# Closest Pair of Points

You are given n points on the plane. Find the smallest Euclidean distance between two of them
(two different points of the list may lie at the same place; their distance is 0).

## Input

The first line contains an integer n (2 <= n <= 1000). Each of the next n lines contains two
integers x_i and y_i (-10^4 <= x_i, y_i <= 10^4).

## Output

Print the smallest distance. {TOL_NOTE}""",
    cases, lambda c: f"{len(c)}\n" + "\n".join(f"{x} {y}" for x, y in c), _cp_brute,
    """
import math
import sys

def main():
    data = list(map(int, sys.stdin.read().split()))
    n = data[0]
    pts = sorted(zip(data[1:2 * n + 1:2], data[2:2 * n + 2:2]))
    best = float("inf")
    for i in range(n):
        xi, yi = pts[i]
        for j in range(i + 1, n):
            dx = pts[j][0] - xi
            if dx * dx >= best:
                break
            dy = pts[j][1] - yi
            best = min(best, dx * dx + dy * dy)
    print(f"{math.sqrt(best):.7f}")

main()
""",
    """
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    scanf("%d", &n);
    vector<pair<long long, long long>> p(n);
    for (auto &q : p) scanf("%lld %lld", &q.first, &q.second);
    sort(p.begin(), p.end());
    long long best = LLONG_MAX;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            long long dx = p[j].first - p[i].first;
            if (dx * dx >= best) break;
            long long dy = p[j].second - p[i].second;
            best = min(best, dx * dx + dy * dy);
        }
    printf("%.7f\\n", sqrt((double)best));
}
""",
    platform="codeforces", difficulty="medium", rating=1500, tags=["geometry", "sortings"],
    date="2024-07-06", checker=float_checker(), meta={"planted": "float_output"},
)


# --- average speed (float) --------------------------------------------------------------------
def _avg_exact(segs):
    q = Fraction(sum(d for d, _ in segs)) / sum(Fraction(d, v) for d, v in segs)
    scaled = round(q * 10**9)
    return f"{scaled // 10**9}.{scaled % 10**9:09d}"


r = rng("average-speed")
cases = [[(30, 10), (30, 30)], [(5, 7)], [(1, 3), (2, 3), (4, 3)]]
cases.append([(r.randint(1, 100), r.randint(1, 100)) for _ in range(10)])
cases.append([(r.randint(1, 1000), r.randint(1, 1000)) for _ in range(60)])
cases.append([(1000, 1)] + [(1, 1000)] * 60)
cases.append([(k, k + 1) for k in range(1, 70)])
stdio(
    "average-speed", "Average Speed of a Ride",
    f"""# Average Speed of a Ride

A cyclist rides a route made of n segments, one after another. Segment i is d_i kilometres long
and is ridden at a constant speed of v_i kilometres per hour. Find the average speed of the whole
ride: the total distance divided by the total time.

## Input

The first line contains an integer n (1 <= n <= 10^5). Each of the next n lines contains two
integers d_i and v_i (1 <= d_i, v_i <= 1000).

## Output

Print the average speed in kilometres per hour. {TOL_NOTE}""",
    cases, lambda c: f"{len(c)}\n" + "\n".join(f"{d} {v}" for d, v in c), _avg_exact,
    """
n = int(input())
dist = 0
hours = 0.0
for _ in range(n):
    d, v = map(int, input().split())
    dist += d
    hours += d / v
print(f"{dist / hours:.7f}")
""",
    platform="atcoder", difficulty="easy", rating=None, tags=["math"], date="2024-08-18",
    checker=float_checker(), meta={"planted": "float_output"},
)


# --- pair with a given sum: several valid answers, Kattis output validator --------------------
PAIR_CHECKER = r'''
"""Kattis output validator: checker input_file answer_file feedback_dir < contestant_output."""
import os
import sys

ACCEPT, WRONG = 42, 43


def verdict(code, message):
    with open(os.path.join(sys.argv[3], "judgemessage.txt"), "w") as f:
        f.write(message + "\n")
    sys.exit(code)


def main():
    with open(sys.argv[1]) as f:
        data = f.read().split()
    n, x = int(data[0]), int(data[1])
    a = [int(v) for v in data[2:2 + n]]
    with open(sys.argv[2]) as f:
        judge_has_pair = f.read().split() != ["-1"]
    out = sys.stdin.read().split()
    if out == ["-1"]:
        if judge_has_pair:
            verdict(WRONG, "printed -1 but a valid pair exists")
        verdict(ACCEPT, "correctly reported that no pair exists")
    if len(out) != 2:
        verdict(WRONG, f"expected two indices or -1, got {len(out)} tokens")
    try:
        i, j = int(out[0]), int(out[1])
    except ValueError:
        verdict(WRONG, "indices are not integers")
    if not 1 <= i < j <= n:
        verdict(WRONG, f"indices {i} {j} do not satisfy 1 <= i < j <= {n}")
    if a[i - 1] + a[j - 1] != x:
        verdict(WRONG, f"a_{i} + a_{j} = {a[i - 1] + a[j - 1]}, not {x}")
    verdict(ACCEPT, "valid pair")


main()
'''


def _pair_expected(c):
    # The largest pair in lexicographic order: the reference finds another one when several exist.
    x, a = c
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(a) - 1, i, -1):
            if a[i] + a[j] == x:
                return f"{i + 1} {j + 1}"
    return "-1"


r = rng("pair-with-sum")
cases = [(6, [2, 4, 3, 3, 1, 5]), (10, [1, 2, 3])]
cases.append((8, [4, 4, 4, 4, 4]))
cases.append((0, [r.randint(-20, 20) for _ in range(40)]))
cases.append((100, [r.choice([20, 40, 60, 80, 50, 13]) for _ in range(120)]))
cases.append((2 * 10**9, [10**9] * 3 + [1]))
cases.append((7, [2 * r.randint(0, 10**8) for _ in range(70)]))
cases.append((15, [r.randint(1, 14) for _ in range(60)]))
stdio(
    "pair-with-sum", "Two Values With a Given Sum",
    """# Two Values With a Given Sum

You are given n integers a_1, ..., a_n and a target x. Find two different positions i < j such that
a_i + a_j = x. If several pairs qualify, print any of them. If there is no such pair, print -1.

## Input

The first line contains two integers n and x (2 <= n <= 2 * 10^5, |x| <= 2 * 10^9). The second line
contains n integers a_1, ..., a_n (|a_i| <= 10^9).

## Output

Print two integers i and j (1 <= i < j <= n) with a_i + a_j = x, separated by a space, or -1 if no
such pair exists. Any valid pair is accepted.""",
    cases, lambda c: f"{len(c[1])} {c[0]}\n" + " ".join(map(str, c[1])), _pair_expected,
    """
import sys

def main():
    data = sys.stdin.buffer.read().split()
    n, x = int(data[0]), int(data[1])
    last = {}
    for j in range(1, n + 1):
        v = int(data[1 + j])
        i = last.get(x - v)
        if i is not None:
            print(i, j)
            return
        last[v] = j
    print(-1)

main()
""",
    npub=2, platform="codeforces", difficulty="easy", rating=1000, tags=["hashing", "two pointers"],
    date="2024-09-21", checker=program_checker(PAIR_CHECKER), meta={"planted": "multiple_answers"},
)


# Planted: several answers are accepted but the problem ships no checker program. The expected
# outputs (largest proper divisor) differ from what the reference prints (smallest), and would
# differ from most correct answers: validate must reject the problem, not keep its tests.
def _largest_proper_divisor(n):
    d = next((k for k in range(2, math.isqrt(n) + 1) if n % k == 0), None)
    return -1 if d is None else n // d


r = rng("any-proper-divisor")
cases = [[12, 7, 49], [2, 3, 4, 999999937]]
cases += [[r.randint(2, 10**6) for _ in range(8)] for _ in range(3)]
cases += [[r.choice([2, 3, 5, 7]) * r.randint(2, 10**4) for _ in range(10)], [999983, 999979 * 2, 10**9]]
stdio(
    "any-proper-divisor", "Any Proper Divisor",
    """# Any Proper Divisor

For each of t integers n, print a divisor d of n with 1 < d < n, or -1 if n has no such divisor.
If there are several answers, print any of them.

## Input

The first line contains t (1 <= t <= 100). Each of the next t lines contains one integer n
(2 <= n <= 10^9).

## Output

For each n, print one line: a divisor d of n with 1 < d < n, or -1.""",
    cases, lambda c: f"{len(c)}\n" + "\n".join(map(str, c)),
    lambda c: "\n".join(str(_largest_proper_divisor(n)) for n in c),
    """
import math
import sys

def smallest_divisor(n):
    for d in range(2, math.isqrt(n) + 1):
        if n % d == 0:
            return d
    return -1

data = sys.stdin.read().split()
print("\\n".join(str(smallest_divisor(int(x))) for x in data[1:1 + int(data[0])]))
""",
    npub=1, platform="codeforces", difficulty="easy", rating=900, tags=["math", "number theory"],
    date="2024-05-12", meta={"planted": "multiple_answers_no_checker"},
)
