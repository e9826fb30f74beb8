from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from detector.importers import FORMATS
from detector.registry import DETECTORS
from loopguard_site.accounts.access import ProjectChoiceError, project_for, projects_with_role, sessions_visible_to
from loopguard_site.accounts.models import Role
from loopguard_site.replay.selectors import profile_names_of

from .filters import FilterError, page_cursors, session_filters
from .models import Session
from .selectors import (
    DEFAULT_SORT,
    END,
    LABEL_FILTERS,
    VERDICTS,
    session_filter_options,
    session_page,
    session_row,
    sort_choices,
)
from .selectors import session_list as select_sessions
from .services import Upload, clean_tags, sessions_import_upload

PAGE_SIZE = 50
FORMAT_CONTROL = "the Format menu"  # the upload page's control that names a file's format


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    error = None
    try:
        filters = session_filters(request.GET)
        cursors = page_cursors(request.GET, filters["sort"])
    except FilterError as exc:
        error = str(exc)
        filters, cursors = session_filters({}), {}
    visible = sessions_visible_to(request.user)
    sessions = select_sessions(among=visible, **filters)
    page = session_page(sessions, sort=filters["sort"], size=PAGE_SIZE, **cursors)
    query = request.GET.copy()
    for name in ("after", "before"):
        query.pop(name, None)
    projects = projects_with_role(request.user, Role.VIEWER)
    context = {
        "page": page,
        "rows": [session_row(session, filters["profile"]) for session in page.sessions],
        "last_page": END,
        "filters": filters,
        "filter_error": error,
        "options": session_filter_options(visible),
        "projects": projects,
        "profiles": profile_names_of(p.pk for p in projects),
        "detectors": sorted(DETECTORS),
        "verdicts": VERDICTS,
        "label_filters": LABEL_FILTERS,
        "states": Session.State.values,
        "sorts": sort_choices(),
        "default_sort": DEFAULT_SORT,
        "query": query.urlencode(),  # the filters, for the pager's links
    }
    return render(request, "transcripts/session_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def session_upload(request: HttpRequest) -> HttpResponse:
    """The upload page: files (or zips of them) in, one outcome line per file out."""
    context = {
        "formats": ("auto", *FORMATS),
        "projects": projects_with_role(request.user, Role.REVIEWER),
        "outcomes": None,
        "form_error": None,
        "values": request.POST,
    }
    status = 200
    if request.method == "POST":
        files = request.FILES.getlist("file")
        fmt = request.POST.get("format", "auto")
        try:
            project = project_for(request.user, request.POST.get("project"), Role.REVIEWER)
            tags = clean_tags([request.POST.get("tags", "")])
        except ProjectChoiceError as exc:
            context["form_error"], status = f"project: {exc}", exc.status
        except ValueError as exc:
            context["form_error"], status = str(exc), 400
        else:
            if fmt not in context["formats"]:
                context["form_error"], status = f"Format: {fmt!r} is not one of the Format menu's choices", 400
            elif not files:
                context["form_error"], status = "choose or drop at least one file", 400
            else:
                outcomes = sessions_import_upload(
                    [Upload(f.name, f.size, f.read) for f in files],
                    fmt=fmt,
                    uploader=request.user,
                    project=project,
                    title=request.POST.get("title", "").strip(),
                    tags=tags,
                )
                context["outcomes"] = [outcome.format_named_by(FORMAT_CONTROL) for outcome in outcomes]
                context["imported_ids"] = [o.session.pk for o in outcomes if o.session is not None]
    return render(request, "transcripts/session_upload.html", context, status=status)
