#!/usr/bin/env python3
"""Generate the shell completions and the man page from the Typer app.

    python scripts/gen_docs.py          # rewrite taotoken_cli/share/ (completions, man pages)
    python scripts/gen_docs.py --check  # exit 1 when a committed file is stale (used by the tests)

The completions are static (the command tree is written into the script), so pressing Tab never
starts Python. Everything comes from the app's own commands, options and help texts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROG = "taotoken"
MAN_DATE = "2026"  # a fixed date keeps the generated page reproducible


FILE_METAVARS = {"FILE": "file", "PATH": "file", "DIR": "dir"}  # what an option with this metavar completes


@dataclass
class Opt:
    names: list[str]
    help: str
    takes_value: bool
    choices: list[str]
    metavar: str

    @property
    def completes(self) -> str:
        """"values" (of `choices`), "file", "dir", "free" (nothing to offer) or "flag"."""
        if not self.takes_value:
            return "flag"
        if self.choices:
            return "values"
        return FILE_METAVARS.get(self.metavar, "free")


@dataclass
class Arg:
    name: str
    values: list[str] = field(default_factory=list)
    variadic: bool = False  # takes every remaining word (route set KIND=MODEL...)
    # values that depend on the argument before: {that argument's word: the values} (config set lang -> en zh auto)
    after: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Cmd:
    path: list[str]
    help: str
    options: list[Opt]
    arguments: list[Arg]
    children: list[Cmd] = field(default_factory=list)

    @property
    def key(self) -> str:
        return " ".join(self.path)


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0].strip().replace("\\[", "[")  # rich's escaped [ as typed


def _values(param, ctx) -> list[str]:
    """What shell completion offers for `param`: its `autocompletion=` list or its choices (asked once, here)."""
    try:
        items = param.shell_complete(ctx, "")
    except Exception:  # noqa: BLE001 - a parameter without completion support offers nothing
        return []
    return [str(item.value) for item in items if getattr(item, "type", "plain") == "plain" and item.value]


def _values_after(param, ctx, previous, previous_values: list[str]) -> dict[str, list[str]]:
    """The values `param` offers once the argument before it holds each of its known values (those it offers
    with nothing before, it offers anyway and are left out)."""
    plain, found = _values(param, ctx), {}
    for word in previous_values:
        ctx.params = {previous.name: word}
        values = [v for v in _values(param, ctx) if v not in plain]
        if values:
            found[word] = values
    ctx.params = {}
    return found


def build_tree(lang: str = "en") -> Cmd:
    import typer.main

    # The help texts are translated when the app is imported: a fresh import of the package, in `lang` (the
    # completions and the English page are English whatever this process's locale; the Chinese page Chinese).
    for name in [name for name in sys.modules if name == "taotoken_cli" or name.startswith("taotoken_cli.")]:
        del sys.modules[name]
    from taotoken_cli.core.base import i18n
    from taotoken_cli.core.platform import installer

    i18n.use(lang)
    installer._current = installer.GENERIC  # the help names `pip install …`, not this machine's interpreter
    from taotoken_cli.app import app

    root = typer.main.get_command(app)

    # Duck-typed on purpose: newer typer vendors click privately, older ones use click itself.
    def walk(command, path: list[str]) -> Cmd:
        ctx = command.context_class(command, info_name=path[-1] if path else PROG)
        options, arguments = [], []
        for param in command.params:
            if param.param_type_name == "option":
                if param.hidden:
                    continue
                names = sorted(param.opts + param.secondary_opts, key=lambda n: (len(n) > 2, n))
                type_name = getattr(getattr(param, "type", None), "name", "value")
                metavar = "" if param.is_flag else (param.metavar or type_name.upper())
                options.append(Opt(names, _first_line(param.help), not param.is_flag, _values(param, ctx), metavar))
            elif param.param_type_name == "argument":
                before = [p for p in command.params if p.param_type_name == "argument"]
                before = before[:before.index(param)]
                after = _values_after(param, ctx, before[-1], arguments[-1].values) if before else {}
                arguments.append(Arg((param.metavar or param.name).upper(), _values(param, ctx), param.nargs == -1,
                                     after))
        options.append(Opt(["-h", "--help"], i18n._("Show this message and exit."), False, [], ""))
        node = Cmd(path, _first_line(command.help or command.short_help), options, arguments)
        if hasattr(command, "commands"):
            for name in sorted(command.commands):
                sub = command.commands[name]
                if not sub.hidden:
                    node.children.append(walk(sub, [*path, name]))
        return node

    tree = walk(root, [])
    i18n.use("en")
    return tree


def iter_cmds(node: Cmd):
    yield node
    for child in node.children:
        yield from iter_cmds(child)


def _slash(path: list[str]) -> str:
    return "/".join(["", *path]) if path else ""


def _words(values: list[str]) -> str:
    return " ".join(values)


def _arms(pairs: list[tuple[Cmd, list[str], str]], indent: str) -> list[str]:
    """`case` arms (bash and zsh): per command, one arm for all its patterns that lead to the same body."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for node, patterns, body in pairs:
        grouped.setdefault((_slash(node.path), body), []).extend(patterns)
    return [f"{indent}{'|'.join(patterns)}) {body} ;;" for (_, body), patterns in grouped.items()]


def _option_patterns(node: Cmd, opt: Opt) -> list[str]:
    return [f'"{_slash(node.path)}|{name}"' for name in opt.names]


def _walk_arms(tree: Cmd, var: str) -> list[str]:
    """Arms of the loop over the words typed so far: a subcommand extends ${var} (and restarts the count of
    positional arguments); an option that takes a value makes the loop skip that value."""
    lines = [f'            "{_slash(child.path)}") {var}="{_slash(child.path)}"; npos=0; continue ;;'
             for group in iter_cmds(tree) for child in group.children]
    lines += ["        esac", f'        case "${var}|$w" in']
    lines += _arms([(node, _option_patterns(node, opt), "skip=1")
                    for node in iter_cmds(tree) for opt in node.options if opt.takes_value], " " * 12)
    return lines


