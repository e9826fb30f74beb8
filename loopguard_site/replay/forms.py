"""The lab's replay and compare forms: input shapes only; the services check
what the input means (known profiles, existing sessions)."""

from __future__ import annotations

from django import forms

from loopguard_site.accounts.models import Project

SCOPES = (("selected", "the sessions ticked below"), ("all", "every session matching the filter"))


def _choices(names: list[str]) -> list[tuple[str, str]]:
    return [(name, name) for name in names]


class ReplayForm(forms.Form):
    project = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)
    scope = forms.ChoiceField(choices=SCOPES, initial="selected", widget=forms.RadioSelect)
    sessions = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple)
    model = forms.CharField(required=False, max_length=200)
    format = forms.CharField(required=False, max_length=32)
    tag = forms.CharField(required=False, max_length=100)
    profiles = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, initial=["default"])

    def __init__(
        self,
        *args,
        projects: list[Project],
        session_choices: list[tuple[int, str]],
        profile_names: list[str],
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [("", "—"), *((p.pk, p.name) for p in projects)]
        self.fields["sessions"].choices = session_choices
        self.fields["profiles"].choices = _choices(profile_names)


class CompareForm(forms.Form):
    a = forms.ChoiceField(label="profile A")
    b = forms.ChoiceField(label="profile B")
    sessions = forms.CharField(required=False, help_text="session ids, comma-separated; empty: every replayed one")

    def __init__(self, *args, profile_names: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["a"].choices = self.fields["b"].choices = _choices(profile_names)

    def clean_sessions(self) -> list[int] | None:
        raw = self.cleaned_data["sessions"].replace(" ", "")
        if not raw:
            return None
        try:
            return [int(part) for part in raw.split(",") if part]
        except ValueError as exc:
            raise forms.ValidationError("session ids are whole numbers separated by commas") from exc

    def clean(self) -> dict:
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("pick two different profiles")
        return data
