"""REST routes of verification and fact propagation: POST /validate (judge a text against
evidence texts with the offline validator; reads and writes nothing; on the slow lane, within
``serve.validate_max_claims`` and ``serve.validate_max_evidence_sentences``, stopping at the
request's budget), GET /propagate/queue
(the plans awaiting approval, without their texts) and POST /propagate/apply (apply a queued
plan when 'approve' is its digest; wiki/ only, a ledger run either way)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Depends

from ..core import Mindgraph
from ..trust.validate import ValidateLimits, validate_text
from . import schemas as s
from .lanes import ServerLanes
from .rest_routing import Caller, deadline, json_object_body


def add_trust_routes(route: Callable[..., Callable], mg: Mindgraph,
                     lanes: ServerLanes) -> None:
    """Register the routes with rest.py's ``route`` helper."""
    serve = mg.settings.serve

    # the slow lane: a large validation must not hold the lane the searches run on
    @route("post", "/validate", s.ValidateOut,
           "Judge a text against evidence texts (offline validator); reads and writes nothing",
           400, 408, 413, 415, lane=lanes.slow, dependencies=(Depends(json_object_body),))
    def validate(body: s.ValidateIn) -> dict[str, Any]:
        return validate_text(body.text, body.evidence, ValidateLimits(
            serve.validate_max_claims, serve.validate_max_evidence_sentences,
            deadline(serve.request_timeout_s)))

    @route("get", "/propagate/queue", s.PropagationQueueOut,
           "Fact-propagation plans awaiting approval (drafts of pages that state a changed "
           "fact), without their texts")
    def propagation_queue(who: Caller) -> dict[str, Any]:
        return {"plans": mg.as_identity(who).propagation.queue()}

    @route("post", "/propagate/apply", s.RunOut,
           "Apply a queued propagation plan when 'approve' is its digest (wiki/ only; a "
           "ledger run either way)", 400, 404, 408, 413, 415,
           dependencies=(Depends(json_object_body),))
    def approve_propagation(who: Caller, body: s.ApproveIn) -> dict[str, Any]:
        service = mg.as_identity(who).propagation
        return service.apply(service.queued_plan(body.plan), body.approve).to_dict()


__all__ = ["add_trust_routes"]