def _value_arms(tree: Cmd, complete: Callable[[Opt], str]) -> list[str]:
    """`case "$path|$prev"` arms completing the value of each option that takes one."""
    return _arms([(node, _option_patterns(node, opt), complete(opt) + "; return")
                  for node in iter_cmds(tree) for opt in node.options if opt.takes_value], " " * 8)


def _argument_arms(tree: Cmd, complete: Callable[[list[str]], str]) -> list[str]:
    """`case "$path|$npos"` arms completing positional arguments with known values."""
    return _arms([(node, [f'"{_slash(node.path)}|"*' if arg.variadic else f'"{_slash(node.path)}|{index}"'],
                   complete(arg.values) + "; return")
                  for node in iter_cmds(tree) for index, arg in enumerate(node.arguments) if arg.values], " " * 12)


def _dependent_arms(tree: Cmd, complete: Callable[[list[str]], str]) -> list[str]:
    """`case "$path|$npos"` arms for arguments whose values depend on the word before (`prev`)."""
    return _arms([(node, [f'"{_slash(node.path)}|{index}"'],
                   "; ".join(f"[[ $prev == {word} ]] && {{ {complete(values)}; return; }}"
                             for word, values in arg.after.items()))
                  for node in iter_cmds(tree) for index, arg in enumerate(node.arguments) if arg.after], " " * 12)


def _bash_value(opt: Opt) -> str:
    if opt.completes == "values":
        return f'_{PROG}_words "{_words(opt.choices)}"'
    if opt.completes in ("file", "dir"):
        return f"_{PROG}_files {'-d' if opt.completes == 'dir' else '-f'}"
    return ":"  # a value nobody can guess (a model, a number): offer nothing, not the options


def render_bash(tree: Cmd) -> str:
    lines = [
        f"# bash completion for {PROG} -- generated by scripts/gen_docs.py; do not edit by hand.",
        f"# Install: {PROG} completion --install bash (or source this file from ~/.bashrc)",
        f"_{PROG}_words() {{",
        '    COMPREPLY=($(compgen -W "$1" -- "$cur"))',
        '    [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null',
        "}",
        f"_{PROG}_files() {{",
        '    local IFS=$\'\\n\'',
        "    compopt -o filenames 2>/dev/null",
        '    COMPREPLY=($(compgen "$1" -- "$cur"))',
        "}",
        f"_{PROG}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" npos=0 skip=0 w i',
        "    COMPREPLY=()",
        '    # bash splits --option=value at "=" (and gamma:0.5 at ":"): complete the value of the option',
        '    if [[ $cur == "=" ]]; then cur=""; elif [[ $prev == "=" ]]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; fi',
        '    [[ $cur == ":" || $prev == ":" ]] && return',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        w="${COMP_WORDS[i]}"',
        '        if [[ $w == [=:] ]]; then skip=1; continue; fi',
        "        if ((skip)); then skip=0; continue; fi",
        '        case "$path/$w" in',
    ]
    lines += _walk_arms(tree, "path")
    lines += ["        esac", "        [[ $w == -* ]] || ((npos++))", "    done", '    case "$path|$prev" in']
    lines += _value_arms(tree, _bash_value)
    lines += ["    esac", '    if [[ $cur != -* ]]; then', '        case "$path|$npos" in']
    lines += _argument_arms(tree, lambda values: f'_{PROG}_words "{_words(values)}"')
    lines += _dependent_arms(tree, lambda values: f'_{PROG}_words "{_words(values)}"')
    lines += ["        esac", "    fi", '    local words=""', '    case "$path" in']
    for node in iter_cmds(tree):
        options = [n for o in node.options for n in o.names]
        children = [c.path[-1] for c in node.children]
        if children:  # subcommands first; options once a "-" is typed
            words = f'$([[ $cur == -* ]] && echo "{_words(options)}" || echo "{_words(children)}")'
        elif any(not arg.values for arg in node.arguments):  # a free argument: only options, on "-"
            words = f'$([[ $cur == -* ]] && echo "{_words(options)}")'
        else:
            words = _words(options)
        lines.append(f'        "{_slash(node.path)}") words="{words}" ;;')
    lines += [
        "    esac",
        f'    _{PROG}_words "$words"',
        "}",
        f"complete -F _{PROG} {PROG}",
        "",
    ]
    return "\n".join(lines)


def _zsh_escape(text: str) -> str:
    return text.replace("'", "'\\''").replace(":", "\\:").replace("[", "\\[").replace("]", "\\]")


def _zsh_words(values: list[str]) -> str:
    """compadd VALUES; values ending in "=" (route set cuda=) get no space after them."""
    return f"compadd{' -S ' + repr('') if any(v.endswith('=') for v in values) else ''} -- {_words(values)}"


def _zsh_value(opt: Opt) -> str:
    if opt.completes == "values":
        return _zsh_words(opt.choices)
    if opt.completes == "file":
        return "_files"
    if opt.completes == "dir":
        return "_files -/"
    return f"_message '{_zsh_escape(opt.metavar.lower() or 'value')}'"


