# SPDX-License-Identifier: Apache-2.0
"""One sandbox client per process, set from the trainer's configuration: what the trainer adapters
evaluate with in the processes a trainer starts (verl's agent-loop and reward workers, OpenRLHF's
rollout actors, each TRL rank).

    from leap import process_sandbox
    process_sandbox.configure(devices=[0, 1])                  # leap-sandbox serve on GPUs 0 and 1
    process_sandbox.configure(fleet="redis://10.0.0.5:6379")   # or a fleet (leap.fleet.FleetClient)
    environment = process_sandbox.environment()                 # a leap.environment.SandboxEnvironment

Those processes are the trainer's, not yours: a Ray actor that holds no GPU sees an empty
``CUDA_VISIBLE_DEVICES`` (or, depending on the Ray version, every GPU of the node, which vLLM and the
training engine already hold), so a pool that takes its devices from the environment has none to run
kernels on, or eight pools share the same devices. The address therefore comes from the trainer's
configuration, in one of two forms (``settings``, a mapping, as an adapter's configuration holds it):

  * a local pool: ``executable`` (default ``$LEAP_SANDBOX``, else ``leap-sandbox`` on PATH; a list for
    a program with leading arguments) and SandboxPool's keywords: ``devices`` (physical GPU ids, one
    ``serve`` each, whatever this process's ``CUDA_VISIBLE_DEVICES`` says), ``servers``, ``args``, ...;
  * a fleet: ``fleet``, a Redis URL or a mapping of FleetClient's keywords (``url``, ``key_file``,
    ``stream``, ``timeout``, ...); the fleet key comes from ``key_file`` or ``$LEAP_FLEET_KEY_FILE``.

The client is made on first use and made again in a forked child (a pool's servers belong to the
process that started them). ``configure`` with the settings already in force changes nothing, so an
adapter may call it for every sample; with other settings it closes this process's client and the next
use makes the new one.
"""
from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Mapping
from typing import Any, Optional

__all__ = ["configure", "configure_from", "client", "environment", "settings"]

_lock = threading.Lock()
_client: Any = None
_client_pid: Optional[int] = None
_environment: Any = None
_settings: dict[str, Any] = {}

_POOL_KEYS = frozenset({"executable", "devices", "servers", "args", "max_in_flight", "env", "max_quick_deaths",
                        "after_fork"})


def _normalised(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as this module keeps them; a ValueError names a key it does not know, or a mix of a
    fleet and a local pool."""
    chosen = {key: value for key, value in settings.items() if value is not None}
    unknown = sorted(set(chosen) - _POOL_KEYS - {"fleet"})
    if unknown:
        raise ValueError(f"leap sandbox settings: unknown key(s) {unknown}; expected 'fleet' (a Redis URL or "
                         f"FleetClient's keywords) or a local pool's {sorted(_POOL_KEYS)}")
    if "fleet" in chosen:
        local = sorted(set(chosen) - {"fleet"})
        if local:
            raise ValueError(f"leap sandbox settings: a fleet ({chosen['fleet']!r}) and a local pool's {local} were "
                             f"both given; evaluations go to one or the other")
        fleet = chosen["fleet"]
        if isinstance(fleet, str):
            fleet = {"url": fleet}
        elif isinstance(fleet, Mapping):
            fleet = dict(fleet)
        else:
            raise TypeError(f"leap sandbox settings: fleet must be a Redis URL or a mapping of FleetClient's keywords, "
                            f"got {type(fleet).__name__}")
        chosen["fleet"] = fleet
    for key in ("devices", "args"):
        if key in chosen and not isinstance(chosen[key], (str, bytes)):
            chosen[key] = list(chosen[key])  # an omegaconf ListConfig or a range compares as a list
    return chosen


def configure(executable: Any = None, *, fleet: Any = None, **pool_kwargs: Any) -> None:
    """Sets how this process's sandbox client is made: a local pool (executable and SandboxPool's keywords)
    or a fleet (a Redis URL or FleetClient's keywords). See the module's documentation."""
    configure_from({"executable": executable, "fleet": fleet, **pool_kwargs})


def configure_from(settings: Optional[Mapping[str, Any]]) -> None:
    """configure() from a mapping (an adapter's configuration, an omegaconf node); None or {} means the
    defaults. Settings equal to those in force change nothing."""
    global _client, _client_pid, _environment
    chosen = _normalised(dict(settings or {}))
    with _lock:
        if chosen == _settings:
            return
        _settings.clear()
        _settings.update(chosen)
        old, mine = _client, _client_pid == os.getpid()
        _client, _client_pid, _environment = None, None, None
    if old is not None and mine:
        old.close()


def settings() -> dict[str, Any]:
    """The settings in force (a copy)."""
    with _lock:
        return dict(_settings)


def client(executable: Any = None) -> Any:
    """This process's SandboxPool or FleetClient, made on first use (and again in a forked child).
    executable, when given and no fleet is configured, overrides the configured program."""
    global _client, _client_pid, _environment
    with _lock:
        if _client is None or _client_pid != os.getpid():
            settings = dict(_settings)
            if "fleet" in settings:
                FleetClient: Any = importlib.import_module(".fleet", __package__).FleetClient
                made = FleetClient(**settings["fleet"])
            else:
                SandboxPool: Any = importlib.import_module(".sandbox", __package__).SandboxPool
                program = executable or settings.pop("executable", None) or os.environ.get("LEAP_SANDBOX",
                                                                                            "leap-sandbox")
                settings.pop("executable", None)
                made = SandboxPool(program, **settings)
            _client, _client_pid, _environment = made, os.getpid(), None
        return _client


def environment(executable: Any = None) -> Any:
    """This process's leap.environment.SandboxEnvironment over client(): an episode environment,
    (task, leap.Completion, leap.SampleKey) -> leap.Evaluation, that evaluates the completion's kernel."""
    global _environment
    sandbox = client(executable)
    with _lock:
        if _environment is None or _environment.sandbox is not sandbox:
            SandboxEnvironment: Any = importlib.import_module(".environment", __package__).SandboxEnvironment
            _environment = SandboxEnvironment(sandbox)
        return _environment
