"""The two APIs of fleet inventory and what they share (`services.common`)."""
