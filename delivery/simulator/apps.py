from django.apps import AppConfig


class SimulatorConfig(AppConfig):
    """The table simulator and the demo set-up (``run_tables``, ``create_demo_users``)."""

    name = "delivery.simulator"
    label = "simulator"
