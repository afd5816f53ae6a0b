"""Check `mindgraph mcp` with the official MCP Inspector CLI (a client we did not write).

    python bench/mcp_inspector_check.py            # exit 0 when every check passes
    python bench/mcp_inspector_check.py --keep     # keep the generated workspace

Generates a small wiki in a temporary workspace, then runs
``npx -y @modelcontextprotocol/inspector@0.15.0 --cli`` against
``python -m mindgraph mcp -C <workspace>`` over stdio: lists the tools (every expected tool is
there and annotated read-only) and calls one — ``search`` when the server has it, else
``get_page`` — checking the result cites the expected page. It also checks that an unknown page
comes back as a tool error. Prints each step's wall time (the first npx run includes the package
download). Needs node/npm (0.15.0 is the last Inspector release that runs on Node 20).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
WRITE_TOOLS = {"approve_propagation", "create_document", "link_documents", "create_item",
               "update_item"}
EXPECTED_TOOLS = {"get_page", "list_sections", "get_section", "backlinks", "timeline",
                  "extract"}
TOPICS = ["Packing", "Shipping", "Customs", "Warehouses", "Invoices", "Returns", "Carriers",
          "Pallets", "Labels", "Tracking"]


def make_wiki(root: Path) -> None:
    """A small linked wiki: one page per topic, each linking to the next two."""
    wiki = root / "wiki"
    wiki.mkdir(parents=True)
    for i, topic in enumerate(TOPICS):
        nxt, nxt2 = TOPICS[(i + 1) % len(TOPICS)], TOPICS[(i + 2) % len(TOPICS)]
        (wiki / f"{topic}.md").write_text(
            f"---\ntitle: {topic}\ndate: 2024-{i + 1:02d}-01\ntags: [logistics]\n---\n"
            f"{topic} is one step of moving freight; it comes before [[{nxt}]].\n\n"
            f"## Checklist\nWeigh each crate, then read [[{nxt2}]].\n\n"
            f"## Data\n```json\n{{\"step\": {i + 1}, \"name\": \"{topic.lower()}\"}}\n```\n",
            encoding="utf-8")


def inspector(config: Path, *args: str, timeout: float = 600) -> tuple[dict, float]:
    """Run the Inspector CLI once; its JSON output and the wall time in seconds."""
    command = ["npx", "-y", INSPECTOR, "--cli", "--config", str(config),
               "--server", "mindgraph", *args]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise CheckFailed(f"{' '.join(command)} exited {done.returncode}:\n"
                          f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    try:
        return json.loads(done.stdout), elapsed
    except json.JSONDecodeError as exc:
        raise CheckFailed(f"the Inspector printed no JSON:\n{done.stdout[-2000:]}\n"
                          f"{done.stderr[-2000:]}") from exc


class CheckFailed(Exception):
    """One check did not hold."""


def check(workspace: Path) -> list[str]:
    """Run every check; the report lines."""
    config = workspace / "inspector.json"
    config.write_text(json.dumps({"mcpServers": {"mindgraph": {
        "command": sys.executable,
        "args": ["-m", "mindgraph", "mcp", "-C", str(workspace)]}}}), encoding="utf-8")
    report = []

    listed, seconds = inspector(config, "--method", "tools/list")
    tools = {t["name"]: t for t in listed.get("tools", [])}
    report.append(f"tools/list: {len(tools)} tools in {seconds:.1f} s: {', '.join(sorted(tools))}")
    missing = EXPECTED_TOOLS - set(tools)
    if missing:
        raise CheckFailed(f"tools missing from tools/list: {sorted(missing)}")
    # every tool reads only, but the writes an agent may make: an approved plan, a new note
    # in its own scope, a typed link (none of them destructive)
    not_read_only = [n for n, t in tools.items() if n not in WRITE_TOOLS
                     and not (t.get("annotations") or {}).get("readOnlyHint")]
    if not_read_only:
        raise CheckFailed(f"tools not annotated readOnlyHint: {not_read_only}")
    unmarked = [n for n in WRITE_TOOLS & set(tools)
                if (tools[n].get("annotations") or {}).get("readOnlyHint") is not False
                or (tools[n].get("annotations") or {}).get("destructiveHint") is not False]
    if unmarked:
        raise CheckFailed(f"write tools not annotated readOnlyHint/destructiveHint false: "
                          f"{unmarked}")

    if "search" in tools:
        name, args, expected = "search", ["query=crate weigh customs"], "Customs.md"
    else:
        name, args, expected = "get_page", ["page=customs"], "Customs.md"
    called, seconds = inspector(config, "--method", "tools/call", "--tool-name", name,
                                *[a for arg in args for a in ("--tool-arg", arg)])
    text = "".join(c.get("text", "") for c in called.get("content", []))
    report.append(f"tools/call {name} {' '.join(args)}: {seconds:.1f} s: {text[:160]}")
    if called.get("isError"):
        raise CheckFailed(f"{name} returned an error: {text}")
    if expected not in text:
        raise CheckFailed(f"{name} did not cite {expected}: {text[:500]}")

    unknown, seconds = inspector(config, "--method", "tools/call", "--tool-name", "get_page",
                                 "--tool-arg", "page=No such page")
    text = "".join(c.get("text", "") for c in unknown.get("content", []))
    report.append(f"tools/call get_page (unknown page): {seconds:.1f} s: {text[:160]}")
    if not unknown.get("isError") or "No page named" not in text:
        raise CheckFailed(f"an unknown page should be a tool error naming it: {unknown}")
    return report


def main() -> int:
    """Entry point: exit 0 when every check passes, 1 otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="Keep the generated workspace.")
    options = parser.parse_args()
    if shutil.which("npx") is None:
        print("FAIL: npx not found; install Node.js 20+ (with npm).", file=sys.stderr)
        return 1
    workspace = Path(tempfile.mkdtemp(prefix="mindgraph-inspector-"))
    started = time.perf_counter()
    try:
        make_wiki(workspace)
        for line in check(workspace):
            print(line)
    except (CheckFailed, subprocess.TimeoutExpired) as exc:
        print(f"FAIL: {exc}", file=sys.stderr)
        return 1
    finally:
        if options.keep:
            print(f"workspace kept: {workspace}", file=sys.stderr)
        else:
            shutil.rmtree(workspace, ignore_errors=True)
    print(f"OK: MCP Inspector {INSPECTOR.rsplit('@', 1)[1]} checks passed in "
          f"{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
