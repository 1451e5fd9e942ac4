"""HTTP only: routes, request parsing and validation, response shaping, error mapping."""
