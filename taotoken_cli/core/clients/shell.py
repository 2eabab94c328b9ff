"""Shell target: a sourceable env file (0600) in taotoken's config directory, and one marked line
sourcing it in ~/.bashrc / ~/.zshrc (fish: a conf.d file). The rc files never hold the key.

Per OS (core.platform.system): on macOS zsh is the default shell and Terminal starts login shells, so the line
goes to ~/.zshrc, and for bash to ~/.bash_profile (a login bash never reads ~/.bashrc); apps started from the
Dock read none of them and get the variables from launchd (core.clients.macshell). On Windows the user
environment and PowerShell's profiles (core.clients.winshell), and where a POSIX shell is in use (Git Bash: $SHELL
names it, or its ~/.bashrc or ~/.bash_profile exists) env.sh and its line as well: a Git Bash window opened from
one started before init (VS Code's terminal) has the old user environment, as a PowerShell window has, so it
needs its start-up line as PowerShell needs its profile's. `after_apply`/`before_undo`/`after_undo` keep what is
no file (the registry, launchd's session) in step with the files.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import envvars, macshell, winshell
from taotoken_cli.core.clients.base import (
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    environ,
    read_text,
    text_change,
)
from taotoken_cli.core.clients.proxy_rules import exemption_comment, is_loopback, proxied_labels
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.files.fsutil import newline_of, read_user_text, text_encoding
from taotoken_cli.core.platform import shells, system
from taotoken_cli.core.settings.origins import export_pattern, line_value, tilde

NAME = "shell"
LABEL = N_("shell start-up files")  # shown as _(LABEL)
MARKER = "# taotoken-env"  # identifies our line in rc files, so reruns replace instead of append


@dataclass(frozen=True)
class ShellPaths:
    env_sh: Path  # <config_dir>/env.sh (bash, zsh, sh)
    env_fish: Path  # <config_dir>/env.fish
    bashrc: Path
    zshrc: Path
    bash_profile: Path  # macOS: what a login bash (Terminal's) reads instead of ~/.bashrc
    fish_dir: Path  # ~/.config/fish
    fish_conf: Path  # ~/.config/fish/conf.d/taotoken.fish


def paths(machine: Machine) -> ShellPaths:
    env, home, config_dir = machine.env, machine.home, machine.config_dir
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return ShellPaths(config_dir / "env.sh", config_dir / "env.fish", home / ".bashrc", home / ".zshrc",
                      home / ".bash_profile", xdg / "fish", xdg / "fish" / "conf.d" / "taotoken.fish")


def start_up_files(where: ShellPaths) -> tuple[Path, ...]:
    """The start-up files the source line may go to on this OS, the default shell's first."""
    if system.current().macos:
        return (where.zshrc, where.bash_profile, where.bashrc)
    if system.current().windows:  # Git Bash starts login shells; when only ~/.bashrc is there, Git for Windows'
        return (where.bashrc, where.bash_profile)  # /etc/profile.d/bash_profile.sh writes a ~/.bash_profile loading it
    return (where.bashrc, where.zshrc)


def detect(machine: Machine) -> Detection:
    """Never detected: every machine has a shell, so writing to its start-up files is chosen explicitly."""
    return Detection(False, [])


def read(machine: Machine) -> ClientState:
    where = paths(machine)
    files = {"env_sh": read_text(where.env_sh), "env_fish": read_text(where.env_fish),
             "bashrc": read_text(where.bashrc), "zshrc": read_text(where.zshrc),
             "fish_conf": read_text(where.fish_conf)}
    return ClientState(NAME, detect(machine), files)


# What other programs read from the environment. Never a TAOTOKEN_* variable: taotoken itself reads its
# config.toml, and an exported TAOTOKEN_* value would override it, so a later `taotoken config set` would be
# shadowed in every shell that sourced this file.
def exports(triple: Triple) -> dict[str, str]:
    return {"OPENAI_BASE_URL": envvars.wanted("OPENAI_BASE_URL", triple), "OPENAI_API_KEY": triple.api_key}


_HEADER = ("# Written by `taotoken init`: the TaoToken base URL (root + /v1) and key for OpenAI SDK scripts and\n"
           "# Codex. It holds the API key: keep it private (mode 0600). Change it with `taotoken config set`,\n"
           "# which updates this file too (taotoken itself reads config.toml, not these variables).\n")