def render_zsh(tree: Cmd) -> str:
    lines = [
        f"#compdef {PROG}",
        f"# zsh completion for {PROG} -- generated by scripts/gen_docs.py; do not edit by hand.",
        f"# Install: {PROG} completion --install zsh (or put this file, named _{PROG}, in a directory on $fpath).",
        f"_{PROG}() {{",
        "    local path_='' w i npos=0 skip=0 cur=${words[CURRENT]} prev=${words[CURRENT-1]}",
        "    if [[ $cur == --*=* ]]; then  # --option=value in one word: complete the value",
        "        prev=${cur%%=*}; compset -P '*='; cur=${cur#*=}",
        "    fi",
        "    for ((i = 2; i < CURRENT; i++)); do",
        "        w=${words[i]}",
        "        if ((skip)); then skip=0; continue; fi",
        '        case "$path_/$w" in',
    ]
    lines += _walk_arms(tree, "path_")
    lines += ["        esac", "        [[ $w == -* ]] || ((npos++))", "    done", '    case "$path_|$prev" in']
    lines += _value_arms(tree, _zsh_value)
    lines += ["    esac", "    if [[ $cur != -* ]]; then", '        case "$path_|$npos" in']
    lines += _argument_arms(tree, _zsh_words)
    lines += _dependent_arms(tree, _zsh_words)
    lines += ["        esac", "    fi", '    case "$path_" in']
    for node in iter_cmds(tree):
        key = _slash(node.path)
        cmds = " ".join(f"'{_zsh_escape(c.path[-1])}:{_zsh_escape(c.help)}'" for c in node.children)
        opts = " ".join(f"'{_zsh_escape(n)}:{_zsh_escape(o.help)}'" for o in node.options for n in o.names)
        body = [f"local -a opts=({opts})"]
        if cmds:
            body += [f"local -a cmds=({cmds})",
                     "if [[ $cur == -* ]]; then _describe -t options 'option' opts; "
                     "else _describe -t commands 'command' cmds; fi"]
        elif any(not arg.values for arg in node.arguments):
            body.append("[[ $cur == -* ]] && _describe -t options 'option' opts")
        else:
            body.append("_describe -t options 'option' opts")
        lines.append(f'        "{key}") {"; ".join(body)} ;;')
    lines += ["    esac", "}", f'_{PROG} "$@"', ""]
    return "\n".join(lines)


def _fish_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def render_fish(tree: Cmd) -> str:
    lines = [
        f"# fish completion for {PROG} -- generated by scripts/gen_docs.py; do not edit by hand.",
        f"# Install: {PROG} completion --install fish (or copy it to ~/.config/fish/completions/{PROG}.fish)",
        f"complete -c {PROG} -f",
        "",
        f"function __{PROG}_state --description 'the subcommand path typed so far (and the argument position)'",
        "    set -l tokens (commandline -opc)",
        "    set -l path ''",
        "    set -l npos 0",
        "    set -l skip 0",
        "    for t in $tokens[2..-1]",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch \"$path/$t\"",
    ]
    for group in [n for n in iter_cmds(tree) if n.children]:
        cases = " ".join(f"'{_slash(c.path)}'" for c in group.children)
        lines += [f"            case {cases}", '                set path "$path/$t"', "                set npos 0",
                  "                continue"]
    lines += ["        end", "        switch \"$path|$t\""]
    valued = [f"'{_slash(node.path)}|{name}'" for node in iter_cmds(tree) for opt in node.options if opt.takes_value
              for name in opt.names]
    lines += [f"            case {' '.join(valued)}", "                set skip 1", "                continue"]
    lines += ["        end", "        string match -q -- '-*' $t; or set npos (math $npos + 1)", "    end",
              "    if test \"$argv[1]\" = arg", '        echo "$path#$npos"', "    else", "        echo $path",
              "    end", "end", ""]
    for node in iter_cmds(tree):
        key = _slash(node.path)
        cond = f"-n 'test (__{PROG}_state) = \"{key}\"'"
        for child in node.children:
            lines.append(f"complete -c {PROG} {cond} -a {child.path[-1]} -d '{_fish_escape(child.help)}'")
        for index, arg in enumerate(node.arguments):
            if arg.values:
                where = f'string match -q -- "{key}#*"' if arg.variadic else f"test \"{key}#{index}\" ="
                lines.append(f"complete -c {PROG} -n '{where} (__{PROG}_state arg)' -a '{_words(arg.values)}'")
            for word, values in arg.after.items():
                lines.append(f"complete -c {PROG} -n 'test \"{key}#{index}\" = (__{PROG}_state arg); "
                             f"and test (commandline -opc)[-1] = {word}' -a '{_words(values)}'")
        for opt in node.options:
            flags = " ".join(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}" for n in opt.names)
            # -x: a value, and no file names for it; -F: file names after all
            extra = {"flag": "", "values": " -x", "file": " -r -F", "dir": " -x", "free": " -x"}[opt.completes]
            values = {"values": f"'{_words(opt.choices)}'", "dir": "'(__fish_complete_directories)'"}
            if opt.completes in values:  # values on a line of their own, without the option's description
                lines.append(f"complete -c {PROG} {cond} {flags} -x -a {values[opt.completes]}")
            lines.append(f"complete -c {PROG} {cond} {flags}{extra} -d '{_fish_escape(opt.help)}'")
    lines.append("")
    return "\n".join(lines)


# Non-ASCII as groff escapes that every output device has (no preconv needed, no warning under LANG=C);
# anything else as \[uXXXX], which groff renders on UTF-8 terminals.
ROFF_GLYPHS = {"—": "\\(em", "–": "\\(en", "…": "...", "‘": "\\(oq", "’": "\\(cq", "“": "\\(lq", "”": "\\(rq",
               "→": "\\(->", "←": "\\(<-", "•": "\\(bu", "×": "\\(mu", "±": "\\(+-", "≤": "\\(<=", "≥": "\\(>=",
               "·": "\\(pc", "\u00a0": "\\ "}


def _roff_glyph(char: str) -> str:
    if char.isascii():
        return char
    return ROFF_GLYPHS.get(char, f"\\[u{ord(char):04X}]")


def _roff(text: str) -> str:
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(_roff_glyph(c) for c in text)
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.split("\n"))


