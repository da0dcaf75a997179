# WRONG on purpose: checks only that every value lies in 1..N^2 (no row, column or box check).
# Kick Start 2013 Round B "Sudoku Checker".
import sys


def main():
    data = sys.stdin.read().split()
    pos, t = 1, int(data[0])
    for case in range(1, t + 1):
        n = int(data[pos])
        pos += 1
        m = n * n
        values = [int(x) for x in data[pos: pos + m * m]]
        pos += m * m
        print(f"Case #{case}: {'Yes' if all(1 <= x <= m for x in values) else 'No'}")


main()
