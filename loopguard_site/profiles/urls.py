from django.urls import path

from . import api_views, views

app_name = "profiles"

urlpatterns = [
    path("api/profiles", api_views.profile_list, name="api_profiles"),
    path("api/profiles/export", api_views.profile_export, name="api_export"),
    path("api/profiles/import", api_views.profile_import, name="api_import"),
    path("api/profiles/<str:name>/diff", api_views.profile_diff_view, name="api_diff"),
    path("api/profiles/<str:name>/export", api_views.profile_version_export, name="api_version_export"),
    path("api/tuning", api_views.tuning_create, name="api_tuning_create"),
    path("api/tuning/<int:job_id>", api_views.tuning_detail, name="api_tuning_detail"),
    path("api/tuning/<int:job_id>/save", api_views.tuning_save, name="api_tuning_save"),
    path("api/tuning/<int:job_id>/cancel", api_views.tuning_cancel, name="api_tuning_cancel"),
    path("profiles/", views.profile_list, name="profile_list"),
    path("profiles/tune", views.tuning_new, name="tuning_new"),
    path("profiles/tuning/<int:job_id>", views.tuning_detail, name="tuning_detail"),
    path("profiles/tuning/<int:job_id>/cancel", views.tuning_cancel, name="tuning_cancel"),
    path("profiles/<str:name>/", views.profile_detail, name="profile_detail"),
]
