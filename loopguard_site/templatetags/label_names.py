"""`label_name`: a label's kind as reviewers read it on every page
("true_loop" → "true loop"), where the stored value is a key."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def label_name(kind: str) -> str:
    return kind.replace("_", " ")
