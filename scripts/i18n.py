#!/usr/bin/env python3
"""The Chinese catalogues: extract the English messages, keep the translations, compile them — with Babel.

    python scripts/i18n.py extract   # i18n/taotoken.pot and i18n/messages.pot from the sources
    python scripts/i18n.py update    # new messages into the zh_CN shards (empty), gone ones out
    python scripts/i18n.py compile   # taotoken_cli/locales/zh_CN/LC_MESSAGES/{taotoken,messages}.mo, and the
                                     # words a line never breaks inside (taotoken_cli/core/term/zh_words.py)
    python scripts/i18n.py check     # exit 1 when a message lacks a translation, a translation's
                                     # placeholders differ, a Chinese sentence has ASCII punctuation, or a
                                     # compiled file is stale (the tests run it)

Two domains: `taotoken` (every message of taotoken_cli, marked with _(), N_() and ngettext()) and `messages`
(Typer's own words — "Usage:", "Options", "Commands" — which it looks up in gettext's default domain).
The translations live in shards, one .po file per part of the code (i18n/zh_CN/<shard>.po), so that several
people can translate at once; `compile` joins them. A message belongs to the shard of the first file
that uses it (SHARDS below); moving a translation to another shard is harmless.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "taotoken_cli"
I18N = REPO / "i18n"
LOCALE = "zh_CN"
MO_DIR = PACKAGE / "locales" / LOCALE / "LC_MESSAGES"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
# Click's and Typer's own keywords (they import gettext's functions under these names).
THIRD_PARTY_KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2)}
# Where a message's first use is -> its shard (the first matching prefix wins); anything else: "core".
SHARDS = (
    ("taotoken_cli/core/clients/live.py", "live"), ("taotoken_cli/core/clients/used.py", "live"),
    ("taotoken_cli/cmd/doctor/live.py", "live"), ("taotoken_cli/cmd/check/client.py", "live"),
    ("taotoken_cli/cmd/doctor/checks/clients/", "doctor_clients"),
    ("taotoken_cli/cmd/doctor/checks/mcp.py", "doctor_clients"),
    ("taotoken_cli/cmd/doctor/checks/project_env.py", "doctor_clients"),
    ("taotoken_cli/cmd/doctor/checks/gateway_vars.py", "doctor_clients"),
    ("taotoken_cli/cmd/doctor/", "doctor"),
    ("taotoken_cli/core/diagnosis/", "diagnosis"), ("taotoken_cli/cmd/explain/", "diagnosis"),
    ("taotoken_cli/cmd/check/", "diagnosis"), ("taotoken_cli/cmd/models/", "diagnosis"),
    ("taotoken_cli/core/term/guard.py", "diagnosis"),
    ("taotoken_cli/core/base/errors.py", "diagnosis"),
    ("taotoken_cli/cmd/bench/", "bench"),
    ("taotoken_cli/cmd/route/", "commands"), ("taotoken_cli/core/devices/routing.py", "commands"),
    ("taotoken_cli/core/devices/probe.py", "commands"),
    ("taotoken_cli/core/devices/selection.py", "commands"), ("taotoken_cli/core/devices/backends.py", "commands"),
    ("taotoken_cli/cmd/options.py", "commands"), ("taotoken_cli/cmd/complete.py", "commands"),
    ("taotoken_cli/cmd/wide_help.py", "commands"), ("taotoken_cli/app.py", "commands"),
    ("taotoken_cli/core/term/spinner.py", "commands"),
    ("taotoken_cli/cmd/mock/", "mock_demo"), ("taotoken_cli/cmd/demo/", "mock_demo"),
)
GLOSSARY = REPO / "docs" / "glossary.md"
WORDS_FILE = I18N / LOCALE / "words.txt"
WORDS_MODULE = PACKAGE / "core" / "term" / "zh_words.py"
PLACEHOLDER = re.compile(r"\{[^{}]*\}|%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrif%]")


def _babel():
    try:
        from babel.messages import catalog, extract, mofile, pofile
    except ImportError:
        sys.exit("Babel is needed: pip install -e '.[test]'")
    return catalog, extract, mofile, pofile


# -- extract --------------------------------------------------------------------------------------------

def extract_package():
    """The `taotoken` catalogue as it should be now: every marked message in taotoken_cli, with locations."""
    catalog, extract, _mofile, _pofile = _babel()
    result = catalog.Catalog(project="taotoken", domain="taotoken")
    for path in sorted(PACKAGE.rglob("*.py")):
        with path.open("rb") as handle:
            for lineno, message, comments, _context in extract.extract("python", handle, KEYWORDS,
                                                                       comment_tags=("i18n:",)):
                result.add(message, locations=[(path.relative_to(REPO).as_posix(), lineno)],
                           auto_comments=comments, flags=("python-brace-format",) if _braces(message) else ())
    return result


def extract_third_party():
    """The `messages` catalogue: Typer's own messages (help headings; Typer carries its own Click)."""
    import typer

    catalog, extract, _mofile, _pofile = _babel()
    result = catalog.Catalog(project="taotoken", domain="messages")
    for package in (typer,):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            with path.open("rb") as handle:
                for lineno, message, _comments, _context in extract.extract("python", handle,
                                                                           THIRD_PARTY_KEYWORDS):
                    result.add(message, locations=[(f"{package.__name__}/{path.relative_to(root).as_posix()}",
                                                    lineno)])
    return result


