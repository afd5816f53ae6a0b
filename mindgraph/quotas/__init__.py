"""Per-identity quotas of the servers (LLM calls and cloud embedding calls per hour,
documents per day): see service.py for what is charged and when, reserve.py for a write's
calls taken ahead, ledger.py for where the counts are kept and repair.py for a damaged one."""

from .ledger import LEDGER_FILE, QuotaLedger
from .service import (Quota, Quotas, charge_to, charged_to, give_back, llm_calls_reserved,
                      require_llm_call, reserve_llm_calls, spending, take_documents)

__all__ = ["LEDGER_FILE", "Quota", "QuotaLedger", "Quotas", "charge_to", "charged_to",
           "give_back", "llm_calls_reserved", "require_llm_call", "reserve_llm_calls",
           "spending", "take_documents"]
