"""Settings given by name, as the service's ENTQA_* variables and the command lines' `--set NAME=VALUE` give them:
each name is a field of the model config (`LinkerConfig`: overrides of the checkpoint's config.json) or of the host's
settings (`RuntimeSettings`), and each value is parsed as that field's type; errors name the valid names and choices.

The environment is read by the callers (the web app, the command lines), once: the library takes these objects."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from pydantic import TypeAdapter, ValidationError

from annotator.errors import ConfigError
from annotator.model.config import LinkerConfig
from annotator.runtime.settings import RuntimeSettings

ENV_PREFIX = "ENTQA_"


@dataclass(frozen=True)
class LinkerSettings:
    """What a deployment sets: overrides of the checkpoint's model config, and the host's settings."""

    model: Mapping[str, Any] = field(default_factory=dict)
    runtime: RuntimeSettings = field(default_factory=RuntimeSettings)

    def __hash__(self) -> int:  # a value, as frozen dataclasses are (the overrides are plain values)
        return hash((tuple(sorted(self.model.items())), self.runtime))


def _field_types(kind: type) -> dict[str, TypeAdapter[Any]]:
    hints = get_type_hints(kind)
    return {f.name: TypeAdapter(hints[f.name]) for f in dataclasses.fields(kind)}


_MODEL_FIELDS = _field_types(LinkerConfig)
_RUNTIME_FIELDS = _field_types(RuntimeSettings)
SETTING_NAMES = (*_MODEL_FIELDS, *_RUNTIME_FIELDS)


def settings_from_variables(variables: Mapping[str, Any], *, prefix: str = ENV_PREFIX,
                            assignments: Sequence[str] = ()) -> LinkerSettings:
    """The settings among `variables` named `prefix` + a field's name in upper case (`ENTQA_TOP_K`), then the
    `NAME=VALUE` `assignments` (a command line's `--set top_k=20`) over them. Other variables are left alone (the
    environment holds other settings too). Values may be text, read as JSON where they are JSON (`20`, `true`,
    `"fp32"`) and as the text itself elsewhere (`fp32`), or values already parsed (a Flask config's).

    Raises:
        ConfigError: an assignment to an unknown name (the valid ones listed), or a value its field cannot take,
            naming the variable or the setting.
    """
    given = {name: (prefix + name.upper(), variables[prefix + name.upper()]) for name in SETTING_NAMES
             if prefix + name.upper() in variables}
    for item in assignments:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise ConfigError(f"expected NAME=VALUE, got {item!r}")
        if name not in SETTING_NAMES:
            raise ConfigError(f"unknown setting {name!r}; valid: {sorted(SETTING_NAMES)}")
        given[name] = (name, raw)
    return _settings(given)


def _settings(given: Mapping[str, tuple[str, Any]]) -> LinkerSettings:
    """`given`: field name → (the name it was given under, its value). The model's values are checked against the
    checkpoint's config when it loads (a range may depend on its other fields); the host's here."""
    types = {**_MODEL_FIELDS, **_RUNTIME_FIELDS}
    parsed = {name: _parsed(label, value, types[name]) for name, (label, value) in given.items()}
    runtime = {name: value for name, value in parsed.items() if name in _RUNTIME_FIELDS}
    try:
        host = RuntimeSettings(**runtime)
    except ConfigError as error:
        raise ConfigError(f"{error} ({', '.join(given[name][0] for name in runtime)})") from error
    return LinkerSettings(model={name: value for name, value in parsed.items() if name in _MODEL_FIELDS},
                          runtime=host)


def _parsed(label: str, value: Any, kind: TypeAdapter[Any]) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass  # a bare string: fp32
    try:
        return kind.validate_python(value)
    except ValidationError as error:
        raise ConfigError(f"{label}: {error.errors()[0]['msg']}, got {value!r}") from error
