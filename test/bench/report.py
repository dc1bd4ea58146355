#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the CSVs of test/bench/guest.sh into RESULTS.md and gnuplot PNGs.

  test/bench/report.py OUTDIR RESULTS_MD PLOT_DIR [--quick] [--killers LIST]
  test/bench/report.py --alternate N OUTDIR ALTERNATE_MD PLOT_DIR

Checks first that every cell the run was meant to fill has its rows and a
number in each (exit 1 with one line per missing cell); never judges a speed.
"""
import argparse
import collections
import csv
import math
import os
import subprocess
import sys
import time

KILL_ORDER = ["ours", "ours-fd", "rfc", "systemd-oomd", "earlyoom", "nohang", "kernel"]
KILL_NAMES = {
    "ours": "(a) ours: oomctl psi add + psi-declare",
    "ours-fd": "(b) ours, trigger held by a process",
    "rfc": "(c) the RFC as posted",
    "systemd-oomd": "(d) systemd-oomd 252",
    "earlyoom": "(e) earlyoom",
    "nohang": "(f) nohang",
    "kernel": "(g) the kernel alone",
}
WORKLOADS = {
    "W1": "thrash under memory.high 40M",
    "W2": "global squeeze, both CPUs busy",
    "W3": "slow leak under memory.high 64M",
    "W4": "two cgroups, one thrashing",
}
# The path of (a), each from onset; the floor is the trigger's stall
# threshold plus a tenth of its window (PSI's polling interval).
PATH = [("psi_event_ms", "PSI event"), ("handler_ms", "handler start"),
        ("declare_ms", "OOM declared"), ("oom_ms", "out_of_memory()"),
        ("kill_ms", "SIGKILL sent"), ("latency_ms", "victim exited")]
FLOOR_MS = 50 + 500 / 10


def read(outdir, name):
    path = os.path.join(outdir, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def pct(values, p):
    """Nearest-rank percentile; None stands for 'nothing happened' (+inf)."""
    if not values:
        return None
    s = sorted(values, key=lambda v: math.inf if v is None else v)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def rank_sum_p(a, b):
    """Exact two-sided p of the Wilcoxon-Mann-Whitney rank-sum test: the
    share of all splits of the pooled runs into groups of len(a) and len(b)
    whose rank sum lies at least as far from its mean as a's. No kill
    (None) ranks after every kill; ties take their mean rank."""
    pooled = sorted((math.inf if v is None else v) for v in a + b)
    first, rank = {}, {}
    for i, v in enumerate(pooled):
        first.setdefault(v, i)
        rank[v] = (first[v] + i) / 2 + 1
    # Doubled ranks are integers, so the splits can be counted by rank sum
    # (ways[k][s]: subsets of k runs whose doubled ranks add up to s)
    # instead of enumerated, which C(40, 20) splits would not allow.
    ranks = [round(2 * rank[math.inf if v is None else v]) for v in a + b]
    k = len(a)
    ways = [collections.Counter() for _ in range(k + 1)]
    ways[0][0] = 1
    for r in ranks:
        for j in range(k, 0, -1):
            for s, n in ways[j - 1].items():
                ways[j][s + r] += n
    mean = k * sum(ranks) / len(ranks)
    seen = abs(sum(ranks[:k]) - mean)
    hits = sum(n for s, n in ways[k].items() if abs(s - mean) >= seen - 1e-9)
    return hits / math.comb(len(ranks), k)


VS_RFC_HEADER = ["ours, median", "the RFC, median", "ours - the RFC", "p"]


def vs_rfc_row(name, ours, rfc, limit_s):
    """A table row: both medians, their difference and the rank-sum p."""
    mo, mr = pct(ours, 50), pct(rfc, 50)
    diff = "–" if mo is None or mr is None else f"{mo - mr:+.0f} ms"
    return [name, fmt_ms(mo, limit_s), fmt_ms(mr, limit_s), diff,
            f"{rank_sum_p(ours, rfc):.2g}"]


def fmt_ms(v, limit_s=None):
    if v is None:
        return f"> {limit_s:g} s" if limit_s else "–"
    return f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.0f} ms"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


class Report:
    def __init__(self, a):
        self.a = a
        self.missing = []
        self.md = []

    def need(self, ok, what):
        if not ok:
            self.missing.append(what)

    # --- kill latency --------------------------------------------------
    def kill(self):
        a = self.a
        rows = read(a.outdir, "kill_latency.csv")
        cells = {}
        for r in rows:
            cells.setdefault((r["killer"], r["workload"]), []).append(r)
        for k in a.killers:
            for w in a.workloads:
                runs = cells.get((k, w), [])
                # a run measured something if the workload stalled or died
                done = [r for r in runs
                        if num(r["onset_ms"]) is not None or r["killed"] == "1"]
                self.need(len(done) >= a.runs,
                          f"kill latency {k} {w}: {len(done)} of {a.runs} runs "
                          "with a stall or a kill")
        killers = [k for k in KILL_ORDER if any(c[0] == k for c in cells)]
        workloads = [w for w in WORKLOADS if any(c[1] == w for c in cells)]
        limit = a.limit
        self.md.append("## Kill latency\n\n"
                       "From pressure onset (the workload's first memory stall, or for W2 "
                       "the system's, stamped in the guest's kernel) to the first exit of a "
                       f"workload task. {a.runs} run{'s' if a.runs != 1 else ''} a cell; a run that nothing killed within "
                       f"{limit:g} s of the workload's start counts as \"> {limit:g} s\" in the "
                       "percentiles (so a median of \"> …\" means most runs saw no kill). "
                       "*before onset*: the kill came before anything stalled (a daemon watching free "
                       "memory), counted as 0; *median from release*: from the workload's start "
                       "instead, comparable whatever the onset; "
                       "*wrong*: another task than the intended victim died first; "
                       "*collateral*: fatal signals to tasks other than the intended victim; "
                       "*signal sent by*: the task in whose context the fatal signal was "
                       "sent (the kernel's OOM killer runs in the task that allocates, so "
                       "kill_latency, the driver, there means the kernel's own killer; a "
                       "kworker is our PSI handler's work item, psimon the RFC's).\n\n")
        summary, latencies = {}, {}
        for w in workloads:
            body = []
            for k in killers:
                runs = cells.get((k, w))
                if not runs:
                    continue
                lat = [num(r["latency_ms"]) if r["killed"] == "1" else None for r in runs]
                latencies[(k, w)] = lat
                none = sum(1 for r in runs if r["killed"] != "1")
                wrong = sum(1 for r in runs if r["killed"] == "1" and r["victim_ok"] != "1")
                coll = sum(int(r["collateral"] or 0) for r in runs)
                early = sum(1 for r in runs if r.get("before_onset") == "1")
                st = [pct(lat, 0.0001), pct(lat, 50), pct(lat, 90), pct(lat, 100)]
                summary[(k, w)] = st
                release = pct([num(r["start_to_exit_ms"]) if r["killed"] == "1" else None
                               for r in runs], 50)
                senders = sorted({r["sender"] for r in runs if r["sender"]})
                body.append([KILL_NAMES[k]] + [fmt_ms(v, limit) for v in st] +
                            [fmt_ms(release, limit), len(runs), none, early, wrong, coll,
                             ", ".join(senders) or "–"])
            self.md.append(f"### {w}: {WORKLOADS[w]}\n\n" + table(
                ["killer", "min", "median", "p90", "max", "median from release", "runs",
                 "no kill", "before onset", "wrong", "collateral", "signal sent by"],
                body) + "\n")
        self.kill_ratios(summary, killers, workloads)
        self.kill_vs_rfc(latencies, workloads)
        self.kill_path(cells, workloads)
        self.kill_plot(summary, killers, workloads)

    def kill_ratios(self, summary, killers, workloads):
        lines = []
        for k in killers:
            if k == "ours":
                continue
            for w in workloads:
                o, t = summary.get(("ours", w)), summary.get((k, w))
                if not o or not t:
                    continue
                cols = []
                for i, name in ((1, "median"), (2, "p90")):
                    if o[i] is None:
                        cols.append(f"{name}: ours had no kill")
                    elif t[i] is None:
                        cols.append(f"{name}: > {self.a.limit * 1000 / o[i]:.0f}x (no kill within the limit)")
                    else:
                        cols.append(f"{name}: {t[i] / o[i]:.1f}x")
                lines.append(f"- {KILL_NAMES[k]} / ours, {w}: " + "; ".join(cols))
        if lines:
            self.md.append("### Ratios: each killer's time over ours\n\n" + "\n".join(lines) + "\n\n")

    def kill_vs_rfc(self, latencies, workloads):
        body = []
        for w in workloads:
            o, r = latencies.get(("ours", w)), latencies.get(("rfc", w))
            if o and r:
                body.append(vs_rfc_row(w, o, r, self.a.limit))
        if body:
            self.md.append(
                "### Ours against the RFC\n\n"
                "Is one kernel's kill latency different from the other's, or is the gap "
                "between medians what chance gives with these runs? p: the exact two-sided "
                "Wilcoxon-Mann-Whitney rank-sum test (a run without a kill ranks last); a "
                "small p (say < 0.05) says the two differ. Each kernel's runs come from one "
                "boot, so p compares these two boots: what changes from boot to boot is not "
                "in it; `test/bench/run --alternate N` measures that for W1.\n\n" +
                table(["workload"] + VS_RFC_HEADER, body) + "\n")

    def kill_path(self, cells, workloads):
        body = []
        for k in ("ours", "rfc"):
            for w in workloads:
                runs = [r for r in cells.get((k, w), []) if r["killed"] == "1"]
                if not runs:
                    continue
                row = [KILL_NAMES[k].split(":")[0], w, len(runs)]
                for col, _ in PATH:
                    vals = [num(r[col]) for r in runs if num(r[col]) is not None]
                    row.append(fmt_ms(pct(vals, 50)) if vals else "–")
                body.append(row)
        if not body:
            return
        self.md.append(
            "## Where the time goes\n\n"
            "Medians over the runs that killed, each from onset, from in-kernel "
            "timestamps (test/bench/progs/kill_timeline.bpf.c): the PSI event (ours: the "
            "trigger queues the handler's work; the RFC: the handler's call), the handler's "
            "start, bpf_out_of_memory(), out_of_memory(), the SIGKILL, the victim's exit. "
            f"The physical floor of a 50 ms / 500 ms trigger is {FLOOR_MS:.0f} ms "
            "(stall threshold + window/10).\n\n" +
            table(["killer", "workload", "kills"] + [n for _, n in PATH], body) + "\n")

    def kill_plot(self, summary, killers, workloads):
        if not summary:
            return
        dat = os.path.join(self.a.plots, "kill_latency.dat")
        cap = self.a.limit * 1000
        with open(dat, "w") as f:
            f.write("# killer " + " ".join(workloads) + "\n")
            for k in killers:
                vals = []
                for w in workloads:
                    st = summary.get((k, w))
                    vals.append("NaN" if not st else f"{cap if st[1] is None else st[1]:.1f}")
                f.write(f"{k} " + " ".join(vals) + "\n")
        png = os.path.join(self.a.plots, "kill_latency.png")
        cols = ", ".join(f"'{dat}' using {i + 2}{':xtic(1)' if not i else ''} title '{w}'"
                         for i, w in enumerate(workloads))
        gnuplot(f"""set terminal pngcairo size 900,480 font ',10'
