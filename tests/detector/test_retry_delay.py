"""The live client's reconnect backoff: exponential, capped, with jitter, so
that producers cut off together do not come back as one herd."""

from __future__ import annotations

import random

from detector.live_client import RETRY_BASE, RETRY_CAP, retry_delay


def test_each_delay_lies_in_the_upper_half_of_its_exponential_ceiling():
    for attempt in range(10):
        ceiling = min(RETRY_BASE * 2**attempt, RETRY_CAP)
        delays = [retry_delay(attempt) for _ in range(200)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays), attempt


def test_clients_retrying_at_the_same_moment_spread_out():
    random.seed(22)
    delays = sorted(retry_delay(4) for _ in range(300))  # 300 producers on their fifth try
    assert len(set(delays)) == 300
    # spread over the whole half-ceiling: no tenth of it holds more than a fifth of them
    ceiling = min(RETRY_BASE * 2**4, RETRY_CAP)
    tenths = [
        sum(1 for d in delays if ceiling / 2 + k * ceiling / 20 <= d < ceiling / 2 + (k + 1) * ceiling / 20)
        for k in range(10)
    ]
    assert max(tenths) < 60 and min(tenths) > 10, tenths
