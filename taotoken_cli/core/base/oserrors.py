"""The operating system's and the resolver's errors in the user's language, chosen by errno, not by their words.

`OSError.strerror` is the C library's English ("No such file or directory", "Connection refused") whatever the
language; a Chinese sentence around it read as half English. Here the errno picks a translated text, and the
symbolic name (`ENOENT`, `ECONNREFUSED`) follows it in Chinese, so the error can still be looked up. In English
the OS's own words are kept exactly as they were. An errno not listed here keeps the OS's words in every
language.
"""

from __future__ import annotations

import errno
import socket

from taotoken_cli.core.base.i18n import N_, _, current

# errno -> the text (Linux's wording, the msgid); the symbolic name comes from errno.errorcode
_BY_ERRNO: dict[int, str] = {
    errno.ENOENT: N_("No such file or directory"),
    errno.EACCES: N_("Permission denied"),
    errno.EPERM: N_("Operation not permitted"),
    errno.EEXIST: N_("File exists"),
    errno.ENOTDIR: N_("Not a directory"),
    errno.EISDIR: N_("Is a directory"),
    errno.ENOTEMPTY: N_("Directory not empty"),
    errno.ENOSPC: N_("No space left on device"),
    errno.EROFS: N_("Read-only file system"),
    errno.EBUSY: N_("Device or resource busy"),
    errno.EMFILE: N_("Too many open files"),
    errno.ENAMETOOLONG: N_("File name too long"),
    errno.ELOOP: N_("Too many levels of symbolic links"),
    errno.EXDEV: N_("Invalid cross-device link"),
    errno.EPIPE: N_("Broken pipe"),
    errno.ECONNREFUSED: N_("Connection refused"),
    errno.ECONNRESET: N_("Connection reset by peer"),
    errno.ECONNABORTED: N_("Software caused connection abort"),
    errno.ETIMEDOUT: N_("Connection timed out"),
    errno.EHOSTUNREACH: N_("No route to host"),
    errno.ENETUNREACH: N_("Network is unreachable"),
    errno.EADDRINUSE: N_("Address already in use"),
    errno.EADDRNOTAVAIL: N_("Cannot assign requested address"),
}
# the resolver's (getaddrinfo) codes: socket.gaierror carries them as its errno; not every platform has all
_BY_EAI: dict[int, tuple[str, str]] = {
    code: (name, text) for name, text in (
        ("EAI_NONAME", N_("Name or service not known")),
        ("EAI_AGAIN", N_("Temporary failure in name resolution")),
        ("EAI_NODATA", N_("No address associated with hostname")),
        ("EAI_FAIL", N_("Non-recoverable failure in name resolution")),
    ) if (code := getattr(socket, name, None)) is not None
}


def os_error_text(exc: OSError) -> str:
    """What went wrong, in the user's language: "No such file or directory" (English: the OS's words as they
    came); "没有那个文件或目录（ENOENT）"."""
    if isinstance(exc, socket.gaierror) and exc.errno in _BY_EAI:
        name, text = _BY_EAI[exc.errno]
    elif exc.errno in _BY_ERRNO:
        name, text = errno.errorcode.get(exc.errno, ""), _BY_ERRNO[exc.errno]
    else:
        return exc.strerror or str(exc)
    if current() == "en":
        return exc.strerror or text
    # i18n: an operating-system error, translated, then its symbolic name: "没有那个文件或目录（ENOENT）"
    return _("{text} ({name})").format(text=_(text), name=name) if name else _(text)


def error_text(exc: BaseException) -> str:
    """`exc` as a person reads it: an OSError by its errno (`os_error_text`), anything else as it says itself."""
    return os_error_text(exc) if isinstance(exc, OSError) and exc.errno is not None else (str(exc) or
                                                                                         type(exc).__name__)
