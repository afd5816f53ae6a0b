"""What ``serve --workers N`` multiplies: the limits each worker process keeps by itself.

Each worker is a process with its own counters (the upload spool, connections, every
identity's requests in flight and its share of the event loop), so a server of N workers
allows N times each. They are not divided by N: the kernel hands each connection to
whichever worker accepts it, not by identity or size, and a client's keep-alive connection
stays on one worker, so a divided limit would refuse, at random, what the server as a whole
has room for: one identity's five searches landing on one of four workers would pass a cap
of 16 / 4, and at 16 workers a 1 GiB spool / 16 would refuse an upload of the 100 MB cap. The
share is a turn on one event loop, which is per process by nature. As nginx's
worker_connections and gunicorn's --worker-connections, the limits stay per worker; `serve`
says the totals at start-up, and an operator who needs a total sets the limit to it / N.
"""

from __future__ import annotations

from ..config import ServeSettings

# (setting, what N times it allows), in the order they are said
PER_PROCESS = (
    ("upload_spool_bytes", "of uploads spooled to disk at once"),
    ("requests_per_identity", "requests in flight per identity"),
    ("share_per_identity", "of those worked on at once while others are served"),
    ("max_connections", "connections open at once"),
    ("max_connections_per_client", "of them per client address"),
)


def multiplied_limits(serve: ServeSettings, workers: int) -> str | None:
    """The start-up warning of a server of ``workers`` processes: each per-process limit
    (0, off, left out), what the server as a whole allows, and how to hold a total."""
    if workers <= 1:
        return None
    said = []
    for name, allows in PER_PROCESS:
        value = getattr(serve, name)
        if value:
            total = _bytes(value * workers) if name.endswith("_bytes") else f"{value * workers:,}"
            each = _bytes(value) if name.endswith("_bytes") else f"{value:,}"
            said.append(f"{total} {allows} (serve.{name}: {each})")
    return (f"Warning: each of the {workers} workers applies the per-process limits by "
            f"itself, so the server allows {workers} times each: {'; '.join(said)}. To hold a "
            f"total, set the limit to it divided by {workers} in mindgraph.yml.")


def _bytes(count: int) -> str:
    """A byte count as people read it: 1 GiB, 3 GiB, 500 MB, 2,048 bytes."""
    if count % 2**30 == 0:
        return f"{count // 2**30:,} GiB"
    if count % 2**20 == 0:
        return f"{count // 2**20:,} MiB"
    return f"{count / 1e6:,.0f} MB" if count >= 10**6 else f"{count:,} bytes"
