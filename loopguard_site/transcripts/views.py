from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from .selectors import session_list as select_sessions

PAGE_SIZE = 50


@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(select_sessions(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "transcripts/session_list.html", {"page": page})
