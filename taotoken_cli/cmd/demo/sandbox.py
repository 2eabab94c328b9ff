"""The demo's temporary world: a HOME holding a user's real-looking client configs, and the steps' environment."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.i18n import ENV_LANG, choose
from taotoken_cli.core.base.masking import Redactor, mask_unknown_keys
from taotoken_cli.core.platform import permissions, system
from taotoken_cli.core.platform.system import sandbox_env
from taotoken_cli.core.term.layout import ENV_HOME_AS_TILDE

# Variables that would point a step at the real machine's configs, keys or proxies.
_SCRUB_PREFIXES = ("TAOTOKEN_", "OPENAI_", "ANTHROPIC_", "CLAUDE_", "CODEX_", "CLINE_", "CC_SWITCH", "XDG_",
                   "OPENCODE_", "QWEN_")
_SCRUB_NAMES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy", "socks_proxy",
                "ssl_cert_file", "requests_ca_bundle", "curl_ca_bundle", "pythonstartup", "force_color"}

# What the temporary HOME holds before `init` runs: a user's real-looking, hand-edited configs.
SEED_FILES = {
    ".claude/settings.json": (
        '{\n'
        '  "theme": "dark",\n'
        '  "permissions": {\n'
        '    "allow": ["Bash(git status)", "Bash(npm run test:*)"]\n'
        '  },\n'
        '  "includeCoAuthoredBy": false\n'
        '}\n'),
    ".codex/config.toml": (
        '# my Codex settings: keep this comment\n'
        'approval_policy = "on-request"\n'
        'sandbox_mode = "workspace-write"\n'
        '\n'
        '[mcp_servers.docs]\n'
        'command = "npx"\n'
        'args = ["-y", "@acme/docs-mcp"]\n'),
}
SEED_DIRS = (".cline",)


@dataclass
class FileShown:
    path: str  # as displayed (~/…)
    mode: str  # e.g. 0600; "" where the ACL decides who may read it (Windows), then `private` says
    state: str  # new | changed
    text: str  # masked content
    private: bool = False


class Sandbox:
    """A temporary directory holding HOME (with seeded client configs) and TMPDIR for the steps."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.tmp = root / "tmp"

    @classmethod
    def create(cls, parent: Path | None = None) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix="taotoken-demo-", dir=str(parent) if parent else None))
        box = cls(root)
        box.home.mkdir()
        box.tmp.mkdir()
        return box

    def seed(self) -> list[str]:
        for rel, text in SEED_FILES.items():
            path = self.home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for rel in SEED_DIRS:
            (self.home / rel).mkdir(parents=True, exist_ok=True)
        return ["~/" + rel for rel in (*SEED_FILES, *(d + "/" for d in SEED_DIRS))]

    def env(self, base: dict[str, str], lang: str | None = None) -> dict[str, str]:
        """The steps' environment: the caller's, minus everything naming keys, configs or proxies. The locale
        variables stay, so the steps speak the demo's language `lang`; where they would not (the language came
        from TAOTOKEN_LANG, scrubbed here, or from the real config file their HOME does not hold), it is passed
        on as TAOTOKEN_LANG."""
        env = {name: value for name, value in base.items()
               if not name.startswith(_SCRUB_PREFIXES) and name.lower() not in _SCRUB_NAMES}
        home = str(self.home)
        # Every per-user location of this OS (HOME, XDG_*, and on Windows USERPROFILE, APPDATA, LOCALAPPDATA):
        # taotoken's own config dir follows XDG_CONFIG_HOME on every OS, so the user's real one is never touched.
        env.update(sandbox_env(self.home))
        env.update({
            "USERPROFILE": home,
            "TMPDIR": str(self.tmp), "TEMP": str(self.tmp), "TMP": str(self.tmp),
            "NO_PROXY": "127.0.0.1,localhost,::1", "no_proxy": "127.0.0.1,localhost,::1",
            # Read existing bytecode, write none: the package directory stays untouched.
            "PYTHONDONTWRITEBYTECODE": "1",
            # The steps show this HOME as ~ themselves, before they wrap their lines (core.term.layout).
            ENV_HOME_AS_TILDE: "1",
            # The steps run the same taotoken_cli as this process, wherever it is installed.
            "PYTHONPATH": os.pathsep.join(p for p in (_package_parent(), base.get("PYTHONPATH", "")) if p),
        })
        if lang and choose(env) != lang:
            env[ENV_LANG] = lang
        env.setdefault("COLUMNS", str(shutil.get_terminal_size((100, 24)).columns))
        return env

    def display(self, text: str) -> str:
        """Show the temporary HOME as `~`, the way the user will see their own."""
        return text.replace(str(self.home), "~")

    def snapshot(self) -> dict[str, tuple[str, int]]:
        """Relative path -> (content hash, mode) of every file under HOME."""
        files: dict[str, tuple[str, int]] = {}
        for path in sorted(self.home.rglob("*")):
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                files[path.relative_to(self.home).as_posix()] = (digest, path.stat().st_mode & 0o777)
        return files

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _package_parent() -> str:
    import taotoken_cli

    return str(Path(taotoken_cli.__file__).resolve().parent.parent)


def changed_files(box: Sandbox, before: dict[str, tuple[str, int]],
                  redact: Redactor) -> tuple[list[FileShown], int]:
    after = box.snapshot()
    shown: list[FileShown] = []
    backups = 0
    for rel, (digest, mode) in after.items():
        if before.get(rel, (None,))[0] == digest:
            continue
        if "/backups/" in f"/{rel}":
            # the previous versions only: not the manifest, nor the run's own version kept for a merging undo
            backups += not (rel.endswith("/manifest.json") or rel.endswith(".after"))
            continue
        if rel.endswith(".lock"):  # init's lock file: empty, internal
            continue
        path = box.home / rel
        text = path.read_text(encoding="utf-8", errors="replace")
        acl = system.current().permissions == "acl"
        shown.append(FileShown("~/" + rel, "" if acl else f"{mode:04o}", "changed" if rel in before else "new",
                               box.display(mask_unknown_keys(redact(text))),
                               private=acl and not permissions.others_can_read(path)))
    return shown, backups
