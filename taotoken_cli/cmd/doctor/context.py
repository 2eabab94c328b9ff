"""Shared state for one doctor run: the environment, the resolved settings, the deadline, and
memoised probes (the gateway's answers are fetched once and read by several checks)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.settings import ENV_CONFIG, Overrides, Settings, config_dir, load_settings

T = TypeVar("T")


# Probes end at the run's deadline; this grace lets the check that ran a probe classify what it saw and report it
# (which URL, which phase, its catalogue code) before the runner and the checks waiting on that probe give up.
GRACE_S = 0.3


class DeadlinePassed(Exception):
    """The run's deadline (and its grace) passed while a check waited for a probe another check runs."""


class _Slot:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class DoctorContext:
    def __init__(self, *, env: Mapping[str, str] | None = None, overrides: Overrides | None = None,
                 offline: bool = False, timeout: float = 8.0, cwd: Path | None = None) -> None:
        self.env: dict[str, str] = dict(os.environ if env is None else env)
        self.overrides = overrides or Overrides()
        self.offline = offline
        self.timeout = timeout
        self.started = time.monotonic()
        self.deadline = self.started + timeout  # every probe ends by then (request_timeouts; a Gateway's ends_at)
        self.cutoff = self.deadline + GRACE_S  # the runner and waiting checks give up then
        self.home = Path(self.env.get("HOME") or Path.home())
        self.cwd = cwd or Path.cwd()
        # The ids of the checks this run holds (set by the runner; None for a check called on its own): a probe
        # that must wait for another (the completions, sent one after the other) waits only for those that run.
        self.check_ids: frozenset[str] | None = None
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()
        self.settings_error: TaotokenError | None = None
        self.settings: Settings = self._load_settings()
        self.machine = Machine(self.env, self.cwd, config_dir(self.env))

    # -- settings -------------------------------------------------------------------------------
    def _load_settings(self) -> Settings:
        try:
            return load_settings(self.overrides, self.env)
        except TaotokenError as exc:
            # The config file does not parse: keep going with flags, env and defaults so every other
            # check still runs; `config.file` reports the error with its line and column.
            self.settings_error = exc
            env = dict(self.env)
            env[ENV_CONFIG] = os.devnull
            return load_settings(self.overrides, env)

    @property
    def base_url(self) -> str | None:
        return self.settings.base_url.value if self.settings.base_url.is_set else None

    @property
    def api_key(self) -> str | None:
        return self.settings.api_key.value if self.settings.api_key.is_set else None

    @property
    def model(self) -> str | None:
        return self.settings.model.value if self.settings.model.is_set else None

    # -- time -----------------------------------------------------------------------------------
    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def request_timeouts(self) -> tuple[float, float]:
        """(connect, read) timeouts for one socket probe: never beyond the run's deadline (a socket timeout of 0
        would mean non-blocking, so a probe started at the deadline gets a token 10 ms)."""
        budget = max(0.01, self.remaining())
        return min(3.0, budget), budget

    # -- memoised probes ------------------------------------------------------------------------
    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """Run `compute` once per key, even when several checks ask at the same time."""
        with self._lock:
            slot = self._slots.get(key)
            owner = slot is None
            if owner:
                slot = self._slots[key] = _Slot()
        assert slot is not None
        if owner:
            try:
                slot.value = compute()
            except BaseException as exc:  # handed to every waiter, not swallowed
                slot.error = exc
            finally:
                slot.done.set()
        elif not slot.done.wait(max(0.0, self.cutoff - time.monotonic())):
            raise DeadlinePassed(key)
        if slot.error is not None:
            raise slot.error
        return slot.value
