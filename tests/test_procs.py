"""instruments/_procs.py: every child is reaped, and SIGTERM's handler comes back."""

import multiprocessing as mp
import signal
import threading
import time

import pytest

from straggle_edu.instruments._procs import reap, sigterm_as

_CTX = mp.get_context("spawn")


@pytest.mark.parametrize("terminate", [True, False])
def test_reap_stops_a_process_that_would_run_on(terminate):
    p = _CTX.Process(target=time.sleep, args=(60,))
    p.start()
    reap([p], grace=0.1, terminate=terminate)
    assert not p.is_alive() and p.exitcode == -signal.SIGTERM


def test_reap_without_terminate_lets_a_finished_process_end_on_its_own():
    p = _CTX.Process(target=time.sleep, args=(0.0,))
    p.start()
    reap([p], grace=30.0, terminate=False)
    assert p.exitcode == 0


def test_reap_close_releases_the_process_objects():
    p = _CTX.Process(target=time.sleep, args=(60,))
    p.start()
    reap([p], grace=0.1, close=True)
    with pytest.raises(ValueError, match="closed"):
        p.is_alive()


def test_reap_never_raises_on_processes_never_started():
    reap([_CTX.Process(target=time.sleep, args=(0,))], grace=0.0, close=True)


def test_sigterm_as_restores_the_old_handler_after_an_error():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(RuntimeError), sigterm_as(signal.default_int_handler):
        assert signal.getsignal(signal.SIGTERM) is signal.default_int_handler
        raise RuntimeError("boom")
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_as_off_the_main_thread_leaves_the_handlers_alone():
    before, seen = signal.getsignal(signal.SIGTERM), []

    def body():
        with sigterm_as(signal.default_int_handler):
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [before]
