from django.urls import path

from . import views

app_name = "transcripts"

urlpatterns = [
    path("", views.session_list, name="session_list"),
]
