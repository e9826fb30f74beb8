"""The lab's one date and time format (UTC, 24 h): `{{ value|date:"DATETIME_FORMAT" }}`
and a datetime rendered as is both give `2026-11-24 23:59`."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
TIME_FORMAT = "H:i"