def loopback_host(base_url: str | None) -> str | None:
    """The gateway's host when it is on this machine (127.0.0.1, localhost, ::1), else None."""
    from urllib.parse import urlsplit

    host = (urlsplit(base_url or "").hostname or "").lower()
    return host if host and is_loopback(host) else None


# The clients started from a shell send even a loopback gateway's requests through its proxy (proxy_rules.
# proxied_clients: their real rules, checked against the real programs): for a gateway on this machine env.sh adds its
# host to NO_PROXY and no_proxy (both spellings, so a client reading either sees the same list), keeping the entries
# the shell had, once.
_EXEMPT_SH = ("taotoken_np=${{NO_PROXY:-${{no_proxy:-}}}}\n"
              'case ",$taotoken_np," in *,{host},*) ;; *) taotoken_np="${{taotoken_np:+$taotoken_np,}}{host}" ;; esac\n'
              'export NO_PROXY="$taotoken_np" no_proxy="$taotoken_np"\n'
              "unset taotoken_np\n")
_EXEMPT_FISH = ("# The gateway is on this machine: no proxy may carry requests to it. Your NO_PROXY entries are kept.\n"
                "set -l taotoken_np $NO_PROXY\n"
                'test -n "$taotoken_np"; or set taotoken_np $no_proxy\n'
                'contains -- {host} (string split , -- "$taotoken_np"); or set taotoken_np (string join , -- '
                "$taotoken_np {host})\n"
                'set -gx NO_PROXY "$taotoken_np"; set -gx no_proxy "$taotoken_np"\n')


def env_sh_text(triple: Triple) -> str:
    host = loopback_host(triple.base_url)
    return _HEADER + "".join(f"export {k}={shlex.quote(v)}\n" for k, v in exports(triple).items()) + (
        _exempt_sh(host) if host else "")


def _fish_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def env_fish_text(triple: Triple) -> str:
    host = loopback_host(triple.base_url)
    return _HEADER + "".join(f"set -gx {k} {_fish_quote(v)}\n" for k, v in exports(triple).items()) + (
        _EXEMPT_FISH.format(host=host) if host else "")


def _posix_path(path: Path) -> str:
    """`path` as one word in a POSIX shell; on Windows with forward slashes (C:/Users/…), which Git Bash, MSYS2 and
    Cygwin all open."""
    return shlex.quote(path.as_posix())


def source_line(env_file: Path) -> str:
    quoted = _posix_path(env_file)
    return f"[ -f {quoted} ] && . {quoted}  {MARKER} (added by taotoken init)"


def commented_out(text: str, marker: str = MARKER) -> bool:
    """Whether the user commented our marked line out (`# [ -f … ] && . …  # taotoken-env`): their choice stands."""
    return any(marker in line and line.lstrip().startswith("#") and not line.lstrip().startswith(marker)
               for line in text.splitlines())


def line_states(paths: Iterable[Path], marker: str = MARKER) -> dict[Path, bool]:
    """Each of `paths` that holds our marked line: True where it is in effect, False where the user commented it out
    (files that are missing or unreadable, or hold no marked line, are left out)."""
    states = {}
    for path in paths:
        try:
            text = read_user_text(path)
        except OSError:
            continue
        if commented_out(text, marker):
            states[path] = False
        elif marker in text:
            states[path] = True
    return states


def without_marked_lines(text: str, marker: str) -> str:
    """`text` without the lines that carry `marker` (what an uninstall takes back); every other byte kept."""
    return "".join(line for line in text.splitlines(keepends=True) if marker not in line)


def with_marked_line(text: str, line: str, marker: str = MARKER, *, before: re.Pattern[str] | None = None) -> str:
    """`text` with our marked line replaced, or added once: at the end, or `before` the first line that matches
    (zsh's fpath must be set before compinit runs); every other byte untouched: the line keeps its own ending
    (CRLF stays CRLF), an added line uses the file's, and a file that ended without a newline still does. A
    marked line the user commented out is left as it is (commented_out)."""
    if commented_out(text, marker):
        return text
    lines = text.splitlines(keepends=True)
    for index, existing in enumerate(lines):
        if marker in existing:
            lines[index] = line + existing[len(existing.rstrip("\r\n")):]
            return "".join(lines)
    at = next((index for index, existing in enumerate(lines) if before and before.search(existing)), None)
    if at is not None:
        lines.insert(at, line + newline_of(text))
        return "".join(lines)
    if not text:
        return line + "\n"
    newline = newline_of(text)
    if text.endswith("\n"):
        return text + line + newline
    return text + newline + line