def _braces(message) -> bool:
    texts = message if isinstance(message, tuple) else (message,)
    return any("{" in text for text in texts)


def pot_text(cat) -> bytes:
    _catalog, _extract, _mofile, pofile = _babel()
    buffer = io.BytesIO()
    pofile.write_po(buffer, cat, omit_header=True, sort_output=True, width=0)
    return buffer.getvalue()


# -- shards ---------------------------------------------------------------------------------------------

def shard_of(location: str) -> str:
    if not location.startswith("taotoken_cli/"):
        return "click"
    return next((shard for prefix, shard in SHARDS if location.startswith(prefix)), "core")


def read_shards() -> dict[str, object]:
    _catalog, _extract, _mofile, pofile = _babel()
    shards = {}
    for path in sorted((I18N / LOCALE).glob("*.po")):
        with path.open("rb") as handle:
            shards[path.stem] = pofile.read_po(handle, locale=LOCALE)
    return shards


def write_shard(name: str, cat) -> None:
    _catalog, _extract, _mofile, pofile = _babel()
    path = I18N / LOCALE / f"{name}.po"
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    pofile.write_po(buffer, cat, omit_header=True, sort_output=True, width=0, include_previous=False)
    path.write_bytes(buffer.getvalue())


def update(only: str | None = None) -> None:
    """Every extracted message is in exactly one shard, its first user's: new ones join it untranslated, moved ones
    move with their translation. With `only`, just that shard's file is rewritten and nothing moves (several people
    can update their own shards at once)."""
    catalog, _extract, _mofile, _pofile = _babel()
    shards = read_shards()
    wanted = {**{m.id: (m, shard_of(m.locations[0][0])) for m in extract_package() if m.id},
              **{m.id: (m, "click") for m in extract_third_party() if m.id}}
    have: dict[object, str] = {}
    for name, cat in shards.items():
        for message in [m for m in cat if m.id]:
            if message.id not in have:
                have[message.id] = name
                continue
            # Translated in two shards at once (people worked in parallel): keep the one in the shard where the
            # message belongs now, the translation kept from whichever shard has one.
            home = wanted[message.id][1] if message.id in wanted else have[message.id]
            keep, drop = (name, have[message.id]) if home == name else (have[message.id], name)
            kept, dropped = shards[keep].get(message.id), shards[drop].get(message.id)
            if not kept.string and dropped.string:
                kept.string = dropped.string
            shards[drop].delete(message.id)
            have[message.id] = keep
    for cat in shards.values():  # drop what the code no longer says
        for message in [m for m in cat if m.id and m.id not in wanted]:
            cat.delete(message.id)
    for msgid, (message, shard) in wanted.items():
        home = have.get(msgid, shard)
        if only is None and home != shard:
            # The code that says it moved (or its first user is now elsewhere): the message follows, translated.
            moved = shards[home].get(msgid)
            shards[home].delete(msgid)
            target = shards.setdefault(shard, catalog.Catalog(locale=LOCALE, domain="taotoken"))
            target.add(msgid, moved.string, flags=moved.flags)
            home = shard
        cat = shards.setdefault(home, catalog.Catalog(locale=LOCALE, domain="taotoken"))
        existing = cat.get(msgid)
        if existing is None:
            cat.add(msgid, "" if not isinstance(msgid, tuple) else ("", ""), locations=message.locations,
                    flags=message.flags, auto_comments=message.auto_comments)
        else:
            existing.locations = message.locations
            existing.auto_comments = message.auto_comments
    for name, cat in shards.items():
        if only is None or name == only:
            write_shard(name, cat)


