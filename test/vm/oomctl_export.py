#!/usr/bin/python3
"""oomctl event export --prometheus, checked on the host with a real
Prometheus text-format parser (prometheus_client, python3-prometheus-client),
which the guest image lacks: the guest half (oomctl_export.sh) writes the
exports into the build tree, shared read-write with the guest, and this
parses them and checks their counts.

Usage: oomctl_export.py [test/vm/run OPTIONS...] BUILD_DIR
       oomctl_export.py --parse-only OUT_DIR   (the last run's files again)
"""
import json
import os
import shutil
import subprocess
import sys

from prometheus_client.parser import text_string_to_metric_families

HERE = os.path.dirname(os.path.abspath(__file__))
CGROUP = '/ex"q\\b/leaf'	# the victims' cgroup, as cgroupfs has it
FAMILIES = {
	"oomctl_kills_total": "counter",
	"oomctl_dry_run_kills_total": "counter",
	"oomctl_ooms_total": "counter",
	"oomctl_psi_events_total": "counter",
	"oomctl_policy_kills_total": "counter",
	"oomctl_policy_runs_total": "counter",
	"oomctl_psi_trigger_events_total": "counter",
	"oomctl_event_log_records_total": "counter",
	"oomctl_event_log_window_records": "gauge",
}
nr_pass = nr_fail = 0


def check(what, ok, detail=""):
	global nr_pass, nr_fail
	if ok:
		nr_pass += 1
		print(f"ok {nr_pass + nr_fail} - {what}")
	else:
		nr_fail += 1
		print(f"not ok {nr_pass + nr_fail} - {what}")
		for line in str(detail).splitlines():
			print(f"# {line}")
	sys.stdout.flush()


def escape(value, quote=True):
	value = value.replace("\\", "\\\\").replace("\n", "\\n")
	return value.replace('"', '\\"') if quote else value


def render(families):
	"""The text format 0.0.4 of what the parser read, as oomctl must have
	written it: a byte-for-byte round trip catches any escape the lenient
	parser lets through (it reads a lone \\b as a backslash and a b)."""
	out = []
	for f in families:
		name = f.name + "_total" if f.type == "counter" else f.name
		out.append(f"# HELP {name} {escape(f.documentation, False)}")
		out.append(f"# TYPE {name} {f.type}")
		for s in f.samples:
			labels = ",".join(f'{k}="{escape(v)}"' for k, v in s.labels.items())
			value = int(s.value) if s.value == int(s.value) else s.value
			out.append(f"{s.name}{{{labels}}} {value}" if labels else
				   f"{s.name} {value}")
	return "\n".join(out) + "\n"


def parse(path):
	"""(families by TYPE name, None) or (None, why)"""
	try:
		text = open(path, encoding="utf-8").read()
	except (OSError, UnicodeDecodeError) as e:
		return None, e
	try:
		families = list(text_string_to_metric_families(text))
	except Exception as e:	# the parser raises ValueError and others
		return None, f"{type(e).__name__}: {e}"
	again = render(families)
	if again != text:
		diff = [f"-{a}\n+{b}" for a, b in zip(text.splitlines(), again.splitlines())
			if a != b]
		return None, "not what a parse gives back:\n" + "\n".join(diff[:5] or [again])
	by_name = {}
	for f in families:
		name = f.name + "_total" if f.type == "counter" else f.name
		if name in by_name:
			return None, f"family {name} twice"
		by_name[name] = f
	return by_name, None


def value(fams, name, **labels):
	"""The sample of family @name with exactly @labels, or None"""
	for s in fams[name].samples:
		if s.labels == labels:
			return s.value
	return None


def check_export(fams, events, policies):
	check("every family, each with its type",
	      {n: f.type for n, f in fams.items()} == FAMILIES,
	      {n: f.type for n, f in fams.items()})
	v = value(fams, "oomctl_policy_kills_total", policy="largest-leaf")
	check(f"largest-leaf's kills counter is exactly 2 (got {v})", v == 2, fams["oomctl_policy_kills_total"].samples)
	v = value(fams, "oomctl_kills_total", cgroup=CGROUP, policy="largest-leaf")
	check(f"kills in {CGROUP} by largest-leaf: exactly 2, the label unescaped back (got {v})",
	      v == 2, fams["oomctl_kills_total"].samples)
	v = value(fams, "oomctl_ooms_total", cgroup="/ex_decl", trigger="declared")
	check(f"declared OOMs in /ex_decl: exactly 3 (got {v})", v == 3,
	      fams["oomctl_ooms_total"].samples)
	v = value(fams, "oomctl_ooms_total", cgroup=CGROUP.rsplit("/", 1)[0],
		  trigger="allocation")
	check(f"allocation OOMs in the quoted cgroup: 2 or more (got {v})",
	      v is not None and v >= 2, fams["oomctl_ooms_total"].samples)
	trig = [s for s in fams["oomctl_psi_trigger_events_total"].samples
		if s.labels.get("cgroup") == "/ex_decl"]
	check("the PSI trigger on /ex_decl has its sample",
	      len(trig) == 1 and trig[0].labels["resource"] == "memory" and
	      trig[0].labels["kind"] == "some", fams["oomctl_psi_trigger_events_total"].samples)
	runs = value(fams, "oomctl_policy_runs_total", policy="largest-leaf")
	want = policies["policies"][0]["runs"] if policies["policies"] else None
	check(f"largest-leaf's runs: at least policy list's {want} (got {runs})",
	      runs is not None and want is not None and runs >= want >= 2)
	total = value(fams, "oomctl_event_log_records_total")
	window = value(fams, "oomctl_event_log_window_records")
	check(f"the log has not wrapped: window {window} == records {total}",
	      total is not None and total == window and total >= len(events["events"]))
	# Every kill event list shows is counted under its cgroup and chooser
	want = {}
	for e in events["events"]:
		if e["type"] == "kill":
			who = e["chosen_by"]
			who = "(kernel)" if who == "the kernel's OOM killer" else who
			want[(e["cgroup"], who)] = want.get((e["cgroup"], who), 0) + 1
	got = {(s.labels["cgroup"], s.labels["policy"]): s.value
	       for s in fams["oomctl_kills_total"].samples}
	check("kills per cgroup and policy are event list's", got == want, f"export {got}\nevent list {want}")


