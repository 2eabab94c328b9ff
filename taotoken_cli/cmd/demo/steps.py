"""The demo's script: which commands run, in which order, and what each one shows."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import N_
from taotoken_cli.core.platform import shells, system

# A key for the local mock only: it opens nothing anywhere else.
DEMO_KEY = "sk-demo7f3a9c1e5b2d8f4a6c0e9b7dDEMO"
DEMO_MODEL = "gpt-4o-mini"
GPU_MODEL = "gpu-a100-qwen25-72b-fp16"
CPU_MODEL = "cpu-llama3-8b-int8"
# Gateways often answer an undated model name with a dated variant; the demo's gateway does too.
ALIAS_MODEL, ALIAS_ANSWER = "gpt-4o", "gpt-4o-2024-08-06"
SERVED_MODELS = (DEMO_MODEL, "claude-sonnet-4-5", GPU_MODEL, CPU_MODEL)

STEP_NAMES = ("init", "check", "doctor", "route", "bench")
# written by init's shell target (under XDG_CONFIG_HOME = ~/.config): env.sh, or on Windows env.ps1 (which a
# PowerShell profile loads)
ENV_SH, ENV_PS1 = ".config/taotoken/env.sh", ".config/taotoken/env.ps1"


@dataclass
class Command:
    args: tuple[str, ...]  # after `taotoken`
    stdin: str | None = None
    shown_stdin: str = ""  # how the stdin is written in the header, e.g. 'printf %s "$KEY" |'
    ok_exit: tuple[int, ...] = (Exit.OK,)
    why: str = ""  # one line: what this command shows (English; shown with _())
    source: str | None = None  # not taotoken: `. FILE` (relative to HOME) in the steps' shell

    @property
    def shown(self) -> str:
        if self.source is not None:
            return f". ~/{self.source}"
        line = "taotoken " + " ".join(shlex.quote(a) for a in self.args)
        return f"{self.shown_stdin} {line}" if self.shown_stdin else line


@dataclass
class Step:
    name: str
    title: str  # English; shown with _()
    commands: list[Command]
    needs: tuple[str, ...] = ()
    show_files: bool = False


def build_steps(gateway_url: str, fast: bool, shell: str = shells.POSIX) -> list[Step]:
    """The script, its commands as typed in `shell` (core.platform.shells) on this OS."""
    bench_n = "10" if fast else "20"
    samples = "1" if fast else "2"
    if system.current().windows:
        load = Command((), source=ENV_PS1, why=N_("what every new PowerShell window now does (init added it to "
                                                  "your PowerShell profile); the next steps run in it"))
    else:
        load = Command((), source=ENV_SH,
                       why=N_("what every new shell now does (init added it to ~/.bashrc); the next steps run in it"))
    steps = [
        Step("init", N_("write the gateway's base URL, key and model into every client"), [
            Command(("init", "--all", "--yes", "--base-url", gateway_url, "--model", DEMO_MODEL, "--key-stdin"),
                    stdin=DEMO_KEY, shown_stdin=shells.piped_var("TAOTOKEN_KEY", shell),
                    why=N_("every client gets the URL form it needs; the key comes on stdin, never on the "
                           "command line")),
            load,
        ], show_files=True),
        Step("check", N_("one fast request: does the setup work?"), [
            Command(("check",), why=N_("lists the models with the configured URL and key")),
            Command(("check", "--stream"), why=N_("also streams a 1-token chat completion")),
        ], needs=("init",)),
        Step("doctor", N_("everything at once: env, client files, network, gateway, key, model, streaming"), [
            Command(("doctor",), why=N_("reads every client's file and probes the gateway")),
        ], needs=("init",)),
        Step("route", N_("pick the model for this machine's devices and verify what answers"), [
            Command(("route", "devices"), why=N_("probes CUDA and OpenCL devices")),
            Command(("route", "set", f"cuda={GPU_MODEL}", f"gpu={ALIAS_MODEL}", f"cpu={CPU_MODEL}"),
                    why=N_("a routing table in the config: device kind -> model ID")),
            Command(("route",), why=N_("the model for this machine, and why")),
            Command(("route", "--verify", "--all", "--samples", samples),
                    why=N_("asks the gateway per route which model really answers")),
        ], needs=("init",)),
        Step("bench", N_("a short load test, two models side by side"), [
            Command(("bench", "-m", GPU_MODEL, "-m", CPU_MODEL, "--stream", "-n", bench_n, "-c", "4",
                     "--max-tokens", "16"),
                    why=N_("latency percentiles, time to first token, tokens/s, errors by cause")),
        ], needs=("init",)),
    ]
    return steps


def plan_steps(steps: list[Step], only: str | None) -> tuple[list[Step], list[Step]]:
    """(steps run quietly as prerequisites, steps shown)."""
    if only is None:
        return [], steps
    by_name = {s.name: s for s in steps}
    target = by_name[only]
    return [by_name[n] for n in target.needs], [target]


def what_next(shell: str = shells.POSIX) -> list[tuple[str, str]]:
    """(command, what it does — English, shown with _()) for the user's real setup, as typed in `shell`."""
    return [
        (shells.piped_var("TAOTOKEN_KEY", shell) + " taotoken init --key-stdin --model MODEL --dry-run",
         N_("see what would change in your real client files (nothing is written)")),
        ("taotoken init", N_("the same for real: asks for base URL, key (hidden) and model; backups, undo")),
        ("taotoken check", N_("one request: works, or the failure and its fix")),
        ("taotoken doctor", N_("every cause of a broken setup, each with its fix")),
        ("taotoken mock", N_("a local gateway to point your own clients at and watch what they send")),
    ]
