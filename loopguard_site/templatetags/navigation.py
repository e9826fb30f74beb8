"""The top bar's sections and which one the current page belongs to."""

from __future__ import annotations

from django import template
from django.urls import reverse

register = template.Library()

# (label, URL name, the URL names or namespaces whose pages belong to it)
SECTIONS = (
    ("Overview", "overview:overview", {"overview"}),
    ("Sessions", "timeline:session_list", {"timeline"}),
    ("Live", "live:dashboard", {"live"}),
    ("Review", "review:queue", {"review"}),
    ("Replays", "replay:job_list", {"replay"}),
    ("Profiles", "profiles:profile_list", {"profiles"}),
    ("Upload", "transcripts:session_upload", {"transcripts:session_upload"}),
)
ACCOUNT_PAGES = {"accounts:projects", "accounts:tokens", "api:reference"}


def _page_keys(request) -> set[str]:
    match = getattr(request, "resolver_match", None) if request is not None else None
    return {match.view_name, match.namespace} if match is not None else set()


@register.simple_tag(takes_context=True)
def navigation(context) -> dict:
    """`sections`: label, url and `current` for each link of the bar;
    `account`: whether the page is one of the account menu's. Works without a
    request too (the 500 page): nothing is current then."""
    keys = _page_keys(context.get("request"))
    sections = [
        {"label": label, "url": reverse(name), "current": bool(keys & pages)} for label, name, pages in SECTIONS
    ]
    return {"sections": sections, "account": bool(keys & ACCOUNT_PAGES)}
