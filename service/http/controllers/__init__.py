"""REST controllers: thin handlers over :mod:`service.services`."""
