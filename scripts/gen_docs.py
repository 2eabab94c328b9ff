#!/usr/bin/env python3
"""Generate the shell completions and the man page from the Typer app.

    python scripts/gen_docs.py          # rewrite completions/ and man/
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
    return (text or "").strip().split("\n")[0].strip()


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


def build_tree() -> Cmd:
    import typer.main

    from taotoken_cli.core.base import i18n

    # The completions and the man page are English, whatever this process's locale: the help texts are
    # translated when the app is imported, so the language is set before.
    i18n.use("en")
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
        options.append(Opt(["-h", "--help"], "Show help and exit.", False, [], ""))
        node = Cmd(path, _first_line(command.help or command.short_help), options, arguments)
        if hasattr(command, "commands"):
            for name in sorted(command.commands):
                sub = command.commands[name]
                if not sub.hidden:
                    node.children.append(walk(sub, [*path, name]))
        return node

    return walk(root, [])


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
        f"# Install: source this file from ~/.bashrc, or copy it to ~/.local/share/bash-completion/completions/{PROG}",
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
        f"# Install: put this file (named _{PROG}) in a directory on $fpath, then run compinit.",
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
        f"# Install: copy to ~/.config/fish/completions/{PROG}.fish",
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


MAN_SECTIONS = {
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
        ("130", "Interrupted."),
    ],
    "ENVIRONMENT": [
        ("TAOTOKEN_BASE_URL, TAOTOKEN_API_KEY, TAOTOKEN_MODEL", "The triple; override the config file."),
        ("TAOTOKEN_PROFILE", "The profile to use."),
        ("TAOTOKEN_CONFIG", "Path of the config file."),
        ("TAOTOKEN_ALLOW_HTTP", "Set to 1 to allow sending the key over plain http to a host that is not this "
         "machine (refused otherwise, with url.plain_http)."),
        ("NO_COLOR", "Disable colour."),
        ("HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY", "Proxies used for gateway requests (both cases)."),
        ("CLAUDE_CONFIG_DIR, CODEX_HOME, CLINE_DIR, CLINE_DATA_DIR, CLINE_PROVIDER_SETTINGS_PATH, "
         "CLINE_MCP_SETTINGS_PATH", "Where the clients keep their configuration; init and doctor honour them."),
        ("CUDA_VISIBLE_DEVICES, ONEAPI_DEVICE_SELECTOR", "Reported by route devices and doctor; "
         "CUDA_VISIBLE_DEVICES is checked against the GPUs the driver has."),
        ("TAOTOKEN_LIBCUDA", "Path of the CUDA driver library to probe when pycuda is not installed "
         "(default libcuda.so.1, nvcuda.dll on Windows)."),
    ],
    "FILES": [
        ("~/.config/taotoken/config.toml", "Profiles, the triple and routing tables (mode 0600)."),
        ("~/.config/taotoken/env.sh", "Sourceable exports written by init --target shell (mode 0600)."),
        ("~/.config/taotoken/backups/", "Backups of every file init or doctor --fix changed; init --undo."),
        ("~/.claude/settings.json, ~/.claude.json", "Claude Code (env block; onboarding flag)."),
        ("~/.codex/config.toml, ~/.codex/auth.json", "Codex CLI custom provider."),
        ("~/.cline/data/settings/providers.json", "Cline 4.x extension and CLI 3.x provider settings."),
        ("~/.cc-switch/", "CC Switch; providers are added through its ccswitch:// import link."),
        ("~/.claude.json, .mcp.json, [mcp_servers.*], cline_mcp_settings.json",
         "MCP servers: init --target mcp updates the gateway variables of those that point at TaoToken."),
        ("<project>/.env.taotoken", "Written by init --target project-env (mode 0600, git-excluded); doctor also "
         "reads .env and .env.local."),
    ],
    "EXAMPLES": [
        ("taotoken init --all --yes --key-stdin < key.txt", "Write the triple into every client."),
        ("taotoken check -q", "Silent on success; one line with the cause and fix on failure."),
        ("taotoken doctor -v", "Every check with details."),
        ('eval "$(taotoken route --export)"', "Export the model chosen for this machine."),
        ("taotoken bench -n 200 -c 20 --stream -m model-a -m model-b", "Compare two models."),
        ("taotoken demo", "Run everything offline against the built-in mock gateway."),
    ],
}


def render_man(tree: Cmd) -> str:
    from taotoken_cli import __version__

    out = [
        f'.TH TAOTOKEN 1 "{MAN_DATE}" "taotoken {__version__}" "User Commands"',
        ".SH NAME",
        f"{PROG} \\- set up and diagnose access to the TaoToken LLM gateway",
        ".SH SYNOPSIS",
        f".B {PROG}",
        "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION",
        _roff(tree.help),
        ".PP",
        _roff("One base URL, one key, many models: taotoken stores the triple once and writes it, in each "
              "client's own format and URL form, into Claude Code, Codex, Cline, CC Switch and the shell; "
              "check, doctor, route and bench diagnose and measure the gateway."),
        ".SH OPTIONS",
    ]
    for opt in tree.options:
        out += [".TP", "\\fB" + _roff(", ".join(opt.names)) + "\\fR", _roff(opt.help)]
    out.append(".SH COMMANDS")
    for node in iter_cmds(tree):
        if not node.path:
            continue
        usage = " ".join([PROG, *node.path]) + (" [OPTIONS]" if node.options else "")
        usage += "".join(f" {a.name}" for a in node.arguments)  # the metavar, as the help shows it
        usage += " COMMAND" if node.children else ""
        out += [".SS " + _roff(" ".join(node.path)), ".B " + _roff(usage), ".PP", _roff(node.help or "")]
        for opt in node.options:
            if opt.names == ["-h", "--help"]:
                continue
            label = ", ".join(opt.names) + (f" {opt.metavar}" if opt.takes_value and opt.metavar else "")
            out += [".TP", "\\fB" + _roff(label) + "\\fR", _roff(opt.help)]  # the help names the values
    for section, rows in MAN_SECTIONS.items():
        out.append(f".SH {section}")
        for term, text in rows:
            out += [".TP", "\\fB" + _roff(term) + "\\fR", _roff(text)]
    out += [".SH SEE ALSO", "The README, the reference in docs/ (one page per command; index: docs/README.md) "
            "and docs/SECURITY.md in the taotoken source tree.", ""]
    return "\n".join(out)


def outputs() -> dict[Path, str]:
    tree = build_tree()
    return {
        REPO / "completions" / f"{PROG}.bash": render_bash(tree),
        REPO / "completions" / f"_{PROG}": render_zsh(tree),
        REPO / "completions" / f"{PROG}.fish": render_fish(tree),
        REPO / "man" / f"{PROG}.1": render_man(tree),
    }


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
