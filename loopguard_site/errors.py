"""The one error for what a caller sent wrong, and how pages show it.

Services raise `FieldError(message, field, status)`: what is wrong, where
(a form field, a query parameter, a JSON path such as `events[3].text`;
None for the request as a whole) and the HTTP status that says so (400
unless the request conflicts with the state of things, 409, or names what is
not the caller's, 403/404). Each edge renders it once: the JSON API's
`api_view` as `{"error", "field", "line"}` (docs/api.md), the live sockets'
consumer as `{"error", "field", "seq"}` (docs/event-format.md), and pages
with `page_error` / `form_error_add` below. Imports nothing of the apps: every
layer may raise it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import Http404

if TYPE_CHECKING:
    from django import forms


class FieldError(ValueError):
    """A request the caller can fix. `line`: the line of the body or file at
    fault, when known; `retry_after`: the seconds to wait before sending the
    same again, when only time can help (a quota used up)."""

    def __init__(
        self,
        message: str,
        field: str | None = None,
        status: int = 400,
        *,
        line: int | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.field = field
        self.status = status
        self.line = line
        self.retry_after = retry_after


def page_error(error: FieldError) -> str:
    """The error as a page shows it beside its form: the message, led by its
    field unless the message names it first. A 403 or 404 is no form error:
    the page is refused as any other it may not see (PermissionDenied, Http404)."""
    if error.status == 403:
        raise PermissionDenied(str(error)) from error
    if error.status == 404:
        raise Http404(str(error)) from error
    message = str(error)
    if error.field is None or message.startswith((error.field, f'"{error.field}"')):
        return message
    return f"{error.field}: {message}"


def form_error_add(form: forms.Form, error: FieldError) -> None:
    """Show the error on a Django form: by its field when the form has it,
    else above the form as `page_error` words it."""
    if error.field in form.fields:
        page_error(error)  # refuses a 403 or 404 all the same
        form.add_error(error.field, str(error))
    else:
        form.add_error(None, page_error(error))
