from django.urls import path

from . import views

app_name = "proxy"

urlpatterns = [
    path("v1/chat/completions", views.chat_completions, name="chat_completions"),
    path("v1/messages", views.messages, name="messages"),
    path("v1/responses", views.responses, name="responses"),
]
