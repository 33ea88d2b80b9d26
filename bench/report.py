"""The benchmark's output: machine facts, git state and the text table."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import Any


def git(app_dir: Path, *args: str) -> str | None:
    try:
        res = subprocess.run(
            ["git", *args], cwd=app_dir, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def machine_info() -> dict:
    cpu_model = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    mem_kb = _status_kb_file("/proc/meminfo", "MemTotal")
    versions = {}
    for pkg in ("Django", "djangorestframework", "uvicorn", "httpx", "psycopg", "mcp"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[pkg] = importlib.metadata.version(pkg)
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model,
        "mem_total_mb": round(mem_kb / 1024) if mem_kb else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": versions,
    }


def _status_kb_file(path: str, field: str) -> int:
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def fmt(v: Any, nd: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def format_table(rows: list[dict], rss: dict) -> str:
    cols = [
        ("scenario", "scenario", "<"), ("lines", "lines", ">"), ("c", "concurrency", ">"),
        ("n", "n", ">"), ("ok", "ok", ">"), ("req/s", "rps", ">"), ("p50 ms", "p50_ms", ">"),
        ("p95 ms", "p95_ms", ">"), ("p99 ms", "p99_ms", ">"), ("body B", "body_bytes_max", ">"),
        ("peak RSS MB", "peak_rss_mb", ">"), ("web RSS", "web_peak_rss_mb", ">"),
        ("web cpu ms", "web_cpu_ms", ">"), ("child cpu s", "children_cpu_s", ">"),
    ]  # fmt: skip
    cells = [[h for h, _, _ in cols]]
    for r in rows:
        cells.append([fmt(r.get(k)) for _, k, _ in cols])
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = []
    for j, c in enumerate(cells):
        lines.append(
            "  ".join(
                f"{v:{a}{w}}" for v, w, (_, _, a) in zip(c, widths, cols, strict=True)
            ).rstrip()
        )
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(
        "server peak RSS (VmHWM) per group" + ("" if rss["reset"] else " (cumulative)") + ":"
    )
    web = rss.get("web_groups", {})
    for g, v in rss["groups"].items():
        lines.append(
            f"  {g:<14} {v:>8.1f} MB   (cumulative VmHWM after it: {rss['after'][g]:.1f} MB)"
            + (f"; web process alone {web[g]:.1f} MB" if g in web else "")
        )
    lines.append(f"  {'overall':<14} {rss['overall_peak_mb']:>8.1f} MB")
    flagged = [r for r in rows if r["problems"] or r["errors"]]
    if flagged:
        lines.append("")
        lines.append("problems / unexpected responses:")
        for r in flagged:
            for p in r["problems"] + r["errors"]:
                lines.append(f"  {r['scenario']} lines={r['lines']} c={r['concurrency']}: {p}")
    return "\n".join(lines)
