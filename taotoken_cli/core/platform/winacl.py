"""Windows: a file readable by its user alone, through the Win32 security API (ctypes, no dependency).

On Windows a file's mode is always 0o666 and says nothing about who may read it; its ACL does. `make_private`
replaces the file's DACL with a protected one (inherited entries dropped) granting full control to the current
user and to SYSTEM (which backups and the indexer run as), nobody else. `readers_besides_user` lists the other
accounts an allowing entry lets read it (what doctor reports), or None when the ACL cannot be read.
Only imported on Windows (core.platform.permissions decides).
"""

from __future__ import annotations

import ctypes
from ctypes import wintypes
from pathlib import Path

_advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)  # type: ignore[attr-defined]
_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]

SE_FILE_OBJECT = 1
OWNER_SECURITY_INFORMATION = 0x1
DACL_SECURITY_INFORMATION = 0x4
PROTECTED_DACL_SECURITY_INFORMATION = 0x80000000
TOKEN_QUERY = 0x8
TOKEN_USER_CLASS = 1
ACL_REVISION = 2
ACL_SIZE_INFORMATION_CLASS = 2
ACCESS_ALLOWED_ACE_TYPE = 0
INHERIT_ONLY_ACE = 0x08
FILE_ALL_ACCESS = 0x1F01FF
# What lets an account read the content: FILE_READ_DATA, GENERIC_READ, GENERIC_ALL.
READ_BITS = 0x1 | 0x80000000 | 0x10000000
SYSTEM_SID, ADMINISTRATORS_SID = "S-1-5-18", "S-1-5-32-544"  # trusted as OpenSSH trusts them for private keys

_LPVOID = ctypes.c_void_p
_DWORD = wintypes.DWORD


class _AceHeader(ctypes.Structure):
    _fields_ = [("AceType", ctypes.c_ubyte), ("AceFlags", ctypes.c_ubyte), ("AceSize", wintypes.WORD)]


class _AclSizeInformation(ctypes.Structure):
    _fields_ = [("AceCount", _DWORD), ("AclBytesInUse", _DWORD), ("AclBytesFree", _DWORD)]


def _fn(lib, name: str, restype, *argtypes):
    function = getattr(lib, name)
    function.restype, function.argtypes = restype, list(argtypes)
    return function


_OpenProcessToken = _fn(_advapi32, "OpenProcessToken", wintypes.BOOL, wintypes.HANDLE, _DWORD,
                        ctypes.POINTER(wintypes.HANDLE))
_GetTokenInformation = _fn(_advapi32, "GetTokenInformation", wintypes.BOOL, wintypes.HANDLE, ctypes.c_int, _LPVOID,
                           _DWORD, ctypes.POINTER(_DWORD))
_GetLengthSid = _fn(_advapi32, "GetLengthSid", _DWORD, _LPVOID)
_ConvertSidToStringSidW = _fn(_advapi32, "ConvertSidToStringSidW", wintypes.BOOL, _LPVOID,
                              ctypes.POINTER(wintypes.LPWSTR))
_ConvertStringSidToSidW = _fn(_advapi32, "ConvertStringSidToSidW", wintypes.BOOL, wintypes.LPCWSTR,
                              ctypes.POINTER(_LPVOID))
_InitializeAcl = _fn(_advapi32, "InitializeAcl", wintypes.BOOL, _LPVOID, _DWORD, _DWORD)
_AddAccessAllowedAce = _fn(_advapi32, "AddAccessAllowedAce", wintypes.BOOL, _LPVOID, _DWORD, _DWORD, _LPVOID)
_SetNamedSecurityInfoW = _fn(_advapi32, "SetNamedSecurityInfoW", _DWORD, wintypes.LPWSTR, ctypes.c_int, _DWORD,
                             _LPVOID, _LPVOID, _LPVOID, _LPVOID)
_GetNamedSecurityInfoW = _fn(_advapi32, "GetNamedSecurityInfoW", _DWORD, wintypes.LPCWSTR, ctypes.c_int, _DWORD,
                             ctypes.POINTER(_LPVOID), ctypes.POINTER(_LPVOID), ctypes.POINTER(_LPVOID),
                             ctypes.POINTER(_LPVOID), ctypes.POINTER(_LPVOID))
_GetAclInformation = _fn(_advapi32, "GetAclInformation", wintypes.BOOL, _LPVOID, _LPVOID, _DWORD, ctypes.c_int)
_GetAce = _fn(_advapi32, "GetAce", wintypes.BOOL, _LPVOID, _DWORD, ctypes.POINTER(_LPVOID))
_GetCurrentProcess = _fn(_kernel32, "GetCurrentProcess", wintypes.HANDLE)
_CloseHandle = _fn(_kernel32, "CloseHandle", wintypes.BOOL, wintypes.HANDLE)
_LocalFree = _fn(_kernel32, "LocalFree", _LPVOID, _LPVOID)


