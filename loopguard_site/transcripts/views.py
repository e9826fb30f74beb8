from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from detector.importers import FORMATS
from loopguard_site.accounts.access import project_for, projects_with_role
from loopguard_site.accounts.models import Role
from loopguard_site.errors import FieldError, page_error

from .selectors import upload_formats
from .services import Upload, clean_tags, sessions_import_upload

FORMAT_CONTROL = "the Format menu"  # the upload page's control that names a file's format


@login_required
@require_http_methods(["GET", "POST"])
def session_upload(request: HttpRequest) -> HttpResponse:
    """The upload page: files (or zips of them) in, one outcome line per file out."""
    context = {
        "formats": ("auto", *FORMATS),
        "upload_formats": upload_formats(),
        "upload_max_mb": settings.LOOPGUARD_UPLOAD_MAX_BYTES // (1024 * 1024),
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
        except FieldError as exc:
            context["form_error"], status = page_error(exc), exc.status
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
