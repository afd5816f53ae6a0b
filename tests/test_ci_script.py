""".ci/run, the one CI entry point, on a machine without Node.js or Chromium: it installs them
itself (non-interactive apt-get, only when npx or chromium is missing) before the long test
run.

The script runs for real (bash) in a copy of the repository's .ci folder whose tools (apt-get,
make, node, the venv's python and mindgraph) are stand-ins that log their calls.
"""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS = ("dirname", "sed", "chmod", "cat")       # real tools the script and stand-ins use


def stand_in(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/bash\necho \"{path.name} $*\" >> \"$CALLS\"\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture()
def ci(tmp_path):
    """Run .ci/run in a sandbox; returns run(node_installed, apt_works, chromium_installed,
    compose_installed) → (result, calls)."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", repo / ".ci" / "run")
    bin_dir, venv = tmp_path / "bin", repo / ".venv" / "bin"
    bin_dir.mkdir()
    venv.mkdir(parents=True)
    for tool in TOOLS:
        os.symlink(shutil.which(tool), bin_dir / tool)
    node = f"printf '#!/bin/bash\\necho v20.19.0\\n' > {bin_dir}/node; " \
           f"printf '#!/bin/bash\\n' > {bin_dir}/npx; chmod +x {bin_dir}/node {bin_dir}/npx"
    stand_in(bin_dir / "python3", "echo Python 3.11.7")
    stand_in(bin_dir / "id", "echo 0")
    stand_in(bin_dir / "make", "")
    stand_in(venv / "python", "")
    stand_in(venv / "mindgraph", "")
    calls = tmp_path / "calls"

    chromium = f"printf '#!/bin/bash\\necho Chromium 156\\n' > {bin_dir}/chromium; " \
               f"chmod +x {bin_dir}/chromium"

    compose = f"printf '#!/bin/bash\\necho 1.29.2\\n' > {bin_dir}/docker-compose; " \
              f"chmod +x {bin_dir}/docker-compose"

    def run(node_installed: bool, apt_works: bool = True, chromium_installed: bool = True,
            compose_installed: bool = True):
        calls.write_text("")
        for name in ("node", "npx", "chromium", "docker-compose"):
            (bin_dir / name).unlink(missing_ok=True)
        for installed, script in ((node_installed, node), (chromium_installed, chromium),
                                  (compose_installed, compose)):
            if installed:
                subprocess.run(["/bin/bash", "-c", script], check=True)
        install = (f'case "$*" in *chromium*) {chromium};; *nodejs*) {node};; '
                   f'*docker-compose*) {compose};; esac' if apt_works else "exit 100")
        stand_in(bin_dir / "apt-get", 'echo "DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> "$CALLS"\n'
                 + f'[ "$1" = install ] && {{ {install}; }}; exit 0')
        result = subprocess.run(["/bin/bash", str(repo / ".ci" / "run")], capture_output=True,
                                text=True, env={"PATH": str(bin_dir), "CALLS": str(calls)},
                                timeout=60)
        return result, calls.read_text().splitlines()

    return run


def test_a_machine_without_node_gets_it_before_the_test_run(ci):
    result, calls = ci(node_installed=False)
    assert result.returncode == 0, result.stderr
    installs = [c for c in calls if c.startswith("apt-get install")]
    assert installs and "-y" in installs[0].split() and {"nodejs", "npm"} <= set(
        installs[0].split())
    assert calls.index(installs[0]) < calls.index("make test")
    assert "DEBIAN_FRONTEND=noninteractive" in calls
    assert calls[-3:] == ["python bench/mcp_inspector_check.py", "mindgraph ingest",
                          "mindgraph coverage mindgraph --fail-under 90"]


def test_node_already_there_installs_nothing(ci):
    result, calls = ci(node_installed=True)
    assert result.returncode == 0, result.stderr
    assert not [c for c in calls if c.startswith("apt-get")]
    assert "make test" in calls


def test_a_failed_node_install_stops_before_the_test_run(ci):
    result, calls = ci(node_installed=False, apt_works=False)
    assert result.returncode != 0
    assert "make test" not in calls


def test_a_machine_without_chromium_gets_it_before_the_test_run(ci):
    result, calls = ci(node_installed=True, chromium_installed=False)
    assert result.returncode == 0, result.stderr
    installs = [c for c in calls if c.startswith("apt-get install")]
    assert len(installs) == 1 and {"-y", "chromium", "fonts-noto-cjk"} <= set(installs[0].split())
    assert calls.index(installs[0]) < calls.index("make test")
    assert "== chromium: Chromium 156" in result.stdout


def test_a_failed_chromium_install_stops_before_the_test_run(ci):
    result, calls = ci(node_installed=True, chromium_installed=False, apt_works=False)
    assert result.returncode != 0
    assert "make test" not in calls


def test_a_machine_without_docker_compose_gets_it_before_the_test_run(ci):
    """tests/deploy check docker-compose.yml with Debian's docker-compose (no engine needed)."""
    result, calls = ci(node_installed=True, compose_installed=False)
    assert result.returncode == 0, result.stderr
    installs = [c for c in calls if c.startswith("apt-get install")]
    assert len(installs) == 1 and {"-y", "docker-compose"} <= set(installs[0].split())
    assert calls.index(installs[0]) < calls.index("make test")
    assert "== docker-compose: 1.29.2" in result.stdout


def test_one_apt_update_serves_every_install(ci):
    result, calls = ci(node_installed=False, chromium_installed=False, compose_installed=False)
    assert result.returncode == 0, result.stderr
    assert [c for c in calls if c.startswith("apt-get")].count("apt-get update -qq") == 1
    assert len([c for c in calls if c.startswith("apt-get install")]) == 3
