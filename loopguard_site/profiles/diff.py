"""What changed between two profile tables: a pure function."""

from __future__ import annotations

META_KEYS = ("models", "description")


def profile_diff(old: dict, new: dict) -> list[dict]:
    """Rows {"detector", "param", "old", "new"} for every value that differs
    (`detector` "" for the profile's own keys; a detector switched on or off
    shows as param "enabled").

    >>> profile_diff({"a": {"x": 1}, "b": {}}, {"a": {"x": 2}})[1]
    {'detector': 'b', 'param': 'enabled', 'old': True, 'new': False}
    """
    rows = [
        {"detector": "", "param": key, "old": old.get(key), "new": new.get(key)}
        for key in META_KEYS
        if old.get(key) != new.get(key)
    ]
    detectors = [k for k in old if k not in META_KEYS] + [k for k in new if k not in META_KEYS and k not in old]
    for name in detectors:
        before, after = old.get(name), new.get(name)
        if before is None or after is None:
            rows.append({"detector": name, "param": "enabled", "old": before is not None, "new": after is not None})
            continue
        for param in list(before) + [p for p in after if p not in before]:
            if before.get(param) != after.get(param):
                rows.append({"detector": name, "param": param, "old": before.get(param), "new": after.get(param)})
    return rows