def rc_files(where: ShellPaths, env: Mapping[str, str] | None = None) -> list[Path]:
    """The existing start-up files (~/.bashrc and ~/.zshrc; macOS: ~/.zshrc, ~/.bash_profile, ~/.bashrc); when
    none exists, the one for $SHELL (bash by default; zsh on macOS, and bash's ~/.bash_profile there)."""
    candidates = start_up_files(where)
    existing = [p for p in candidates if p.exists()]
    if existing:
        return existing
    shell = Path(environ(env).get("SHELL", "")).name or ("zsh" if system.current().macos else "bash")
    return [where.zshrc if shell == "zsh" else candidates[1] if system.current().macos else where.bashrc]


def wants_fish(where: ShellPaths, env: Mapping[str, str] | None = None) -> bool:
    """fish gets a conf.d file only when it is in use (its config dir exists or it is $SHELL)."""
    return where.fish_dir.is_dir() or Path(environ(env).get("SHELL", "")).name == "fish"


def posix_shell_in_use(where: ShellPaths, env: Mapping[str, str] | None = None) -> bool:
    """Whether the POSIX shells' start-up files are written here (core.platform.system: `posix_startup`): always,
    or on Windows where a POSIX shell is in use ($SHELL names one: taotoken runs from it; or its start-up file
    exists)."""
    if system.current().posix_startup == "always":
        return True
    return bool(environ(env).get("SHELL")) or any(path.exists() for path in start_up_files(where))


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    windows = system.current().windows
    where = paths(machine)
    if windows:  # the user environment and PowerShell's profiles: see core.clients.winshell
        result = winshell.plan(exports(triple), machine, with_marked_line, load_command(machine),
                               loopback_host(triple.base_url))
        if not posix_shell_in_use(where, machine.env):
            return result
    else:
        result = Plan()
    env = machine.env
    env_file = read_text(where.env_sh)
    result.add(text_change(env_file, env_sh_text(triple), target=NAME, secret=True,
                           summary=[_("the same variables for Git Bash and other POSIX shells (readable by you "
                                      "alone)") if windows else
                                    _("export OPENAI_BASE_URL (root + /v1) and OPENAI_API_KEY (mode 0600)"),
                                    *_exempt_summary(triple, machine)]))
    for rc in rc_files(where, env):
        current = read_text(rc)
        if commented_out(current.text or ""):
            result.notes.append(_("shell: the line that sources {env} is commented out in {path}: left so (new shells "
                                  "do not get the variables; remove the leading # to bring them back)").format(
                env=where.env_sh, path=rc))
            continue
        change = _rc_change(current, source_line(where.env_sh),
                            _("{command} (one marked line)").format(command=f"source {where.env_sh.as_posix()}"))
        if current.raw is not None and MARKER not in (current.text or ""):
            # A sync finding no line in a file that exists: the user removed it (init put it there); their choice
            change = replace(change, held_back=_(
                "{path} no longer has the line that sources {env}: left so (new shells lack the variables; "
                "`taotoken init --target shell` adds it back)").format(path=tilde(rc, machine.home),
                                                                       env=tilde(where.env_sh, machine.home)))
        result.add(change)
    if wants_fish(where, env):
        result.add(text_change(read_text(where.env_fish), env_fish_text(triple), target=NAME, secret=True,
                               summary=[_("the same variables for fish (mode 0600)")]))
        quoted = _fish_quote(where.env_fish.as_posix())
        conf = f"{MARKER} (added by taotoken init)\ntest -f {quoted}; and source {quoted}\n"
        result.add(text_change(read_text(where.fish_conf), conf, target=NAME,
                               summary=[f"source {where.env_fish.as_posix()}"]))
    if system.current().macos:
        macshell.add_to_plan(result, machine, where.env_sh, NAME)
    if windows:  # winshell's notes say how this window gets the variables
        return result
    result.details.append(_("shell: new shells get the variables; in this one run {command}").format(
        command="`. " + shlex.quote(str(where.env_sh)) + "`"))
    result.details.append(_("shell: OPENAI_BASE_URL/OPENAI_API_KEY send every OpenAI SDK script started from a new "
                          "shell to TaoToken (Codex prints a deprecation note for OPENAI_BASE_URL; it does not "
                          "affect the taotoken provider)"))
    return result


