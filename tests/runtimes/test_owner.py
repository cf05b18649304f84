"""Owner identity (``runtimes.owner``) against real processes: pid reuse, reboots, other hosts."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess

from webshelf.runtimes.owner import Owner, current, start_time


def test_this_process_is_alive_and_a_reaped_child_is_gone():
    assert current().alive()
    child = subprocess.Popen(["true"])
    child.wait()
    assert start_time(child.pid) is None
    assert not Owner(child.pid, "1", current().boot, socket.gethostname()).alive()


def test_a_reused_pid_is_not_the_owner():
    """Same pid, other start time: the pid was recycled, the owner is gone."""
    me = current()
    assert not dataclasses.replace(me, start=str(int(me.start) + 1)).alive()


def test_another_boot_means_the_owner_is_gone():
    me = current()
    assert not dataclasses.replace(me, boot="00000000" if me.boot != "00000000" else "11111111").alive()


def test_an_owner_on_another_host_is_never_judged_dead():
    assert Owner(2 ** 22 + 12345, "1", "", socket.gethostname() + "-elsewhere").alive()


def test_start_time_survives_a_command_name_with_spaces_and_parentheses(tmp_path):
    odd = tmp_path / "a b) (c"
    os.symlink("/bin/sleep", odd)
    proc = subprocess.Popen([str(odd), "30"])
    try:
        assert start_time(proc.pid).isdigit()
    finally:
        proc.kill()
        proc.wait()
