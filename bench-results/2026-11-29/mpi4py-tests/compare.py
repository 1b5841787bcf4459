#!/usr/bin/env python3
"""Compares mpi4py's tests one by one between pertinax and Open MPI.

Reads the logs of `M4ARGS=-v OUT=DIR .ci/mpi4py-suite -n NP --impl both`
(DIR/npNP/<module>.<pertinax|ompi>.log: unittest's verbose lines
`testX (module.Class.testX) ... ok`), and prints, for every test that
passed on Open MPI, what it did on pertinax when it did not pass there,
grouped by outcome (a skip with its reason, an error, a failure, absent).

usage: compare.py DIR/npNP
"""
import collections
import pathlib
import re
import sys

LINE = re.compile(r"^(test\w+) \(([\w.]+)\)(?: \.\.\.)?(.*)$")
# An outcome unittest writes after a test's own output (Open MPI's
# warnings, for one), alone or at the end of that output's last line.
OUTCOME = re.compile(r"(?:^|\s)(ok|ERROR|FAIL|skipped '.*'|expected failure|unexpected success)$")


def outcomes(log):
    """test id -> outcome ('ok', 'skipped REASON', 'ERROR', 'FAIL', ...)."""
    got = {}
    pending = None
    for raw in log.read_text(errors="replace").splitlines():
        m = LINE.match(raw)
        if m:
            name, where, rest = m.groups()
            key = f"{where}" if where.endswith(name) else f"{where}.{name}"
            o = OUTCOME.search(rest.strip())
            if o:
                got[key] = o.group(1)
                pending = None
            else:
                pending = key
        elif pending:
            o = OUTCOME.search(raw.strip())
            if o:
                got[pending] = o.group(1)
                pending = None
    return got


def kind(o):
    if o is None:
        return "absent (the module did not run it)"
    if o == "ok" or o.startswith("ok"):
        return "ok"
    if o.startswith("skipped"):
        return o
    if o.startswith("expected failure"):
        return "ok"
    return o.split()[0]


def main():
    d = pathlib.Path(sys.argv[1])
    mods = sorted({p.name.split(".")[0] for p in d.glob("test_*.log")})
    total = collections.Counter()
    missing = collections.defaultdict(list)
    for m in mods:
        po = d / f"{m}.pertinax.log"
        oo = d / f"{m}.ompi.log"
        if not (po.exists() and oo.exists()):
            continue
        p, o = outcomes(po), outcomes(oo)
        for t, oc in o.items():
            if kind(oc) != "ok":
                continue
            total["passed on Open MPI"] += 1
            pk = kind(p.get(t))
            if pk == "ok":
                total["passed on both"] += 1
            else:
                missing[(m, pk)].append(t.split(".")[-1])
    for k, v in total.items():
        print(f"{k}: {v}")
    print(f"passed on Open MPI, not on pertinax: {sum(len(v) for v in missing.values())}")
    for (m, k), tests in sorted(missing.items()):
        print(f"  {m}: {k}: {len(tests)} ({', '.join(sorted(set(tests))[:6])}{', ...' if len(set(tests)) > 6 else ''})")


if __name__ == "__main__":
    main()
