from django.urls import path

from .consumers import ReplayJobConsumer

websocket_urlpatterns = [
    path("ws/replays/<int:job_id>", ReplayJobConsumer.as_asgi()),
]
