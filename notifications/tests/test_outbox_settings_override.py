"""`notifications.conf.overridden`: NOTIFICATIONS' values for the code run inside only (the
benchmarks' booking with mail off)."""

import threading

from notifications.conf import notification_setting, overridden


def test_an_override_holds_inside_and_ends_with_it(settings):
    settings.NOTIFICATIONS = {"ENABLED": True, "MAX_ATTEMPTS": 7}
    with overridden(ENABLED=False):
        assert notification_setting("ENABLED") is False
        assert notification_setting("MAX_ATTEMPTS") == 7
        with overridden(MAX_ATTEMPTS=3):
            assert (notification_setting("ENABLED"), notification_setting("MAX_ATTEMPTS")) == (False, 3)
        assert notification_setting("MAX_ATTEMPTS") == 7
    assert notification_setting("ENABLED") is True


def test_an_override_is_not_seen_by_another_thread(settings):
    settings.NOTIFICATIONS = {"ENABLED": True}
    seen = []
    with overridden(ENABLED=False):
        thread = threading.Thread(target=lambda: seen.append(notification_setting("ENABLED")))
        thread.start()
        thread.join()
        assert notification_setting("ENABLED") is False
    assert seen == [True]
