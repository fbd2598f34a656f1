"""Joining a multi-host run: every process checks in with process 0 before
``jax.distributed.initialize``.

JAX's coordination service aborts the whole process from C++ (no Python exception) when a
process never arrives or the coordinator cannot be reached.  So jaxbco first holds its own
rendezvous on the coordinator's port: process 0 listens there and waits until every process
I = 1 .. N-1 has said ``jaxbco I N``; each of them connects (retrying, as process 0 may start
later) and waits for process 0's ``go``.  Any process that is missing, duplicated or started
with another N is a one-line ValueError naming it, on every process that can tell.  After
``go`` the port is free again and all processes call ``jax.distributed.initialize``, which
then finds everybody.
"""

from __future__ import annotations

import socket
import time

_GO = b"go\n"


def join(address: str, num_processes: int, process_id: int, timeout: float = 300.0) -> None:
    """Check the address, hold the rendezvous, then ``jax.distributed.initialize``.
    Must run before anything touches a JAX backend."""
    if num_processes < 1 or not 0 <= process_id < num_processes:
        raise ValueError(
            f"--process-id must lie in [0, {num_processes - 1}] and "
            f"--num-processes must be >= 1; got --process-id {process_id}, "
            f"--num-processes {num_processes}"
        )
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(
            f"--coordinator must be HOST:PORT with a port in [1, 65535]; got {address!r}"
        )
    host, port = host.strip("[]"), int(port)
    try:
        socket.getaddrinfo(host, port)
    except (socket.gaierror, UnicodeError) as err:
        raise ValueError(
            f"--coordinator {address}: host {host!r} cannot be resolved "
            f"({err}); give HOST:PORT of process 0"
        ) from None
    if num_processes > 1:
        if process_id == 0:
            _wait_for_all(address, port, num_processes, timeout, ipv6=":" in host)
        else:
            _check_in(address, host, port, num_processes, process_id, timeout)
    import jax

    try:
        jax.distributed.initialize(
            coordinator_address=address,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=int(timeout),
        )
    except Exception as err:  # noqa: BLE001 - XlaRuntimeError, RuntimeError
        why = " ".join(str(err).split())[:200] or type(err).__name__
        raise ValueError(
            f"--coordinator {address}: cannot join the multi-host run within {timeout:g} s ({why})"
        ) from None


def _wait_for_all(address: str, port: int, n: int, timeout: float, ipv6: bool) -> None:
    """Process 0: accept ``jaxbco I N`` from every I in 1 .. n-1, then send each ``go``."""
    try:
        listener = socket.socket(socket.AF_INET6 if ipv6 else socket.AF_INET)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("", port))
        listener.listen(n)
    except OSError as err:
        raise ValueError(
            f"--coordinator {address}: process 0 cannot listen on port {port} "
            f"({err.strerror}); choose another port"
        ) from None
    joined: dict[int, socket.socket] = {}
    deadline = time.monotonic() + timeout
    try:
        with listener:
            while len(joined) < n - 1:
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = ", ".join(str(i) for i in range(1, n) if i not in joined)
                    raise ValueError(
                        f"--coordinator {address}: process(es) {missing} of --num-processes {n} "
                        f"did not join within {timeout:g} s; start every process with the same "
                        f"--coordinator and --num-processes (--connect-timeout waits longer)"
                    )
                listener.settimeout(min(left, 1.0))
                try:
                    conn, _ = listener.accept()
                except (TimeoutError, OSError):
                    continue
                i = _hello(conn)
                if i is None:  # not a jaxbco process (a port scan, a stray client)
                    conn.close()
                    continue
                problem = (
                    f"process {i[0]} was started with --num-processes {i[1]}, process 0 with {n}"
                    if i[1] != n
                    else f"--process-id {i[0]} is not in [1, {n - 1}]"
                    if not 1 <= i[0] < n
                    else f"two processes were started with --process-id {i[0]}"
                    if i[0] in joined
                    else None
                )
                if problem is not None:
                    _send(conn, f"no {problem}\n".encode())
                    conn.close()
                    raise ValueError(f"--coordinator {address}: {problem}")
                joined[i[0]] = conn
            for conn in joined.values():
                _send(conn, _GO)
            for conn in joined.values():  # let each client close first (TIME_WAIT on its side)
                conn.settimeout(5.0)
                try:
                    conn.recv(1)
                except OSError:
                    pass
    finally:
        for conn in joined.values():
            conn.close()


def _check_in(address: str, host: str, port: int, n: int, i: int, timeout: float) -> None:
    """Process i > 0: reach process 0 (retrying until ``timeout``), say ``jaxbco i n``, wait for go."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=min(5.0, timeout))
            break
        except OSError as err:
            if time.monotonic() >= deadline:
                raise ValueError(
                    f"--coordinator {address}: process 0 cannot be reached within "
                    f"{timeout:g} s ({err.strerror or err}); start process 0 first "
                    f"and check the address (--connect-timeout waits longer)"
                ) from None
            time.sleep(0.5)
    with conn:
        conn.settimeout(max(deadline - time.monotonic(), 1.0))
        try:
            conn.sendall(f"jaxbco {i} {n}\n".encode())
            reply = _line(conn)
        except OSError:
            reply = b""
    if reply == _GO:
        return
    why = (
        reply[3:].decode(errors="replace").strip()
        if reply.startswith(b"no ")
        else (
            "process 0 stopped waiting for the other processes"
            if not reply
            else "something other than jaxbco's process 0 answers there"
        )
    )
    raise ValueError(f"--coordinator {address}: {why}")


def _hello(conn: socket.socket):
    """(process id, count) from ``jaxbco I N``, or None for anything else."""
    conn.settimeout(5.0)
    try:
        words = _line(conn).split()
    except OSError:
        return None
    if len(words) != 3 or words[0] != b"jaxbco" or not all(w.isdigit() for w in words[1:]):
        return None
    return int(words[1]), int(words[2])


def _line(conn: socket.socket, limit: int = 256) -> bytes:
    """Bytes up to and including the first newline (or what arrived before EOF)."""
    data = b""
    while not data.endswith(b"\n") and len(data) < limit:
        chunk = conn.recv(limit - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _send(conn: socket.socket, data: bytes) -> None:
    try:
        conn.sendall(data)
    except OSError:
        pass