def _rc_change(file: ConfigFile, line: str, summary: str):
    return text_change(file, with_marked_line(file.text or "", line), target=NAME, summary=[summary])


@dataclass(frozen=True)
class DesktopState:
    """What an undo must know from before it ran: the Windows user environment the run replaced, whether the
    macOS LaunchAgent was there."""

    windows_before: Mapping[str, str | None] | None = None
    had_agent: bool = False


def after_apply(machine: Machine) -> str | None:
    """After a plan was applied: what is no file follows the files the shell target wrote (the Windows user
    environment from windows-env.json; launchd's session from env.sh while the LaunchAgent is there). An error
    message, or None."""
    if system.current().macos:
        return macshell.after_apply(machine, paths(machine).env_sh)
    return winshell.sync_registry(machine.config_dir, machine.env)


def before_undo(machine: Machine) -> DesktopState:
    return DesktopState(winshell.before_undo(machine.config_dir),
                        system.current().macos and macshell.before_undo(machine))


def after_undo(machine: Machine, state: DesktopState) -> str | None:
    if system.current().macos:
        return macshell.after_undo(machine, paths(machine).env_sh, state.had_agent)
    return winshell.after_undo(state.windows_before, machine.env)


def load_command(machine: Machine) -> str:
    """The command that gives this shell the variables now (new shells load them themselves), in its syntax:
    PowerShell and cmd on Windows as core.clients.winshell says; a POSIX shell (Git Bash too) sources env.sh."""
    syntax = shells.syntax(machine.env)
    if syntax in (shells.POWERSHELL, shells.CMD):
        return winshell.load_command(machine)
    where = paths(machine)
    if syntax == shells.FISH:
        return f"source {_posix_path(where.env_fish)}"
    return f". {_posix_path(where.env_sh)}"


# ------------------------------------------------------------------ start-up lines that outvote env.sh

OFF_MARKER = "# taotoken-off"  # ends a line init commented out (init --undo puts it back)
_LOGIN_BASH = (".bash_profile", ".bash_login", ".profile")  # a login bash reads the first of these, not .bashrc
_SOURCES_BASHRC = re.compile(r"^\s*(?:\.|source)\s+[\"']?(?:\$HOME|\$\{HOME\}|~)/\.bashrc\b")


@dataclass(frozen=True)
class Override:
    """A start-up line that gives new shells another value of `variable` than env.sh does."""

    path: Path
    line: int  # 1-based
    variable: str
    value: str | None  # None: only the shell can tell (a $reference, a command substitution)
    sourced: bool  # env.sh is sourced in this shell family (commenting the line out leaves env.sh's value)
    simple: bool  # one unindented assignment of a literal: commenting it out cannot change what else runs
    env_file: str = "env.sh"  # what the marked line in this shell loads (env.fish, env.ps1)

    def shown(self, home: Path) -> str:
        return f"{tilde(self.path, home)}:{self.line}"


def _simple_assignment(variable: str, fish: bool) -> re.Pattern[str]:
    """The one form init may comment out: unindented, a literal value, nothing after but a comment."""
    name = re.escape(variable)
    if fish:
        return re.compile(rf"^set\s+(?:-[a-zA-Z]+\s+)*{name}\s+('[^'$]*'|\"[^\"$`\\]*\"|[^\s'\"$`;&|()\\]+)\s*(#.*)?$")
    return re.compile(rf"^(?:export\s+)?{name}=('[^']*'|\"[^\"$`\\]*\"|[^\s'\"$`;&|()\\]*)\s*(#.*)?$")


@dataclass(frozen=True)
class _Family:
    """One shell's start-up files, in the order a new shell reads them, and the file whose marked line loads env.sh
    (env.fish, env.ps1)."""

    syntax: str  # shells.POSIX, shells.FISH, shells.POWERSHELL
    files: list[Path]
    marked: Path
    env_file: str  # what the marked line loads, as messages name it

    def sets(self, variable: str) -> re.Pattern[str]:
        if self.syntax == shells.POWERSHELL:
            return winshell.set_pattern(variable)
        return export_pattern(variable, fish=self.syntax == shells.FISH)

    def simple(self, variable: str) -> re.Pattern[str]:
        if self.syntax == shells.POWERSHELL:
            return winshell.simple_assignment(variable)
        return _simple_assignment(variable, self.syntax == shells.FISH)

    def value(self, line: str, variable: str) -> str | None:
        if self.syntax == shells.POWERSHELL:
            return winshell.line_value(line, variable)
        return line_value(line, fish=self.syntax == shells.FISH)