set output '{png}'
set title 'Median time from pressure onset to the victim''s death ({self.a.runs} runs; no kill = {self.a.limit:g} s; killed before any stall = 0, not drawn)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [10:{cap * 1.5:.0f}]
set ylabel 'ms (log)'
set key top left
set grid ytics
plot {cols}
""")
        self.plots.append(("kill_latency.png", "Kill latency, median per killer and workload"))

    # --- listing --------------------------------------------------------
    def listing(self):
        rows = read(self.a.outdir, "listing.csv")
        tools = ["oomctl-first", "oomctl", "oomctl-json", "cgfs-read", "systemd-oomctl-dump"]
        sizes = sorted({int(r["cgroups"]) for r in rows})
        for t in tools:
            for n in self.a.sizes:
                got = [r for r in rows if r["tool"] == t and int(r["cgroups"]) == n]
                self.need(got and all(num(r["wall_ms"]) is not None for r in got),
                          f"listing {t} at {n} cgroups: no figure")
        if not rows:
            return
        body, med = [], {}
        for t in tools:
            row = [t]
            for n in sizes:
                got = [r for r in rows if r["tool"] == t and int(r["cgroups"]) == n]
                w = pct([num(r["wall_ms"]) for r in got if num(r["wall_ms"]) is not None], 50)
                m = pct([num(r["peak_rss_kib"]) for r in got
                         if num(r["peak_rss_kib"]) is not None], 50)
                med[(t, n)] = w
                row.append("–" if w is None or m is None else f"{w:.0f} ms, {m / 1024:.1f} MiB")
            if len(sizes) > 1:
                lo, hi = sizes[-2], sizes[-1]
                if med.get((t, lo)) is not None and med.get((t, hi)) is not None:
                    row.append(f"{(med[(t, hi)] - med[(t, lo)]) * 1000 / (hi - lo):.0f} µs")
                else:
                    row.append("–")
            body.append(row)
        header = ["tool"] + [f"{n} cgroups" for n in sizes]
        if len(sizes) > 1:
            header.append(f"per cgroup, {sizes[-2]}→{sizes[-1]}")
        self.md.append(
            "## Listing\n\n"
            "Wall time and peak RSS, medians: `oomctl memcg list` with no walker pinned "
            "(oomctl-first: load, verify, pin, walk), pinned (oomctl, oomctl-json), the same "
            "fields read from cgroupfs by a tight C reader (cgfs-read), and systemd's "
            "`oomctl dump` (which shows only the units systemd-oomd monitors, so it does not "
            "grow with the tree). The last column is the marginal cost of a cgroup between "
            "the two largest sizes (test/bench/listing.sh).\n\n" + table(header, body) + "\n")
        dat = os.path.join(self.a.plots, "listing.dat")
        with open(dat, "w") as f:
            for t in tools:
                f.write(f'"{t}"\n')
                for n in sizes:
                    if med.get((t, n)) is not None:
                        f.write(f"{n} {med[(t, n)]:.1f}\n")
                f.write("\n\n")
        png = os.path.join(self.a.plots, "listing.png")
        gnuplot(f"""set terminal pngcairo size 800,480 font ',10'
