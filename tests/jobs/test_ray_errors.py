"""Ray's failures are classified in one adapter (jobs/ray_errors.py): by exception type and HTTP status, by text
only where Ray gives nothing else. The errors below are made by Ray's own SDK code where it can make them (its
`_raise_error`), else in Ray's formats; and every text the adapter relies on is checked against the installed Ray
at the file its comment cites, so a Ray that rewords one fails here, not on a user's cluster."""

from __future__ import annotations

from pathlib import Path

import pytest
import ray
import requests
from ray.dashboard.modules.dashboard_sdk import SubmissionClient

from gspo_cli.jobs import ray_errors as re_

RAY = Path(ray.__file__).parent


def _sdk(status: int, text: str) -> RuntimeError:
    """The error Ray's job SDK raises for a dashboard answer of `status` (its own code makes it)."""
    response = requests.Response()
    response.status_code, response._content = status, text.encode()
    with pytest.raises(RuntimeError) as info:
        SubmissionClient._raise_error(None, response)  # type: ignore[arg-type]  # uses only the response
    return info.value


def _http_error(status: int) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(f"{status} Client Error: Unauthorized for url: http://h:8265/api/version",
                              response=response)


@pytest.mark.parametrize("exc, kind", [
    (_sdk(401, "Unauthorized: Missing authentication token"), re_.AUTH),
    (_sdk(403, "Forbidden: Invalid authentication token"), re_.AUTH),
    (_http_error(401), re_.AUTH),  # the SDK's version check: requests' HTTPError, status on its response
    (_sdk(404, "Job raysubmit_x does not exist"), re_.NOT_FOUND),
    (_sdk(400, "Traceback ...\nValueError: Job with submission_id j-1 already exists. Please use a different "
               "submission_id."), re_.EXISTS),
    # the head's 500 around its job agent's 400 (job_head.py:134): the text Ray gave test_one_writer's second CLI
    (_sdk(500, "Traceback (most recent call last):\n  File \".../job_head.py\", line 134, in _raise_error\n"
               "RuntimeError: Request failed with status code 400: Traceback (most recent call last):\n"
               "ValueError: Job with submission_id twice-train-20261203-085626 already exists. Please use a "
               "different submission_id.\n."), re_.EXISTS),
    (_sdk(500, "No available agent to submit job, please try again later."), re_.AGENT_NOT_READY),
    (ConnectionError("Failed to connect to Ray at address: http://127.0.0.1:1."), re_.UNREACHABLE),
    (requests.exceptions.ConnectionError("Connection aborted."), re_.UNREACHABLE),
    (RuntimeError("UNAUTHENTICATED: Invalid authentication token"), re_.AUTH),  # a gRPC client: text only
    (Exception("The current node timed out during startup. This could happen because some of the raylet failed "
               "to startup or the GCS has become overloaded."), re_.NODE_START_TIMEOUT),
    # controls: the text alone never decides where Ray gives a status or a type
    (_sdk(500, "internal error: file already exists"), re_.OTHER),  # a 500 that mentions "already exists"
    # a 500 naming the id but not from the agent's 400
    (_sdk(500, "Job with submission_id j-1 already exists (cached)"), re_.OTHER),
    (_sdk(400, "No available agent to submit job"), re_.OTHER),
    (_sdk(500, "Job raysubmit_x does not exist"), re_.OTHER),  # "does not exist" without the 404
    (RuntimeError("timed out during startup"), re_.OTHER),  # not Ray's bare Exception
    (ValueError("something else"), re_.OTHER),
])
def test_classify(exc, kind):
    failure = re_.classify(exc)
    assert failure.kind == kind, (exc, failure)
    assert failure.retry == (kind == re_.AGENT_NOT_READY)


def test_status_is_read_from_the_type_or_the_sdks_one_format():
    assert re_.status_of(_http_error(403)) == 403
    assert re_.status_of(_sdk(404, "x")) == 404
    assert re_.status_of(RuntimeError("status code 404 somewhere")) is None
    assert re_.status_of(ConnectionError("x")) is None


def test_a_refused_token_in_words():
    # `ray start --address` joining a head with the wrong token; stderr of Ray's C++ GCS client
    assert re_.auth_refused("RuntimeError: Token authentication is enabled but the authentication token is invalid "
                            "or incorrect.")
    assert re_.auth_refused("[2026-12-03 04:05:06,789 E 123 456] gcs_rpc_client.h:201: Unauthenticated: ...")
    assert not re_.auth_refused("ConnectionError: GCS has not started yet")


# (file under ray/, a text it writes that ray_errors.py relies on): the lines its comments cite
RAY_TEXTS = [
    ("dashboard/modules/dashboard_sdk.py", 'f"Request failed with status code {r.status_code}: {r.text}."'),
    ("dashboard/http_server_head.py", 'text="Unauthorized: Missing authentication token"'),
    ("dashboard/http_server_head.py", 'text="Forbidden: Invalid authentication token"'),
    ("dashboard/modules/job/job_head.py", 'text=f"Job {job_or_submission_id} does not exist"'),
    ("dashboard/modules/job/job_head.py", '"No available agent to submit job, please try again later."'),
    ("dashboard/modules/job/job_head.py", 'raise RuntimeError(f"Request failed with status code {status}: {error_text}.")'),
    ("dashboard/modules/job/job_manager.py", 'f"Job with submission_id {submission_id} already exists. "'),
    ("_private/authentication/http_token_authentication.py", '"Authentication required: {body}'),
    ("_private/authentication/http_token_authentication.py", '"Authentication failed: {body}'),
    ("_private/authentication/authentication_constants.py", "the authentication token is invalid or incorrect."),
    ("_private/authentication/grpc_authentication_server_interceptor.py", "grpc.StatusCode.UNAUTHENTICATED"),
    ("_private/node.py", '"The current node timed out during startup. This "'),
]


@pytest.mark.parametrize("path, text", RAY_TEXTS)
def test_the_ray_texts_the_adapter_relies_on_are_rays(path, text):
    assert text in (RAY / path).read_text(encoding="utf-8"), f"ray {ray.__version__} {path} no longer writes {text}"


def test_every_phrase_is_one_of_the_ray_texts():
    texts = " ".join(t for _, t in RAY_TEXTS).lower()
    for phrase in re_.AUTH_PHRASES:
        assert phrase in texts, phrase
