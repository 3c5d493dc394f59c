"""A user's own sitecustomize: gpumem must still run it."""
import os

os.environ["USER_SITECUSTOMIZE_RAN"] = "yes"