set output '{png}'
set title 'Listing the memory cgroups: median wall time'
set logscale xy
set xlabel 'memory cgroups'
set ylabel 'ms'
set key top left
set grid
plot for [i=0:{len(tools) - 1}] '{dat}' index i using 1:2 with linespoints title columnheader(1)
""")
        self.plots.append(("listing.png", "Listing time against the number of cgroups"))

    # --- OOM path ---------------------------------------------------------
    def oom_path(self):
        rows = read(self.a.outdir, "oom_path.csv")
        sels = ["largest-leaf", "oomd", "kernel"]
        for s in sels:
            got = [r for r in rows if r["selection"] == s]
            self.need(got and all(num(r["oom_us"]) is not None for r in got),
                      f"OOM path {s}: no figure")
        if not rows:
            return
        parts = read(self.a.outdir, "oom_path_parts.csv")
        body = []
        for s in sels:
            got = [num(r["oom_us"]) for r in rows
                   if r["selection"] == s and num(r["oom_us"]) is not None]
            if not got:
                continue
            r0 = next(r for r in rows if r["selection"] == s)
            split = []
            for col in ("policy_us", "scan_us", "report_us"):
                vals = [num(r[col]) for r in parts if r["selection"] == s and num(r[col]) is not None]
                split.append(f"{pct(vals, 50) / 1000:.2f} ms" if vals else "–")
            body.append([s, r0["cgroups"], r0["tasks"], len(got)] +
                        [f"{pct(got, p) / 1000:.2f} ms" for p in (0.0001, 50, 100)] + split)
        self.md.append(
            "## OOM-path cost\n\n"
            "Time in out_of_memory() for one OOM declared on a cgroup holding all the "
            "leaves (10 sleeping tasks each, and one 16 MiB hog that every selection must "
            "pick), with each selection (test/bench/oom_path.sh; fentry/fexit). The last "
            "three columns are the medians of each run's parts: the BPF policy hook (a policy's kill and "
            "its report happen inside it), the kernel's own task scan, the OOM report.\n\n" +
            table(["selection", "cgroups", "tasks", "runs", "min", "median", "max",
                   "policy hook", "kernel scan", "report"], body) + "\n")

    # --- footprint ---------------------------------------------------------
    def footprint(self):
        rows = read(self.a.outdir, "footprint.csv")
        for k in ("oomctl", "systemd-oomd", "earlyoom", "nohang"):
            got = [r for r in rows if r["killer"] == k]
            self.need(got and all(num(got[0][c]) is not None
                                  for c in ("processes", "rss_kib", "bpf_kib")),
                      f"footprint {k}: no figure")
        if not rows:
            return
        def mib(v, digits):
            return "–" if num(v) is None else f"{num(v) / 1024:.{digits}f} MiB"
        body = [[r["killer"], r["processes"], mib(r["rss_kib"], 1), mib(r["bpf_kib"], 2)]
                for r in rows]
        self.md.append(
            "## Footprint\n\n"
            "What each killer keeps once set up (test/bench/footprint.sh): resident "
            "processes and their RSS, and the kernel memory of its BPF programs, maps and "
            "BTF.\n\n" + table(["killer", "processes", "RSS", "BPF"], body) + "\n")

    # --- boot to boot (--alternate) ---------------------------------------
    def alternate(self):
        """W1 on our kernel and the RFC's in alternating boots: is the gap
        between the kernels larger than what one kernel moves by between
        two of its own boots?"""
        a = self.a
        lat = {}
        for i in range(1, a.alternate + 1):
            for k in ("ours", "rfc"):
                runs = read(os.path.join(a.outdir, f"{k}-{i}"), "kill_latency.csv")
                lat[(k, i)] = [num(r["latency_ms"]) if r["killed"] == "1" else None
                               for r in runs if r["workload"] == "W1"]
                self.need(len(lat[(k, i)]) >= a.runs,
                          f"{k} boot {i}: {len(lat[(k, i)])} of {a.runs} W1 runs")
        if self.missing:
            return
        body = [vs_rfc_row(f"pair {i}", lat[("ours", i)], lat[("rfc", i)], a.limit)
                for i in range(1, a.alternate + 1)]
        pooled = {k: sum((lat[(k, i)] for i in range(1, a.alternate + 1)), [])
                  for k in ("ours", "rfc")}
        body.append(vs_rfc_row("all boots", pooled["ours"], pooled["rfc"], a.limit))
        spread = []
        for k in ("ours", "rfc"):
            meds = [pct(lat[(k, i)], 50) for i in range(1, a.alternate + 1)]
            line = f"- {KILL_NAMES[k]}: boot medians " + ", ".join(fmt_ms(m, a.limit) for m in meds)
            if a.alternate > 1:
                line += (f"; boot 1 against boot 2: p = "
                         f"{rank_sum_p(lat[(k, 1)], lat[(k, 2)]):.2g}")
            spread.append(line)
        self.md.append(
            "# Ours against the RFC, boot to boot\n\n"
            f"W1, {a.runs} runs a boot, our kernel and the RFC's in {a.alternate} "
            f"alternating pairs of boots (`test/bench/run --alternate {a.alternate}`, "
            f"{time.strftime('%Y-%m-%d')}). p: the exact two-sided Wilcoxon-Mann-Whitney "
            "rank-sum test, as in RESULTS.md.\n\n" +
            table(["boots"] + VS_RFC_HEADER, body) +
            "\nThe same kernel from boot to boot:\n\n" + "\n".join(spread) + "\n")
        with open(a.results, "w") as f:
            f.write("".join(self.md))

    def write(self):
        a = self.a
        self.plots = []
        os.makedirs(a.plots, exist_ok=True)
        self.kill()
        self.listing()
        self.oom_path()
        self.footprint()
        head = ["# Benchmark results\n",
                f"Made by `test/bench/run{' --quick' if a.quick else ''}` on "
                f"{time.strftime('%Y-%m-%d')}: {os.cpu_count()} host CPUs, QEMU/TCG guests "
                "with 2 vCPUs (test/vm/run's defaults); every figure below from the same run. "
                "Figures, not promises: the host is shared and TCG is slow, so the ratios say "
                "more than the absolute times.\n"]
        head.append(
            "The killers, each alone in the guest (test/bench/kill_latency.sh): "
            "(a) `oomctl psi add CGROUP some 50ms 500ms` on the workload's cgroups, each a "
            "psi-declare handler (struct bpf_psi_ops) that owns its trigger (W2: the "
            "workload's whole scope, see below); "
            "(b) a psi-declare handler attached, with the "
            "trigger written to `memory.pressure` by a process that holds the file open, the "
            "RFC's way: our kernel sends a file's trigger only to its poller "
            "(kernel/patches/0009), so this row shows that it never acts; (c) the RFC's "
            "patches alone on the same source (kernel/build.sh --rfc) with a handler in the "
            "style of its selftest on a held-open trigger (test/bench/rfc); (d) systemd-oomd "
            "252 with DefaultMemoryPressureDurationSec=1s and "
            "ManagedOOMMemoryPressureLimit=1% on the workload's scope, its most aggressive "
            "documented settings, restarted before each run (it holds off for 15 s after a "
            "kill); (e) earlyoom and (f) nohang with Debian's units and defaults; (g) no "
            "killer but the kernel's. The workloads (test/bench/kill_latency.c): W1 touches "
            "500 MiB under memory.high 40M with no swap (the RFC selftest's); W2 fills memory "
            "past RAM while two tasks keep both CPUs busy; W3 leaks 2 MiB every 50 ms under "
            "memory.high 64M; W4 is W1 beside a quiet 100 MiB cgroup that must survive.\n")
        for png, title in self.plots:
            head.append(f"![{title}]({os.path.relpath(os.path.join(a.plots, png), os.path.dirname(a.results))})\n")
        with open(a.results, "w") as f:
            f.write("\n".join(head) + "\n" + "".join(self.md))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("results")
    p.add_argument("plots")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--alternate", type=int, default=0, metavar="N")
    p.add_argument("--killers", default="ours,ours-fd,systemd-oomd,earlyoom,nohang,kernel")
    a = p.parse_args()
    if a.alternate < 0:
        p.error(f"--alternate needs a number of pairs of boots, got {a.alternate}")
    a.killers = [k for k in a.killers.split(",") if k]
    a.workloads = ["W1"] if a.quick else list(WORKLOADS)
    a.runs = 1 if a.quick else 10
    a.limit = float(os.environ.get("KL_LIMIT", 3 if a.quick else 4))
    a.sizes = [100, 1000] if a.quick else [100, 1000, 10000]
    r = Report(a)
    if a.alternate:
        r.alternate()
    else:
        r.write()
    for m in r.missing:
        print(f"report.py: missing: {m}", file=sys.stderr)
    return 1 if r.missing else 0


if __name__ == "__main__":
    sys.exit(main())
