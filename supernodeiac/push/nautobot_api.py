""":class:`sync.Api` over Nautobot's REST API, through pynautobot (the ``nautobot`` extra).

Every failure becomes a :class:`PushError` naming what was asked of which endpoint: the server
could not be reached, refused the token, or rejected objects (its JSON errors kept as
``detail``, one per object for a bulk call). The token goes into the request header only;
no message carries it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .sync import PushError

PAGE = 1000  # records per page when listing (Nautobot's default MAX_PAGE_SIZE)
MISSING = "pynautobot is not installed: pip install 'supernodeiac[nautobot]' (or: pip install pynautobot)"


def check_url(url: str) -> str | None:
    """Why ``url`` is not a Nautobot base URL (None when it is one)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"--url must be an http:// or https:// URL of the Nautobot server, not {url!r}"
    if parts.query or parts.fragment or parts.username or parts.password:
        return "--url takes the server's base URL only (no user, password, query or fragment; the token goes in --token-env)"
    return None


class NautobotApi:
    """The four calls of :class:`sync.Api` on one Nautobot server."""

    def __init__(self, url: str, token: str, timeout: float = 1800.0) -> None:
        """``timeout``: seconds to wait for an answer (a bulk write of 100 interfaces may take a busy
        server minutes; connecting gets 15 s)."""
        try:
            import pynautobot
        except ImportError as exc:
            raise PushError(MISSING) from exc
        self._pynautobot = pynautobot
        self.url = url.rstrip("/")
        self.api = pynautobot.api(self.url, token=token)
        # A kept-alive connection the server (or a proxy) has closed meanwhile fails the next request
        # before it is sent: reads are tried again; writes never are (one might have been applied).
        from requests.adapters import HTTPAdapter
        from urllib3.util.retry import Retry

        again = HTTPAdapter(
            max_retries=Retry(total=3, connect=3, read=2, status=0, allowed_methods=frozenset({"GET"}), backoff_factor=0.5)
        )
        for scheme in ("http://", "https://"):
            self.api.http_session.mount(scheme, again)
        self.api.http_session.request = _with_timeout(self.api.http_session.request, timeout)

    def _endpoint(self, path: str) -> Any:
        app, name = path.split("/")
        return getattr(getattr(self.api, app.replace("-", "_")), name.replace("-", "_"))

    def _guard(self, what: str, fn: Any) -> Any:
        import requests

        try:
            return fn()
        except self._pynautobot.RequestError as exc:
            req = exc.req
            detail: Any = None
            try:
                detail = req.json()
            except ValueError:
                detail = None
            status = req.status_code
            if status in (401, 403):
                message = f"the server refused the token (HTTP {status}): {_short(detail)}"
            elif status == 404:
                message = f"{req.url} not found (HTTP 404): is {self.url} a Nautobot 2 server?"
            else:
                message = f"HTTP {status} {req.reason}: {_short(detail)}"
            raise PushError(f"{what}: {message}", detail=detail) from None
        except requests.exceptions.ReadTimeout:
            raise PushError(
                f"{what}: no answer from {self.url} in time; the server may still apply it (pushing again picks up from there)"
            ) from None
        except requests.exceptions.RequestException as exc:
            raise PushError(f"cannot reach Nautobot at {self.url} ({what}): {type(exc).__name__}: {_reason(exc)}") from None
        except (ValueError, KeyError) as exc:  # a body that is not the API's JSON
            raise PushError(f"{what}: the answer from {self.url} is not Nautobot's JSON ({exc})") from None

    def status(self) -> dict[str, Any]:
        """``/api/status/``: the server's versions; also proves the URL and the token."""

        def call() -> dict[str, Any]:
            answer = self.api.http_session.get(f"{self.url}/api/status/", headers=self._headers())
            if answer.status_code != 200:
                raise self._pynautobot.RequestError(answer)
            return dict(answer.json())

        return dict(self._guard("reading /api/status/", call))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.api.token}", "Accept": "application/json"}

    def read(self, endpoint: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
        """Every record matching ``filters``, page by page, as the API's JSON (depth 0: references
        as ``{"id": ...}``); read raw, not as pynautobot records (a tenth of the time)."""

        def call() -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            url: str | None = f"{self.url}/api/{endpoint}/"
            params: dict[str, Any] | None = {**filters, "limit": PAGE, "depth": 0}
            while url:
                answer = self.api.http_session.get(url, params=params, headers=self._headers())
                if answer.status_code != 200:
                    raise self._pynautobot.RequestError(answer)
                page = answer.json()
                out.extend(page["results"])
                url, params = page.get("next"), None  # "next" carries the query
            return out

        return list(self._guard(f"listing {endpoint}", call))

    def create(self, endpoint: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ep = self._endpoint(endpoint)
        made = self._guard(f"creating {endpoint}", lambda: ep.create(objects))
        return [{"id": r.id} for r in (made if isinstance(made, list) else [made])]

    def update(self, endpoint: str, objects: list[dict[str, Any]]) -> None:
        ep = self._endpoint(endpoint)
        self._guard(f"updating {endpoint}", lambda: ep.update(objects))

    def delete(self, endpoint: str, ids: list[str]) -> None:
        ep = self._endpoint(endpoint)
        self._guard(f"deleting {endpoint}", lambda: ep.delete(ids))


def _with_timeout(request: Any, timeout: float) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", (15.0, timeout))
        return request(*args, **kwargs)

    return call


def _reason(exc: BaseException) -> str:
    """The innermost cause of a connection failure ("Connection refused"), not urllib3's wrapping."""
    inner: BaseException = exc
    while inner.__context__ is not None and inner.__context__ is not inner:
        inner = inner.__context__
    text = str(inner) or type(inner).__name__
    return text.split(": ", 1)[-1] if "NewConnectionError" in type(inner).__name__ else text


def _short(detail: Any, limit: int = 400) -> str:
    text = str(detail)
    return text if len(text) <= limit else text[:limit] + " ..."
