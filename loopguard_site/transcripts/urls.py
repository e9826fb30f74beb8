from django.urls import path

from . import api_views, views

app_name = "transcripts"

urlpatterns = [
    path("sessions/", views.session_list, name="session_list"),
    path("upload/", views.session_upload, name="session_upload"),
    path("api/sessions", api_views.sessions, name="api_sessions"),
    path("api/sessions/<int:pk>", api_views.session_detail, name="api_session"),
    path("api/sessions/<int:pk>/events", api_views.session_events_list, name="api_session_events"),
    path("api/sessions/<int:pk>/raw", api_views.session_raw, name="api_session_raw"),
]
