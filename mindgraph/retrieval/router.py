"""The intent router, pass 1: rules with no model call, in English, Japanese and Chinese.

Intents: location ("where is X", "which page"), concept ("what is", "why", "how does"),
relation ("how does A relate to B", "A vs B"), failure ("error", "fails", "how to fix"), and
default when nothing fires. Each intent carries its own retrieval mix: location leans on
keywords, concept and failure on vectors, relation on the graph; failure also favours
troubleshooting pages. Confidence = min(hits / 2, 1) where hits counts the distinct rules that
fired. Latin-script rules match on word boundaries (so "vs" never fires inside "canvas"); CJK
rules match anywhere, since CJK text has no spaces. ``retrieval.intents`` in mindgraph.yml
replaces any intent's patterns or weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..errors import ConfigError

ORDER = ("failure", "relation", "location", "concept")


@dataclass(frozen=True)
class IntentProfile:
    """The rules of one intent and the retrieval mix it asks for."""

    name: str
    patterns: tuple[str, ...] = ()
    keyword: float = 0.4
    vector: float = 0.6
    graph: float = 1.0          # multiplier of the graph boost
    failure_pages: float = 0.0  # bonus for troubleshooting pages


DEFAULT_PROFILES: dict[str, IntentProfile] = {
    "location": IntentProfile("location", (
        r"where (?:is|are|do|does|can|should|to)", r"which (?:file|page|note|folder|setting|"
        r"menu|section|doc|docs|plugin|command)", r"where['’]s", r"located", r"defined",
        r"find (?:the|a|where)", r"is there (?:a|an|any)", r"how (?:do|can) i (?:set|turn|"
        r"enable|change|save|have|open|get|type)",
        r"どこ", r"どの(?:ファイル|ページ|設定|メニュー)", r"場所", r"どうすれば",
        r"哪里", r"在哪", r"哪个(?:文件|页面|设置|插件)", r"位置", r"应该怎么", r"怎么操作"),
        keyword=0.65, vector=0.35),
    "concept": IntentProfile("concept", (
        r"what (?:is|are|does|do)", r"why", r"how does", r"how do(?:es)? .{1,40} work",
        r"explain", r"meaning of", r"what happens", r"purpose",
        r"とは", r"何(?:です|が|を)", r"なぜ", r"仕組み", r"どういう", r"意味",
        r"(?<![为是])什么", r"为什么", r"是什么", r"原理", r"意思", r"叫什么"),
        keyword=0.35, vector=0.65),
    "relation": IntentProfile("relation", (
        r"relat(?:e|es|ed|ion|ionship)", r"difference between", r"differ(?:s|ence)?",
        r"versus", r"vs\.?", r"compared? (?:to|with)", r"work together", r"interact",
        r"one versus the other", r"which one",
        r"関係", r"違い", r"比較", r"連携",
        r"关系", r"区别", r"不同", r"比较", r"配合"),
        keyword=0.6, vector=0.4, graph=2.0),
    "failure": IntentProfile("failure", (
        r"errors?", r"fail(?:s|ed|ing|ure)?", r"broken", r"(?:doesn['’]t|does not|isn['’]t|"
        r"won['’]t|not) (?:work|load|show|sync|appear)", r"fix", r"crash(?:es|ed)?",
        r"troubleshoot(?:ing)?", r"can(?:no|['’])t", r"unable", r"never loads",
        r"keeps? (?:bouncing|failing|crashing)", r"what['’]s going on", r"recover",
        r"エラー", r"失敗", r"できない", r"動かない", r"原因", r"直(?:す|し)", r"取り込まれていない",
        r"表示されない",
        r"错误", r"失败", r"无法", r"不能", r"没有效果", r"故障", r"报错", r"不生效"),
        keyword=0.55, vector=0.45, failure_pages=0.1),
}
DEFAULT_INTENT = IntentProfile("default", (), keyword=0.6, vector=0.4)


@dataclass(frozen=True)
class Intent:
    """What the router decided: the intent, its confidence and the rules that fired."""

    name: str
    confidence: float
    hits: tuple[str, ...]
    profile: IntentProfile

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"name": self.name, "confidence": self.confidence, "rules": list(self.hits)}


def _compile(pattern: str) -> re.Pattern:
    start = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_(]", pattern) else ""
    end = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_)?.]$", pattern) else ""
    try:
        return re.compile(start + "(?:" + pattern + ")" + end, re.I)
    except re.error as exc:
        raise ConfigError(f"retrieval.intents: pattern {pattern!r} is not a valid regular "
                          f"expression ({exc}). Fix it in mindgraph.yml.") from exc


class IntentRouter:
    """Rule-based intent detection; ``overrides`` comes from ``retrieval.intents``."""

    def __init__(self, overrides: Mapping[str, Any] | None = None,
                 base_weights: tuple[float, float] | None = None):
        profiles = dict(DEFAULT_PROFILES)
        default = DEFAULT_INTENT
        if base_weights is not None:
            default = replace(default, keyword=base_weights[0], vector=base_weights[1])
        for name, spec in (overrides or {}).items():
            if not isinstance(spec, Mapping):
                raise ConfigError(f"retrieval.intents.{name} must be a mapping "
                                  f"(patterns, keyword, vector, graph, failure_pages).")
            known = {"patterns", "keyword", "vector", "graph", "failure_pages"}
            unknown = set(spec) - known
            if unknown:
                raise ConfigError(f"retrieval.intents.{name}: unknown key(s) "
                                  f"{sorted(unknown)}; known: {sorted(known)}.")
            base = profiles.get(name, default if name == "default" else IntentProfile(name))
            changes: dict[str, Any] = {}
            if "patterns" in spec:
                changes["patterns"] = tuple(str(p) for p in spec["patterns"] or ())
            for key in ("keyword", "vector", "graph", "failure_pages"):
                if key in spec:
                    changes[key] = float(spec[key])
            updated = replace(base, **changes)
            if name == "default":
                default = updated
            else:
                profiles[name] = updated
        self.default = default
        self.profiles = profiles
        self._rules = {name: [(p, _compile(p)) for p in profile.patterns]
                       for name, profile in profiles.items()}
        self._order = [n for n in ORDER if n in profiles] + sorted(set(profiles) - set(ORDER))

    def route(self, query: str) -> Intent:
        """The intent of ``query`` with its confidence and the rules that fired."""
        best: tuple[int, str, tuple[str, ...]] | None = None
        for name in self._order:
            fired = tuple(p for p, rx in self._rules[name] if rx.search(query))
            if fired and (best is None or len(fired) > best[0]):
                best = (len(fired), name, fired)
        if best is None:
            return Intent("default", 0.0, (), self.default)
        hits, name, fired = best
        return Intent(name, min(hits / 2, 1.0), fired, self.profiles[name])

    def weights(self, intent: Intent, blend: bool = True) -> tuple[float, float]:
        """The (keyword, vector) mix for ``intent``.

        With ``blend``, the intent's mix is moved towards the default mix in proportion to
        the router's doubt: confidence × intent + (1 − confidence) × default. One rule firing
        (confidence 0.5) is weak evidence of the intent (a "how do I" question is often about
        a concept, not a location), so it should not swing the whole mix; two rules do.
        """
        own = (intent.profile.keyword, intent.profile.vector)
        if not blend:
            return own
        c = intent.confidence
        base = (self.default.keyword, self.default.vector)
        return (c * own[0] + (1 - c) * base[0], c * own[1] + (1 - c) * base[1])
