#!/usr/bin/env python3
"""Tables of .ci/mpi4py-suite runs: python3 summarize.py DIR [DIR...]

Each DIR is one run's log directory (OUT/npN: MODULE.IMPL.log and
summary.txt). Prints, per rank count, a line per module with each stack's
exit code, tests run, and unittest verdict (read from the logs, so that a
log with binary bytes still counts), then totals: tests run, failures and
errors (subtests counted by unittest), skips, modules OK, modules that hung
(exit 124/137: the bound ended them), modules that did not import."""
import os
import re
import sys


def verdict(log):
    text = open(log, "rb").read().decode("utf-8", "replace")
    ran = [int(m) for m in re.findall(r"^Ran (\d+) test", text, re.M)]
    res = re.findall(r"^(OK|FAILED)(?: \((.*)\))?$", text, re.M)
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    ok = bool(res) and all(r[0] == "OK" for r in res)
    # one verdict per rank: take rank 0's (the first), as unittest prints
    if res:
        for kv in (res[0][1] or "").split(", "):
            if "=" in kv:
                k, v = kv.split("=")
                counts[k] = int(v)
    return (ran[0] if ran else None), ok, counts


def main():
    for d in sys.argv[1:]:
        rcs = {}
        for line in open(os.path.join(d, "summary.txt")):
            if line.startswith("#"):
                continue
            m = line.split()[0]
            for impl, rc in re.findall(r"(pertinax|ompi): rc=(\d+)", line):
                rcs[(m, impl)] = int(rc)
        impls = sorted({i for _, i in rcs}, reverse=True)
        mods = sorted({m for m, _ in rcs})
        tot = {i: dict(ran=0, failures=0, errors=0, skipped=0, ok=0, hung=0, noimport=0) for i in impls}
        print(f"## {os.path.basename(d)}\n")
        print("| module | " + " | ".join(impls) + " |")
        print("|---|" + "---|" * len(impls))
        for m in mods:
            cells = []
            for i in impls:
                rc = rcs.get((m, i))
                log = os.path.join(d, f"{m}.{i}.log")
                if rc is None or not os.path.exists(log):
                    cells.append("-")
                    continue
                ran, ok, c = verdict(log)
                t = tot[i]
                if rc in (124, 137):
                    t["hung"] += 1
                    cells.append(f"**hung** (rc {rc})")
                    continue
                if ran is None:
                    t["noimport"] += 1
                    cells.append(f"no tests ran (rc {rc})")
                    continue
                t["ran"] += ran
                for k in ("failures", "errors", "skipped"):
                    t[k] += c[k]
                if ok and rc == 0:
                    t["ok"] += 1
                    cells.append(f"OK {ran}" + (f", {c['skipped']} skipped" if c["skipped"] else ""))
                else:
                    cells.append(f"{ran} run, {c['failures']} failures, {c['errors']} errors (rc {rc})")
            print(f"| {m} | " + " | ".join(cells) + " |")
        print()
        for i in impls:
            t = tot[i]
            print(f"- **{i}**: {len(mods)} modules, {t['ok']} OK, {t['hung']} hung, "
                  f"{t['noimport']} ran no test; {t['ran']} tests run, {t['failures']} failures, "
                  f"{t['errors']} errors (subtests counted), {t['skipped']} skipped")
        print()


if __name__ == "__main__":
    main()
