from django.apps import AppConfig


class PrivateLinksConfig(AppConfig):
    name = "private_links"

    def ready(self):
        # Bookings through a link (`hashedLink`) are scheduling's, which sits below this app and
        # learns of the links from here (scheduling.services.booking_requests).
        from private_links.services import private_link_use
        from scheduling.services.booking_requests import provide_private_links

        provide_private_links(private_link_use)
