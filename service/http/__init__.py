"""The REST door: who is calling, what handlers may ask for, request parsing, the shapes the
API speaks, one error envelope, and the controllers."""
