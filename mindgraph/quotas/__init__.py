"""Per-identity quotas of the servers (LLM calls per hour, documents per day): see
service.py for what is charged and when, ledger.py for where the counts are kept."""

from .ledger import LEDGER_FILE, QuotaLedger
from .service import Quota, Quotas, charge_to, charged_to, require_llm_call, take_documents

__all__ = ["LEDGER_FILE", "Quota", "QuotaLedger", "Quotas", "charge_to", "charged_to",
           "require_llm_call", "take_documents"]
