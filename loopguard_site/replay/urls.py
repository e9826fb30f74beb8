from django.urls import path

from . import api_views, views

app_name = "replay"

urlpatterns = [
    path("api/replays", api_views.replay_create, name="api_replay_create"),
    path("api/replays/<int:job_id>", api_views.replay_detail, name="api_replay_detail"),
    path("api/replays/<int:job_id>/cancel", api_views.replay_cancel, name="api_replay_cancel"),
    # The transcripts app owns /api/sessions and /api/sessions/<id>; this one is ours.
    path("api/sessions/<int:session_id>/detections", api_views.detection_list, name="api_detection_list"),
    path("replays/", views.job_list, name="job_list"),
    path("replays/new", views.replay_new, name="replay_new"),
    path("replays/compare", views.compare, name="compare"),
    path("replays/<int:job_id>", views.job_detail, name="job_detail"),
]
