from django.contrib import admin

from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "user", "created", "revoked")
    list_filter = ("revoked",)
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("prefix", "token_hash", "created")
