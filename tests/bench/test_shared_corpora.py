"""bench/shared_corpora.py: every bench script finds the shared corpora one way — --corpora,
else $MINDGRAPH_CORPORA, else shared/corpora beside this checkout or, in a git worktree,
beside its main checkout — and says how to fix it when they are not there."""

import re
import subprocess
import sys

from bench_script_support import BENCH, load_script

shared = load_script("shared_corpora")


def _worktree(tmp_path):
    """main/ (a checkout with .git/) and wt/papercuts/ (a worktree of it: .git is a file)."""
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "papercuts").mkdir(parents=True)
    (main / ".git" / "worktrees" / "papercuts" / "commondir").write_text("../..\n")
    tree = tmp_path / "wt" / "papercuts"
    tree.mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {main}/.git/worktrees/papercuts\n")
    (tmp_path / "shared" / "corpora").mkdir(parents=True)
    return main, tree


def test_the_option_wins_then_the_variable_then_beside_the_checkout(tmp_path):
    main, tree = _worktree(tmp_path)
    env = {"MINDGRAPH_CORPORA": str(tmp_path / "env")}
    assert shared.corpora(["-C", "x", "--corpora", "/c"], env, tree).as_posix() == "/c"
    assert shared.corpora(["--corpora=/c"], env, tree).as_posix() == "/c"
    assert shared.corpora(["--json"], env, tree) == tmp_path / "env"
    # a worktree's own parent holds no corpora: the main checkout's does
    assert shared.main_checkout(tree) == main
    assert shared.corpora([], {}, tree) == tmp_path / "shared" / "corpora"
    assert shared.corpora([], {}, main) == tmp_path / "shared" / "corpora"


def test_every_bench_script_reads_the_corpora_through_the_helper():
    own = []
    for script in sorted(BENCH.glob("*.py")):
        if script.name == "shared_corpora.py":
            continue
        # mindgraph.bench.corpora builds retrievers over a workspace: it reads no corpus path
        text = script.read_text(encoding="utf-8").replace("mindgraph.bench.corpora", "")
        if re.search(r"MINDGRAPH_CORPORA|\"shared\" / \"corpora\"|/shared/corpora", text):
            own.append(script.name)
        if re.search(r"corpora|CORPORA|CORPUS", text) and "shared_corpora" not in text:
            own.append(script.name)
    assert own == []


def test_a_missing_corpora_folder_is_named_with_the_fix(tmp_path):
    for name, args in (("bench_fusion", ["-C", str(tmp_path)]),
                       ("bench_scifact_levers", ["-C", str(tmp_path)]), ("bench_cjk", [])):
        run = subprocess.run([sys.executable, str(BENCH / f"{name}.py"), *args,
                              "--corpora", str(tmp_path / "nowhere")],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 1 and "Traceback" not in run.stderr, (name, run.stderr)
        assert f"not found in {tmp_path / 'nowhere'}: pass --corpora DIR or set " \
               f"MINDGRAPH_CORPORA" in run.stderr, name
        assert "--corpora DIR" in subprocess.run(
            [sys.executable, str(BENCH / f"{name}.py"), "--help"], capture_output=True,
            text=True, timeout=300).stdout
