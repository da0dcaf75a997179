# WRONG on purpose: always plays the same word, so it scores too few points.
t, _ = map(int, input().split())
for _ in range(t):
    print("AAAAA", flush=True)
    for _ in range(100):
        if input() == "-1":
            raise SystemExit
        print("AAAAA", flush=True)
