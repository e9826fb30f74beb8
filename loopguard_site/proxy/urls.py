from django.urls import path

from . import views

app_name = "proxy"

urlpatterns = [
    path("v1/chat/completions", views.chat_completions, name="chat_completions"),
]
