"""`mindgraph lint`: what a careful editor would flag in the wiki, read-only.

``check`` (page/check.py) is the fast structural check (links, frontmatter, backlinks); lint
reads what the pages say: pages without a real summary, references that point nowhere, facts
that disagree between pages, features one page calls deprecated or removed while others still
describe them as current, and near-duplicate pages. Every rule is offline and deterministic;
with an LLM configured, the disagreeing-fact candidates are judged by it in batches.
"""
