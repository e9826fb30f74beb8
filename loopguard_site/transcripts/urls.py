from django.urls import path

from . import api_views, views

app_name = "transcripts"

# `sessions/` and `api/sessions[/<id>]` (the list, with scan results and
# labels) are the timeline app's; `POST /api/sessions` is answered there by
# `api_views.sessions_create`.
urlpatterns = [
    path("upload/", views.session_upload, name="session_upload"),
    path("api/sessions/<int:pk>/events", api_views.session_events_list, name="api_session_events"),
    path("api/sessions/<int:pk>/raw", api_views.session_raw, name="api_session_raw"),
]
