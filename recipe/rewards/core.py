"""``verify`` for one (record, response): dispatch by ``record["verifier"]["name"]`` and contain failures.

Only these escape as exceptions: ``UnknownVerifierError`` (a config/data error that must stop the run),
``SandboxUnavailable`` (no isolation on this host) and ``KeyboardInterrupt``/``SystemExit``. Everything the response or the row can get wrong scores 0
with a reason: missing or ill-typed fields (``missing_field:*`` / ``invalid_field:*``), responses that are
not text (``bad_response``), checks that run too long (``timeout``), and any checker bug
(``error:<Type>``), so one bad row never breaks a batch.
"""
from __future__ import annotations

from typing import Any

from recipe.rewards.extract import BadResponse
from recipe.rewards.verifier_registry import UnknownVerifierError, get_verifier
from recipe.rewards.result import VerifierResult, fail
from recipe.rewards.spec import FieldError
from recipe.rewards.timeouts import CheckTimeout
from recipe.sandbox.bwrap import SandboxUnavailable


def verifier_name(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    spec = record.get("verifier")
    if isinstance(spec, dict) and isinstance(spec.get("name"), str):
        return spec["name"]
    return None


def verify(record: dict, response: Any) -> VerifierResult:
    if not isinstance(record, dict):
        return fail("bad_record", type=type(record).__name__)
    spec = record.get("verifier")
    if spec is None:
        return fail("missing_field:verifier")
    if not isinstance(spec, dict):
        return fail("invalid_field:verifier")
    name = spec.get("name")
    if not isinstance(name, str):
        return fail("missing_field:verifier.name")
    fn = get_verifier(name)  # UnknownVerifierError propagates: config error
    try:
        result = fn(record, response)
    except UnknownVerifierError:
        raise
    except SandboxUnavailable:
        raise  # an environment error (no bubblewrap): never a silent zero reward
    except FieldError as e:
        return fail(e.reason, error=str(e))
    except BadResponse as e:
        return fail("bad_response", error=str(e)[:300])
    except CheckTimeout as e:
        return fail("timeout", error=str(e))
    except RecursionError:
        return fail("error:RecursionError")
    except Exception as e:  # noqa: BLE001 - a checker bug must not break the batch; the reason names it
        return fail(f"error:{type(e).__name__}", error=str(e)[:300])
    if not isinstance(result, VerifierResult):
        return fail("error:BadVerifierReturn", got=type(result).__name__)
    return result
