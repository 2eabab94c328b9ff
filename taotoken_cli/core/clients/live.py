"""Running the real clients once each, headless, the way the user starts them: through the user's shell (its
start-up files run first, so an export in ~/.bashrc reaches the client as it does in a terminal), in the
user's working directory, with the client's own files. One runner serves `taotoken doctor --live`, `taotoken
check --client NAME` and the real-client tests (tests/real_clients), which run it against the mock gateway.

What this module knows about each client is data (`LIVE_CLIENTS`): the command, the npm package that installs
it, the headless arguments and how to read its answer. Reading what a run means (reached the gateway or not,
and the client's own error text) is `outcome()`. Nothing here prints: the commands render a LiveRun.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from taotoken_cli.core.base.masking import mask_unknown_keys
from taotoken_cli.core.platform import system

# One short prompt: each client sends one small request for it (the commands say so before running).
PROMPT = "Reply with the single word OK."
DEFAULT_TIMEOUT_S = 90.0
_TAIL = 4000  # characters kept of each output stream


@dataclass(frozen=True)
class LiveClient:
    """A client that can be run headless: its init target name, the command and what installs it."""

    name: str  # the init target (claude-code | codex | cline | opencode | qwen-code)
    label: str
    command: str  # the executable, looked up on the PATH the shell gives it
    package: str  # the npm package that provides it
    api: str  # what it sends: "messages" (Anthropic), "responses" (OpenAI Responses) or "chat"
    args: Callable[[str], list[str]]  # headless arguments for a one-line prompt
    reply_of: Callable[[str], str | None]  # its answer text from stdout, None when there is none
    error_of: Callable[[str, str], str | None]  # its own error text from (stdout, stderr)

    @property
    def install(self) -> str:
        return f"npm install -g {self.package}"


def _json_lines(text: str) -> list[dict]:
    """The JSON objects a client printed, one a line (a line holding an array of them counts: Qwen Code's json)."""
    items = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            items += [i for i in item if isinstance(i, dict)] if isinstance(item, list) else \
                [item] if isinstance(item, dict) else []
    return items


def _claude_reply(stdout: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        if item.get("type") == "result":
            result = item.get("result")
            return None if item.get("is_error") or not isinstance(result, str) else result
    return None


def _claude_error(stdout: str, stderr: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        if item.get("type") == "result" and item.get("is_error"):
            return str(item.get("result") or item.get("subtype") or "").strip() or None
    return _last_lines(stderr)


def _codex_reply(stdout: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        msg = item.get("item") if isinstance(item.get("item"), dict) else item.get("msg")
        if isinstance(msg, dict) and msg.get("type") in ("agent_message", "assistant_message"):
            text = msg.get("text") or msg.get("message")
            if isinstance(text, str):
                return text
    return None


def _codex_error(stdout: str, stderr: str) -> str | None:
    messages = []
    for item in _json_lines(stdout):
        kind = item.get("type")
        if kind == "error" and isinstance(item.get("message"), str):
            messages.append(item["message"])
        elif kind == "turn.failed" and isinstance(item.get("error"), dict):
            messages.append(str(item["error"].get("message", "")))
    if messages:
        return messages[-1].strip() or None
    return _last_lines(stderr)


def _cline_reply(stdout: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        if item.get("type") == "run_result":
            text = item.get("text")
            return text if item.get("finishReason") == "completed" and isinstance(text, str) else None
    return None


def _cline_error(stdout: str, stderr: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        event = item.get("event") if isinstance(item.get("event"), dict) else item
        text = event.get("error") or event.get("message") if event.get("type") in ("error", "run_result") else None
        if isinstance(text, dict):
            text = text.get("message")
        if text:
            return str(text).strip()
    # its stderr is mostly the AI SDK's deprecation warnings with stack frames: not the client's error
    lines = [line for line in stderr.splitlines()
             if line.strip() and not line.strip().startswith("at ") and "Warning" not in line]
    return _last_lines("\n".join(lines))


def _json_document(stdout: str) -> dict:
    """The pretty-printed JSON object a client prints last (Gemini CLI, OpenClaw), after any log lines."""
    lines = stdout.splitlines()
    for start in (i for i, line in enumerate(lines) if line.startswith("{")):
        try:
            item = json.loads("\n".join(lines[start:]))
        except ValueError:
            continue
        if isinstance(item, dict):
            return item
    return {}


def _gemini_reply(stdout: str) -> str | None:
    reply = _json_document(stdout).get("response")
    return reply if isinstance(reply, str) else None


def _gemini_error(stdout: str, stderr: str) -> str | None:
    error = _json_document(stdout).get("error")
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"]).strip()
    return _last_lines("\n".join(line for line in stderr.splitlines() if not line.startswith(("Warning:", "Ripgrep"))))


def _openclaw_reply(stdout: str) -> str | None:
    document = _json_document(stdout)
    final = document.get("final")
    return final if document.get("ok") is True and isinstance(final, str) else None


def _openclaw_error(stdout: str, stderr: str) -> str | None:
    document = _json_document(stdout)
    error = document.get("error") or document.get("message")
    if isinstance(error, dict):
        error = error.get("message")
    if error:
        return str(error).strip()
    return _last_lines("\n".join(line for line in (stderr + "\n" + stdout).splitlines()
                                 if "error" in line.lower() or "fail" in line.lower()))


def _opencode_reply(stdout: str) -> str | None:
    items = _json_lines(stdout)
    if any(item.get("type") == "error" for item in items):
        return None
    texts = [item["part"]["text"] for item in items if item.get("type") == "text" and isinstance(item.get("part"), dict)
             and isinstance(item["part"].get("text"), str)]
    return "".join(texts) or None


def _opencode_error(stdout: str, stderr: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        error = item.get("error") if item.get("type") == "error" else None
        if isinstance(error, dict):
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            message = str(data.get("message") or error.get("name") or "").strip()
            status = data.get("statusCode")
            return f"{status} {message}" if isinstance(status, int) and str(status) not in message else message or None
    return _last_lines(stderr)


def _qwen_error(stdout: str, stderr: str) -> str | None:
    for item in reversed(_json_lines(stdout)):
        if item.get("type") == "result" and item.get("is_error"):
            error = item.get("error") if isinstance(item.get("error"), dict) else {}
            return str(error.get("message") or item.get("result") or item.get("subtype") or "").strip() or None
    # stderr ends with the error as a JSON object printed over several lines; its message is the words
    found = re.findall(r'"message":\s*"((?:[^"\\]|\\.)*)"', stderr)
    return found[-1] if found else _last_lines(stderr)


def _last_lines(text: str, count: int = 3) -> str | None:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    # bash -i without a terminal says so on stderr; that is the shell's, not the client's
    lines = [line for line in lines if "no job control" not in line and "terminal process group" not in line
             and "inappropriate ioctl" not in line.lower()]
    return " | ".join(lines[-count:]) or None


LIVE_CLIENTS: tuple[LiveClient, ...] = (
    LiveClient("claude-code", "Claude Code", "claude", "@anthropic-ai/claude-code", "messages",
               lambda prompt: ["-p", prompt, "--output-format", "json", "--max-turns", "1"],
               _claude_reply, _claude_error),
    LiveClient("codex", "Codex", "codex", "@openai/codex", "responses",
               lambda prompt: ["exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", prompt],
               _codex_reply, _codex_error),
    LiveClient("cline", "Cline", "cline", "cline", "chat",
               lambda prompt: ["--json", prompt],
               _cline_reply, _cline_error),
    # --skip-trust: headless Gemini CLI refuses a folder the user has not trusted (it would not read ~/.gemini/.env)
    LiveClient("gemini-cli", "Gemini CLI", "gemini", "@google/gemini-cli", "gemini",
               lambda prompt: ["-p", prompt, "--output-format", "json", "--skip-trust"],
               _gemini_reply, _gemini_error),
    # `agent exec`: one embedded agent turn, no OpenClaw gateway daemon
    LiveClient("openclaw", "OpenClaw", "openclaw", "openclaw", "chat",
               lambda prompt: ["agent", "exec", "--json", prompt],
               _openclaw_reply, _openclaw_error),
    LiveClient("opencode", "OpenCode", "opencode", "opencode-ai", "chat",
               lambda prompt: ["run", "--format", "json", prompt],
               _opencode_reply, _opencode_error),
    # Qwen Code's json output is Claude Code's stream-json shape, as one array: its reply reads the same way
    LiveClient("qwen-code", "Qwen Code", "qwen", "@qwen-code/qwen-code", "chat",
               lambda prompt: ["--output-format", "json", prompt],
               _claude_reply, _qwen_error),
)
BY_NAME = {client.name: client for client in LIVE_CLIENTS}


@dataclass
class LiveRun:
    """One run of one client: how it was started, what it printed, how it ended."""

    client: LiveClient
    path: str | None  # the executable found; None: not installed
    argv: list[str] = field(default_factory=list)
    shell: str | None = None  # the shell it was started through (its start-up files ran first)
    exit_code: int | None = None
    timed_out: bool = False
    elapsed_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    env: dict[str, str] = field(default_factory=dict)  # the environment the client started with

    @property
    def installed(self) -> bool:
        return self.path is not None

    @property
    def reply(self) -> str | None:
        return self.client.reply_of(self.stdout) if self.exit_code == 0 else None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and bool((self.reply or "").strip())

    @property
    def error(self) -> str | None:
        """The client's own error text (masked), None when it answered."""
        if self.ok:
            return None
        text = self.client.error_of(self.stdout, self.stderr)
        return mask_unknown_keys(text[:600]) if text else None


# -- outcome --------------------------------------------------------------------------------------

REACHED = "reached"  # the gateway answered the client's request (ok, or an HTTP error it sent)
ANSWERED = "answered"  # reached, and the client printed an answer
UNREACHED = "unreached"  # the request never got an answer (refused, proxy, DNS, TLS, timeout)
NOT_INSTALLED = "not-installed"
REFUSED_TO_START = "refused-to-start"  # the client exited before sending anything (its own config)

_STATUS = re.compile(r"(?<![\d.])(4\d\d|5\d\d)(?![\d.])")
_UNREACHED = re.compile(r"ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|connection refused|"
                        r"error sending request|connect(ion)? error|Connection error|timed? ?out|"
                        r"tunnel|proxy|dns|certificate|Unable to connect|fetch failed|stream disconnected",
                        re.IGNORECASE)
_REFUSED = re.compile(r"legacy profile|no longer supported|Error loading config|invalid config|"
                      r"unknown variant|failed to parse|Invalid API key · Please run /login|not logged in",
                      re.IGNORECASE)


def outcome(run: LiveRun) -> tuple[str, int | None]:
    """(what happened, the HTTP status the client reports, if any), read from the client's own output."""
    if not run.installed:
        return NOT_INSTALLED, None
    if run.ok:
        return ANSWERED, 200
    text = run.error or ""
    if _REFUSED.search(text) and not _STATUS.search(text):
        return REFUSED_TO_START, None
    match = _STATUS.search(text)
    if match and not run.timed_out:
        return REACHED, int(match.group(1))
    if run.timed_out or _UNREACHED.search(text):
        return UNREACHED, None
    return UNREACHED if not match else REACHED, int(match.group(1)) if match else None


# -- starting -------------------------------------------------------------------------------------

def find(client: LiveClient, env: Mapping[str, str], extra_path: str | None = None) -> str | None:
    """The client's executable on the PATH of `env` (and `extra_path` first, e.g. a test's node_modules/.bin)."""
    path = env.get("PATH", os.defpath)
    if extra_path:
        path = extra_path + os.pathsep + path
    return shutil.which(client.command, path=path)


def shell_of(env: Mapping[str, str]) -> str | None:
    """The user's shell when it is one whose interactive start-up this runner knows (bash, zsh, fish)."""
    shell = env.get("SHELL", "")
    name = Path(shell).name
    if name in ("bash", "zsh", "fish") and shutil.which(shell):
        return shell
    return None


def _through_shell(shell: str, env_file: str, argv: list[str]) -> list[str]:
    """argv run by an interactive `shell` (start-up files first), which also saves its environment."""
    login = ["-l"] if system.current().macos else []  # macOS terminals start login shells
    if Path(shell).name == "fish":
        return [shell, *login, "-i", "-c", "env -0 > $argv[1]; and exec $argv[2..-1]", env_file, *argv]
    return [shell, *login, "-i", "-c", 'env -0 > "$0" && exec "$@"', env_file, *argv]


def run_client(client: LiveClient, env: Mapping[str, str], cwd: Path, *, prompt: str = PROMPT,
               timeout_s: float = DEFAULT_TIMEOUT_S, use_shell: bool = True, extra_path: str | None = None,
               extra_args: list[str] | None = None, stop: threading.Event | None = None) -> LiveRun:
    """Run `client` once with `prompt`; never raises for the client's failures (they are in the LiveRun).
    `stop` ends the run early when set (a test that has seen what it waited for)."""
    run_env = dict(env)
    if extra_path:
        run_env["PATH"] = extra_path + os.pathsep + run_env.get("PATH", os.defpath)
    path = find(client, run_env)
    run = LiveRun(client, path)
    if path is None:
        return run
    run.argv = [path, *client.args(prompt), *(extra_args or [])]
    shell = shell_of(run_env) if use_shell else None
    with tempfile.TemporaryDirectory(prefix="taotoken-live-") as scratch:
        env_file = os.path.join(scratch, "env")
        command = _through_shell(shell, env_file, run.argv) if shell else run.argv
        run.shell = shell
        # Output goes to files, not pipes: a client may leave a daemon behind (Cline's hub) that holds them open.
        with open(os.path.join(scratch, "out"), "w+b") as out, open(os.path.join(scratch, "err"), "w+b") as err:
            started = time.monotonic()
            # Its own session: an interactive shell must not take the terminal from taotoken, and a timeout ends
            # the client's children too. stdin is empty: a client that asks a question gets no answer, says so.
            proc = subprocess.Popen(command, cwd=cwd, env=run_env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True)
            if not _wait(proc, started + timeout_s, stop):
                run.timed_out = stop is None or not stop.is_set()
                _kill_group(proc)
                proc.wait()
            run.elapsed_s = time.monotonic() - started
            run.exit_code = proc.returncode
            run.stdout = _tail(out, _TAIL * 4)
            run.stderr = _tail(err, _TAIL)
        run.env = _read_env(env_file) if shell else dict(run_env)
    return run


def _wait(proc: subprocess.Popen, deadline: float, stop: threading.Event | None) -> bool:
    """Did the process end by itself before the deadline (or `stop`)?"""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or (stop is not None and stop.is_set()):
            return proc.poll() is not None
        try:
            proc.wait(timeout=min(left, 0.1 if stop is not None else left))
            return True
        except subprocess.TimeoutExpired:
            continue


def _tail(file, size: int) -> str:
    file.seek(0, os.SEEK_END)
    file.seek(max(0, file.tell() - size))
    return file.read().decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _read_env(env_file: str) -> dict[str, str]:
    try:
        data = Path(env_file).read_bytes()
    except OSError:
        return {}
    env = {}
    for entry in data.split(b"\0"):
        name, sep, value = entry.decode("utf-8", "replace").partition("=")
        if sep and name:
            env[name] = value
    return env


# -- what a run means, in words -------------------------------------------------------------------

@dataclass
class Verdict:
    """A LiveRun in words: `message` (one line), `details` (what it used, its own words); `state` and `status`
    from `outcome()`; `exit` the documented exit code class of what happened."""

    state: str
    status: int | None
    message: str
    details: list[str]
    exit: int


def describe(run: LiveRun, cwd: Path) -> Verdict:
    from taotoken_cli.core.base.exitcodes import Exit
    from taotoken_cli.core.base.i18n import _
    from taotoken_cli.core.clients.base import Machine
    from taotoken_cli.core.clients.used import used_by

    client = run.client
    state, status = outcome(run)
    if state == NOT_INSTALLED:
        return Verdict(state, None, _("{client} is not installed: {command}").format(
            client=client.label, command=client.install), [], Exit.CONFIG)
    used = used_by(client.name, Machine.of(run.env, cwd))
    details = [_("URL it used: {url}").format(url=used.url or _("(none configured)")),
               _("key it used: {key} ({source})").format(key=used.key, source=used.key_from) if used.key
               else _("key it used: none ({source})").format(source=used.key_from or _("none configured")),
               _("model it used: {model} ({source})").format(model=used.model, source=used.model_from) if used.model
               else _("model it used: the client's default")]
    if run.shell:
        details.append(_("started through {shell} -i (its start-up files ran first)").format(shell=run.shell))
    if state == ANSWERED:
        details.append(_("its answer: {text}").format(text=(run.reply or "").strip()[:80]))
        return Verdict(state, status, _("{client} reached the gateway and answered ({seconds:.1f} s)").format(
            client=client.label, seconds=run.elapsed_s), details, Exit.OK)
    if run.error:
        details.append(_("its own words: {text}").format(text=run.error))
    if state == REACHED:
        message = _("{client} reached the gateway, which answered HTTP {status}").format(client=client.label,
                                                                                        status=status)
        code = (Exit.AUTH if status in (401, 403) else Exit.NOT_FOUND if status == 404 else
                Exit.RATE_QUOTA if status == 429 else Exit.SERVER if status and status >= 500 else Exit.FAILURE)
    elif state == REFUSED_TO_START:
        message, code = _("{client} refused to start: it sent no request").format(client=client.label), Exit.CONFIG
    elif run.timed_out:
        message = _("{client} did not reach the gateway within {seconds} s").format(
            client=client.label, seconds=round(run.elapsed_s))
        code = Exit.NETWORK
    else:
        message = _("{client} did not reach the gateway (exit {code})").format(client=client.label,
                                                                              code=run.exit_code)
        code = Exit.NETWORK
    return Verdict(state, status, message, details, code)


def rerun_command(client: LiveClient) -> str:
    """The command that shows the client's whole output, as the user would type it."""
    import shlex

    return " ".join(shlex.quote(part) for part in [client.command, *client.args(PROMPT)])
