"""The browser dashboard served by `mindgraph serve` at ``/``: document list, knowledge graph,
explained search, page detail and actions, all over the REST API.

``render`` turns a page into safe HTML, ``views`` shapes the graph and a page for the page's
script, ``assets`` holds the static files (vendored libraries pinned in a manifest). The
routes live in ``serve/dashboard.py``.
"""
