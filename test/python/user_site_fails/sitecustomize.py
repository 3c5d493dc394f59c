"""A user's sitecustomize that fails: Python reports it and carries on, with or without gpumem."""
raise ImportError("user sitecustomize is broken")
