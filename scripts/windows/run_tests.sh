#!/bin/bash
# taotoken's test suite under Windows (Wine 8 + the official CPython, after scripts/windows/setup.sh), sampled: the
# first N tests of each file (N=0: all), one pytest per file, in a network namespace with loopback only (nothing may
# reach a real gateway). Results: /tmp/win/tests_by_file/<file>.txt, one line per file in _summary.txt and the
# totals (passed, failed, errors, skipped, files not run for lack of time) on its last line.
#   bash scripts/windows/run_tests.sh [N=10] [BUDGET_S=1500]
#   WPY_LOCALE=zh_CN.UTF-8 bash scripts/windows/run_tests.sh    # a Chinese Windows (code page 936)
#   WPY_EXE=/tmp/win/py310/python.exe bash scripts/windows/run_tests.sh    # Python 3.10
# Each test has its own HOME, USERPROFILE, APPDATA, LOCALAPPDATA, XDG_CONFIG_HOME and desktop environment (the
# `home` fixture, core.platform.system.sandbox_env), so no test reads or writes the real %LOCALAPPDATA%\taotoken.
set -u
n=${1:-10}; budget=${2:-1500}
out=/tmp/win/tests_by_file; rm -rf $out; mkdir -p $out
cd /tmp/win/src || { echo "run scripts/windows/setup.sh first"; exit 2; }
# WINE-ONLY: Wine creates sockets in wineserver, shared by every Wine process of the prefix: it must start inside
# the loopback-only namespace, or the namespace isolates nothing.
export WINEPREFIX=/tmp/win/prefix WINEDEBUG=-all
wineserver -k 2>/dev/null; wineserver -w 2>/dev/null
unshare -n bash -c '
  ip link set lo up
  trap "wineserver -k 2>/dev/null" EXIT
  n=$1; budget=$2; out=$3; start=$(date +%s)
  : | /tmp/win/bin/wpy -m pytest --co -q -p no:cacheprovider 2>$out/_collect_errors.txt | tr -d "\r" | grep "::" > $out/_ids.txt
  for f in $(cut -d: -f1 $out/_ids.txt | uniq); do
    left=$(( budget - ($(date +%s) - start) )); [ $left -lt 30 ] && { echo "NOT RUN (budget): $f" >> $out/_summary.txt; continue; }
    name=$(basename $f .py)
    if [ "$n" = 0 ]; then grep "^$f::" $out/_ids.txt > $out/$name.ids; else grep "^$f::" $out/_ids.txt | head -$n > $out/$name.ids; fi
    : | timeout $(( left < 420 ? left : 420 )) /tmp/win/bin/wpy -m pytest -v --timeout 240 --tb=short -rfE \
        -p no:cacheprovider @Z:$out/$name.ids > $out/$name.txt 2>&1
    echo "$name rc=$? $(tail -1 $out/$name.txt | tr -d "\r")" >> $out/_summary.txt
  done
' _ "$n" "$budget" "$out"
total() { grep -v "^NOT RUN" $out/_summary.txt | grep -o "[0-9]* $1" | awk '{s+=$1} END {print s+0}'; }
echo "TOTAL passed=$(total passed) failed=$(total failed) errors=$(( $(total error) + $(total errors) )) skipped=$(total skipped) xfailed=$(total xfailed) not_run=$(grep -c '^NOT RUN' $out/_summary.txt)" | tee -a $out/_summary.txt
