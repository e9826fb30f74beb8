"""The LLM judge's HTTP client: chat-completions requests to an
OpenAI-compatible endpoint with the standard library.

The judge (`detector.llm_judge`) does no I/O and reads no environment: it
is given a client, a callable `payload -> response JSON`. This module is
that client for real endpoints, kept apart like the live client, and it is
a plain object of three strings, so a Monitor holding it pickles (the live
lab keeps Monitors between messages). The API key is read from its
environment variable at each request, never stored: a pickled Monitor holds
no secret, and a rotated key is picked up.

    >>> client = HttpChatClient("http://127.0.0.1:8000/v1", api_key_env="JUDGE_KEY")
    >>> client.url
    'http://127.0.0.1:8000/v1/chat/completions'
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

from .config import Profile
from .llm_judge import JudgeError, LLMJudge, LLMJudgeParams
from .params import ConfigError

MAX_RESPONSE_BYTES = 1 << 20


@dataclass(frozen=True)
class HttpChatClient:
    """POSTs to ``{base_url}/chat/completions``; any failure raises
    `JudgeError` naming the URL."""

    base_url: str
    api_key_env: str = ""  # the environment variable holding the key; empty: no key
    timeout: float = 30.0  # seconds per request

    @classmethod
    def for_judge(cls, params: LLMJudgeParams) -> HttpChatClient:
        """The client a judge's parameters describe; `ConfigError` when the
        endpoint is missing or its key's variable is not set now."""
        name = LLMJudge.name
        if not params.base_url:
            raise ConfigError(
                f"{name}.base_url: required: the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"
            )
        if params.api_key_env and not os.environ.get(params.api_key_env):
            raise ConfigError(f"{name}.api_key_env: the environment variable {params.api_key_env} is not set")
        return cls(params.base_url, params.api_key_env, params.timeout)

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def __call__(self, payload: dict) -> dict:
        url = self.url
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            api_key = os.environ.get(self.api_key_env, "")
            if not api_key:
                raise JudgeError(f"{url}: the environment variable {self.api_key_env} is not set")
            headers["Authorization"] = f"Bearer {api_key}"
        request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise JudgeError(f"{url}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise JudgeError(f"{url}: cannot connect: {exc.reason}") from None
        except TimeoutError:
            raise JudgeError(f"{url}: no answer within {self.timeout:g} s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise JudgeError(f"{url}: {type(exc).__name__}: {exc}") from None
        if len(body) > MAX_RESPONSE_BYTES:
            raise JudgeError(f"{url}: answer larger than {MAX_RESPONSE_BYTES} bytes")
        try:
            return json.loads(body)
        except ValueError:
            raise JudgeError(f"{url}: the answer is not JSON") from None


def judge_client_for(profile: Profile) -> HttpChatClient | None:
    """The HTTP client of the profile's LLM judge; None when the profile
    has no judge. For `Monitor(..., judge_client=...)`."""
    params = profile.detectors.get(LLMJudge.name)
    return None if params is None else HttpChatClient.for_judge(params)
