"""Ray's failures, classified in one place: by exception type and HTTP status first; by the text of Ray's message
only where Ray gives nothing else, each such case with the Ray line that writes it (ray 2.60.0).

Ray's job SDK turns every non-200 answer of the dashboard into `RuntimeError("Request failed with status code
{status}: {text}.")` (ray/dashboard/modules/dashboard_sdk.py `_raise_error`; no typed HTTP error), so there the
status is read back from that one fixed format; its version check raises requests' `HTTPError`, whose response
carries the status; an unreachable dashboard is a `ConnectionError` (the SDK re-raises requests' as the builtin
one, dashboard_sdk.py `_check_connection_and_version`) or another `OSError`. Ray's gRPC side (`ray.init`, `ray
start` joining a head) and a node's log say a refused token, and `ray.init` a raylet that did not register, in
words only: `auth_refused(text)` and the `NODE_START_TIMEOUT` kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the kinds gspo acts on
AUTH = "auth"  # the cluster refused our token (or its absence)
EXISTS = "exists"  # a job with this submission id exists
AGENT_NOT_READY = "agent-not-ready"  # the head's job agent has not registered yet (a head that just started)
NOT_FOUND = "not-found"  # no such job
UNREACHABLE = "unreachable"  # no answer at that address
NODE_START_TIMEOUT = "node-start-timeout"  # ray.init's new local node did not register in time (a busy host)
OTHER = "other"

# ray/dashboard/modules/dashboard_sdk.py:305-307: f"Request failed with status code {r.status_code}: {r.text}."
_SDK_STATUS = re.compile(r"Request failed with status code (\d{3})")
# ray/dashboard/modules/job/job_head.py:134 (the agent's answer inside the head's 500) and job_manager.py:554
_AGENT_400 = re.compile(r"Request failed with status code 400: ")
_EXISTS_TEXT = re.compile(r"Job with submission_id \S+ already exists")

# A refused token, where Ray says it only in words (lower case; matched anywhere in the text):
AUTH_PHRASES = (
    # ray/_private/authentication/http_token_authentication.py:118,124 (the client side's explanation)
    "authentication required", "authentication failed",
    # the GCS / raylet gRPC status (C++, in _raylet.so and gcs_server: "UNAUTHENTICATED", "Unauthenticated";
    # ray/_private/authentication/grpc_authentication_server_interceptor.py:52 aborts with StatusCode.UNAUTHENTICATED)
    "unauthenticated",
    # ray/dashboard/http_server_head.py:221,228 and http_token_authentication.py:72,77 (the texts of the 401 / 403)
    "invalid authentication token", "missing authentication token",
    # ray/_private/authentication/authentication_constants.py:6 TOKEN_INVALID_ERROR_MESSAGE
    "authentication token is invalid",
)


@dataclass(frozen=True)
class RayFailure:
    kind: str
    status: int | None  # the dashboard's HTTP status, when the failure was an answer
    detail: str  # Ray's message, first line

    @property
    def retry(self) -> bool:
        """A failure that goes away by itself: the agent registers within seconds."""
        return self.kind == AGENT_NOT_READY


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a job-SDK error (None when the failure was not an HTTP answer): requests' HTTPError
    carries its response (the SDK's version check, dashboard_sdk.py `r.raise_for_status()`); the SDK's own
    RuntimeError carries it only in its fixed message."""
    response = getattr(exc, "response", None)
    if isinstance(getattr(response, "status_code", None), int):
        return int(response.status_code)  # type: ignore[union-attr]
    m = _SDK_STATUS.search(str(exc)) if isinstance(exc, RuntimeError) else None
    return int(m.group(1)) if m else None


def auth_refused(text: str) -> bool:
    """Whether Ray's words (an exception's text, a node's log, stderr of Ray's C++ client) say the cluster refused
    a missing or wrong token: for the failures that carry no HTTP status (`AUTH_PHRASES`)."""
    low = text.lower()
    return any(phrase in low for phrase in AUTH_PHRASES)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


def classify(exc: BaseException) -> RayFailure:
    """What a Ray error means to gspo."""
    detail = _first_line(exc)
    status = status_of(exc)
    text = str(exc)
    if status in (401, 403):  # ray/dashboard/http_server_head.py:219-229: 401 token missing, 403 token invalid
        return RayFailure(AUTH, status, detail)
    if status == 404:  # ray/dashboard/modules/job/job_head.py:457 (and :489, :521, :578): "Job {id} does not exist"
        return RayFailure(NOT_FOUND, status, detail)
    if status == 400 and "already exists" in text:
        # 400 is any bad request (job_head.py:432 turns every ValueError of submit_job into one); only the text
        # says which: ray/dashboard/modules/job/job_manager.py:554
        # f"Job with submission_id {submission_id} already exists. Please use a different submission_id."
        return RayFailure(EXISTS, status, detail)
    if status == 500 and _AGENT_400.search(text) and _EXISTS_TEXT.search(text):
        # The head hands a submit to a job agent (ray/dashboard/modules/job/job_head.py:419) and raises the agent's
        # 400 as its own 500 (job_head.py:134 `_raise_error`): two submits of one id in the same instant, the
        # second refused by the agent. Measured: tests/engines/native/test_one_writer.py, both CLIs in one second.
        return RayFailure(EXISTS, status, detail)
    if status == 500 and "No available agent" in text:
        # 500 is any server error; ray/dashboard/modules/job/job_head.py:425
        # "No available agent to submit job, please try again later."
        return RayFailure(AGENT_NOT_READY, status, detail)
    if status is None and isinstance(exc, (ConnectionError, OSError)):
        return RayFailure(UNREACHABLE, None, detail)
    if status is None and auth_refused(text):
        # Not an HTTP answer: Ray's gRPC clients (ray.init, the state API) say a refused token only in words
        # (AUTH_PHRASES)
        return RayFailure(AUTH, None, detail)
    if status is None and type(exc) is Exception and "timed out during startup" in text:
        # a bare Exception: ray/_private/node.py:440-444 "The current node timed out during startup. ..." (Ray gives
        # a new raylet 30 s to register, hard-coded there)
        return RayFailure(NODE_START_TIMEOUT, None, detail)
    return RayFailure(OTHER, status, detail)