def kills(fams):
	return {(s.labels["cgroup"], s.labels["policy"]): s.value
		for s in fams["oomctl_kills_total"].samples}


def check_after(before, out):
	"""removed.prom, after the victims' cgroup was removed, and wrapped.prom,
	after every record dropped out of the log: the counts of before.prom,
	under the same labels"""
	fams = {}
	for p in ("removed.prom", "wrapped.prom"):
		fams[p], why = parse(os.path.join(out, p))
		check(f"{p} parses as the Prometheus text format", fams[p] is not None, why)
	if before is None or None in fams.values():
		return
	v = value(fams["removed.prom"], "oomctl_kills_total", cgroup=CGROUP,
		  policy="largest-leaf")
	check(f"the removed cgroup is labelled by its path: {CGROUP} still has 2 kills (got {v})",
	      v == 2, fams["removed.prom"]["oomctl_kills_total"].samples)
	wrapped = fams["wrapped.prom"]
	check("with no record left in the log, the kill counts are those of before",
	      kills(wrapped) == kills(before), f"before {kills(before)}\nafter {kills(wrapped)}")
	for name, labels in (("oomctl_ooms_total", {"cgroup": "/ex_decl", "trigger": "declared"}),
			     ("oomctl_policy_kills_total", {"policy": "largest-leaf"})):
		a, b = value(before, name, **labels), value(wrapped, name, **labels)
		check(f"... and {name}{labels} too ({a}, then {b})", a is not None and a == b)
	a = value(before, "oomctl_event_log_records_total")
	b = value(wrapped, "oomctl_event_log_records_total")
	check(f"the records counter went on by the 4096 ({a}, then {b})",
	      a is not None and b is not None and b >= a + 4096)


def main():
	args = sys.argv[1:]
	if args[:1] == ["--parse-only"] and len(args) == 2:
		out = args[1]
	elif args and not args[-1].startswith("-"):
		build = args[-1]
		out = os.path.join(build, "test", "vm", "oomctl_export.out")
		shutil.rmtree(out, ignore_errors=True)
		run = [os.path.join(HERE, "run"), "--timeout", "300", *args[:-1], "--",
		       os.path.join(HERE, "oomctl_export.sh"), build, out]
		rc = subprocess.run(run, check=False).returncode
		print(f"# the guest's checks: exit status {rc}")
		if rc:
			print("Bail out! the guest half failed")
			return 1
	else:
		print(__doc__.split("\n\n")[1], file=sys.stderr)
		return 2

	paths = ["stdout.prom", "file.prom"]
	parsed = {}
	for p in paths:
		fams, why = parse(os.path.join(out, p))
		check(f"{p} parses as the Prometheus text format", fams is not None, why)
		parsed[p] = fams
	try:
		events = json.load(open(os.path.join(out, "events.json")))
		policies = json.load(open(os.path.join(out, "policies.json")))
	except (OSError, ValueError) as e:
		check("the guest's event list and policy list", False, e)
		events = policies = None
	for p in paths:
		if parsed[p] and events:
			print(f"# {p}")
			check_export(parsed[p], events, policies)
	check_after(parsed["stdout.prom"], out)
	# Each read made while exports replaced the file is a whole export
	try:
		reads = sorted(os.listdir(os.path.join(out, "reads")))
	except OSError:
		reads = []
	bad = []
	for r in reads:
		fams, why = parse(os.path.join(out, "reads", r))
		if fams is None or set(fams) != set(FAMILIES):
			bad.append(f"{r}: {why or sorted(fams)}")
	check(f"{len(reads)} reads during exports are all whole exports",
	      bool(reads) and not bad, "\n".join(bad[:5]))

	print(f"1..{nr_pass + nr_fail}")
	print(f"{nr_pass} passed, {nr_fail} failed")
	return 0 if nr_fail == 0 and nr_pass > 0 else 1


if __name__ == "__main__":
	sys.exit(main())
