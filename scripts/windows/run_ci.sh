#!/bin/bash
# taotoken under Windows (Wine 8 + the official CPython, after scripts/windows/setup.sh): the focused subset CI runs.
#   bash scripts/windows/run_ci.sh [BUDGET_S=900]
# 1. Tests, Python 3.13: the platform wing (facts, shells, ACLs, msvcrt locks, the desktop environment), fileplan
#    (backups, apply, undo), the encoding fallbacks, the Windows shell target (env.ps1, PowerShell profiles,
#    HKCU\Environment set and undone, Git Bash's env.sh, NO_PROXY for a gateway on this machine, later profile
#    lines), doctor's env.startup_line and proxy check there; check and models against real loopback servers, the
#    diagnosis of proxies' answers and fixes (every fix that sets a variable in the user's shell: PowerShell here).
# 2. The CLI, Python 3.10 and 3.13, output redirected (ANSI code page 1252) and on a Chinese Windows (936):
#    init --target shell, doctor, check, explain, init --undo, in a sandboxed HOME/APPDATA/LOCALAPPDATA, loopback
#    only (a network namespace), nothing may crash or print a traceback, the key never printed whole.
# 3. bench -n 20 -c 2 against the mock (started under Wine in the same namespace), output redirected to a file, on
#    3.10/cp1252 and 3.13/cp936; `demo --fast` (every step, its own mock) on 3.10/cp1252.
# 4. Nothing outside the sandbox changed: the real %LOCALAPPDATA%\taotoken and HKCU\Environment's OPENAI_* values.
# A step the budget no longer allows is NOT RUN (said, not a failure; exit 0). Exit 1: a step failed.
# Not here (Wine is not Windows): ACL enforcement, a real PowerShell: docs/windows.md says how to check those.
set -u
budget=${1:-900}
start=$(date +%s)
cd /tmp/win/src || { echo "run setup.sh first"; exit 2; }
export WINEPREFIX=/tmp/win/prefix WINEDEBUG=-all
# Loopback only, for everything below: one network namespace with `lo` alone. WINE-ONLY: Wine creates sockets in
# wineserver, which every Wine process of this prefix shares, so the wineserver must start inside the namespace
# (a per-command `unshare -n` isolates nothing once a wineserver runs outside it).
if [ -z "${TAOTOKEN_WINE_NETNS:-}" ]; then
  wineserver -k 2>/dev/null; wineserver -w 2>/dev/null
  TAOTOKEN_WINE_NETNS=1 exec unshare -n bash "$0" "$@"
