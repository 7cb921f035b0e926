"""Errors of `recipe hub` and the translation of ``huggingface_hub`` / transport exceptions into them.

Every message names the repo, the endpoint (never a token) and what to do next. Covered: missing repo,
gated repo without access, missing revision, missing file, no network / wrong endpoint. Everything else
is re-raised unchanged.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

DEFAULT_ENDPOINT = "https://huggingface.co"


class HubError(RuntimeError):
    """A Hub operation failed for a reason the user can act on (the message says how)."""


class HubUnreachableError(HubError):
    """The endpoint could not be reached (no network, wrong HF_ENDPOINT, mirror down)."""


class UntrustedArtifactError(HubError):
    """A downloaded or to-be-published artifact needs pickle or repository code and the user did not opt in."""


def current_endpoint(endpoint: str | None = None) -> str:
    """The endpoint to use: explicit argument, else ``HF_ENDPOINT`` read now (mirrors), else huggingface.co."""
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def public_endpoint(endpoint: str) -> str:
    """The endpoint without any user:password part, safe to write into manifests and logs."""
    parts = urlsplit(endpoint)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _transport_error_types() -> tuple[type, ...]:
    import socket

    types: list[type] = [ConnectionError, TimeoutError, socket.gaierror]
    for mod in ("httpx2", "httpx"):  # huggingface_hub 2.x uses httpx2; transformers/datasets may use httpx
        try:
            types.append(__import__(mod).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(types)


def _is_transport_error(exc: BaseException) -> bool:
    types = _transport_error_types()
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, types):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@contextlib.contextmanager
def hub_errors(repo_id: str, repo_type: str, endpoint: str, revision: str | None = None) -> Iterator[None]:
    """Translate client exceptions raised inside the block into :class:`HubError` with a clear message."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"{repo_type} repo {repo_id!r} at {public_endpoint(endpoint)}"
    try:
        yield
    except GatedRepoError:
        raise HubError(
            f"{where} is gated and this account has no access: accept its terms on "
            f"{public_endpoint(endpoint)}/{'datasets/' if repo_type == 'dataset' else ''}{repo_id}, then log in "
            "with `hf auth login` or export HF_TOKEN (a token with read access).") from None
    except RevisionNotFoundError:
        raise HubError(f"revision {revision!r} does not exist in {where}: check hub.<artifact>.revision "
                       "or --revision (a branch, tag or 40-hex commit).") from None
    except RepositoryNotFoundError:
        raise HubError(f"{where} was not found (or it is private and this account cannot see it): check the "
                       "repo id, --repo-type, and HF_ENDPOINT; for a private repo log in with `hf auth login`.") from None
    except OfflineModeIsEnabled:
        raise HubUnreachableError(f"HF_HUB_OFFLINE is set, so {where} cannot be contacted: unset it to "
                                  "download, or use an existing local copy.") from None
    except LocalEntryNotFoundError as exc:
        if _is_transport_error(exc) or "connection" in str(exc).lower() or "offline" in str(exc).lower():
            raise HubUnreachableError(_unreachable(where, endpoint)) from None
        raise
    except EntryNotFoundError as exc:
        raise HubError(f"a file is missing in {where}: {exc}") from None
    except HfHubHTTPError as exc:
        if exc.response is not None and exc.response.status_code == 412:
            raise HubError(f"{where}: revision {revision!r} moved while this command ran (someone else pushed); "
                           "nothing was written -- run the command again to compare with the new head.") from None
        if _is_transport_error(exc):
            raise HubUnreachableError(_unreachable(where, endpoint)) from None
        raise
    except Exception as exc:
        if _is_transport_error(exc):
            raise HubUnreachableError(_unreachable(where, endpoint)) from None
        raise


def _unreachable(where: str, endpoint: str) -> str:
    return (f"cannot reach the Hugging Face Hub for {where}: no network or the endpoint is down. Check "
            f"connectivity, or point HF_ENDPOINT at a reachable mirror (now: {public_endpoint(endpoint)}).")
