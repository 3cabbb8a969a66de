"""The database side of fleet inventory: roles, migrations, the embedded server and the fleet seed."""
