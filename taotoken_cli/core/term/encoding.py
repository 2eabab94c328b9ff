"""No write crashes on any code page: what cannot be encoded for a stream becomes an ASCII lookalike, then `?`.

Windows writes a redirected stdout (`taotoken bench > out.txt`, a pipe) in the ANSI code page (1252 on an
English Windows, 936 on a Chinese one), not UTF-8; a C/POSIX locale gives ASCII. Every text taotoken writes
passes through `encodable` (core.term.output's RedactingStream): the histogram's bars, rules, status marks,
arrows and dashes become `#`, `-`, `OK`, `->`, `...`; anything else left is replaced. `prepare_std_streams` runs
at start: the process's streams replace instead of raising (Typer's and rich's writes too), and when the
display language cannot be written in the stream's code page at all (Chinese on cp1252), a pipe or file gets
UTF-8 instead: `???` cannot be read back, UTF-8 can. A console needs none of this (Python writes to it in UTF-16),
nor does a user's explicit PYTHONIOENCODING, which is kept.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Mapping

# Symbols taotoken prints, and what stands in for each where the code page lacks it.
FALLBACKS = str.maketrans({
    "■": "#", "█": "#", "▇": "#", "▆": "#", "▅": "=", "▄": "=", "▃": "-", "▂": "-", "▁": "_", "░": ".", "▒": ":",
    "▓": "#", "─": "-", "━": "=", "═": "=", "│": "|", "┃": "|", "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+",
    "┤": "+", "┬": "+", "┴": "+", "┼": "+", "✓": "OK", "✔": "OK", "✗": "x", "✘": "x", "•": "*", "·": ".",
    "→": "->", "←": "<-", "…": "...", "—": "-", "–": "-", "≤": "<=", "≥": ">=", "±": "+/-", "×": "x", "§": "S.",
    "“": '"', "”": '"', "‘": "'", "’": "'", "\u00a0": " ", "：": ": ", "，": ", ", "。": ". ", "（": " (", "）": ") ",
    "⠋": "-", "⠙": "\\", "⠹": "|", "⠸": "/", "⠼": "-", "⠴": "\\", "⠦": "|", "⠧": "/", "⠇": "-", "⠏": "\\",
})


def encodes(text: str, encoding: str | None) -> bool:
    try:
        text.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def encodable(text: str, encoding: str | None) -> str:
    """`text` as a stream in `encoding` can take it: unchanged when it encodes, else with the symbols above
    replaced by ASCII lookalikes and whatever still does not encode replaced by `?`."""
    if not encoding or text.isascii():
        return text
    try:
        text.encode(encoding)
        return text
    except LookupError:  # an encoding Python does not know: leave it to the stream
        return text
    except UnicodeEncodeError:
        pass
    return text.translate(FALLBACKS).encode(encoding, errors="replace").decode(encoding)


def _is_utf(encoding: str | None) -> bool:
    try:
        return codecs.lookup(encoding or "ascii").name.startswith("utf")
    except LookupError:
        return False


SAMPLES = {"zh": "中文：失败"}  # a text of each display language that is not ASCII


def prepare_std_streams(streams, lang: str, env: Mapping[str, str] | None = None) -> None:
    """See the module docstring. `streams`: the process's stdout and stderr (text streams with reconfigure)."""
    env = os.environ if env is None else env
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        encoding = getattr(stream, "encoding", None)
        sample = SAMPLES.get(lang)
        try:
            if sample and not encodes(sample, encoding) and not _is_utf(encoding) \
                    and not env.get("PYTHONIOENCODING") and not _isatty(stream):
                reconfigure(encoding="utf-8", errors="replace")
            else:
                reconfigure(errors="replace")
        except (ValueError, OSError):  # a closed or detached stream: nothing will be written to it
            continue


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