# The man page's own sections, per language (the options and commands come from the app, in that language).
MAN_TEXT = {
    "en": {
        "headings": {"NAME": "NAME", "SYNOPSIS": "SYNOPSIS", "DESCRIPTION": "DESCRIPTION", "OPTIONS": "OPTIONS",
                     "COMMANDS": "COMMANDS", "EXIT STATUS": "EXIT STATUS", "ENVIRONMENT": "ENVIRONMENT",
                     "FILES": "FILES", "EXAMPLES": "EXAMPLES", "SEE ALSO": "SEE ALSO"},
        "name": "set up and diagnose access to the TaoToken LLM gateway",
        "title": "User Commands",
        "description": "One base URL, one key, many models: taotoken stores the triple once and writes it, in each "
                       "client's own format and URL form, into Claude Code, Codex, Cline, Gemini CLI, OpenClaw, "
                       "OpenCode, Qwen Code, CC Switch and the shell; check, doctor, route and bench diagnose and "
                       "measure the gateway.",
        "see_also": "taotoken completion --install puts this page and the shell completion where man and your "
                    "shell look. The README, the reference in docs/ (one page per command; index: docs/README.md; "
                    "--json: docs/json.md) and docs/SECURITY.md in the taotoken source tree.",
        "EXIT STATUS": [
            ("0", "Success (doctor: nothing failed)."),
            ("1", "Failure: doctor found a problem, a route failed or mismatched, or another error."),
            ("2", "Usage error: bad option or unusable value (e.g. a key pasted with 'Bearer ')."),
            ("3", "Missing or unusable configuration (no key, a config file that does not parse)."),
            ("4", "Authentication: the key is missing at the gateway, rejected, or not allowed (401/403)."),
            ("5", "Not found: wrong URL layout, an HTML page instead of the API, an unknown model or no channel."),
            ("6", "Rate limit or exhausted quota/balance (429, 402)."),
            ("7", "Network or proxy: DNS, connection refused or reset, timeout, TLS."),
            ("8", "Bad response: a 2xx that is not a usable API answer (not JSON, no choices, broken stream)."),
            ("9", "Server error from the gateway or its upstream (5xx)."),
            ("130", "Interrupted (Ctrl-C); bench: 143 for SIGTERM."),
        ],
        "ENVIRONMENT": [
            ("TAOTOKEN_BASE_URL, TAOTOKEN_API_KEY, TAOTOKEN_MODEL", "The triple; override the config file."),
            ("TAOTOKEN_PROFILE", "The profile to use."),
            ("TAOTOKEN_CONFIG", "Path of the config file."),
            ("TAOTOKEN_LANG", "The language of messages: en, zh or auto (follow the locale). The config file's "
             "lang comes next, then the locale."),
            ("LANGUAGE, LC_ALL, LC_MESSAGES, LANG", "The locale, read in gettext's order when TAOTOKEN_LANG and the "
             "config file do not say: zh_CN (zh, zh_SG) gives Chinese, anything else English. --json is English "
             "whatever they say."),
            ("TAOTOKEN_ALLOW_HTTP", "Set to 1 to allow sending the key over plain http to a host that is not this "
             "machine (refused otherwise, with url.plain_http)."),
            ("TAOTOKEN_DEBUG", "Set to 1 to see the traceback of an internal error."),
            ("NO_COLOR", "Any value: no colour, whatever else says (https://no-color.org)."),
            ("CLICOLOR_FORCE, FORCE_COLOR", "A value other than 0: colour even when the output is not a terminal."),
            ("CLICOLOR", "0: no colour on a terminal."),
            ("TERM", "dumb: no colour and no cursor movement; bench and doctor print a plain progress line every "
             "few seconds instead of redrawing one."),
            ("COLUMNS", "The width output is fitted to (default: the terminal's, else 80)."),
            ("XDG_CONFIG_HOME", "taotoken's config directory is $XDG_CONFIG_HOME/taotoken when it is set, on every "
             "OS (default ~/.config/taotoken); fish's and PowerShell's start-up files are under it too."),
            ("XDG_DATA_HOME, BASH_COMPLETION_USER_DIR, ZDOTDIR", "Where completion --install puts the completions, "
             "the man pages (default ~/.local/share) and finds ~/.zshrc."),
            ("HOME, SHELL", "The home directory the client files are found in; the shell hints and completion "
             "--install are written for."),
            ("HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY", "Proxies used for gateway requests (both cases)."),
            ("SSL_CERT_FILE, SSL_CERT_DIR", "CA certificates for https requests, instead of the bundled ones."),
            ("OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY, "
             "ANTHROPIC_MODEL, ANTHROPIC_SMALL_FAST_MODEL, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_MODEL, "
             "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA", "What the clients read: doctor reports them and "
             "where they are exported; taotoken's own requests never use them."),
            ("CLAUDE_CONFIG_DIR, CODEX_HOME, CLINE_DIR, CLINE_DATA_DIR, CLINE_PROVIDER_SETTINGS_PATH, "
             "CLINE_MCP_SETTINGS_PATH, GEMINI_CLI_HOME, GEMINI_CLI_SYSTEM_SETTINGS_PATH, OPENCLAW_CONFIG_PATH, "
             "OPENCLAW_STATE_DIR, OPENCODE_CONFIG, OPENCODE_CONFIG_DIR, OPENCODE_CONFIG_CONTENT, "
             "OPENCODE_AUTH_CONTENT, OPENCODE_DISABLE_PROJECT_CONFIG, QWEN_HOME, QWEN_CODE_SYSTEM_SETTINGS_PATH, "
             "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
             "Where the clients keep their configuration; init and doctor honour them."),
            ("CUDA_VISIBLE_DEVICES, ONEAPI_DEVICE_SELECTOR, SYCL_DEVICE_FILTER", "Reported by route devices and "
             "doctor; CUDA_VISIBLE_DEVICES is checked against the GPUs the driver has."),
            ("OCL_ICD_VENDORS, OCL_ICD_FILENAMES, OPENCL_VENDOR_PATH", "Where OpenCL drivers are looked for."),
            ("TAOTOKEN_LIBCUDA", "Path of the CUDA driver library to probe when pycuda is not installed "
             "(default libcuda.so.1, nvcuda.dll on Windows)."),
            ("TAOTOKEN_BENCH_LOOP", "asyncio: bench's worker processes use asyncio's own loop even when uvloop "
             "(the fast extra) is installed."),
            ("TAOTOKEN_DESKTOP_ENV_FILE", "A JSON file that stands in for the environment of programs started from "
             "the desktop (the Windows user environment, launchd's session on macOS): init --target shell and "
             "init --undo write it instead, and doctor reads it. For sandboxes (the demo, tests): nothing outside "
             "the sandbox's directory changes."),
            ("TAOTOKEN_DOCUMENTS_DIR", "Windows: the Documents folder whose PowerShell profiles init --target shell "
             "and completion --install write, instead of Explorer's (which no other variable redirects). For "
             "sandboxes."),
            ("TAOTOKEN_HOME_AS_TILDE", "1: paths under $HOME are shown as ~/... before lines are wrapped (set by "
             "the demo for its steps, so its transcript wraps around the short form)."),
        ],
        "FILES": [
            ("~/.config/taotoken/config.toml", "Profiles, the triple and routing tables (mode 0600)."),
            ("~/.config/taotoken/env.sh", "Sourceable exports written by init --target shell (mode 0600)."),
            ("~/.config/taotoken/backups/", "Backups of every file init, config, doctor --fix or completion "
             "--install changed; init --undo."),
            ("~/.claude/settings.json, ~/.claude.json", "Claude Code (env block; onboarding flag)."),
            ("~/.codex/config.toml, ~/.codex/auth.json", "Codex CLI custom provider."),
            ("~/.cline/data/settings/providers.json", "Cline 4.x extension and CLI 3.x provider settings."),
            ("~/.gemini/.env, ~/.gemini/settings.json", "Gemini CLI (its base URL and key; auth type and model)."),
            ("~/.openclaw/openclaw.json", "OpenClaw (the provider taotoken and its default model)."),
            ("~/.config/opencode/opencode.jsonc, ~/.local/share/opencode/auth.json", "OpenCode (the provider "
             "taotoken and its model; the key, as opencode auth login stores it)."),
            ("~/.qwen/settings.json", "Qwen Code (a modelProviders entry, its key in the env block, the model)."),
            ("~/.cc-switch/", "CC Switch; providers are added through its ccswitch:// import link."),
            ("~/.claude.json, .mcp.json, [mcp_servers.*], cline_mcp_settings.json",
             "MCP servers: init --target mcp updates the gateway variables of those that point at TaoToken."),
            ("<project>/.env.taotoken", "Written by init --target project-env (mode 0600, git-excluded); doctor "
             "also reads .env and .env.local."),
            ("~/.local/share/bash-completion/completions/taotoken, ~/.local/share/zsh/site-functions/_taotoken, "
             "~/.config/fish/completions/taotoken.fish, ~/.local/share/man/man1/taotoken.1",
             "Written by completion --install (zsh: one marked fpath line in ~/.zshrc; PowerShell: one marked "
             "line in the profile); removed by completion --uninstall."),
        ],
        "EXAMPLES": [
            ("taotoken init --all --yes --key-stdin < key.txt", "Write the triple into every client."),
            ("taotoken check -q", "Silent on success; one line with the cause and fix on failure."),
            ("taotoken doctor -v", "Every check with details."),
            ('eval "$(taotoken route --export)"', "Export the model chosen for this machine."),
            ("taotoken bench -n 200 -c 20 --stream -m model-a -m model-b", "Compare two models."),
            ("taotoken completion --install", "Tab completion for your shell and this page, for this user."),
            ("taotoken demo", "Run everything offline against the built-in mock gateway."),
        ],
    },
    "zh": {
        "headings": {"NAME": "名称", "SYNOPSIS": "概要", "DESCRIPTION": "描述", "OPTIONS": "选项",
                     "COMMANDS": "命令", "EXIT STATUS": "退出码", "ENVIRONMENT": "环境变量", "FILES": "文件",
                     "EXAMPLES": "示例", "SEE ALSO": "另见"},
        "name": "配置并诊断 TaoToken 大模型网关的访问",
        "title": "用户命令",
        "description": "一个基础 URL、一个密钥、多个模型：taotoken 只保存一次这三个值，按每个客户端自己的格式和 URL "
                       "形式写入 Claude Code、Codex、Cline、Gemini CLI、OpenClaw、OpenCode、Qwen Code、CC Switch 和 "
                       "shell；check、doctor、route 和 bench "
                       "诊断并测量网关。",
        "see_also": "taotoken completion --install 把本手册页和 shell 补全放到 man 和 shell 查找的位置。"
                    "taotoken 源码中的 README、docs/ 中的参考文档（每个命令一页；索引：docs/README.md；"
                    "--json：docs/json.md）和 docs/SECURITY.md（英文）。",
        "EXIT STATUS": [
            ("0", "成功（doctor：没有失败项）。"),
            ("1", "失败：doctor 发现问题、路由失败或不一致，或其他错误。"),
            ("2", "用法错误：选项有误或值不可用（例如粘贴的密钥带有 'Bearer '）。"),
            ("3", "缺少配置或配置不可用（没有密钥、配置文件无法解析）。"),
            ("4", "认证：网关没有收到密钥、拒绝了密钥，或密钥无权访问（401/403）。"),
            ("5", "未找到：URL 结构错误、返回的是 HTML 页面而不是 API、模型不存在或没有可用渠道。"),
            ("6", "限流，或额度/余额用尽（429、402）。"),
            ("7", "网络或代理：DNS、连接被拒绝或重置、超时、TLS。"),
            ("8", "响应不可用：2xx 但不是可用的 API 应答（不是 JSON、没有 choices、流中断）。"),
            ("9", "网关或其上游的服务器错误（5xx）。"),
            ("130", "已中断（Ctrl-C）；bench 收到 SIGTERM 时为 143。"),
        ],
        "ENVIRONMENT": [
            ("TAOTOKEN_BASE_URL, TAOTOKEN_API_KEY, TAOTOKEN_MODEL", "三个值；优先于配置文件。"),
            ("TAOTOKEN_PROFILE", "要使用的配置档。"),
            ("TAOTOKEN_CONFIG", "配置文件的路径。"),
            ("TAOTOKEN_LANG", "消息的语言：en、zh 或 auto（跟随区域设置）。其次是配置文件中的 lang，再次是区域设置。"),
            ("LANGUAGE, LC_ALL, LC_MESSAGES, LANG", "区域设置，在 TAOTOKEN_LANG 和配置文件都没有指定时按 gettext "
             "的顺序读取：zh_CN（zh、zh_SG）为中文，其他为英文。--json 的输出始终是英文。"),
            ("TAOTOKEN_ALLOW_HTTP", "设为 1 时允许通过明文 http 把密钥发给本机以外的主机（否则拒绝，错误代码 "
             "url.plain_http）。"),
            ("TAOTOKEN_DEBUG", "设为 1 时显示内部错误的回溯信息。"),
            ("NO_COLOR", "任意值：不使用颜色，优先于其他一切设置（https://no-color.org）。"),
            ("CLICOLOR_FORCE, FORCE_COLOR", "0 以外的值：即使输出不是终端也使用颜色。"),
            ("CLICOLOR", "0：在终端上也不使用颜色。"),
            ("TERM", "dumb：不使用颜色，也不移动光标；bench 和 doctor 每隔几秒打印一行普通的进度，而不是重绘一行。"),
            ("COLUMNS", "输出适配的宽度（默认：终端的宽度，否则为 80）。"),
            ("XDG_CONFIG_HOME", "设置后，taotoken 的配置目录在任何操作系统上都是 $XDG_CONFIG_HOME/taotoken（默认 "
             "~/.config/taotoken）；fish 和 PowerShell 的启动文件也在其中。"),
            ("XDG_DATA_HOME, BASH_COMPLETION_USER_DIR, ZDOTDIR", "completion --install 放置补全脚本和手册页的位置"
             "（默认 ~/.local/share），以及 ~/.zshrc 所在的目录。"),
            ("HOME, SHELL", "查找客户端文件的主目录；提示和 completion --install 所针对的 shell。"),
            ("HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY", "请求网关时使用的代理（大小写均可）。"),
            ("SSL_CERT_FILE, SSL_CERT_DIR", "https 请求使用的 CA 证书，代替内置的证书。"),
            ("OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_API_KEY, "
             "ANTHROPIC_MODEL, ANTHROPIC_SMALL_FAST_MODEL, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_MODEL, "
             "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA", "客户端读取的变量：doctor 报告它们及其导出位置；"
             "taotoken 自己的请求从不使用它们。"),
            ("CLAUDE_CONFIG_DIR, CODEX_HOME, CLINE_DIR, CLINE_DATA_DIR, CLINE_PROVIDER_SETTINGS_PATH, "
             "CLINE_MCP_SETTINGS_PATH, GEMINI_CLI_HOME, GEMINI_CLI_SYSTEM_SETTINGS_PATH, OPENCLAW_CONFIG_PATH, "
             "OPENCLAW_STATE_DIR, OPENCODE_CONFIG, OPENCODE_CONFIG_DIR, OPENCODE_CONFIG_CONTENT, "
             "OPENCODE_AUTH_CONTENT, OPENCODE_DISABLE_PROJECT_CONFIG, QWEN_HOME, QWEN_CODE_SYSTEM_SETTINGS_PATH, "
             "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
             "客户端保存配置的位置；init 和 doctor 会遵循它们。"),
            ("CUDA_VISIBLE_DEVICES, ONEAPI_DEVICE_SELECTOR, SYCL_DEVICE_FILTER", "由 route devices 和 doctor 报告；"
             "CUDA_VISIBLE_DEVICES 会与驱动看到的 GPU 核对。"),
            ("OCL_ICD_VENDORS, OCL_ICD_FILENAMES, OPENCL_VENDOR_PATH", "查找 OpenCL 驱动的位置。"),
            ("TAOTOKEN_LIBCUDA", "未安装 pycuda 时要探测的 CUDA 驱动库的路径（默认 libcuda.so.1，Windows 上为 "
             "nvcuda.dll）。"),
            ("TAOTOKEN_BENCH_LOOP", "asyncio：即使安装了 uvloop（fast 扩展），bench 的工作进程也使用 asyncio "
             "自带的事件循环。"),
            ("TAOTOKEN_DESKTOP_ENV_FILE", "一个 JSON 文件，代替从桌面启动的程序所得到的环境变量（Windows 的用户"
             "环境变量，macOS 上 launchd 的会话）：init --target shell 和 init --undo 改写它，doctor 读取它。"
             "用于沙盒（demo、测试）：沙盒目录以外的一切都不会改变。"),
            ("TAOTOKEN_DOCUMENTS_DIR", "Windows：init --target shell 和 completion --install 写入其 PowerShell "
             "配置文件的“文档”文件夹，代替资源管理器的（没有别的变量能改变它）。用于沙盒。"),
            ("TAOTOKEN_HOME_AS_TILDE", "1：$HOME 下的路径先显示为 ~/...，再折行（demo 为其步骤设置，"
             "使记录按短形式折行）。"),
        ],
        "FILES": [
            ("~/.config/taotoken/config.toml", "配置档、三个值和路由表（权限 0600）。"),
            ("~/.config/taotoken/env.sh", "init --target shell 写入的可 source 的导出语句（权限 0600）。"),
            ("~/.config/taotoken/backups/", "init、config、doctor --fix 或 completion --install 改动过的每个文件的"
             "备份；init --undo。"),
            ("~/.claude/settings.json, ~/.claude.json", "Claude Code（env 块；引导完成标记）。"),
            ("~/.codex/config.toml, ~/.codex/auth.json", "Codex CLI 的自定义提供方。"),
            ("~/.cline/data/settings/providers.json", "Cline 4.x 扩展和 CLI 3.x 的提供方设置。"),
            ("~/.gemini/.env, ~/.gemini/settings.json", "Gemini CLI（Base URL 和密钥；认证方式和模型）。"),
            ("~/.openclaw/openclaw.json", "OpenClaw（提供方 taotoken 及其默认模型）。"),
            ("~/.config/opencode/opencode.jsonc, ~/.local/share/opencode/auth.json", "OpenCode（提供方 taotoken "
             "及其模型；密钥，与 opencode auth login 的存放方式相同）。"),
            ("~/.qwen/settings.json", "Qwen Code（modelProviders 条目、env 块中的密钥、模型）。"),
            ("~/.cc-switch/", "CC Switch；通过它的 ccswitch:// 导入链接添加提供方。"),
            ("~/.claude.json, .mcp.json, [mcp_servers.*], cline_mcp_settings.json",
             "MCP 服务器：init --target mcp 更新指向 TaoToken 的服务器的网关变量。"),
            ("<project>/.env.taotoken", "由 init --target project-env 写入（权限 0600，已排除出 git）；doctor "
             "还会读取 .env 和 .env.local。"),
            ("~/.local/share/bash-completion/completions/taotoken, ~/.local/share/zsh/site-functions/_taotoken, "
             "~/.config/fish/completions/taotoken.fish, ~/.local/share/man/man1/taotoken.1",
             "由 completion --install 写入（zsh：在 ~/.zshrc 中加一行带标记的 fpath；PowerShell：在配置文件中加"
             "一行带标记的语句）；由 completion --uninstall 删除。"),
        ],
        "EXAMPLES": [
            ("taotoken init --all --yes --key-stdin < key.txt", "把三个值写入每个客户端。"),
            ("taotoken check -q", "成功时不输出；失败时输出一行原因和修复方法。"),
            ("taotoken doctor -v", "列出每项检查及其详情。"),
            ('eval "$(taotoken route --export)"', "导出为本机选择的模型。"),
            ("taotoken bench -n 200 -c 20 --stream -m model-a -m model-b", "比较两个模型。"),
            ("taotoken completion --install", "为当前用户安装所用 shell 的 Tab 补全和本手册页。"),
            ("taotoken demo", "离线针对内置的模拟网关运行全部功能。"),
        ],
    },
}

