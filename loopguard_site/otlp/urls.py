from django.urls import path

from . import views

app_name = "otlp"

urlpatterns = [
    path("v1/traces", views.traces, name="traces"),
]
