# Kick Start 2013 Round B "Sudoku Checker": rows, columns and boxes each hold 1..N^2 once.
import sys


def valid(n, grid):
    m, want = n * n, set(range(1, n * n + 1))
    rows = all(set(r) == want for r in grid)
    cols = all({grid[i][j] for i in range(m)} == want for j in range(m))
    boxes = all({grid[bi + i][bj + j] for i in range(n) for j in range(n)} == want
                for bi in range(0, m, n) for bj in range(0, m, n))
    return rows and cols and boxes


def main():
    data = sys.stdin.read().split()
    pos, t = 1, int(data[0])
    for case in range(1, t + 1):
        n = int(data[pos])
        pos += 1
        m = n * n
        grid = [[int(x) for x in data[pos + i * m: pos + (i + 1) * m]] for i in range(m)]
        pos += m * m
        print(f"Case #{case}: {'Yes' if valid(n, grid) else 'No'}")


main()