ZH_WIDTH = 64  # groff 1.22 counts a CJK character as one column: the Chinese page is wrapped here, by display width


def _roff_zh(text: str, width: int = ZH_WIDTH) -> str:
    """Chinese text for the page: UTF-8 as it is (preconv reads the coding line), wrapped to `width` display columns
    by taotoken's layout rule, each line ended with `.br` (troff would join lines with a space, and measures a
    CJK character as one column, so it must not fill them itself)."""
    from taotoken_cli.core.term.layout import wrap

    lines = []
    for line in wrap(text, width):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        lines.append(("\\&" + line) if line.startswith((".", "'")) else line)
    return "\n.br\n".join(lines)


def render_man(tree: Cmd, lang: str = "en") -> str:
    from taotoken_cli import __version__

    text = MAN_TEXT[lang]
    heads = text["headings"]
    prose = _roff if lang == "en" else _roff_zh
    out = ([] if lang == "en" else ["'\\\" -*- coding: UTF-8 -*-"]) + [
        f'.TH TAOTOKEN 1 "{MAN_DATE}" "taotoken {__version__}" "{text["title"]}"',
    ]
    if lang != "en":
        out += [".ad l", ".nh"]  # lines are broken here (_roff_zh): no justifying, no hyphens
    out += [
        f".SH {heads['NAME']}",
        f"{PROG} \\- {prose(text['name']) if lang == 'en' else text['name']}",
        f".SH {heads['SYNOPSIS']}",
        f".B {PROG}",
        "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        f".SH {heads['DESCRIPTION']}",
        prose(tree.help),
        ".PP",
        prose(text["description"]),
        f".SH {heads['OPTIONS']}",
    ]
    for opt in tree.options:
        out += [".TP", "\\fB" + _roff(", ".join(opt.names)) + "\\fR", prose(opt.help)]
    out.append(f".SH {heads['COMMANDS']}")
    for node in iter_cmds(tree):
        if not node.path:
            continue
        usage = " ".join([PROG, *node.path]) + (" [OPTIONS]" if node.options else "")
        usage += "".join(f" {a.name}" for a in node.arguments)  # the metavar, as the help shows it
        usage += " COMMAND" if node.children else ""
        out += [".SS " + _roff(" ".join(node.path)), ".B " + _roff(usage), ".PP", prose(node.help or "")]
        for opt in node.options:
            if opt.names == ["-h", "--help"]:
                continue
            label = ", ".join(opt.names) + (f" {opt.metavar}" if opt.takes_value and opt.metavar else "")
            out += [".TP", "\\fB" + _roff(label) + "\\fR", prose(opt.help)]  # the help names the values
    for section in ("EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"):
        out.append(f".SH {heads[section]}")
        for term, body in text[section]:
            out += [".TP", "\\fB" + _roff(term) + "\\fR", prose(body)]
    out += [f".SH {heads['SEE ALSO']}", prose(text["see_also"]), ""]
    return "\n".join(out)


