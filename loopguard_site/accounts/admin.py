from django.contrib import admin

from .models import ApiToken, Membership, Project


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "project", "user", "created", "revoked")
    list_filter = ("revoked", "project")
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("prefix", "token_hash", "created")


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "created")
    search_fields = ("name",)
    inlines = [MembershipInline]
