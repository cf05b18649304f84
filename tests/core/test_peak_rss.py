"""Peak-RSS figures are the measured process's own, not the peak it inherited (issue 15's RSS row).

Linux carries ``ru_maxrss`` over fork and exec: a child of a process that has grown reports that
peak until it outgrows it, which made bench/speed.py's RSS row read 0 / 0. ``pool.peak_rss_kb``
(run in conversion workers) and ``bench/speed_common.peak_rss_mb`` must not.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIG_MB = 300

GROW = f"""
x = bytearray({BIG_MB} * 1024 * 1024)
for i in range(0, len(x), 4096):
    x[i] = 1
"""


def test_peak_rss_kb_of_a_child_is_not_its_parents_peak():
    child = "from webshelf.core.convert.pool import peak_rss_kb; print(peak_rss_kb())"
    code = GROW + f"import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', {child!r}], " \
                  "capture_output=True, text=True, check=True).stdout)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert int(out.stdout.split()[0]) < BIG_MB * 1024 / 2  # a bare interpreter, not the parent's 300 MB


def test_speed_common_peak_rss_mb_measures_the_child_under_a_larger_parent():
    measure = (f"import sys; sys.path.insert(0, {str(REPO / 'bench')!r})\n"
               "from speed_common import python_peak_rss_mb\n"
               "print(python_peak_rss_mb('import time; x = bytearray(60 * 1024 * 1024)\\n"
               "for i in range(0, len(x), 4096): x[i] = 1\\ntime.sleep(0.3)'))")
    out = subprocess.run([sys.executable, "-c", GROW + measure], capture_output=True, text=True, check=True, cwd=REPO)
    mb = float(out.stdout.split()[-1])
    assert 60 <= mb < BIG_MB / 2, mb  # the child's ~70 MB, not the parent's ~310 MB
