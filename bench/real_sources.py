"""The data engineer's run on real sources (issue 39): the whole DVC pipeline on LeetCodeDataset,
the Google Code Jam archive and HumanEval from ../shared/bench-data, stage by stage, in a copy of
this checkout; and validate side by side with problemtools' `verifyproblem` on the same packages.

The workspace (a temp folder, or `--workdir`) holds this checkout's tracked and untracked-not-ignored
files, committed to a fresh git repository so DVC works; this checkout's `.venv` (linked: dvc.yaml
runs `$DVC_ROOT/.venv/bin/microcoder`, which imports the workspace's code through PYTHONPATH) and a
copy of `models/tiny`; a params.yaml whose `scrape.sources` are the three real sources (the seed
corpus off, absolute paths); and a copy of the Code Jam archive in which the 4 problems we wrote
solutions for (bench/codejam_solutions/) carry them as `submissions/accepted` and
`submissions/wrong_answer`, as a Kattis package ships its jury submissions.

Then `dvc repro --single-item STAGE` for every stage in dvc.yaml's order, each under a small
wrapper that reports the CPU time and peak RSS of its whole process tree: getrusage
RUSAGE_CHILDREN for what it waits for, plus the judges' sandboxes (bwrap PID namespaces, which
getrusage never sees) sampled from /proc (a lower bound; peak RSS is outside them). Per stage: wall, CPU, peak RSS, read / kept /
rejected from its stats.json, validate's reference-run figures (`this_run`, `judge_time`), and the
caches' sizes after the run (.cache/microcoder/*). `--rerun` runs the pipeline again with nothing
changed (every stage must skip), then again after dropping one Code Jam problem from the copy,
with `dvc status` before each (which stages rerun and why).

`--problemtools` (after `--setup`, which installs problemtools into .bench/problemtools-venv)
times `verifyproblem PKG -p submissions` on the 4 packages with our submissions against a cold
`microcoder validate` on the same 4 (a private cache), and on the ones problemtools could judge,
with each tool's time limits. problemtools needs three adaptations to load these packages at all
(PROBLEMTOOLS_ADAPTATIONS; the output says what it reports on the package as shipped).

    .venv/bin/python bench/real_sources.py --setup                 # problemtools, once
    .venv/bin/python bench/real_sources.py --limit 10 --rerun --problemtools --out /tmp/real.json
    .venv/bin/python bench/real_sources.py                         # every problem of the 3 sources
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "bench-data"
LEETCODE = DATA / "leetcodedataset" / "LeetCodeDataset-v0.2.0-test.jsonl.gz"
CODEJAM = DATA / "codejam-archive"
HUMANEVAL = DATA / "humaneval" / "HumanEval.jsonl.gz"
SOLUTIONS = ROOT / "bench" / "codejam_solutions"
# Our solutions: file stem -> the archive problem (as bench/codejam_archive.py has them).
SOLVED = {"sudoku_checker": "kickstart/2013/round_b/sudoku_checker",
          "moist": "kickstart/2013/practice_round/moist",
          "sorting": "kickstart/2013/round_a/sorting",
          "war_of_the_words": "codejam_to_io/2019/code_jam_to_io_for_women/war_of_the_words"}
PROBLEMTOOLS_PIN = "problemtools==1.20260907"
PROBLEMTOOLS_VENV = ROOT / ".bench" / "problemtools-venv"
TICKS = os.sysconf("SC_CLK_TCK")


# --- the workspace --------------------------------------------------------------------------------

def make_workspace(ws: Path, limit: int | None) -> dict[str, Any]:
    """A runnable copy of this checkout on the real sources; returns what was put where."""
    copy_checkout(ws)
    (ws / ".venv").symlink_to(ROOT / ".venv")
    tiny = (ROOT / "models" / "tiny").is_dir()  # absent: the tiny-model stage builds it
    if tiny:
        shutil.copytree(ROOT / "models" / "tiny", ws / "models" / "tiny", symlinks=True)
    codejam = ws / "bench-sources" / "codejam"
    packages = copy_codejam(codejam, limit)
    sources = source_entries(codejam, limit)
    write_params(ws, sources)
    write_scrape_deps(ws, [s["path"] for s in sources if s.get("enabled") and s.get("path")])
    run(["git", "init", "-q"], ws)
    # the linked venv (a link is not the `.venv/` folder .gitignore names), sources and logs stay out
    (ws / ".git" / "info" / "exclude").write_text("/.venv\n/bench-sources/\n/.bench-logs/\n")
    run(["git", "add", "-A"], ws)
    run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "bench"], ws)
    # PYTHONDONTWRITEBYTECODE is set here: without this every command compiles the project
    run([sys.executable, "-m", "compileall", "-q", "pipeline", "stages", "training"], ws, env=stage_env(ws))
    if tiny:  # the copied model into this workspace's DVC cache: else tiny-model reruns ("not in cache")
        run(["dvc", "commit", "--force", "tiny-model"], ws, env=stage_env(ws))
    return {"workdir": str(ws), "codejam_packages": packages, "sources": sources}


def copy_checkout(ws: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src, dst = ROOT / rel, ws / rel
        if not src.exists() and not src.is_symlink():  # deleted in the checkout, not yet committed
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():  # src/microcoder/pipeline -> ../../pipeline must stay a link
            dst.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dst)


def copy_codejam(dst: Path, limit: int | None) -> list[str]:
    """The archive's packages (the 4 with our solutions first, then the rest up to `limit`, one
    at least: --rerun drops it), with our solutions as jury submissions."""
    from microcoder.pipeline.sources.kattis import find_packages

    others = [p.relative_to(CODEJAM).as_posix() for p in find_packages(CODEJAM)]
    chosen = list(SOLVED.values()) + [p for p in others if p not in SOLVED.values()]
    chosen = chosen[:max(limit, len(SOLVED) + 1)] if limit is not None else chosen
    for rel in chosen:
        shutil.copytree(CODEJAM / rel, dst / rel)
    shutil.copy2(CODEJAM / "LICENSE", dst / "LICENSE")
    for stem, rel in SOLVED.items():
        for folder, name in (("accepted", f"{stem}.py"), ("wrong_answer", f"{stem}_wrong.py")):
            (dst / rel / "submissions" / folder).mkdir(parents=True, exist_ok=True)
            shutil.copy2(SOLUTIONS / name, dst / rel / "submissions" / folder / name)
    return chosen


def source_entries(codejam: Path, limit: int | None) -> list[dict[str, Any]]:
    capped = {"limit": limit} if limit is not None else {}
    return [{"name": "seed", "kind": "jsonl", "path": "data/seed/problems.jsonl", "enabled": False},
            {"name": "leetcodedataset", "kind": "leetcodedataset", "path": str(LEETCODE), "enabled": True, **capped},
            {"name": "codejam", "kind": "kattis", "path": str(codejam.resolve()), "enabled": True},
            {"name": "humaneval", "kind": "humaneval", "path": str(HUMANEVAL), "enabled": True, **capped}]


def write_params(ws: Path, sources: list[dict[str, Any]]) -> None:
    params = yaml.safe_load((ws / "params.yaml").read_text())
    params["scrape"]["sources"] = sources
    (ws / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, width=120))


def write_scrape_deps(ws: Path, paths: list[str]) -> None:
    """Scrape's deps must cover every source path (scrape's check_dvc_tracks): `microcoder deps
    --write` where the CLI has it, else the workspace's dvc.yaml edited here."""
    env = stage_env(ws)
    if subprocess.run(["microcoder", "deps", "--help"], cwd=ws, env=env, capture_output=True).returncode == 0:
        run(["microcoder", "deps", "--write", "--dvc-file", str(ws / "dvc.yaml"), "--params", str(ws / "params.yaml")],
            ws, env=env)
        return
    spec = yaml.safe_load((ws / "dvc.yaml").read_text())
    deps = spec["stages"]["scrape"]["deps"]
    deps.extend(p for p in paths if p not in deps)
    (ws / "dvc.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, width=120))


def stage_env(ws: Path) -> dict[str, str]:
    """The workspace's code before the editable install's (which points at this checkout)."""
    env = dict(os.environ, PYTHONPATH=str(ws / "src"), PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}")
    env.pop("DVC_ROOT", None)
    env.pop("DVC_STAGE", None)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {cwd} (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def measured(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run `cmd` with its output in `log`: exit status, wall and CPU seconds, peak RSS (MB)."""
    usage = log.with_suffix(".usage.json")
    t0 = time.monotonic()
    with log.open("w") as out:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "_measure", str(usage), *cmd], cwd=cwd,
                       env=env, stdout=out, stderr=subprocess.STDOUT)
    wall = time.monotonic() - t0
    data = json.loads(usage.read_text()) if usage.exists() else {"rc": -1, "cpu_s": 0.0, "sandboxed_cpu_s": 0.0,
                                                                  "peak_rss_mb": 0}
    return {"rc": data["rc"], "wall_s": round(wall, 2),
            "cpu_s": round(data["cpu_s"] + data["sandboxed_cpu_s"], 2), "sandboxed_cpu_s": data["sandboxed_cpu_s"],
            "peak_rss_mb": round(data["peak_rss_mb"]), "log": str(log)}


def measure_child(usage: str, cmd: list[str]) -> None:
    """The wrapper (`real_sources.py _measure USAGE CMD...`): runs CMD, then writes its process
    tree's CPU and peak RSS. getrusage misses what runs in a bwrap PID namespace (the judges'
    sandboxes: its PID 1 is never reaped into our tree), so those are sampled from /proc."""
    sampler = SandboxSampler(os.getpid())
    sampler.start()
    rc = subprocess.call(cmd)
    sampler.stop()
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(usage).write_text(json.dumps({"rc": rc, "cpu_s": r.ru_utime + r.ru_stime, "peak_rss_mb": r.ru_maxrss / 1024,
                                       "sandboxed_cpu_s": round(sampler.total_s(), 2)}))
    sys.exit(rc)


class SandboxSampler(threading.Thread):
    """CPU of the processes in child PID namespaces under `root`, from /proc every `interval_s`.
    A process counts with its own and its reaped children's CPU (a parent's cutime: the judge's
    harness and zygote wait for every program they run) at its last sample, plus the children
    still alive then (not reaped yet: counted the same way). A lower bound: what a process
    reaped after its last sample is missed."""

    def __init__(self, root: int, interval_s: float = 0.2):
        super().__init__(daemon=True)
        self.root, self.interval_s = root, interval_s
        self.samples = 0
        # (pid, start time) -> (ppid, CPU with reaped children, in a child PID namespace, last sample seen)
        self.last: dict[tuple[int, int], tuple[int, float, bool, int]] = {}
        self.in_ns: dict[tuple[int, int], bool] = {}
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        self.halt.set()
        self.join()

    def sample(self) -> None:
        self.samples += 1
        procs = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                stat = proc_stat(int(entry.name))
                if stat is not None:
                    procs[int(entry.name)] = stat
        children: dict[int, list[int]] = {}
        for pid, (ppid, _start, _total) in procs.items():
            children.setdefault(ppid, []).append(pid)
        todo = list(children.get(self.root, []))
        while todo:
            pid = todo.pop()
            todo.extend(children.get(pid, []))
            ppid, start, total = procs[pid]
            key = (pid, start)
            if key not in self.in_ns:
                self.in_ns[key] = in_child_pid_namespace(pid)
            self.last[key] = (ppid, total, self.in_ns[key], self.samples)

    def total_s(self) -> float:
        inside = {key: v for key, v in self.last.items() if v[2]}
        kids: dict[int, list[tuple[int, int]]] = {}
        for key, (ppid, _total, _ns, _seen) in inside.items():
            kids.setdefault(ppid, []).append(key)

        def cpu(key: tuple[int, int]) -> float:
            _ppid, total, _ns, seen = inside[key]
            return total + sum(cpu(k) for k in kids.get(key[0], []) if inside[k][3] >= seen)

        in_pids = {key[0] for key in inside}
        # each namespace's top process (its parent, bwrap, is outside: getrusage has that one)
        return sum(cpu(key) for key, v in inside.items() if v[0] not in in_pids)


def proc_stat(pid: int) -> tuple[int, int, float] | None:
    """(ppid, start time, own + reaped children's CPU s) of a process, None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(f) / TICKS for f in fields[11:15])
    return int(fields[1]), int(fields[19]), utime + stime + cutime + cstime


def in_child_pid_namespace(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    line = next((ln for ln in status.splitlines() if ln.startswith("NSpid:")), "NSpid:")
    return len(line.split()) > 2


# --- the pipeline, stage by stage ---------------------------------------------------------------

def stage_order(ws: Path) -> list[str]:
    return list(yaml.safe_load((ws / "dvc.yaml").read_text())["stages"])


def stats_path(ws: Path, stage: str) -> Path | None:
    spec = yaml.safe_load((ws / "dvc.yaml").read_text())["stages"][stage]
    for entry in (spec.get("outs") or []) + (spec.get("metrics") or []):
        path = next(iter(entry)) if isinstance(entry, dict) else entry
        if path.endswith("/stats.json"):
            return ws / path
    return None


def dvc_status(ws: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(["dvc", "status", "--json"], cwd=ws, env=env, capture_output=True, text=True)
    try:
        return json.loads(done.stdout or "{}")
    except json.JSONDecodeError:
        return {"error": (done.stderr or done.stdout).strip()[-500:]}


def what_ran(log: Path, stage: str) -> str:
    text = log.read_text(errors="replace")
    if f"Running stage '{stage}'" in text:
        return "ran"
    if "skipping run, checking out outputs" in text:
        return "run-cache"
    if "didn't change, skipping" in text:
        return "skipped"
    return "?"


def run_pipeline(ws: Path, phase: str, stages: list[str]) -> dict[str, Any]:
    """`dvc repro --single-item` per stage in order; stops at the first failing stage."""
    env = stage_env(ws)
    logs = ws / ".bench-logs" / phase
    logs.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"status_before": dvc_status(ws, env), "stages": []}
    for stage in stages:
        row = {"stage": stage, **measured(["dvc", "repro", "--single-item", stage], ws, env, logs / f"{stage}.log")}
        row["ran"] = what_ran(Path(row["log"]), stage) if row["rc"] == 0 else "failed"
        row["warnings"] = warning_lines(Path(row["log"]))
        row.update(stage_figures(ws, stage))
        result["stages"].append(row)
        print(f"  {phase} {stage}: {row['ran']} {row['wall_s']} s wall, {row['cpu_s']} s CPU", flush=True)
        if row["rc"] != 0:
            row["error"] = last_lines(Path(row["log"]))
            break
    result["wall_s"] = round(sum(r["wall_s"] for r in result["stages"]), 1)
    result["cpu_s"] = round(sum(r["cpu_s"] for r in result["stages"]), 1)
    return result


def warning_lines(log: Path) -> list[str]:
    """The distinct warning lines a stage printed (what a user reading the run has to act on)."""
    lines = [ln.rsplit("\r", 1)[-1].strip() for ln in log.read_text(errors="replace").splitlines()]
    return list(dict.fromkeys(ln for ln in lines if re.search(r"(?i)\bwarn(ing)?\b", ln)))


def last_lines(log: Path, n: int = 8) -> list[str]:
    lines = [ln.rsplit("\r", 1)[-1] for ln in log.read_text(errors="replace").splitlines()]
    return [ln for ln in lines if ln.strip()][-n:]


def stage_figures(ws: Path, stage: str) -> dict[str, Any]:
    path = stats_path(ws, stage)
    if path is None or not path.exists():
        return {}
    stats = json.loads(path.read_text())
    # the machine-dependent figures (wall, judge time, cache use) are in timing.json where a stage writes one
    timing = json.loads(path.with_name("timing.json").read_text()) if path.with_name("timing.json").exists() else {}
    out = {k: stats.get(k) for k in ("read", "kept", "rejected")}
    out["rejected_by_reason"] = stats.get("rejected_by_reason")
    out["timing"] = timing
    if stage == "scrape":
        out["sources"] = {name: {k: s.get(k) for k in ("read", "kept", "rejected", "error")}
                          for name, s in (stats.get("sources") or {}).items()}
    if stage == "validate":
        for key in ("this_run", "judge_time", "reference_runs", "time_limits", "references", "wrong_solutions"):
            out[key] = timing.get(key, stats.get(key)) if key in ("this_run", "judge_time") else stats.get(key)
        strength = stats.get("strength") or {}
        out["strength"] = {k: strength.get(k) for k in ("kept", "held_out") if k in strength}
    return out


def cache_sizes(ws: Path) -> dict[str, int]:
    caches = ws / ".cache" / "microcoder"
    if not caches.is_dir():
        return {}
    return {p.name: folder_bytes(p) for p in sorted(caches.iterdir())}


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def drop_one_problem(ws: Path, packages: list[str]) -> str:
    """The last Code Jam package without our solutions, removed from the copy (a source changed;
    the 4 with solutions stay for --problemtools)."""
    rel = next(p for p in reversed(packages) if p not in SOLVED.values())  # copy_codejam copies one at least
    shutil.rmtree(ws / "bench-sources" / "codejam" / rel)
    return rel


# --- problemtools side by side -------------------------------------------------------------------

def setup_problemtools() -> None:
    if not (PROBLEMTOOLS_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PROBLEMTOOLS_VENV)], check=True)
    subprocess.run([str(PROBLEMTOOLS_VENV / "bin" / "pip"), "install", "-q", PROBLEMTOOLS_PIN], check=True)


def compare_problemtools(ws: Path) -> dict[str, Any]:
    """verifyproblem's submissions part and a cold `microcoder validate` on the 4 packages with
    our submissions; wall, CPU and the time limit each derived."""
    verify = PROBLEMTOOLS_VENV / "bin" / "verifyproblem"
    if not verify.exists():
        return {"error": f"{verify} not found: run `python bench/real_sources.py --setup` first"}
    logs = ws / ".bench-logs" / "problemtools"
    logs.mkdir(parents=True, exist_ok=True)
    packages = {stem: ws / "bench-sources" / "codejam" / rel for stem, rel in SOLVED.items()}
    env = dict(stage_env(ws), XDG_CONFIG_HOME=str(problemtools_config(logs / "config")))
    as_shipped = measured([str(verify), str(packages["sudoku_checker"]), "-p", "submissions"], ws, env,
                          logs / "as_shipped.log")
    theirs = {}
    for stem, pkg in packages.items():
        short = re.sub(r"[^a-z0-9]", "", stem)  # problemtools: a package's folder name is its [a-z0-9]+ shortname
        row = measured([str(verify), str(problemtools_copy(pkg, logs / "packages" / short)), "-p", "submissions"],
                       ws, env, logs / f"{stem}.log")
        row.update(verifyproblem_summary(Path(row["log"])))
        theirs[stem] = row
    ours = validate_packages(ws, packages, logs / "validate-all")
    judged = {stem: pkg for stem, pkg in packages.items() if theirs[stem]["time_limit_s"] is not None}
    ours_judged = validate_packages(ws, judged, logs / "validate-judged") if judged != packages else ours
    return {"as_shipped": {"rc": as_shipped["rc"], "output": last_lines(Path(as_shipped["log"]), 6)},
            "adaptations": PROBLEMTOOLS_ADAPTATIONS, "problemtools": theirs, "ours": ours, "ours_judged": ours_judged,
            "total": totals(theirs, ours, judged, ours_judged)}


def totals(theirs: dict[str, Any], ours: dict[str, Any], judged: dict[str, Path],
           ours_judged: dict[str, Any]) -> dict[str, Any]:
    """Both tools on all 4 packages, and on those problemtools could judge (ran a test)."""
    out = {}
    for scope, stems, mine in (("all", list(theirs), ours), ("judged", list(judged), ours_judged)):
        wall, cpu = sum(theirs[s]["wall_s"] for s in stems), sum(theirs[s]["cpu_s"] for s in stems)
        out[scope] = {"problems": stems, "problemtools_wall_s": round(wall, 2), "problemtools_cpu_s": round(cpu, 2),
                      "ours_wall_s": mine["wall_s"], "ours_cpu_s": mine["cpu_s"],
                      "ours_sandboxed_cpu_s": mine["sandboxed_cpu_s"], "ratio_wall": ratio(mine["wall_s"], wall),
                      "ratio_cpu": ratio(mine["cpu_s"], cpu)}
    return out


PROBLEMTOOLS_ADAPTATIONS = [
    "problem.yaml: `output_validator_flags` (a 2023-07 key) renamed to the legacy format's `validator_flags`: "
    "problemtools refuses the archive's legacy-format problem.yaml with it (MetadataLegacy: extra inputs are not "
    "permitted)",
    "the package folder renamed to its name without `_` (problemtools: invalid shortname, must be [a-z0-9]+; "
    "it then runs no test)",
    "languages.yaml (XDG_CONFIG_HOME): Python 3 runs on CPython (`python3`, this checkout's venv), as our judge "
    "does; problemtools' default is PyPy3, which is not installed here (compile error: could not find pypy3)",
]
# problemtools' language table, overridden: Python 3 on CPython (see PROBLEMTOOLS_ADAPTATIONS).
PROBLEMTOOLS_PYTHON = """python3:
    name: 'Python 3 (CPython)'
    compile: 'python3 -m py_compile {files}'
    run: 'python3 "{mainfile}"'
"""


def problemtools_config(home: Path) -> Path:
    (home / "problemtools").mkdir(parents=True, exist_ok=True)
    (home / "problemtools" / "languages.yaml").write_text(PROBLEMTOOLS_PYTHON)
    return home


def problemtools_copy(pkg: Path, dst: Path) -> Path:
    """The package as problemtools loads it (see PROBLEMTOOLS_ADAPTATIONS); the folder keeps the
    package's short name, which problemtools reports."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(pkg, dst)
    config = dst / "problem.yaml"
    config.write_text(re.sub(r"(?m)^output_validator_flags:", "validator_flags:", config.read_text()))
    return dst


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def verifyproblem_summary(log: Path) -> dict[str, Any]:
    """The limits verifyproblem set and its verdict lines, from its output."""
    text = log.read_text(errors="replace")
    limits = re.search(r"(?i)setting timelim to ([\d.]+) secs?, safety margin to ([\d.]+) secs?", text)
    slowest = re.search(r"(?i)slowest AC runtime: ([\d.]+)", text)
    return {"time_limit_s": float(limits.group(1)) if limits else None,
            "safety_margin_s": float(limits.group(2)) if limits else None,
            "slowest_ac_s": float(slowest.group(1)) if slowest else None,
            "summary": [ln.strip() for ln in text.splitlines()
                        if re.search(r"(?i)error|warning|\bOK\b|timelim|tested:", ln)][-12:]}


def validate_packages(ws: Path, packages: dict[str, Path], tmp: Path) -> dict[str, Any]:
    """Scrape the packages alone (a folder of links), then the validate stage on them, cold."""
    from microcoder.pipeline.scrape import convert

    shutil.rmtree(tmp, ignore_errors=True)
    folder = tmp / "packages"
    folder.mkdir(parents=True)
    for stem, pkg in packages.items():
        (folder / stem).symlink_to(pkg)
    convert("kattis", folder, tmp / "problems.parquet", name="codejam", progress=False)
    row = measured(["microcoder", "validate", "--params", "params.yaml", "--problems", str(tmp / "problems.parquet"),
                    "--out-dir", str(tmp / "validated"), "--no-progress",
                    "--set", f"cache_path={tmp / 'validate.sqlite'}"], ws, stage_env(ws), tmp / "validate.log")
    row["time_limits"] = validated_limits(tmp / "validated")
    row.update(stage_figures_from(tmp / "validated" / "stats.json"))
    return row


def validated_limits(out: Path) -> dict[str, dict[str, Any]]:
    """{problem: the time limit validate kept, where it came from, the derivation when there was one}."""
    from microcoder.pipeline.io import read_problems

    if not (out / "problems.parquet").exists():
        return {}
    derived_file = out / "time_limits.jsonl"
    derived = {}
    if derived_file.exists():
        derived = {d["id"]: d for d in map(json.loads, filter(None, derived_file.read_text().splitlines()))}
    return {p.id.rsplit("/", 1)[-1]: {"time_limit_s": p.time_limit_s, "from": p.meta.get("time_limit_from"),
                                      "derived": derived.get(p.id)}
            for p in read_problems(out / "problems.parquet")}


def stage_figures_from(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    stats = json.loads(path.read_text())
    timing = json.loads(path.with_name("timing.json").read_text()) if path.with_name("timing.json").exists() else {}
    out = {k: stats.get(k) for k in ("read", "kept", "rejected", "reference_runs", "wrong_solutions")}
    out.update({k: timing.get(k, stats.get(k)) for k in ("this_run", "judge_time")})
    return out


# --- the report -----------------------------------------------------------------------------------

def print_pipeline(title: str, result: dict[str, Any]) -> None:
    print(f"\n{title}: {result['wall_s']} s wall, {result['cpu_s']} s CPU")
    print("| stage | ran | wall s | CPU s | CPU/wall | peak RSS MB | read | kept | rejected |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in result["stages"]:
        load = round(r["cpu_s"] / r["wall_s"], 2) if r["wall_s"] else None
        print(f"| {r['stage']} | {r['ran']} | {r['wall_s']} | {r['cpu_s']} | {load} | {r['peak_rss_mb']} | "
              f"{r.get('read', '')} | {r.get('kept', '')} | {r.get('rejected', '')} |")
    for r in result["stages"]:
        for line in r.get("warnings", [])[:5]:
            print(f"{r['stage']} warned: {line[:300]}")
        if r.get("error"):
            print(f"{r['stage']} failed (exit {r['rc']}):\n  " + "\n  ".join(r["error"]))
        if r["stage"] == "scrape" and r.get("sources"):
            print(f"scrape by source: {r['sources']}")
        if r["stage"] == "validate" and "this_run" in r:
            for key in ("this_run", "judge_time", "reference_runs", "time_limits", "strength"):
                print(f"validate {key}: {r[key]}")


def print_reruns(reruns: dict[str, Any]) -> None:
    for phase, result in reruns.items():
        if phase == "dropped":
            continue
        ran = [r["stage"] for r in result["stages"] if r["ran"] != "skipped"]
        why = {stage: changes for stage, changes in result["status_before"].items()}
        print(f"\nrerun {phase}: {result['wall_s']} s wall; stages not skipped: {ran or 'none'}")
        print(f"  dvc status before: {json.dumps(why)[:1500]}")
    if "dropped" in reruns:
        print(f"  (dropped Code Jam package: {reruns['dropped']})")


def print_problemtools(cmp: dict[str, Any]) -> None:
    if "error" in cmp:
        print(f"\nproblemtools: {cmp['error']}")
        return
    shipped = cmp["as_shipped"]
    print(f"\nproblemtools on sudoku_checker as shipped (exit {shipped['rc']}): " + " / ".join(shipped["output"][-3:]))
    print("adapted for problemtools:\n  " + "\n  ".join(cmp["adaptations"]))
    print("\nvalidate vs problemtools verifyproblem -p submissions (4 Code Jam packages, our submissions)")
    print("| problem | verifyproblem wall s | CPU s | exit | its time limit s | slowest AC s | our time limit s |")
    print("|---|---|---|---|---|---|---|")
    ours = cmp["ours"].get("time_limits", {})
    for stem, r in cmp["problemtools"].items():
        mine = ours.get(stem, {})
        print(f"| {stem} | {r['wall_s']} | {r['cpu_s']} | {r['rc']} | {r['time_limit_s']} | {r['slowest_ac_s']} | "
              f"{mine.get('time_limit_s')} ({mine.get('from')}) |")
    print("| problems | ours wall s | ours CPU s (in sandboxes) | problemtools wall s | CPU s | ratio wall | ratio CPU |")
    print("|---|---|---|---|---|---|---|")
    for scope, t in cmp["total"].items():
        print(f"| {scope}: {', '.join(t['problems'])} | {t['ours_wall_s']} | {t['ours_cpu_s']} ({t['ours_sandboxed_cpu_s']}) | "
              f"{t['problemtools_wall_s']} | {t['problemtools_cpu_s']} | {t['ratio_wall']}x | {t['ratio_cpu']}x |")
    for key in ("ours", "ours_judged"):
        print(f"{key}: validate exit {cmp[key]['rc']}, this_run {cmp[key].get('this_run')}, "
              f"judge_time {cmp[key].get('judge_time')}")
    for stem, r in cmp["problemtools"].items():
        if r["rc"] != 0:
            print(f"verifyproblem {stem} (exit {r['rc']}): " + " / ".join(r["summary"][-4:]))


def main() -> None:
    if sys.argv[1:2] == ["_measure"]:
        measure_child(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, help="Problems per source (Code Jam: the 4 with solutions first, 5 at least).")
    ap.add_argument("--workdir", type=Path, help="Build the workspace here (must not exist; kept).")
    ap.add_argument("--stages", help="Comma-separated stages to run (default: all of dvc.yaml, in order).")
    ap.add_argument("--rerun", action="store_true", help="Rerun with nothing changed, then after dropping a problem.")
    ap.add_argument("--problemtools", action="store_true", help="verifyproblem vs validate on the 4 packages.")
    ap.add_argument("--no-pipeline", action="store_true", help="Build the workspace only (with --problemtools).")
    ap.add_argument("--setup", action="store_true", help=f"Install {PROBLEMTOOLS_PIN} into {PROBLEMTOOLS_VENV} and exit.")
    ap.add_argument("--out", type=Path, help="Write the whole report as JSON here.")
    args = ap.parse_args()
    if args.setup:
        setup_problemtools()
        return
    if args.limit is not None and args.limit < 1:
        sys.exit(f"--limit must be a positive number of problems per source, got {args.limit}")
    for path in (LEETCODE, CODEJAM, HUMANEVAL):
        if not path.exists():
            sys.exit(f"{path} not found: the bench reads ../shared/bench-data")
    if args.workdir is not None and args.workdir.exists():
        sys.exit(f"--workdir {args.workdir} exists: give a new folder (the workspace is built from scratch)")
    stages = args.stages.split(",") if args.stages else stage_order(ROOT)
    unknown = sorted(set(stages) - set(stage_order(ROOT)))
    if unknown:
        sys.exit(f"--stages: unknown {unknown}; dvc.yaml has {','.join(stage_order(ROOT))}")
    ws = (args.workdir or Path(tempfile.mkdtemp(prefix="microcoder-real-"))).resolve()
    ws.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    report: dict[str, Any] = {"limit": args.limit, **make_workspace(ws, args.limit)}
    report["workspace_s"] = round(time.monotonic() - t0, 1)
    print(f"workspace: {ws} ({report['workspace_s']} s; {len(report['codejam_packages'])} Code Jam packages)")
    if not args.no_pipeline:
        report["run"] = run_pipeline(ws, "first", stages)
        report["caches"] = cache_sizes(ws)
        print_pipeline("first run", report["run"])
        print(f"caches (bytes): {report['caches']}")
        failed = [r["stage"] for r in report["run"]["stages"] if r["rc"] != 0]
        if args.rerun and failed:
            print(f"--rerun skipped: the first run failed at {failed[0]} (its log: {report['run']['stages'][-1]['log']})")
        elif args.rerun:
            report["rerun"] = {"noop": run_pipeline(ws, "noop", stages)}
            report["rerun"]["dropped"] = drop_one_problem(ws, report["codejam_packages"])
            report["rerun"]["one_dropped"] = run_pipeline(ws, "one_dropped", stages)
            report["caches_after_reruns"] = cache_sizes(ws)
            print_reruns(report["rerun"])
    if args.problemtools:
        report["problemtools"] = compare_problemtools(ws)
        print_problemtools(report["problemtools"])
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, default=str))
    print(f"\nworkspace kept at {ws}")


if __name__ == "__main__":
    main()
