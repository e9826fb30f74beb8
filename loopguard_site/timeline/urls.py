from django.urls import path

from . import api_views, views

app_name = "timeline"

urlpatterns = [
    path("sessions/", views.session_list, name="session_list"),
    path("sessions/<int:pk>/", views.session_detail, name="session_detail"),
    path("sessions/<int:pk>/window", views.session_window, name="session_window"),
    path("sessions/<int:pk>/figure", views.session_figure, name="session_figure"),
    path("sessions/<int:pk>/items", views.session_items, name="session_items"),
    path("api/sessions", api_views.sessions, name="api_sessions"),
    path("api/sessions/<int:pk>", api_views.session_detail, name="api_session"),
]
