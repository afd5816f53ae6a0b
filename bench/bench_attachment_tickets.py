"""What signing a rendered page's attachment URLs costs behind a token (serve/attachment_tickets.py):
GET /dashboard/page of a page embedding --images pictures by file name.

    python bench/bench_attachment_tickets.py
    python bench/bench_attachment_tickets.py --images 300 --rounds 9

Three ways, in turns within each round so the machine's other load falls on all alike, one
app each through the in-process test client: no token (nothing signed); a token with each
ticket an HMAC of the target, page and expiry alone (what the signer cost before the file
was signed: the same HMAC with an empty file); a token with the file each embed finds
resolved first and signed (now). Reported: the median wall-clock time of one page view each.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()

    from fastapi.testclient import TestClient

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.serve import dashboard
    from mindgraph.serve.attachment_tickets import ticket_query
    from mindgraph.serve.rest import create_app

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        pictures = base / "raw" / "pics" / "deep"
        pictures.mkdir(parents=True)
        (base / "wiki").mkdir()
        for i in range(args.images):
            (pictures / f"img{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
        (base / "wiki" / "Gallery.md").write_text(
            "# Gallery\n\n" + "\n\n".join(f"![[img{i}.png]]" for i in range(args.images)))
        mg = Mindgraph(settings_from_dict({}, base_dir=base))
        token = "z" * 40
        now = dashboard._signer

        def before(auth, authorization, core, raw_dir):
            return lambda target, source: ticket_query(auth, authorization, target, source, "")

        ways = {"no token": (create_app(mg, None), {}, now),
                "token, HMAC only (before)": (create_app(mg, token), token, before),
                "token, file resolved and signed (now)": (create_app(mg, token), token, now)}
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds + 1):              # the first round warms each app
            for name, (app, secret, signer) in ways.items():
                dashboard._signer = signer
                client = TestClient(app, base_url="http://127.0.0.1:8765")
                headers = {"Authorization": f"Bearer {secret}"} if secret else {}
                started = time.perf_counter()
                response = client.get("/dashboard/page", params={"page": "Gallery"},
                                      headers=headers)
                times[name].append(time.perf_counter() - started)
                assert response.status_code == 200, response.text
        dashboard._signer = now
        for name, taken in times.items():
            print(f"{name}: median {statistics.median(taken[1:]) * 1000:.1f} ms per page view "
                  f"({args.images} embeds, {args.rounds} rounds)")


if __name__ == "__main__":
    main()
