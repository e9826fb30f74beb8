from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "loopguard_site.profiles"

    def ready(self) -> None:
        # transcripts and replay (lower layers) use the stored profiles without importing this app
        from loopguard_site.transcripts.selectors import stored_profiles_reader_set

        from .selectors import profiles_config

        stored_profiles_reader_set(profiles_config)
