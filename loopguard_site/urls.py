from django.contrib import admin
from django.urls import include, path

from loopguard_site import openapi

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include((openapi.urlpatterns, "api"))),
    path("accounts/", include("loopguard_site.accounts.urls")),
    path("", include("loopguard_site.live.urls")),  # first: it shares api/sessions/<id>/events
    path("", include("loopguard_site.transcripts.urls")),
    path("", include("loopguard_site.replay.urls")),
    path("", include("loopguard_site.review.urls")),
    path("", include("loopguard_site.profiles.urls")),
    path("", include("loopguard_site.timeline.urls")),
    path("", include("loopguard_site.proxy.urls")),
    path("", include("loopguard_site.overview.urls")),
    path("", include("loopguard_site.otlp.urls")),
]
