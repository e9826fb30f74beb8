from django.urls import path

from .consumers import IngestConsumer, ViewerConsumer

websocket_urlpatterns = [
    path("ws/ingest/<int:session_id>", IngestConsumer.as_asgi()),
    path("ws/sessions/<int:session_id>", ViewerConsumer.as_asgi()),
]