fi
ip link set lo up
trap 'wineserver -k 2>/dev/null' EXIT  # the namespace's wineserver ends with the run
left() { echo $(( budget - ($(date +%s) - start) )); }
fail=0
real_dir=$(ls -d $WINEPREFIX/drive_c/users/*/AppData/Local 2>/dev/null | head -1)/taotoken
user_env() { wine reg query 'HKCU\Environment' 2>/dev/null | tr -d '\r' | grep -E '^ +OPENAI_' | sort; }
real_files() { find "$real_dir" -type f -exec md5sum {} + 2>/dev/null | sort; }
real_before=$(real_files)
env_before=$(user_env)

tests="tests/core/platform tests/core/files/test_fileplan.py tests/core/term/test_encoding.py tests/core/clients/test_winshell.py
       tests/cmd/doctor/test_doctor_startup_windows.py tests/cmd/check/test_check.py tests/cmd/check/test_check_gateway_answers.py tests/core/diagnosis/test_proxy_answers.py
       tests/cmd/models/test_models.py tests/core/base/test_fix.py tests/cmd/mock/test_mock_cli.py"
echo "== tests under Wine, Python 3.13 (budget $(left) s)"
# shellcheck disable=SC2086
: | timeout $(( $(left) / 3 )) /tmp/win/bin/wpy -m pytest -q -p no:cacheprovider --timeout 180 --tb=short $tests \
    > /tmp/win/ci_tests.txt 2>&1
rc=$?
tail -15 /tmp/win/ci_tests.txt
if [ $rc = 124 ]; then echo "NOT FINISHED (time budget; not a failure): the tests under Wine"
elif [ $rc != 0 ]; then fail=1; fi

key=sk-WINEci0123456789abcdefWXYZ
home=/tmp/win/ci_home
sandbox=(WPYENV_HOME='Z:\tmp\win\ci_home' WPYENV_USERPROFILE='Z:\tmp\win\ci_home'
         WPYENV_APPDATA='Z:\tmp\win\ci_home\AppData\Roaming' WPYENV_LOCALAPPDATA='Z:\tmp\win\ci_home\AppData\Local'
         WPYENV_TAOTOKEN_DOCUMENTS_DIR='Z:\tmp\win\ci_home\Documents' WPYENV_NO_COLOR=1)
verdict() {  # LABEL WHAT RC EXPECTED_RCS OUTFILE
  local label=$1 what=$2 rc=$3 expected=$4 out=$5
  if ! [[ "|$expected|" == *"|$rc|"* ]] || grep -aq "Traceback\|UnicodeEncodeError\|UnicodeDecodeError" "$out" \
      || grep -aqF "$key" "$out"; then
    echo "FAIL $label: $what -> rc=$rc (expected $expected)"; tail -20 "$out"; fail=1
  else
    echo "ok   $label: $what -> rc=$rc"
  fi
}
cli() {  # LABEL EXE LOCALE EXPECTED_RCS ARGS... (stdin: the key; EXPECTED_RCS: one code, or several as 0|1)
  local label=$1 exe=$2 locale=$3 expected=$4; shift 4
  local out=/tmp/win/ci_out.txt
  printf %s "$key" | env WPY_EXE="$exe" WPY_LOCALE="$locale" "${sandbox[@]}" \
      timeout "${CLI_TIMEOUT:-300}" /tmp/win/bin/wpy -m taotoken_cli "$@" > $out 2>&1
  verdict "$label" "taotoken $*" $? "$expected" $out
}
bench() {  # LABEL EXE LOCALE: `bench > out.txt` against the mock, started under Wine on loopback
  local label=$1 exe=$2 locale=$3 out=/tmp/win/ci_bench.txt
  : | WPY_EXE="$exe" setsid /tmp/win/bin/wpy -m taotoken_cli mock --port 18555 --any-key > /tmp/win/ci_mock.txt 2>&1 &
  local mock=$!
  for _ in $(seq 90); do grep -aq 18555 /tmp/win/ci_mock.txt && break; sleep 1; done
  : | env WPY_EXE="$exe" WPY_LOCALE="$locale" "${sandbox[@]}" \
      timeout 300 /tmp/win/bin/wpy -m taotoken_cli bench -n 20 -c 2 --max-tokens 16 > $out 2>&1
  local rc=$?
  kill -TERM -- -$mock 2>/dev/null; wait $mock 2>/dev/null
  verdict "$label" "taotoken bench -n 20 -c 2 > out.txt" $rc 0 $out
  grep -aq "HTTP 200 x20" $out || { echo "FAIL $label: bench did not report 20 answers (HTTP 200 x20)"; fail=1; }
}
# The most different pairs first, so a spent budget leaves out the least: 3.10 on cp1252, 3.13 on cp936.
for pair in "/tmp/win/py310/python.exe:" "/tmp/win/py/python.exe:zh_CN.UTF-8" "/tmp/win/py310/python.exe:zh_CN.UTF-8" \
            "/tmp/win/py/python.exe:"; do
    exe=${pair%%:*}; locale=${pair#*:}
    [ "$(left)" -lt 150 ] && { echo "NOT RUN (time budget spent; not a failure): $exe ${locale:-cp1252}"; continue; }
    rm -rf $home; mkdir -p $home
    v=$(basename "$(dirname $exe)"); label="$v ${locale:-cp1252}"
    cli "$label" $exe "$locale" 0 init --key-stdin --base-url http://127.0.0.1:18555 --model gpt-4o-mini --target shell --yes
    ls $home/Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1 >/dev/null 2>&1 \
      || { echo "FAIL $label: no PowerShell profile line"; fail=1; }
    # 0: the files init wrote are sound; 1 where Wine's slowness makes the device probe miss its deadline.
    # What is checked: doctor runs to its summary, no traceback, the key masked.
    cli "$label" $exe "$locale" "0|1" doctor --offline --timeout 60
    cli "$label" $exe "$locale" 7 check  # nothing listens on the port: a network failure, said clearly
    cli "$label" $exe "$locale" 0 explain auth.missing_key
    grep -aq "export " /tmp/win/ci_out.txt && { echo "FAIL $label: explain gives POSIX advice on Windows"; fail=1; }
    if [ "$label" = "py310 cp1252" ] || [ "$label" = "py zh_CN.UTF-8" ]; then
      if [ "$(left)" -lt 200 ]; then echo "NOT RUN (time budget spent; not a failure): bench $label"
      else bench "$label" $exe "$locale"; fi
    fi
    cli "$label" $exe "$locale" 0 init --undo
    if [ "$label" = "py310 cp1252" ]; then
      if [ "$(left)" -lt 360 ]; then echo "NOT RUN (time budget spent; not a failure): demo $label"
      else CLI_TIMEOUT=$(( $(left) - 60 )) cli "$label" $exe "$locale" 0 demo --fast; fi
    fi
done
[ "$(real_files)" = "$real_before" ] \
  || { echo "FAIL: the real %LOCALAPPDATA%\\taotoken was written:"; diff <(echo "$real_before") <(real_files); fail=1; }
[ "$(user_env)" = "$env_before" ] || { echo "FAIL: HKCU\\Environment changed: $(user_env)"; fail=1; }
echo "windows run: $([ $fail = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s (budget $budget s)"
exit $fail