# -- compile and check ----------------------------------------------------------------------------------

def joined(domain: str):
    """One catalogue of `domain` from the shards (the `click` shard is the `messages` domain)."""
    catalog, _extract, _mofile, _pofile = _babel()
    from datetime import datetime, timezone

    fixed = datetime(2026, 1, 1, tzinfo=timezone.utc)  # a reproducible header: the same shards give the same file
    result = catalog.Catalog(locale=LOCALE, domain=domain, project="taotoken", version="", creation_date=fixed,
                             revision_date=fixed)
    for name, cat in read_shards().items():
        if (name == "click") != (domain == "messages"):
            continue
        for message in cat:
            if message.id and message.string and "fuzzy" not in message.flags:
                result.add(message.id, message.string)
    return result


def mo_bytes(domain: str) -> bytes:
    _catalog, _extract, mofile, _pofile = _babel()
    buffer = io.BytesIO()
    mofile.write_mo(buffer, joined(domain), use_fuzzy=False)
    return buffer.getvalue()


def compile_all() -> None:
    MO_DIR.mkdir(parents=True, exist_ok=True)
    for domain in ("taotoken", "messages"):
        (MO_DIR / f"{domain}.mo").write_bytes(mo_bytes(domain))
    WORDS_MODULE.write_text(words_module(), encoding="utf-8")


# -- the words a line never breaks inside -----------------------------------------------------------------

_CJK = re.compile(r"[\u4e00-\u9fff]")


def glossary_terms() -> set[str]:
    """The Chinese terms of docs/glossary.md (the 简体中文 column of its tables), each alternative on its own:
    `API 密钥`, `配置档`, `OpenAI 风格的客户端`, `首 token 延迟` (a parenthesised gloss is a term of its own)."""
    terms = set()
    for row in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if not row.startswith("|") or row.startswith("|---") or len(cells) < 2 or cells[1] == "简体中文":
            continue
        for part in re.split(r",\s*|，|\s/\s|/(?=\S)|、|[（）()]", cells[1]):
            part = part.strip().strip("`").rstrip("：:+ ")
            if len(part) >= 2 and (_CJK.search(part) or " " in part) and not re.search(r"\b[A-Z]\b", part):
                terms.add(part)
    return terms


def words_module() -> str:
    lines = [line.strip() for line in WORDS_FILE.read_text(encoding="utf-8").splitlines()]
    words = sorted(glossary_terms() | {line for line in lines if line and not line.startswith("#")})
    import unicodedata

    def columns(text: str) -> int:  # ruff counts display columns: a Chinese character takes two
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

    body, row = [], "   "
    for word in words:
        item = f' "{word}",'
        if columns(row) + columns(item) > 116:
            body.append(row)
            row = "   "
        row += item
    body.append(row)
    return ('"""Chinese words a wrapped line never breaks inside (taotoken_cli.core.term.layout): the terms of '
            'docs/glossary.md\nand the common words of i18n/zh_CN/words.txt. Written by `python scripts/i18n.py '
            'compile`; do not edit."""\n\n'
            "WORDS = frozenset({\n" + "\n".join(body) + "\n})\n")


def placeholders(text: str) -> list[str]:
    return sorted(PLACEHOLDER.findall(text))