def _families(machine: Machine, planned: Mapping[Path, str] | None) -> list[_Family]:
    """The shells a new terminal may be: bash, zsh, fish; on Windows each PowerShell's profile too (a profile read
    before the user's own, Microsoft.PowerShell_profile.ps1, runs before the marked line there)."""
    where, home = paths(machine), machine.home
    conf_d = sorted(p for p in (where.fish_dir / "conf.d").glob("*.fish") if p != where.fish_conf)
    # where plan() puts bash's line: ~/.bash_profile on macOS; on Windows the start-up file that holds it
    bash_marked = where.bash_profile if system.current().macos else next(
        (path for path in start_up_files(where) if path.name.startswith(".bash")
         and MARKER in (_text(path, planned) or "")), where.bashrc)
    found = [_Family(shells.POSIX, [*(home / n for n in _LOGIN_BASH), where.bashrc], bash_marked, "env.sh"),
             _Family(shells.POSIX, [home / ".zshenv", home / ".zprofile", where.zshrc], where.zshrc, "env.sh"),
             _Family(shells.FISH, [*conf_d, where.fish_dir / "config.fish"], where.fish_conf, "env.fish")]
    if system.current().windows:
        found.extend(_Family(shells.POWERSHELL, [profile], profile, winshell.ENV_PS1)
                     for profile in winshell.profiles(machine))
    return found


def overrides(machine: Machine, variable: str, wanted: str,
              planned: Mapping[Path, str] | None = None) -> list[Override]:
    """The start-up lines that give a new shell another `variable` than env.sh's `wanted`: set after the line that
    sources env.sh, or in a file a new shell reads after it (a login bash's ~/.profile below the line that sources
    ~/.bashrc, fish's config.fish, a conf.d file named after taotoken.fish), or anywhere in a shell that does not
    source env.sh at all; on Windows the same for a PowerShell profile's line after the one that loads env.ps1.
    `planned`: file -> its text as this run leaves it (others are read from disk). A shell whose marked line the user
    commented out is left out: their choice stands."""
    found: list[Override] = []
    for family in _families(machine, planned):
        fish = family.syntax == shells.FISH
        text = _text(family.marked, planned)
        if text is not None and commented_out(text):
            continue
        sourced_at = (0 if text else None) if fish else next(
            (n for n, line in enumerate((text or "").splitlines(), 1) if MARKER in line), None)
        any_line, simple = family.sets(variable), family.simple(variable)
        for path in family.files:
            lines = (_text(path, planned) or "").splitlines()
            bashrc_at = next((n for n, line in enumerate(lines, 1) if _SOURCES_BASHRC.match(line)), None)
            for number, line in enumerate(lines, 1):
                if not any_line.search(line) or line.lstrip().startswith("#"):
                    continue
                if sourced_at is not None and not _after_env_sh(path, family.marked, number, sourced_at, bashrc_at):
                    continue
                value = family.value(line, variable)
                if value == wanted:
                    continue
                continued = number > 1 and lines[number - 2].rstrip().endswith(("\\", "&&", "||", "|", "`"))
                found.append(Override(path, number, variable, value, sourced_at is not None,
                                      bool(simple.match(line)) and not continued and value is not None,
                                      family.env_file))
    return found


def _after_env_sh(path: Path, marked: Path, number: int, sourced_at: int, bashrc_at: int | None) -> bool:
    if path == marked:
        return number > sourced_at
    if path.name in _LOGIN_BASH:  # read instead of ~/.bashrc by a login bash, which sources it where it says
        return bashrc_at is None or number > bashrc_at
    if path.suffix == ".fish":  # conf.d in name order, then config.fish
        return path.name == "config.fish" or path.name > marked.name
    return False  # ~/.zshenv and ~/.zprofile come before ~/.zshrc


def _text(path: Path, planned: Mapping[Path, str] | None) -> str | None:
    if planned is not None and path in planned:
        return planned[path]
    file = read_text(path)
    return file.text if file.error is None else None


def comment_out(text: str, numbers: set[int], why: str) -> str:
    """`text` with each line in `numbers` (1-based) commented out and marked; every other byte kept."""
    lines = text.splitlines(keepends=True)
    for number in numbers:
        line = lines[number - 1]
        body, ending = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")):]
        lines[number - 1] = f"# {body}  {OFF_MARKER}: {why}{ending}"
    return "".join(lines)


