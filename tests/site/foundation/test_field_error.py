"""`FieldError`, the one error for what a caller sent wrong, and its three
renderings: pages (`page_error`, `form_error_add`), the JSON API (`api_view`)
and the producer socket (`live.answers.error_message`)."""

from __future__ import annotations

import json

import pytest
from django import forms
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.test import RequestFactory

from loopguard_site.api import api_view
from loopguard_site.errors import FieldError, form_error_add, page_error
from loopguard_site.live.answers import error_message


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (FieldError("no project 'x' of yours", "project"), "project: no project 'x' of yours"),
        (FieldError("sort must be one of a, b", "sort"), "sort must be one of a, b"),  # it names its field first
        (FieldError('"note" must be a string', "note"), '"note" must be a string'),
        (FieldError("the file defines no profile"), "the file defines no profile"),
        (FieldError("session 3 is closed: it takes no events", status=409), "session 3 is closed: it takes no events"),
    ],
)
def test_a_page_shows_the_message_led_by_its_field_unless_it_names_it_first(error, shown):
    assert page_error(error) == shown


@pytest.mark.parametrize(("status", "refusal"), [(403, PermissionDenied), (404, Http404)])
def test_a_page_refuses_what_is_not_the_callers_as_any_other_page(status, refusal):
    with pytest.raises(refusal, match="^this needs the admin role$"):
        page_error(FieldError("this needs the admin role", "project", status))


class _Form(forms.Form):
    project = forms.CharField(required=False)


def test_a_form_shows_the_error_by_its_field_or_above_it():
    form = _Form({"project": "x"})
    assert form.is_valid()

    form_error_add(form, FieldError("no project 'x' of yours", "project"))
    form_error_add(form, FieldError("no session matches the filter", "filter"))

    assert form.errors == {
        "project": ["no project 'x' of yours"],
        "__all__": ["filter: no session matches the filter"],
    }
    with pytest.raises(PermissionDenied):
        form_error_add(form, FieldError("this needs the admin role", "project", 403))


@pytest.mark.django_db
def test_the_api_answers_any_field_error_with_the_contracts_body_and_status(django_user_model):
    @api_view()
    def refusing(request):
        raise FieldError("x must be a day", "x", 409, line=3, retry_after=5)

    request = RequestFactory().get("/api/anything")
    request.user = django_user_model.objects.create_user("someone")

    response = refusing(request)

    assert response.status_code == 409
    assert json.loads(response.content) == {"error": "x must be a day", "field": "x", "line": 3}
    assert response["Retry-After"] == "5"


def test_the_producer_socket_answers_with_the_messages_seq_and_when_to_retry():
    assert error_message(FieldError("seq 3 leaves a gap: the next message is 2", "seq"), 3) == {
        "error": "seq 3 leaves a gap: the next message is 2",
        "field": "seq",
        "seq": 3,
    }
    assert error_message(FieldError("quota used up; retry in 60 s", status=429, retry_after=60), 7) == {
        "error": "quota used up; retry in 60 s",
        "field": None,
        "seq": 7,
        "retry_after": 60,
    }
