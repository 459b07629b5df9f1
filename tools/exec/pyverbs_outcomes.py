#!/usr/bin/env python3
"""Outcomes of rdma-core's pyverbs suite (run_tests.py -v output) and their comparison.

  pyverbs_outcomes.py parse RUN.txt              -> 'module.Class.test outcome' lines
  pyverbs_outcomes.py compare GOLDEN RUN.txt EXPECTED_DIFFS
      GOLDEN: lines as 'parse' prints (rxe0's outcomes); EXPECTED_DIFFS: 'test reason' lines.
      Prints every test whose outcome differs; exit 1 when one differs that is not listed,
      or a listed one no longer differs (the list must stay true).
"""
import re
import sys
from collections import Counter


def parse(path):
    out, cur = {}, None
    for line in open(path, errors='replace'):
        m = re.match(r'^(test_\w+) \(([\w.]+)\)', line)
        if m:
            cur = m.group(2)
        m2 = re.search(r'\.\.\. (ok|FAIL|ERROR|skipped)', line)
        if m2 and cur:
            out[cur] = m2.group(1)
            cur = None
        elif cur and re.match(r'^(ok|FAIL|ERROR)$', line.strip()):
            out[cur] = line.strip()  # a test that printed between its name and outcome
            cur = None
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == 'parse':
        for k, v in sorted(parse(argv[2]).items()):
            print(k, v)
        return 0
    if len(argv) != 5 or argv[1] != 'compare':
        print(__doc__, file=sys.stderr)
        return 2
    golden = dict(l.split() for l in open(argv[2]) if l.strip() and not l.startswith('#'))
    run = parse(argv[3])
    expected = {}
    for l in open(argv[4]):
        if l.strip() and not l.startswith('#'):
            name, _, reason = l.strip().partition(' ')
            expected[name] = reason
    print('recorded (rxe0):', dict(Counter(golden.values())))
    print('this run:       ', dict(Counter(run.values())))
    bad = 0
    for k in sorted(set(golden) | set(run)):
        g, r = golden.get(k), run.get(k)
        if g == r:
            if k in expected:
                print(f'NO LONGER DIFFERS (remove from the list): {k}')
                bad += 1
            continue
        if k in expected:
            print(f'expected: {k}: rxe0={g} this run={r} ({expected[k]})')
        else:
            print(f'DIFFERS: {k}: rxe0={g} this run={r}')
            bad += 1
    print('twin' if bad == 0 else f'{bad} unexpected difference(s)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