def repair_overrides(plan: Plan, triple: Triple, machine: Machine, *, fails: Mapping[str, str],
                     variables: tuple[str, ...] | None = None) -> None:
    """Start-up lines that give new shells another OPENAI_API_KEY / OPENAI_BASE_URL than env.sh (an old key exported
    below the line that loads it): where env.sh is loaded in that shell and the line is one plain assignment, the
    plan comments it out (marked; init --undo puts it back), in the text this plan already leaves there; any other
    is named by file and line, as a failure for the clients in `fails` (variable -> the client it stops).
    `variables`: only these of env.sh's (default: all)."""
    planned = {change.path: change.after.decode(text_encoding(change.after), errors="replace")
               for change in plan.changes if change.after is not None}
    off: dict[Path, dict[int, tuple[str, str]]] = {}  # file -> line -> (the env file it outvotes, what init says)
    for variable, wanted in exports(triple).items():
        if variables is not None and variable not in variables:
            continue
        for found in overrides(machine, variable, wanted, planned):
            where, shown = found.shown(machine.home), _shown(variable, found.value)
            if variable == "OPENAI_API_KEY" and found.value:
                plan.secrets.append(found.value)
            if found.sourced and found.simple:
                off.setdefault(found.path, {})[found.line] = (found.env_file, _(
                    "commented out {where} ({name}={value}): new shells would use it instead of the value {env} "
                    "sets; `taotoken init --undo` puts it back").format(where=where, name=variable, value=shown,
                                                                       env=found.env_file))
                continue
            how = (_("delete that line, or change it to the value {env} sets") if found.sourced else
                   _("delete that line and add --target shell ({env} then sets the value), or change it")).format(
                env=found.env_file)
            problem = _("{where} exports {name}={value}, which new shells use instead of TaoToken's; fix: {how}")
            problem = problem.format(where=where, name=variable, value=shown, how=how)
            if variable in fails:
                plan.broken.append(_("{client} started from a new terminal fails: {problem}").format(
                    client=fails[variable], problem=problem))
            else:
                plan.warnings.append(problem)
    for path, lines in off.items():
        text = planned.get(path)
        if text is None:
            current = read_text(path)
            text = current.text or ""
            plan.add(text_change(current, text, target=NAME, summary=[]))
        change = next(change for change in plan.changes if change.path == path)
        env_file = next(iter(lines.values()))[0]  # one file, one shell
        encoding = text_encoding(change.before or b"")  # a UTF-16 PowerShell profile stays UTF-16
        change.after = comment_out(text, set(lines), f"OPENAI_* from {env_file}").encode(encoding)
        said = [lines[number][1] for number in sorted(lines)]
        change.summary.extend(said)
        plan.repairs.extend(said)  # said in init's compact output too


def _shown(variable: str, value: str | None) -> str:
    if value is None:
        return "…"  # a $reference or a command substitution: only the shell can tell
    return mask_key(value) if variable == "OPENAI_API_KEY" else repr(value)


def _exempt_sh(host: str) -> str:
    return exemption_comment() + _EXEMPT_SH.format(host=host)


def _exempt_summary(triple: Triple, machine: Machine) -> list[str]:
    """The plan's line for env.sh's exemption, naming the clients it is for (proxy_rules.proxied_labels)."""
    host = loopback_host(triple.base_url)
    if not host:
        return []
    return [_("add {host} to NO_PROXY and no_proxy (kept: the entries your shell has): the gateway is on this "
              "machine, and these clients do not exempt loopback from a proxy: {clients}").format(
        host=host, clients=listed(proxied_labels(machine)))]


def exempted(text: str, host: str) -> bool:
    """Does an env.sh/env.fish/env.ps1 text add `host` to NO_PROXY (what env_sh_text, env_fish_text and
    winshell.env_ps1_text write for a gateway on this machine)?"""
    return f"*,{host},*" in text or f"contains -- {host} " in text or winshell.exempted(text, host)


def with_exemption(text: str, host: str, *, fish: bool = False, powershell: bool = False) -> str:
    """An env.sh/env.fish/env.ps1 written before the exemption, with it added at the end (every other byte kept)."""
    if powershell:
        return winshell.with_exemption(text, host)
    if exempted(text, host):
        return text
    return text + ("" if not text or text.endswith("\n") else "\n") + (
        _EXEMPT_FISH.format(host=host) if fish else _exempt_sh(host))
