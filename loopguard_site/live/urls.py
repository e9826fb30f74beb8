from django.urls import path

from . import api_views, views

app_name = "live"

urlpatterns = [
    # Before the transcripts app's URLs: this one also answers its GET.
    path("api/sessions/<int:pk>/events", api_views.session_events, name="api_session_events"),
    path("api/live/sessions", api_views.live_sessions, name="api_live_sessions"),
    path("live/", views.dashboard, name="dashboard"),
    path("live/<int:pk>", views.live_session, name="live_session"),
    path("live/<int:pk>/timeline", views.live_timeline, name="live_timeline"),
    path("live/from/<int:pk>", views.stream_stored, name="stream_stored"),
]
