from django.urls import path

from . import views

app_name = "timeline"

urlpatterns = [
    path("sessions/<int:pk>/", views.session_detail, name="session_detail"),
    path("sessions/<int:pk>/window", views.session_window, name="session_window"),
    path("sessions/<int:pk>/figure", views.session_figure, name="session_figure"),
    path("sessions/<int:pk>/items", views.session_items, name="session_items"),
]
