from django.urls import path

from .consumers import TuningJobConsumer

websocket_urlpatterns = [
    path("ws/tuning/<int:job_id>", TuningJobConsumer.as_asgi()),
]
