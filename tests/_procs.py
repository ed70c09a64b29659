"""Which processes are alive, read from /proc: for the tests that check that
no child process outlives the barrier lab or the probe."""

import os


def _stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def alive(pid):
    """True while pid exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def live_processes(ppid=None, sid=None, cmdline_has=None):
    """Pids of live (non-zombie) processes with this parent pid, session id
    and command-line fragment (each filter only when given)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        fields = _stat_fields(d)
        if fields is None or fields[0] == "Z":
            continue
        if ppid is not None and int(fields[1]) != ppid:
            continue
        if sid is not None and int(fields[3]) != sid:
            continue
        if cmdline_has is not None:
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if cmdline_has not in f.read():
                        continue
            except OSError:
                continue
        out.append(int(d))
    return out
