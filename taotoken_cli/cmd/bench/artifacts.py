"""Files a run leaves behind: `--raw` (JSON Lines) and `--csv` (one row per request, plus a summary
file), built from the per-request lines each worker writes to a file of its own; `--html` is in
html_report.py.

Workers never share a file: each writes its own, and the parent merges them after each series in
the order the requests ended (heapq.merge: memory stays bounded whatever `-n`)."""

from __future__ import annotations

import csv
import glob
import heapq
import json
import os
from typing import Any

from taotoken_cli.core.base.masking import SECRETS, mask_unknown_keys

REQUEST_COLUMNS = ("model", "concurrency", "rate", "repeat", "index", "worker", "start_s", "end_s", "latency_ms",
                   "ttft_ms", "tpot_ms", "late_ms", "status", "ok", "good", "error", "output_tokens",
                   "tokens_source", "input_tokens", "max_tokens")
DIST_COLUMNS = ("p50", "p90", "p95", "p99", "mean", "max")


def summary_path(csv_path: str) -> str:
    """bench.csv -> bench.summary.csv"""
    root, ext = os.path.splitext(csv_path)
    return f"{root}.summary{ext or '.csv'}"


class RecordSink:
    def __init__(self, raw_path: str | None, csv_path: str | None) -> None:
        self.raw = open(raw_path, "w", encoding="utf-8") if raw_path else None  # noqa: SIM115
        self.csv_file = open(csv_path, "w", encoding="utf-8", newline="") if csv_path else None  # noqa: SIM115
        self.csv = csv.writer(self.csv_file) if self.csv_file else None
        if self.csv is not None:
            self.csv.writerow(REQUEST_COLUMNS)

    def add(self, plan, directory: str, repeat: int) -> None:
        """Fold one series' worker files into the outputs, then delete them."""
        paths = sorted(glob.glob(os.path.join(directory, f"{plan.label}w*.jsonl")))
        files = [open(path, encoding="utf-8") for path in paths]  # noqa: SIM115
        extra = {"concurrency": plan.concurrency, "rate": plan.rate, "repeat": repeat}
        try:
            lines = heapq.merge(*(map(json.loads, fh) for fh in files), key=lambda line: line["end_s"])
            for line in lines:
                line.update(extra)
                if self.raw is not None:
                    self.raw.write(masked(json.dumps(line, ensure_ascii=False)) + "\n")
                if self.csv is not None:
                    self.csv.writerow([masked(cell) if isinstance(cell, str) else cell
                                       for cell in (_cell(line.get(name)) for name in REQUEST_COLUMNS)])
        finally:
            for fh in files:
                fh.close()
            for path in paths:
                os.unlink(path)

    def close(self) -> None:
        for fh in (self.raw, self.csv_file):
            if fh is not None:
                fh.close()


def masked(text: str) -> str:
    """What a file keeps of a text that may carry a server's echo of the key: the key masked, with or without its
    prefix (the files are shared more than the terminal is)."""
    return mask_unknown_keys(SECRETS(text))


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def write_summary_csv(path: str, report) -> None:
    """One row per series (model x sweep step), the figures of the text report."""
    header = ["model", "concurrency", "rate", "repeats", "requests", "ok", "failed", "elapsed_s", "requests_per_s",
              "goodput_per_s", "output_tokens_per_s", "meets_slo", "aborted", "top_error"]
    for metric in ("latency", "ttft", "itl", "tpot"):
        header += [f"{metric}_{column}_ms" for column in DIST_COLUMNS]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for s in report.series:
            row = [s.model, s.concurrency, s.rate, (s.repeats or {}).get("count", 1), s.requests, s.ok, s.failed,
                   s.elapsed_s, s.requests_per_s, s.goodput_per_s, s.output_tokens_per_s, s.meets_slo,
                   s.aborted["reason"] if s.aborted else None, s.top_error.code if s.top_error else None]
            for dist in (s.latency, s.ttft, s.itl, s.tpot):
                row += [getattr(dist, column) if dist is not None else None for column in DIST_COLUMNS]
            writer.writerow([masked(c) if isinstance(c, str) else c for c in (_cell(v) for v in row)])


def check_writable(option: str, path: str) -> str:
    """A clear InputError now rather than a traceback after the run."""
    from taotoken_cli.core.base.errors import InputError
    from taotoken_cli.core.base.i18n import _

    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise InputError(_("{option} {path} is a directory").format(option=option, path=path),
                         _("give a file name, e.g. {example}").format(example=f"{option} bench{_ext(option)}"))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise InputError(_("{option} {path}: cannot write in {directory}").format(option=option, path=path,
                                                                                 directory=directory),
                         _("pick a writable directory"))
    return path


def _ext(option: str) -> str:
    return {"--raw": ".jsonl", "--csv": ".csv", "--html": ".html"}.get(option, "")
