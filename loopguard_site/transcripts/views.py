from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from detector.importers import FORMATS

from .filters import FilterError, session_filters
from .models import Session
from .selectors import DEFAULT_SORT, session_filter_options, sort_choices
from .selectors import session_list as select_sessions
from .services import Upload, clean_tags, sessions_import_upload

PAGE_SIZE = 50


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    error = None
    try:
        filters = session_filters(request.GET)
    except FilterError as exc:
        error = str(exc)
        filters = session_filters({})
    page = Paginator(select_sessions(**filters), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "filters": filters,
        "filter_error": error,
        "options": session_filter_options(),
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
    context = {"formats": ("auto", *FORMATS), "outcomes": None, "form_error": None, "values": request.POST}
    if request.method == "POST":
        files = request.FILES.getlist("file")
        fmt = request.POST.get("format", "auto")
        try:
            tags = clean_tags([request.POST.get("tags", "")])
        except ValueError as exc:
            tags, context["form_error"] = [], str(exc)
        if fmt not in context["formats"]:
            context["form_error"] = f"unknown format {fmt!r}"
        elif not files:
            context["form_error"] = "choose or drop at least one file"
        if context["form_error"] is None:
            context["outcomes"] = sessions_import_upload(
                [Upload(f.name, f.size, f.read) for f in files],
                fmt=fmt,
                uploader=request.user,
                title=request.POST.get("title", "").strip(),
                tags=tags,
            )
    return render(request, "transcripts/session_upload.html", context, status=400 if context["form_error"] else 200)
