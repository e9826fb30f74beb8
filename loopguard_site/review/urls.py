from django.urls import path

from . import api_views, views

app_name = "review"

urlpatterns = [
    path("api/detections/<int:detection_id>/labels", api_views.detection_label_create, name="api_detection_labels"),
    path("api/sessions/<int:session_id>/labels", api_views.session_label_create, name="api_session_labels"),
    path("api/adjudications", api_views.adjudication_create, name="api_adjudications"),
    path("review/", views.queue, name="queue"),
    path("review/agreement", views.agreement, name="agreement"),
    path("review/adjudicate", views.adjudicate, name="adjudicate"),
]
