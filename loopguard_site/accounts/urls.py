from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("login/", views.ThrottledLoginView.as_view(template_name="accounts/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),  # POST only (Django 5)
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/<int:token_id>/revoke", views.token_revoke, name="token_revoke"),
    path("projects/", views.project_list, name="projects"),
    path("projects/<int:project_id>/members", views.project_member_set, name="project_member_set"),
]
