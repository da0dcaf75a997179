# Code Jam to I/O for Women 2019 "War of the Words" (interactive): finds the top word H and the bottom
# word L (the only ones the robot answers always the same way: H after the second-best word, L after H),
# then scores almost every round: L beats H, H beats everything but L, any third word beats L.
import sys


def play_case():
    left = [100]
    known = {}

    def play(word):
        print(word, flush=True)
        if left[0] == 0:
            return None
        left[0] -= 1
        reply = input().strip()
        print(reply, file=sys.stderr)  # every robot word seen (tests compare them between judges)
        if reply == "-1":
            sys.exit(0)
        return reply

    def test(word):
        """(always the same reply?, last reply); None when the rounds ran out."""
        if word in known:
            return known[word]
        replies = []
        for _ in range(4):
            reply = play(word)
            if reply is None:
                return None
            replies.append(reply)
            if reply != replies[0]:
                return False, reply
        known[word] = (True, replies[0])
        return known[word]

    w = play("AAAAA")
    while True:
        t = test(w)
        if t is None:
            return
        if not t[0]:
            w = t[1]
            continue
        t2 = test(t[1])
        if t2 is None:
            return
        if t2[0]:
            w = t[1]
            continue
        high, low, reply = w, t[1], t2[1]
        break
    other = next(x for x in ("AAAAA", "AAAAB", "AAAAC") if x not in (high, low))
    while reply is not None:
        reply = play(other if reply == low else low if reply == high else high)

t, _ = map(int, input().split())
for _ in range(t):
    play_case()
