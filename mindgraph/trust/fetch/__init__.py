"""Fetching cited evidence: what a page cites, read as text, never from outside the workspace.

base (Fetched, FetchError, the Fetcher contract) · files (local files inside the workspace) ·
url (HTTP with httpx: timeouts, size cap, content types, bounded redirects) · html_text
(text from HTML, stdlib html.parser) · cache (fetched texts under the state folder, keyed by
URL and content hash, used when the network is off or a fetch fails for a while).
"""
