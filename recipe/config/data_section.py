"""Placeholder section (replaced by its owner): accepts no keys yet."""
from pydantic import BaseModel, ConfigDict


class DataSection(BaseModel):
    model_config = ConfigDict(extra="forbid")
