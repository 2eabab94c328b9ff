"""`taotoken doctor`: every cause of a broken setup, found and explained in one run.

A check is a small unit with a stable id, a section and a title; it returns a Result (ok / warn /
fail / skipped, a one-line message, details, fix lines and optional safe repairs). The runner runs
them concurrently under one deadline; render.py turns the Report into text or JSON.
"""

from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import SECTIONS, Check, Finding, Repair, Report, Result, Status
from taotoken_cli.doctor.registry import all_checks, check, select
from taotoken_cli.doctor.runner import run_doctor

__all__ = ["SECTIONS", "Check", "DoctorContext", "Finding", "Repair", "Report", "Result", "Status", "all_checks",
           "check", "run_doctor", "select"]