def _ps_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ps_list(values: list[str]) -> str:
    return "@(" + ", ".join(_ps_quote(v) for v in values) + ")"


def _ps_pairs(pairs: list[tuple[str, str]]) -> str:
    """An array of (text, tooltip) arrays; one pair gets the unary comma (`@(@(a, b))` would flatten to a, b)."""
    items = ", ".join(f"@({_ps_quote(a)}, {_ps_quote(b)})" for a, b in pairs)
    return f"@(,{items})" if len(pairs) == 1 else f"@({items})"


def render_powershell(tree: Cmd) -> str:
    """A native argument completer: the tables (commands, options, values) from the app, and one script block that
    finds the subcommand path typed so far, as the other shells' scripts do."""
    commands, options, valued, positional, after = [], [], [], [], []
    for node in iter_cmds(tree):
        key = _slash(node.path)
        commands.append(f"        {_ps_quote(key)} = "
                        + _ps_pairs([(c.path[-1], c.help or c.path[-1]) for c in node.children]))
        options.append(f"        {_ps_quote(key)} = "
                       + _ps_pairs([(n, o.help or n) for o in node.options for n in o.names]))
        for opt in node.options:
            if opt.takes_value:
                values = opt.choices if opt.completes == "values" else [f"<{opt.completes}>"]
                valued += [f"        {_ps_quote(key + '|' + n)} = {_ps_list(values)}" for n in opt.names]
        for index, arg in enumerate(node.arguments):
            if arg.values:
                positional.append(f"        {_ps_quote(key + '|' + ('*' if arg.variadic else str(index)))} = "
                                  f"{_ps_list(arg.values)}")
            for word, values in arg.after.items():
                after.append(f"        {_ps_quote(f'{key}|{index}|{word}')} = {_ps_list(values)}")

    def table(name: str, rows: list[str]) -> list[str]:
        # inside the script block: it runs at completion time, in whatever scope PowerShell gives it
        return [f"    ${name} = @{{", *rows, "    }"]

    lines = [
        f"# PowerShell completion for {PROG} -- generated by scripts/gen_docs.py; do not edit by hand.",
        f"# Install: {PROG} completion --install powershell (dot-sources this file from your $PROFILE)",
        f"Register-ArgumentCompleter -Native -CommandName {PROG}, {PROG}.exe -ScriptBlock {{",
        "    param($wordToComplete, $commandAst, $cursorPosition)",
        *table("commands", commands),
        *table("options", options),
        "    # an option's values; <file>, <dir>: PowerShell's own path completion; <free>: nothing to offer",
        *table("valued", valued),
        *table("arguments", positional),
        *table("after", after),
        "    $words = @($commandAst.CommandElements | Where-Object { $_.Extent.EndOffset -le $cursorPosition } |",
        "               ForEach-Object { $_.ToString() })",
        "    if ($wordToComplete -ne '' -and $words.Count -gt 1) { $words = $words[0..($words.Count - 2)] }",
        "    $path = ''; $npos = 0; $skip = $false; $prev = ''",
        "    foreach ($w in ($words | Select-Object -Skip 1)) {",
        "        $prev = $w",
        "        if ($skip) { $skip = $false; continue }",
        "        if ($commands.ContainsKey(\"$path/$w\")) { $path = \"$path/$w\"; $npos = 0; continue }",
        "        if ($valued.ContainsKey(\"$path|$w\")) { $skip = $true; continue }",
        "        if (-not $w.StartsWith('-')) { $npos++ }",
        "    }",
        "    $offer = { param($items, $kind)",
        "        foreach ($item in $items) {",
        "            $text, $tip = if ($item -is [array]) { $item[0], $item[1] } else { $item, $item }",
        "            if ($text -like \"$wordToComplete*\") {",
        "                [System.Management.Automation.CompletionResult]::new($text, $text, $kind, $tip)",
        "            }",
        "        }",
        "    }",
        "    if ($skip) {  # the value of the option before",
        "        $values = $valued[\"$path|$prev\"]",
        "        if ($values.Count -eq 1 -and $values[0] -like '<*>') { return }",
        "        return & $offer $values 'ParameterValue'",
        "    }",
        "    if ($wordToComplete.StartsWith('-')) { return & $offer $options[$path] 'ParameterName' }",
        "    $dependent = $after[\"$path|$npos|$prev\"]",
        "    if ($dependent) { return & $offer $dependent 'ParameterValue' }",
        "    $values = $arguments[\"$path|$npos\"]",
        "    if (-not $values) { $values = $arguments[\"$path|*\"] }",
        "    if ($values) { return & $offer $values 'ParameterValue' }",
        "    & $offer $commands[$path] 'Command'",
        "}",
        "",
    ]
    return "\n".join(lines)


SHARE = REPO / "taotoken_cli" / "share"  # package data: `taotoken completion` prints and installs these


def outputs() -> dict[Path, str]:
    tree = build_tree("en")
    files = {
        SHARE / "completions" / f"{PROG}.bash": render_bash(tree),
        SHARE / "completions" / f"_{PROG}": render_zsh(tree),
        SHARE / "completions" / f"{PROG}.fish": render_fish(tree),
        SHARE / "completions" / f"{PROG}.ps1": render_powershell(tree),
        SHARE / "man" / "man1" / f"{PROG}.1": render_man(tree, "en"),
    }
    files[SHARE / "man" / "zh_CN" / "man1" / f"{PROG}.1"] = render_man(build_tree("zh"), "zh")
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when a committed file is stale")
    args = parser.parse_args()
    stale = []
    for path, text in outputs().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        for path in stale:
            print(f"stale: {path.relative_to(REPO)} (run: python scripts/gen_docs.py)", file=sys.stderr)
        return 1
    for path in stale:
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
