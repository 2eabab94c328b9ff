"""Is a stream a terminal? On Windows `isatty()` is also True for NUL (`taotoken init < NUL` would prompt and wait),
so there a stream counts only when its handle is a console (GetConsoleMode succeeds)."""

from __future__ import annotations

from taotoken_cli.core.platform import system


def is_terminal(stream: object) -> bool:
    try:
        if not stream.isatty():  # type: ignore[attr-defined]
            return False
    except (AttributeError, ValueError):
        return False
    if not system.current().windows:
        return True
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return True  # a wrapper without a descriptor that says it is a terminal: believe it
    import ctypes
    import msvcrt

    try:
        handle = msvcrt.get_osfhandle(fd)  # type: ignore[attr-defined]
    except OSError:
        return False
    mode = ctypes.c_uint32()
    return bool(ctypes.WinDLL("kernel32").GetConsoleMode(ctypes.c_void_p(handle), ctypes.byref(mode)))  # type: ignore
