"""``straggle-edu lab``: open the notebooks in JupyterLab, safely.

The server listens on 127.0.0.1 only and requires a fresh random token, so
nobody else on the network can run code in your kernel. It opens
``notebooks/00_start_here.ipynb``, or with ``--lang zh`` (or
``STRAGGLE_EDU_LANG=zh``) its Chinese twin ``notebooks/zh/00_start_here.ipynb``;
the server then runs with ``STRAGGLE_EDU_LANG=zh``, which its kernels inherit.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
from pathlib import Path

from .._validate import require, whole
from ..i18n import LANG_ENV, _, get_language

__all__ = ["lab_command", "find_notebooks", "start_page"]

START = "00_start_here.ipynb"


def start_page(notebooks, lang="en"):
    """The notebook to open, relative to ``notebooks``: the start page in ``lang``, or "" when there is none.

    English is ``00_start_here.ipynb``; another language is its twin in
    ``notebooks/<lang>/``, when that exists (else the English one).

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "zh").mkdir(); __ = (root / START).write_text("{}")
    >>> start_page(root, "zh")
    '00_start_here.ipynb'
    >>> __ = (root / "zh" / START).write_text("{}")
    >>> start_page(root, "zh"), start_page(root)
    ('zh/00_start_here.ipynb', '00_start_here.ipynb')
    """
    for target in ([f"{lang}/{START}"] if lang != "en" else []) + [START]:
        if (Path(notebooks) / target).exists():
            return target
    return ""


def find_notebooks(start=None):
    """The ``notebooks/`` folder: under ``start`` (default: the current
    folder) or beside the installed package (an editable install).

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "notebooks").mkdir()
    >>> find_notebooks(root) == root / "notebooks"
    True
    """
    here, checkout = Path(start or os.getcwd()), Path(__file__).resolve().parents[2]
    for root in (here, checkout):
        folder = root / "notebooks"
        if folder.is_dir():
            return folder
    # A wheel holds the library, not the notebooks: they come with a checkout of the repository.
    raise FileNotFoundError(
        f"no notebooks/ folder in {here} or beside the package ({checkout}); run this in a checkout of straggle-edu, "
        "which holds the notebooks (an installed wheel has the library only)"
    )


def lab_command(notebooks, port=8888, token=None, open_browser=True, lang="en"):
    """The argv that starts JupyterLab on localhost with a token, opening :func:`start_page` in ``lang``.

    Examples
    --------
    >>> argv = lab_command("notebooks", port=8899, token="abc", open_browser=False)
    >>> argv[1:6]
    ['-m', 'jupyterlab', '--ServerApp.ip=127.0.0.1', '--ServerApp.port=8899', '--IdentityProvider.token=abc']
    >>> "--no-browser" in argv, "--ServerApp.allow_remote_access=False" in argv
    (True, True)
    """
    token = token or secrets.token_hex(24)
    target = start_page(notebooks, lang)
    argv = [
        sys.executable, "-m", "jupyterlab",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={int(port)}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={Path(notebooks).resolve()}",
        "--ServerApp.allow_remote_access=False",
    ]
    if not open_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Containers and CI run as root, where Jupyter refuses to start without this.
        argv.append("--allow-root")
    if target:
        argv.append(target)
    return argv


def free_port(start):
    """The first port from ``start`` upward that is free on 127.0.0.1."""
    for port in range(start, min(start + 100, 65536)):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    require(False, "port", start, "a port with a free one at most 100 above it on 127.0.0.1")


def configure(parser):
    parser.add_argument("--port", type=int, default=8888, help="port on 127.0.0.1 (default 8888; the next free one is used if taken)")
    parser.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")


def _stop(proc):
    """Stop JupyterLab and reap it: SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args):
    whole("port", args.port, 1, 65535)
    notebooks = find_notebooks()
    port = free_port(args.port)
    token = secrets.token_hex(24)
    lang = get_language()
    argv = lab_command(notebooks, port=port, token=token, open_browser=not args.no_browser, lang=lang)
    argv.append("--ServerApp.port_retries=0")  # the URL below must stay right
    page = start_page(notebooks, lang)
    target = f"lab/tree/{page}" if page else "lab"
    # The "Open:" line keeps its English word in both languages: scripts and tests read the URL from it.
    print(
        _("JupyterLab is starting on this machine only (127.0.0.1), with a token.") + "\n"
        f"Open: http://127.0.0.1:{port}/{target}?token={token}\n" + _("Stop it with Ctrl-C."),
        flush=True,
    )
    proc = subprocess.Popen(argv, cwd=notebooks, env=dict(os.environ, **{LANG_ENV: lang}))
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stop(proc)