def problems(only: str | None = None) -> list[str]:
    """What is wrong with the catalogues now (empty: complete, consistent and compiled); with `only`, what is
    wrong in that shard (its messages: where they are, or would be, kept)."""
    found = []
    shards = read_shards()
    translated = {}
    for name, cat in shards.items():
        for message in cat:
            if not message.id:
                continue
            if message.id in translated:
                found.append(f"{name}.po: {message.id!r} is also in {translated[message.id][0]}.po")
            translated[message.id] = (name, message)
    # Typer's own words are checked only where the shard knows them: another Typer version may word them
    # differently, and an untranslated one of those is shown in English, never broken.
    third_party = {m.id for m in extract_third_party() if m.id and m.id in translated}
    for source in (extract_package(), [m for m in extract_third_party() if m.id in third_party]):
        for message in source:
            if not message.id:
                continue
            entry = translated.get(message.id)
            home = entry[0] if entry else shard_of(message.locations[0][0])
            if only is not None and home != only:
                continue
            if entry is None:
                found.append(f"not in any shard (run: python scripts/i18n.py update): {message.id!r}")
                continue
            name, done = entry
            strings = done.string if isinstance(done.string, tuple) else (done.string,)
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            if not all(strings) or "fuzzy" in done.flags:
                found.append(f"{name}.po: no translation for {message.id!r}")
                continue
            for text in strings:
                if placeholders(text) != placeholders(ids[-1]) and placeholders(text) != placeholders(ids[0]):
                    found.append(f"{name}.po: placeholders differ in {message.id!r}: {placeholders(ids[0])} vs "
                                 f"{placeholders(text)}")
                found += [f"{name}.po: {problem} in {text!r}" for problem in punctuation_problems(text)]
    for domain in ("taotoken", "messages") if only is None else ():
        path = MO_DIR / f"{domain}.mo"
        if not path.exists() or _entries(path.read_bytes()) != _entries(mo_bytes(domain)):
            found.append(f"{path.relative_to(REPO)} is stale (run: python scripts/i18n.py compile)")
    if only is None and (not WORDS_MODULE.exists() or WORDS_MODULE.read_text(encoding="utf-8") != words_module()):
        found.append(f"{WORDS_MODULE.relative_to(REPO)} is stale (run: python scripts/i18n.py compile)")
    return found


_WIDE = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"  # CJK: ideographs, their punctuation, full-width forms
_IDEOGRAPH = r"[\u4e00-\u9fff]"
_ASCII_MARK_IN_CJK = re.compile(rf"(?<={_WIDE}) *[;:,] *(?={_WIDE})")
_STRAY_SPACE = re.compile(rf"(?<={_IDEOGRAPH}) +(?={_IDEOGRAPH})")
_NOT_PROSE = re.compile(r"\{[^{}]*\}|`[^`]*`")  # placeholders and `code` keep their own characters


def punctuation_problems(text: str) -> list[str]:
    """What makes a Chinese sentence read as half English: an ASCII `;` `:` `,` between two CJK characters
    (`网关; 密钥` → `网关；密钥`), a space between two Chinese words (`来自 文件`)."""
    prose = _NOT_PROSE.sub(lambda m: "\0" * len(m.group(0)), text)
    problems = [f"ASCII {m.group(0).strip()!r} between Chinese characters (use {_FULL_WIDTH[m.group(0).strip()]})"
                for m in _ASCII_MARK_IN_CJK.finditer(prose)]
    problems += ["a space between two Chinese words" for _m in _STRAY_SPACE.finditer(prose)]
    return problems


_FULL_WIDTH = {";": "'；'", ":": "'：'", ",": "'，' or '、'"}


def _entries(mo: bytes) -> dict:
    """What a compiled catalogue translates (its header — dates, Babel's version — left out)."""
    import gettext

    catalogue = gettext.GNUTranslations(io.BytesIO(mo))._catalog  # type: ignore[attr-defined]
    return {key: value for key, value in catalogue.items() if key != ""}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("extract", "update", "compile", "check"))
    parser.add_argument("--shard", help="update/check: only this shard (e.g. doctor)")
    args = parser.parse_args(argv)
    if args.action == "extract":
        (I18N).mkdir(exist_ok=True)
        (I18N / "taotoken.pot").write_bytes(pot_text(extract_package()))
        (I18N / "messages.pot").write_bytes(pot_text(extract_third_party()))
    elif args.action == "update":
        update(args.shard)
    elif args.action == "compile":
        compile_all()
    else:
        found = problems(args.shard)
        for line in found:
            print(line)
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