def _check(ok: int, what: str) -> None:
    if not ok:
        error = ctypes.get_last_error()  # type: ignore[attr-defined]
        raise OSError(error, f"{what} failed: {ctypes.FormatError(error).strip()}")  # type: ignore[attr-defined]


def _sid_string(psid: int | None) -> str:
    text = wintypes.LPWSTR()
    _check(_ConvertSidToStringSidW(psid, ctypes.byref(text)), "ConvertSidToStringSidW")
    try:
        return text.value or ""
    finally:
        _LocalFree(ctypes.cast(text, _LPVOID))


def _user_sid() -> bytes:
    """The current user's SID, as bytes."""
    token = wintypes.HANDLE()
    _check(_OpenProcessToken(_GetCurrentProcess(), TOKEN_QUERY, ctypes.byref(token)), "OpenProcessToken")
    try:
        size = _DWORD()
        _GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(size.value)
        _check(_GetTokenInformation(token, TOKEN_USER_CLASS, buffer, size, ctypes.byref(size)), "GetTokenInformation")
    finally:
        _CloseHandle(token)
    psid = ctypes.cast(buffer, ctypes.POINTER(_LPVOID))[0]  # TOKEN_USER starts with the SID's pointer
    return ctypes.string_at(psid, _GetLengthSid(psid))


def user_sid_string() -> str:
    sid = ctypes.create_string_buffer(_user_sid())
    return _sid_string(ctypes.addressof(sid))


def make_private(path: Path) -> None:
    """Only the current user (and SYSTEM) may open `path`; inherited entries are cut off. Raises OSError."""
    user = _user_sid()
    system = _LPVOID()
    _check(_ConvertStringSidToSidW(SYSTEM_SID, ctypes.byref(system)), "ConvertStringSidToSidW")
    try:
        system_len = _GetLengthSid(system)
        # ACL header (8) + per entry: ACE header (4) + mask (4) + SID, each entry DWORD-aligned
        size = 8 + sum((8 + n + 3) & ~3 for n in (len(user), system_len))
        acl = ctypes.create_string_buffer(size)
        user_buffer = ctypes.create_string_buffer(user)
        _check(_InitializeAcl(acl, size, ACL_REVISION), "InitializeAcl")
        _check(_AddAccessAllowedAce(acl, ACL_REVISION, FILE_ALL_ACCESS, user_buffer), "AddAccessAllowedAce")
        _check(_AddAccessAllowedAce(acl, ACL_REVISION, FILE_ALL_ACCESS, system), "AddAccessAllowedAce")
        error = _SetNamedSecurityInfoW(str(path), SE_FILE_OBJECT,
                                       DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                                       None, None, acl, None)
    finally:
        _LocalFree(system)
    if error:
        raise OSError(error, f"SetNamedSecurityInfoW failed: {ctypes.FormatError(error).strip()}")  # type: ignore


def readers_besides_user(path: Path) -> list[str] | None:
    """The SIDs (S-1-…) other than the user, its owner, SYSTEM and Administrators that may read `path`
    ("S-1-1-0" is Everyone); None when the ACL cannot be read (missing file, no right to read it)."""
    owner, dacl, descriptor = _LPVOID(), _LPVOID(), _LPVOID()
    error = _GetNamedSecurityInfoW(str(path), SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                                   ctypes.byref(owner), None, ctypes.byref(dacl), None, ctypes.byref(descriptor))
    if error:
        return None
    try:
        if not dacl.value:  # a NULL DACL grants everyone everything
            return ["S-1-1-0"]
        trusted = {user_sid_string(), SYSTEM_SID, ADMINISTRATORS_SID}
        if owner.value:
            trusted.add(_sid_string(owner.value))
        info = _AclSizeInformation()
        _check(_GetAclInformation(dacl, ctypes.byref(info), ctypes.sizeof(info), ACL_SIZE_INFORMATION_CLASS),
               "GetAclInformation")
        readers = []
        for index in range(info.AceCount):
            ace = _LPVOID()
            if not _GetAce(dacl, index, ctypes.byref(ace)):
                continue
            header = ctypes.cast(ace, ctypes.POINTER(_AceHeader)).contents
            if header.AceType != ACCESS_ALLOWED_ACE_TYPE or header.AceFlags & INHERIT_ONLY_ACE:
                continue
            mask = ctypes.cast(ace.value + 4, ctypes.POINTER(_DWORD)).contents.value
            sid = _sid_string(ace.value + 8)
            if mask & READ_BITS and sid not in trusted and sid not in readers:
                readers.append(sid)
        return readers
    finally:
        _LocalFree(descriptor)
