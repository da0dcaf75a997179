# WRONG on purpose: sorts the even worths ascending too. Kick Start 2013 Round A "Sorting": odd worths ascending, even worths descending, each in its own positions.
import sys


def main():
    data = sys.stdin.read().split()
    t, pos = int(data[0]), 1
    for case in range(1, t + 1):
        n = int(data[pos])
        s = [int(x) for x in data[pos + 1: pos + 1 + n]]
        pos += 1 + n
        odd = sorted(x for x in s if x % 2)
        even = sorted((x for x in s if x % 2 == 0), reverse=False)
        oi = ei = 0
        out = []
        for x in s:
            if x % 2:
                out.append(odd[oi])
                oi += 1
            else:
                out.append(even[ei])
                ei += 1
        print(f"Case #{case}: {' '.join(map(str, out))}")


main()
