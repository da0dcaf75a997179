# Kick Start 2013 Practice "Moist": a card costs $1 when it is smaller than the largest card above it.
import sys


def main():
    lines = sys.stdin.read().split("\n")
    t, pos = int(lines[0]), 1
    for case in range(1, t + 1):
        n = int(lines[pos])
        cards = lines[pos + 1: pos + 1 + n]
        pos += 1 + n
        cost, top = 0, None
        for c in cards:
            if top is not None and c < top:
                cost += 1
            else:
                top = c
        print(f"Case #{case}: {cost}")


main()
