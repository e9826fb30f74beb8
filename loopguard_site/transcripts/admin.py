from django.contrib import admin

from .models import Event, RawUpload, Session, Tag


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("title", "model", "source_format", "event_count", "state", "created")
    list_filter = ("state", "source_format", "tags")
    search_fields = ("title", "model", "tags__name")
    raw_id_fields = ("uploader",)
    filter_horizontal = ("tags",)


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ("name",)
    search_fields = ("name",)


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("session", "seq", "type")
    list_select_related = ("session",)
    list_filter = ("type",)
    raw_id_fields = ("session",)


@admin.register(RawUpload)
class RawUploadAdmin(admin.ModelAdmin):
    list_display = ("filename", "session", "size", "sha256")
    raw_id_fields = ("session",)
    exclude = ("content",)  # may be 50 MB of bytes: download it, don't render it
