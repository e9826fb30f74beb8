from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "loopguard_site.profiles"

    def ready(self) -> None:
        # replay (a lower layer) runs the stored profiles without importing this app
        from loopguard_site.replay.selectors import stored_profiles_reader_set

        from .selectors import profiles_config

        stored_profiles_reader_set(profiles_config)
